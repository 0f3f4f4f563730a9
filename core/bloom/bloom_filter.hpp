#pragma once
// A lock-free Bloom filter over qmer::atomic_bitset: qmer's answer to a blog post ("a
// semi-concurrent Bloom filter" over Guava's BloomFilter) that asks for a concurrent Bloom filter
// and settles for a Bloom filter plus a map of pending inserts compacted by copy-and-CAS (kept as
// the benchmark baseline in bench/bloom/pending_map_bloom.hpp). Here every insert sets its bits in
// place with atomic fetch_or, so there is no side map, no copy and no allocation after
// construction, and memory is fixed.
//
// Contract (core/filter/filter.hpp): insert() and contains() may run concurrently from any number
// of threads. Bits are only ever set, never cleared, so once insert(h) has returned, every
// contains(h) that starts later (happens after it) reads words at least as new as the ones insert
// wrote and answers true: no false negatives. A Bloom filter is never `full`: past its expected n
// the false-positive rate just rises, and false_positive_rate() says by how much.
//
// Answers. insert() reads h's k bits in probe order; if all are set it answers `already_present`.
// Otherwise it sets the missing bits, the first missing one in probe order (the arbiter) last, with
// release RMWs, and answers `inserted` if its RMW changed the arbiter bit. Alone, that is exactly
// "at least one bit changed". Racing inserts of one h answer `inserted` at most once between them,
// so size() never counts an element twice: if A and B both won arbiters a < b (probe indices), B
// read bit a set - by A's arbiter RMW or later (bits are only set), so with acquire it also sees
// every bit A set or saw before it, bit b included - and B, reading in probe order, would then have
// found b set: a contradiction. (Insert-time false positives and a third key setting A's arbiter
// bit in the window make size() fall below the number of distinct elements; it is the n of the FPR
// formula, not an exact count.)
//
// Probes: all k bit positions come from the ONE 64-bit hash the filter is given (the filters take
// the hash, never the k-mer), by double hashing (Kirsch & Mitzenmacher, "Less hashing, same
// performance", 2006): g_i = a + i*b over 64 bits, with a = h and b = h rotated by 32 (its two
// 32-bit halves swapped, made odd). Each g_i is mapped to [0, m) by the multiply-shift range
// reduction (Lemire), which uses the high bits of g_i and needs no division.
//
// Sizing (n expected elements, target p): m = n ln(1/p) / ln(2)^2 bits rounded up to whole words,
// k = round((m/n) ln 2) probes; FPR after n inserts = (1 - e^{-kn/m})^k (fpr_after), and at the
// current fill (set bits / m)^k (false_positive_rate).

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "core/bitset/atomic_bitset.hpp"
#include "core/filter/filter.hpp"
#include "core/filter/sharded_count.hpp"

namespace qmer {

namespace bloom_detail {

// floor(x * range / 2^64): an unbiased-enough map of a 64-bit value to [0, range) (Lemire 2019).
// __extension__ keeps -Wpedantic quiet about the (GCC/Clang) 128-bit type.
__extension__ using uint128 = unsigned __int128;
inline uint64_t reduce(uint64_t x, uint64_t range) noexcept {
    return static_cast<uint64_t>((static_cast<uint128>(x) * range) >> 64);
}

// MurmurHash3's 64-bit finaliser: a bijection with full avalanche, used to draw further independent
// looking bits from the one hash (blocked filter).
inline uint64_t fmix64(uint64_t x) noexcept {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

inline void check_parameters(size_t expected_n, double fpr, char const* who) {
    if (expected_n == 0)
        throw std::invalid_argument(std::string(who) +
                                    ": the expected number of elements must be > 0");
    if (!(fpr > 0.0 && fpr < 1.0))
        throw std::invalid_argument(std::string(who) +
                                    ": the false-positive rate must be in (0, 1), got " +
                                    std::to_string(fpr));
}

inline constexpr unsigned max_probes = 32;

}  // namespace bloom_detail

class bloom_filter {
  public:
    // Everything needed to rebuild the filter (index file): bits, probes and what it was sized for.
    struct geometry {
        uint64_t bits = 0;
        uint32_t probes = 0;
        uint64_t expected_n = 0;
        double target_fpr = 0;
    };

    // The smallest whole-word m and the optimal k for n elements at false-positive rate p.
    static geometry plan(size_t expected_n, double fpr) {
        bloom_detail::check_parameters(expected_n, fpr, "bloom filter");
        double const ln2 = std::log(2.0);
        double const n = static_cast<double>(expected_n);
        double const bits = std::ceil(n * std::log(1.0 / fpr) / (ln2 * ln2));
        uint64_t const m = (static_cast<uint64_t>(bits) + 63) / 64 * 64;
        double const k = std::round(static_cast<double>(m) / n * ln2);
        auto const probes = static_cast<uint32_t>(
            std::clamp(k, 1.0, static_cast<double>(bloom_detail::max_probes)));
        return {m, probes, expected_n, fpr};
    }

