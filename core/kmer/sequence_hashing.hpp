#pragma once
// How a sequence's canonical k-mers become the 64-bit hashes the filters take: the hash scheme an
// index is built with (stored in its header) and queried with. Two schemes:
//
// plain (indexes of formats below 4, and every filter but the default): h = kmer_hasher(k-mer).
//
// minimizer_local (super-k-mer locality, bench/qf/LOCALITY.md; the idea of Super Bloom,
// Conchon-Kerjan, Limasset et al., and of Kraken 2's minimizer lookups, applied to the quotient
// filter's hash):
//   h = top B bits of minimizer_spread(the k-mer's minimizer) (core/kmer/minimizer.hpp)
//       | the k-mer's own hash shifted right by B
// Consecutive k-mers of a sequence share their minimizer (a super-k-mer: ~6.5 k-mers at k = 31,
// m = 20), so they land in one "window" of the table: the canonical slots whose hashes share those
// B top bits, m0 / 2^B of them (B is chosen so that a window spans 32 to 64 slots, one or two
// 64-byte blocks of the rank-select layout). A read then fetches about one block per super-k-mer
// instead of one random line per k-mer. Every filter maps h monotonically to its fingerprint
// (core/qf/fingerprint.hpp), so this needs nothing from the filters.
//
// minimizer_local_levels (format 6; every new minimizer-local index): the same, but the bottom
// level_window_extra_bits bits of h are the spread's bits B .. B + 7, which the expandable
// filter's larger levels read as more window bits (core/qf/stored/level_windows.hpp), so that their
// windows also span 32 to 64 of their own slots.
//
// Why the false-positive rate stays under --fpr:
//  - a k-mer unrelated to the index: its minimizer hash and its own hash are independent uniform
//    bits, so h is uniform and it matches a stored fingerprint with probability n / M, as before;
//  - a k-mer *near* the index (it covers a sequencing error, or comes from a near strain) often
//    shares its minimizer with stored k-mers, so it lands in a window that is certainly used. Its
//    own bits are still uniform within the window (W slots, W 2^r fingerprints), so it matches
//    with probability L / (W 2^r), L the fingerprints stored in that window. Over all near k-mers
//    this averages to about (fill + E[S^2] / (E[S] W)) 2^-r, S the k-mers per minimizer (~6.5,
//    at most w = 12 on non-repetitive sequence): ~1.2x the plain rate at W = 32, well inside the
//    factor ~2 between the plain rate (0.95 2^-r) and the bound the expandable filter sizes r for
//    (core/qf/concurrent/expandable.hpp, Theorem 2: ~1.96 2^-r).
//  - what would break it is a window that repeats or low-complexity sequence overloads (one
//    minimizer shared by the k-mers of thousands of mutated copies): L then grows without bound,
//    and so would the run lengths and offsets of the table. So the build counts the distinct
//    fingerprints of each window's k-mers exactly (app/index/superkmer_bins.hpp; a build in
//    several passes, app/index/sorted_build.hpp, counts those of its sorted buckets), and marks
//    the windows holding more than 2.5 W as overloaded: their k-mers take the plain hash
//    (h = kmer_hasher(k-mer)), which goes into the same sorted fill. The marks are stored
//    in the index (a bit per window) and the query reads them once per k-mer (the same word for a
//    whole super-k-mer). A near k-mer then matches with probability at most 2.5 2^-r in the fullest
//    window allowed (1.2e-3 at the default r = 11) and about the plain rate on average: measured in
//    bench/qf/LOCALITY.md. 2.5 rather than a tighter factor: window loads vary (compound Poisson),
//    and a tighter one marks windows of random sequence too. Distinct, not positions: a panel of
//    near-identical strains holds every k-mer several times (bench/MEASUREMENTS.md).
//
// No false negatives: the hash of a k-mer depends on the k-mer, the seed and the stored marks
// only, and the query computes it the same way.

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/kmer/minimizer.hpp"
#include "core/kmer/scanner.hpp"
#include "core/qf/stored/level_windows.hpp"

