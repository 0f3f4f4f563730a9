#pragma once
// A cache-blocked, lock-free Bloom filter (Putze, Sanders & Singler, "Cache-, hash- and space-
// efficient Bloom filters", WEA 2007, section 3): the hash picks one 64-byte block (512 bits, one
// cache line, 8 atomic words) and all k probes fall inside it, so an operation costs one cache miss
// instead of k. The price is a higher false-positive rate at the same m and k, because blocks
// receive unequal numbers of elements; sizing accounts for it (see plan()).
//
// Contract and concurrency are those of bloom_filter (core/bloom/bloom_filter.hpp): bits are only
// set, with one fetch_or per touched word (acq_rel; loads acquire), so concurrent inserts never
// lose bits and there are no false negatives; `inserted` = at least one bit changed; never `full`.
//
// Probes from the one 64-bit hash h: the block is reduce(h, blocks) (the high bits of h); the k
// in-block positions are 9-bit fields of fmix64(h ^ salt), a bijective remix whose bits are
// independent-looking of the block choice, taken 7 at a time (63 bits) and remixed for more.
//
// FPR (Putze et al., eq. for blocked filters): with B = 512 bits per block and lambda = n B / m
// elements per block on average, FPR = sum_i Poisson(i; lambda) * (1 - (1 - 1/B)^{i k})^k.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "core/bitset/atomic_bitset.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/filter/filter.hpp"
#include "core/filter/sharded_count.hpp"

namespace qmer {

class blocked_bloom_filter {
  public:
    static constexpr uint64_t block_bits = 512;
    static constexpr uint64_t block_words = block_bits / 64;

    struct geometry {
        uint64_t blocks = 0;
        uint32_t probes = 0;
        uint64_t expected_n = 0;
        double target_fpr = 0;
    };

    // The blocked filter's analytic FPR for n elements in `blocks` blocks with k probes.
    static double blocked_fpr(double n, uint64_t blocks, uint32_t k) noexcept {
        double const lambda = n / static_cast<double>(blocks);
        double const miss_one = std::log1p(-1.0 / static_cast<double>(block_bits));
        // Sum the Poisson terms around the mean; beyond 12 standard deviations they are < 1e-30.
        auto const hi = static_cast<uint64_t>(lambda + 12 * std::sqrt(lambda) + 20);
        double sum = 0;
        double log_pois = -lambda;  // log Poisson(0; lambda)
        for (uint64_t i = 0; i <= hi; ++i) {
            if (i > 0) log_pois += std::log(lambda) - std::log(static_cast<double>(i));
            double const inner = std::pow(-std::expm1(static_cast<double>(i) * k * miss_one),
                                          static_cast<double>(k));
            sum += std::exp(log_pois) * inner;
        }
        return sum;
    }