    bloom_filter(size_t expected_n, double fpr) : bloom_filter(plan(expected_n, fpr)) {}
    explicit bloom_filter(geometry g) : geometry_(g), bits_(g.bits) {
        if (g.bits == 0 || g.probes == 0 || g.probes > bloom_detail::max_probes)
            throw std::invalid_argument("bloom filter: impossible geometry");
    }

    insert_result insert(uint64_t h) noexcept {
        uint64_t const m = geometry_.bits;
        uint64_t const step = std::rotl(h, 32) | 1;
        // Pass 1: read the k bits in probe order (acquire). Only missing bits are written below: at
        // the fills a Bloom filter runs at about half the probes find their bit set, and a load
        // leaves the cache line shared where an RMW would take it exclusive.
        std::array<uint64_t, bloom_detail::max_probes> missing;  // positions, in probe order
        uint32_t count = 0;
        uint64_t g = h;
        for (uint32_t i = 0; i < geometry_.probes; ++i, g += step) {
            uint64_t const pos = bloom_detail::reduce(g, m);
            if ((bits_.load_word(pos >> 6) & (uint64_t{1} << (pos & 63))) == 0)
                missing[count++] = pos;
        }
        if (count == 0) return insert_result::already_present;
        // Pass 2: set the missing bits, the first one (the arbiter) last. See "Answers" above.
        // Two probes may share a position; the arbiter's own position must not be set early.
        for (uint32_t i = count; i-- > 1;)
            if (missing[i] != missing[0])
                bits_.fetch_or_word(missing[i] >> 6, uint64_t{1} << (missing[i] & 63));
        uint64_t const arbiter = uint64_t{1} << (missing[0] & 63);
        if ((bits_.fetch_or_word(missing[0] >> 6, arbiter) & arbiter) != 0)
            return insert_result::already_present;  // a concurrent insert set it first
        // A statistic (no thread infers anything about the bits from it), in this thread's shard.
        size_.count_one();
        return insert_result::inserted;
    }

    bool contains(uint64_t h) const noexcept {
        uint64_t const m = geometry_.bits;
        uint64_t g = h;
        uint64_t const step = std::rotl(h, 32) | 1;
        for (uint32_t i = 0; i < geometry_.probes; ++i, g += step) {
            uint64_t const pos = bloom_detail::reduce(g, m);
            if ((bits_.load_word(pos >> 6) & (uint64_t{1} << (pos & 63))) == 0) return false;
        }
        return true;
    }

    // Starts loading the first probe's cache line (batched queries: prefetch the next hashes, then
    // probe). A plain Bloom filter touches k lines, so this hides only the first miss.
    void prefetch(uint64_t h) const noexcept {
        bits_.prefetch_word(bloom_detail::reduce(h, geometry_.bits) >> 6);
    }

    // Exact when no insert runs (core/filter/sharded_count.hpp).
    size_t size() const noexcept { return size_.load(); }
    size_t capacity() const noexcept { return geometry_.expected_n; }
    size_t memory_bytes() const noexcept { return bits_.memory_bytes() + sizeof(*this); }
    double target_fpr() const noexcept { return geometry_.target_fpr; }
    geometry const& shape() const noexcept { return geometry_; }
    // The rate the current fill implies: (set bits / m)^k. It counts the bits themselves rather
    // than trusting size(), which misses elements whose bits were all set already (past the
    // expected n that is a tenth of them at 2n) and double-counts racing inserts. O(m / 64): call
    // it to report, not per k-mer. fpr_after(n) is the textbook formula for n distinct inserts.
    double false_positive_rate() const noexcept {
        double const fill =
            static_cast<double>(bits_.count()) / static_cast<double>(geometry_.bits);
        return std::pow(fill, static_cast<double>(geometry_.probes));
    }
    double fpr_after(size_t n) const noexcept {
        double const k = geometry_.probes;
        double const fill =
            1.0 - std::exp(-k * static_cast<double>(n) / static_cast<double>(geometry_.bits));
        return std::pow(fill, k);
    }

    atomic_bitset const& bits() const noexcept { return bits_; }
    // Index loading: the words written by bits().copy_words_to() and the size() they had.
    void restore(std::span<uint64_t const> words, size_t size) {
        bits_.copy_words_from(words);
        size_.reset(size);
    }

  private:
    geometry geometry_;
    atomic_bitset bits_;
    // Every `inserted` answer counts in its thread's shard: no line shared by the inserting
    // threads, none shared with geometry_, which every probe reads.
    alignas(no_sharing_bytes) sharded_count size_;
};

}  // namespace qmer
