#pragma once
// Canonical minimizers of the k-mers of a sequence, found while they are scanned (the k-mer scanner
// of core/kmer/scanner.hpp with one more thing per base).
//
// The minimizer of a k-mer is the smallest hash, over the w = k - m + 1 m-mers inside it, of the
// m-mer's canonical form (Roberts et al., "Reducing storage requirements for biological sequence
// comparison", Bioinformatics 2004; the hash order instead of the lexicographic one avoids the
// skew towards poly-A that the latter gives, as Kraken 2 and Super Bloom do). It is a value, not a
// position: a k-mer and its reverse complement hold the same canonical m-mers (the m-mer at offset
// i of one is the reverse complement of the m-mer at offset k - m - i of the other), so they get
// the same minimizer, which is what lets a canonical k-mer's hash depend on it
// (core/kmer/locality_hash.hpp). It depends on the k-mer alone, never on the bases around it.
//
// Cost: the m-mer's two strands are bit fields of the k-mer's (the last m bases of the forward
// strand, the first m of the reverse one), so a base adds one multiply and the sliding minimum's
// few min()s (see for_each).
//
// FIXED FOREVER (like core/kmer/hash.hpp): minimizer_hash() decides where an indexed k-mer is
// stored; changing it silently loses every k-mer of an index built with it. A change needs a new
// hash scheme number in the index file.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/kmer/encoding.hpp"
#include "core/kmer/scanner.hpp"