    // The fewest blocks (and the best k for them) whose blocked FPR at n is <= p. Starts from the
    // unblocked optimum and grows m by 1% steps: the blocking penalty is a few tens of percent of
    // space at the rates qmer uses, so this takes tens of steps.
    static geometry plan(size_t expected_n, double fpr) {
        bloom_detail::check_parameters(expected_n, fpr, "blocked bloom filter");
        double const n = static_cast<double>(expected_n);
        double const ln2 = std::log(2.0);
        double bits = n * std::log(1.0 / fpr) / (ln2 * ln2);
        for (;;) {
            uint64_t const blocks =
                std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / block_bits)));
            uint32_t best_k = 1;
            double best = blocked_fpr(n, blocks, 1);
            for (uint32_t k = 2; k <= bloom_detail::max_probes; ++k) {
                double const f = blocked_fpr(n, blocks, k);
                if (f < best) best = f, best_k = k;
            }
            if (best <= fpr) return {blocks, best_k, expected_n, fpr};
            bits = std::max(bits * 1.01, static_cast<double>((blocks + 1) * block_bits));
        }
    }

    blocked_bloom_filter(size_t expected_n, double fpr)
        : blocked_bloom_filter(plan(expected_n, fpr)) {}
    explicit blocked_bloom_filter(geometry g) : geometry_(g), bits_(g.blocks * block_bits) {
        if (g.blocks == 0 || g.probes == 0 || g.probes > bloom_detail::max_probes)
            throw std::invalid_argument("blocked bloom filter: impossible geometry");
    }

    insert_result insert(uint64_t h) noexcept {
        std::array<uint64_t, block_words> mask{};
        uint64_t const first = block_masks(h, mask);
        // Read the block's words in ascending order (one cache line: the first load brings it in)
        // and keep the missing bits per word.
        std::array<uint64_t, block_words> missing{};
        int lowest = -1;  // the word holding the arbiter: the lowest missing bit of the block
        for (uint64_t w = 0; w < block_words; ++w) {
            missing[w] = mask[w] & ~bits_.load_word(first + w);
            if (missing[w] != 0 && lowest < 0) lowest = static_cast<int>(w);
        }
        if (lowest < 0) return insert_result::already_present;
        // The other words first, the arbiter's word last (bloom_filter's argument with "probe
        // order" read as "bit position in the block", the order the words are read in; the
        // arbiter word's other missing bits ride in the same RMW, so they are seen together).
        for (uint64_t w = block_words; w-- > static_cast<uint64_t>(lowest) + 1;)
            if (missing[w] != 0) bits_.fetch_or_word(first + w, missing[w]);
        uint64_t const arbiter = missing[lowest] & (~missing[lowest] + 1);  // lowest set bit
        if ((bits_.fetch_or_word(first + lowest, missing[lowest]) & arbiter) != 0)
            return insert_result::already_present;  // a concurrent insert set it first
        size_.count_one();                          // a statistic, as in bloom_filter
        return insert_result::inserted;
    }

    bool contains(uint64_t h) const noexcept {
        std::array<uint64_t, block_words> mask{};
        uint64_t const first = block_masks(h, mask);
        // Check every word without branching per word: the line is loaded once either way.
        bool all = true;
        for (uint64_t w = 0; w < block_words; ++w)
            all &= (bits_.load_word(first + w) & mask[w]) == mask[w];
        return all;
    }

    void prefetch(uint64_t h) const noexcept {
        bits_.prefetch_word(bloom_detail::reduce(h, geometry_.blocks) * block_words);
    }

    // Exact when no insert runs (core/filter/sharded_count.hpp).
    size_t size() const noexcept { return size_.load(); }
    size_t capacity() const noexcept { return geometry_.expected_n; }
    size_t memory_bytes() const noexcept { return bits_.memory_bytes() + sizeof(*this); }
    double target_fpr() const noexcept { return geometry_.target_fpr; }
    geometry const& shape() const noexcept { return geometry_; }
    // The rate the current bits imply: the mean over blocks of (set bits in the block / 512)^k, the
    // probability that k probes into a uniformly chosen block all hit set bits (with replacement,
    // as the probes are drawn). Counts bits, not size() (see bloom_filter); O(m / 64).
    double false_positive_rate() const noexcept {
        double sum = 0;
        for (uint64_t b = 0; b < geometry_.blocks; ++b) {
            int ones = 0;
            for (uint64_t w = 0; w < block_words; ++w)
                ones += std::popcount(bits_.load_word(b * block_words + w));
            sum += std::pow(ones / static_cast<double>(block_bits), geometry_.probes);
        }
        return sum / static_cast<double>(geometry_.blocks);
    }
    double fpr_after(size_t n) const noexcept {
        return blocked_fpr(static_cast<double>(n), geometry_.blocks, geometry_.probes);
    }

    atomic_bitset const& bits() const noexcept { return bits_; }
    void restore(std::span<uint64_t const> words, size_t size) {
        bits_.copy_words_from(words);
        size_.reset(size);
    }

  private:
    // Fills the per-word probe masks of h's block and returns the block's first word index.
    uint64_t block_masks(uint64_t h, std::array<uint64_t, block_words>& mask) const noexcept {
        uint64_t const block = bloom_detail::reduce(h, geometry_.blocks);
        uint64_t const seed = bloom_detail::fmix64(h ^ 0x5851f42d4c957f2dULL);
        uint64_t bits = seed;
        unsigned left = 7;  // 9-bit fields left in `bits`
        for (uint32_t i = 0; i < geometry_.probes; ++i) {
            // Remix the full 64-bit seed, not the shifted-out remainder (1 bit left after 7 fields:
            // every key would get the same probes 8 and up, as an early version did).
            if (left == 0) bits = bloom_detail::fmix64(seed + i * 0x9e3779b97f4a7c15ULL), left = 7;
            uint64_t const pos = bits & (block_bits - 1);
            bits >>= 9;
            --left;
            mask[pos >> 6] |= uint64_t{1} << (pos & 63);
        }
        return block * block_words;
    }

    geometry geometry_;
    atomic_bitset bits_;
    alignas(no_sharing_bytes) sharded_count size_;
};

}  // namespace qmer