namespace qmer {

// Stored in the index header (format 4); never renumber. minimizer_local_levels (format 6): the
// minimizer_local hash with level_window_extra_bits more window bits at its bottom, which the
// expandable filter's levels above the first read as window bits
// (core/qf/stored/level_windows.hpp), so that they keep super-k-mer locality too. Every new
// minimizer-local index takes it; appends keep the scheme of the index they grow.
enum class hash_scheme : uint32_t { plain = 0, minimizer_local = 1, minimizer_local_levels = 2 };

constexpr bool is_minimizer_local(hash_scheme s) noexcept {
    return s != hash_scheme::plain;
}

// E of core/qf/stored/level_windows.hpp: levels up to 8 (an index grown 256x) keep level 0's window
// width; their fingerprints use at most 64 - B - 8 of the k-mer's own bits, far more than a level's
// quotient and remainder bits below its window ever need (about 5 + r0 + i at level i).
inline constexpr unsigned level_window_extra_bits = 8;

// A window holding more distinct fingerprints than this times its slots is overloaded.
inline constexpr double overload_factor = 2.5;

// B never exceeds this: 2^40 windows is far beyond any table (the filters' quotient bits stop at
// 40).
inline constexpr unsigned max_window_bits = 40;

// The minimizer length for k, or 0 when k is too short for the scheme (plain hashing then).
// w = k - m + 1 = 12 at k = 31 (super-k-mers of ~6.5 k-mers); m never below 2k/3, so that
// minimizers stay specific for shorter k.
constexpr unsigned locality_minimizer_length(unsigned k) noexcept {
    if (k < 16) return 0;
    unsigned const by_window = k - 11;
    unsigned const by_length = 2 * k / 3;
    return by_window > by_length ? by_window : by_length;
}

// The window width, and B for a first level of `slots` slots: core/qf/stored/level_windows.hpp,
// which sizes every level's windows by the same rule.
using qf::locality_window_bits;
using qf::min_window_slots;

// The hash scheme of an index: what the header stores.
struct hash_scheme_params {
    hash_scheme scheme = hash_scheme::plain;
    unsigned minimizer_length = 0;  // m
    unsigned window_bits = 0;       // B, 1..40
    // Bit i set: window i is overloaded (its k-mers take the plain hash). 2^B bits.
    std::vector<uint64_t> overloaded;

    // The extra window bits the hash carries (E of core/qf/stored/level_windows.hpp).
    unsigned extra_window_bits() const noexcept {
        return scheme == hash_scheme::minimizer_local_levels ? level_window_extra_bits : 0;
    }
    // How the levels of a filter of these hashes read them.
    qf::level_windows level_windows() const noexcept {
        return is_minimizer_local(scheme) ? qf::level_windows{window_bits, extra_window_bits()}
                                          : qf::level_windows{};
    }
};

// The most distinct fingerprints a window of a first level with `slots` canonical slots keeps
// local: overload_factor times its slots (windows are 2^-window_bits of the table).
constexpr double overload_threshold(uint64_t slots, unsigned window_bits) noexcept {
    return overload_factor * static_cast<double>(slots) /
           static_cast<double>(uint64_t{1} << window_bits);
}

// The plain scheme over a sequence: f(h) for every canonical k-mer, in order.
class plain_kmer_hashing {
  public:
    // Whether consecutive k-mers' hashes share their top bits (a window of the table).
    static constexpr bool minimizer_local = false;

    plain_kmer_hashing(unsigned k, uint64_t seed) : scanner_(k), hasher_{seed} {}

    unsigned k() const noexcept { return scanner_.k(); }
    kmer_hasher const& hasher() const noexcept { return hasher_; }

    // f returns void, or bool (false stops the scan; for_each then returns false).
    template <typename F>
    bool for_each(std::string_view seq, F&& f) const {
        return scanner_.for_each(seq,
                                 [&](uint64_t canonical, size_t) { return f(hasher_(canonical)); });
    }

  private:
    kmer_scanner scanner_;
    kmer_hasher hasher_;
};

// The minimizer_local schemes over a sequence. `overloaded` (2^window_bits bits, or empty for none)
// must outlive it. extra_bits: 0 (minimizer_local) or level_window_extra_bits
// (minimizer_local_levels): the spread's bits window_bits .. window_bits + extra_bits - 1 take the
// bottom of the hash, where no level's fingerprint reaches (core/qf/stored/level_windows.hpp).
class local_kmer_hashing {
  public:
    static constexpr bool minimizer_local = true;

    local_kmer_hashing(unsigned k, uint64_t seed, unsigned minimizer_length, unsigned window_bits,
                       std::span<uint64_t const> overloaded, unsigned extra_bits = 0)
        : scanner_(k, minimizer_length, seed),
          hasher_{seed},
          window_bits_(window_bits),
          extra_bits_(extra_bits),
          overloaded_(overloaded) {
        if (window_bits < 1 || window_bits > max_window_bits)
            throw usage_error("locality window bits must be in 1..40, not " +
                              std::to_string(window_bits));
        if (extra_bits > level_window_extra_bits)
            throw usage_error("locality: at most " + std::to_string(level_window_extra_bits) +
                              " extra window bits, not " + std::to_string(extra_bits));
        if (!overloaded.empty() && overloaded.size() * 64 < (uint64_t{1} << window_bits))
            throw usage_error("locality: the overloaded-window bitmap is too short");
    }

    unsigned k() const noexcept { return scanner_.k(); }

    template <typename F>
    bool for_each(std::string_view seq, F&& f) const {
        return for_each_tagged(seq, [&](uint64_t h, bool) { return f(h); });
    }

    // for_each, telling f whether the k-mer's window is overloaded (h is then its plain hash).
    template <typename F>
    bool for_each_tagged(std::string_view seq, F&& f) const {
        return for_each_tagged_with_ends(
            seq, [&](uint64_t h, bool overloaded, size_t) { return f(h, overloaded); });
    }