namespace qmer {

// The hash that orders m-mers: the canonical m-mer xor a salt from the index's seed, times an odd
// constant (a bijection of 64-bit words, so two m-mers tie only if they are the same m-mer and the
// minimizer value is well defined). One multiply per base: the order only has to look random
// (every high bit of the product depends on every bit of the m-mer), as Kraken 2's xor with a
// constant does; where a minimizer's k-mers go is decided by minimizer_spread, a full mix.
constexpr uint64_t minimizer_hash(uint64_t canonical_mmer, uint64_t seed) noexcept {
    return (canonical_mmer ^ (seed * 0x9E3779B97F4A7C15ULL + 0x5851F42D4C957F2DULL)) *
           0xD6E8FEB86659FD93ULL;
}

// Where a minimizer's k-mers go (core/kmer/sequence_hashing.hpp): another bijective mix of the
// minimizer value. The minimizer itself is the smallest of w uniform hashes, so its top bits are
// far from uniform (Beta(1, w): most minimizers are small); its top bits used directly would put
// most k-mers in the first windows of the table.
constexpr uint64_t minimizer_spread(uint64_t minimizer) noexcept {
    uint64_t x = minimizer + 0x2545F4914F6CDD1DULL;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

class minimizer_scanner {
  public:
    static constexpr unsigned max_window = 32;  // w = k - m + 1 (the ring's size)

    // Throws usage_error unless 1 <= m <= k <= 32 and k - m + 1 <= max_window.
    minimizer_scanner(unsigned k, unsigned m, uint64_t seed) : k_(k), m_(m), seed_(seed) {
        check_k(k);
        if (m < 1 || m > k || k - m + 1 > max_window)
            throw usage_error("minimizer length " + std::to_string(m) +
                              " does not fit k = " + std::to_string(k));
    }

    unsigned k() const noexcept { return k_; }
    unsigned m() const noexcept { return m_; }
    uint64_t seed() const noexcept { return seed_; }

    // Calls f(canonical_kmer, minimizer) for every k-mer of seq made of k consecutive bases, in
    // order, as kmer_scanner::for_each does (same k-mers, same stop-on-false rule).
    template <typename F>
    bool for_each(std::string_view seq, F&& f) const {
        return scan(seq, [&](uint64_t canonical, uint64_t minimizer, size_t, uint64_t) {
            return f(canonical, minimizer);
        });
    }

    // for_each, also telling f the offset just past each k-mer's last base: f(canonical, minimizer,
    // end) (a caller that goes on from a k-mer with another scan of seq).
    template <typename F>
    bool for_each_with_ends(std::string_view seq, F&& f) const {
        return scan(seq, [&](uint64_t canonical, uint64_t minimizer, size_t end, uint64_t) {
            return f(canonical, minimizer, end);
        });
    }

    // Calls f(first, last, kmers, minimizer) for every super-k-mer of seq: a longest run of
    // consecutive k-mers (no invalid base between them) that share their minimizer, at most
    // max_run of them (a longer run, which only repeats of one m-mer give, is cut: each piece's
    // m-mers are still those of k-mers with that minimizer). first and last: the forward strands
    // (2 bits a base, the first base on top) of its first and last k-mer, which hold all of its
    // k + kmers - 1 bases while kmers <= k + 1. The k-mers are for_each's, in order (KMC's bins
    // hold these).
    // `each(canonical)`, if given, is called for every k-mer too, in order (bench/index measures
    // per-k-mer work done in the same scan with it; the build counts from the runs instead).
    template <typename F>
    void for_each_super_kmer(std::string_view seq, F&& f, unsigned max_run) const {
        for_each_super_kmer(seq, std::forward<F>(f), max_run, [](uint64_t) {});
    }
    template <typename F, typename Each>
    void for_each_super_kmer(std::string_view seq, F&& f, unsigned max_run, Each&& each) const {
        uint64_t first = 0, last = 0, current = 0;
        size_t last_end = 0;
        unsigned run = 0;
        scan(seq, [&](uint64_t canonical, uint64_t minimizer, size_t end, uint64_t forward) {
            each(canonical);
            if (run != 0 && (minimizer != current || end != last_end + 1 || run == max_run)) {
                f(first, last, run, current);
                run = 0;
            }
            if (run == 0) {
                first = forward;
                current = minimizer;
            }
            ++run;
            last = forward;
            last_end = end;
        });
        if (run != 0) f(first, last, run, current);
    }

  private:
    // for_each, also telling f the offset just past each k-mer's last base and its forward strand.
    template <typename F>
    bool scan(std::string_view seq, F&& f) const;

    unsigned k_, m_;
    uint64_t seed_;
};

template <typename F>
bool minimizer_scanner::scan(std::string_view seq, F&& f) const {
    using result_t = std::invoke_result_t<F&, uint64_t, uint64_t, size_t, uint64_t>;
    constexpr bool can_stop = std::is_same_v<result_t, bool>;

    unsigned const k = k_, m = m_;
    unsigned const w = k - m + 1;
    uint64_t const seed = seed_;
    uint64_t const kmask = kmer_mask(k);
    uint64_t const mmask = kmer_mask(m);
    unsigned const mmer_shift = 2 * (k - m);  // the reverse strand's first m bases
    uint64_t const top = uint64_t{1} << (2 * (k - 1));
    uint64_t const complement_at_top[4] = {3 * top, 2 * top, top, 0};
    // The sliding minimum of van Herk and Gil & Werman: the m-mer hashes are cut into blocks of
    // w; the window of the k-mer ending at offset i of the current block is the suffix of the
    // previous block from offset i + 1 (suffix[i + 1], with suffix[w] empty) and the prefix of
    // this one up to i (prefix). Two min()s per base and w more per w bases, with no
    // data-dependent branch (a minimum kept incrementally mispredicts whenever a new one
    // arrives or the old one leaves the window).
    uint64_t block[max_window];
    uint64_t suffix[max_window + 1];
    constexpr uint64_t none = ~uint64_t{0};

    char const* p = seq.data();
    char const* const end = p + seq.size();
    uint64_t forward = 0, reverse = 0;
    while (p != end) {
        // One run of bases: the first m - 1 fill the strands, then every base ends an m-mer.
        unsigned bases = 0;
        while (bases + 1 < m && p != end) {
            uint8_t const code = encode_base(*p++);
            if (code == invalid_base) [[unlikely]] {
                bases = 0;
                continue;
            }
            forward = ((forward << 2) + code) & kmask;
            reverse = (reverse >> 2) | complement_at_top[code];
            ++bases;
        }
        if (bases + 1 < m) return true;  // the sequence ended inside a run shorter than m
        // mmers: m-mers of this run so far; i: offset in the current block.
        uint64_t mmers = 0;
        unsigned i = 0;
        uint64_t prefix = none;
        for (unsigned j = 0; j <= w; ++j) suffix[j] = none;
        while (p != end) {
            uint8_t const code = encode_base(*p++);
            if (code == invalid_base) [[unlikely]]
                break;
            forward = ((forward << 2) + code) & kmask;
            reverse = (reverse >> 2) | complement_at_top[code];
            uint64_t const mf = forward & mmask;
            uint64_t const mr = reverse >> mmer_shift;
            uint64_t const hm = minimizer_hash(mf < mr ? mf : mr, seed);
            block[i] = hm;
            prefix = hm < prefix ? hm : prefix;
            uint64_t const later = suffix[i + 1];
            uint64_t const minimum = later < prefix ? later : prefix;
            ++mmers;
            if (++i == w) {
                suffix[w] = none;
                for (unsigned j = w; j-- > 0;)
                    suffix[j] = block[j] < suffix[j + 1] ? block[j] : suffix[j + 1];
                prefix = none;
                i = 0;
            }
            if (mmers < w) continue;  // the k-mer is not complete yet
            uint64_t const canon = forward < reverse ? forward : reverse;
            size_t const end_offset = static_cast<size_t>(p - seq.data());
            if constexpr (can_stop) {
                if (!f(canon, minimum, end_offset, forward)) return false;
            } else {
                f(canon, minimum, end_offset, forward);
            }
        }
    }
    return true;
}

}  // namespace qmer