    // for_each_tagged, also telling f the offset just past the k-mer's last base:
    // f(h, overloaded, end).
    template <typename F>
    bool for_each_tagged_with_ends(std::string_view seq, F&& f) const {
        unsigned const bits = window_bits_;
        uint64_t const top_mask = ~(~uint64_t{0} >> bits);
        // The extra window bits: the spread's next extra_bits_ bits, moved to the bottom (none,
        // and the mask all ones, for extra_bits_ = 0).
        unsigned const extra_shift = 64 - bits - extra_bits_;
        uint64_t const extra_mask = (uint64_t{1} << extra_bits_) - 1;
        uint64_t const* const marks = overloaded_.data();
        bool const any_marks = !overloaded_.empty();
        // The overloaded-window test is a branch, not a select: its bitmap word is a cache miss
        // for a new window (the bitmap is 2^B bits, and the table's lines evict it), and a
        // predicted branch lets the hash and the table prefetch go ahead while the word
        // arrives; as data, the prefetch's address waited for it. The branch is nearly always
        // "local" (under 1% of the windows are marked). Still no test "has the minimizer
        // changed?": that one mispredicts once per super-k-mer.
        return scanner_.for_each_with_ends(seq, [&](uint64_t canonical, uint64_t minimizer,
                                                    size_t end) {
            uint64_t const spread = minimizer_spread(minimizer);
            uint64_t const window = spread >> (64 - bits);
            if (any_marks && ((marks[window / 64] >> (window % 64)) & 1)) [[unlikely]]
                return f(hasher_(canonical), true, end);
            return f(combine(spread, hasher_(canonical), bits, top_mask, extra_shift, extra_mask),
                     false, end);
        });
    }

    // The pieces of for_each_tagged's hash, for a build that keeps super-k-mers and hashes their
    // k-mers later (app/index/superkmer_bins.hpp): the window of a minimizer's spread, and a
    // k-mer's hash given its minimizer's spread (that of a window not overloaded).
    uint64_t window_of(uint64_t spread) const noexcept { return spread >> (64 - window_bits_); }
    uint64_t local_hash(uint64_t canonical, uint64_t spread) const noexcept {
        unsigned const extra_shift = 64 - window_bits_ - extra_bits_;
        return combine(spread, hasher_(canonical), window_bits_, ~(~uint64_t{0} >> window_bits_),
                       extra_shift, (uint64_t{1} << extra_bits_) - 1);
    }
    uint64_t plain_hash(uint64_t canonical) const noexcept { return hasher_(canonical); }
    minimizer_scanner const& scanner() const noexcept { return scanner_; }
    unsigned window_bits() const noexcept { return window_bits_; }
    unsigned extra_bits() const noexcept { return extra_bits_; }
    kmer_hasher const& hasher() const noexcept { return hasher_; }
    // The overloaded windows' bits (empty for none).
    std::span<uint64_t const> overloaded() const noexcept { return overloaded_; }

    // f(plain hash) for the k-mers of overloaded windows only, in order: the build's pass that
    // gathers what it dropped from those windows. Unlike for_each_tagged it hashes only those
    // k-mers, behind a branch that is nearly always "no" (a build marks ~0.5% of the windows of
    // random sequence): the branch-free scheme costs that pass a full k-mer hash per k-mer.
    // f returns void, or bool (false stops the scan; this then returns false).
    template <typename F>
    bool for_each_overloaded(std::string_view seq, F&& f) const {
        if (overloaded_.empty()) return true;
        unsigned const bits = window_bits_;
        uint64_t const* const marks = overloaded_.data();
        return scanner_.for_each(seq, [&](uint64_t canonical, uint64_t minimizer) -> bool {
            uint64_t const window = minimizer_spread(minimizer) >> (64 - bits);
            if ((marks[window / 64] >> (window % 64)) & 1) [[unlikely]] {
                if constexpr (std::is_same_v<std::invoke_result_t<F&, uint64_t>, bool>) {
                    return f(hasher_(canonical));
                } else {
                    f(hasher_(canonical));
                }
            }
            return true;
        });
    }

  private:
    // The hash's one home: the window's top bits of the spread, the k-mer's own hash below them,
    // and at the bottom the spread's extra window bits (core/qf/stored/level_windows.hpp).
    static uint64_t combine(uint64_t spread, uint64_t own, unsigned bits, uint64_t top_mask,
                            unsigned extra_shift, uint64_t extra_mask) noexcept {
        return (spread & top_mask) | ((own >> bits) & ~extra_mask) |
               ((spread >> extra_shift) & extra_mask);
    }

    minimizer_scanner scanner_;
    kmer_hasher hasher_;
    unsigned window_bits_;
    unsigned extra_bits_;
    std::span<uint64_t const> overloaded_;
};

// Calls f with the hashing object of `scheme` (one instantiation per scheme: the choice is made
// once per command, not per k-mer).
template <typename F>
decltype(auto) with_kmer_hashing(unsigned k, uint64_t seed, hash_scheme_params const& scheme,
                                 F&& f) {
    if (is_minimizer_local(scheme.scheme))
        return f(local_kmer_hashing(k, seed, scheme.minimizer_length, scheme.window_bits,
                                    scheme.overloaded, scheme.extra_window_bits()));
    return f(plain_kmer_hashing(k, seed));
}

}  // namespace qmer
