#pragma once
// A distinct count of items that each belong to one group (a k-mer to its minimizer), taken from
// the items of a sample of the groups. Hashing and counting every k-mer would be a large share of
// qmer index's one read of the references (bench/index/README.md, "The sampled count"); counting
// the k-mers of one minimizer in eight hashes an eighth of them.
//
// The sample is a fixed 1/2^sample_bits of the groups, chosen by a uniform hash of the group, so
// every group is in it with that probability independently of its items, and 2^sample_bits times
// the sample's distinct count is an unbiased estimate of the whole (a sampling design of whole
// clusters). Its error depends on how unevenly the items spread over the groups: negligible when
// groups are many and small (random sequence: ~6.5 k-mers a minimizer), a few percent when a
// few thousand groups hold most items (the copies of a few repeat units). So the sample is cut
// into `strata` equal parts by more bits of the group's hash, each counted by its own HyperLogLog
// (Flajolet et al. 2007), and standard_error() is measured from how much their counts differ:
// the strata are random parts of the groups, so their spread shows both the sampling error and
// the sketches' own, whatever the data.
//
// Concurrency: add() is hyperloglog::add (lock-free, the result independent of the interleaving).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/sketch/hyperloglog.hpp"

namespace qmer::sketch {

class group_sampled_count {
  public:
    static constexpr unsigned sample_bits = 3;  // one group in 8
    static constexpr unsigned strata_bits = 5;  // 32 strata: their spread is an error estimate
    static constexpr unsigned strata = 1u << strata_bits;
    static constexpr unsigned not_sampled = ~0u;

    // precision: each stratum's HyperLogLog (2^precision registers; 11: 2 KiB each, 64 KiB in
    // all, 0.41% standard error for the 32 together).
    explicit group_sampled_count(unsigned precision = 11) {
        strata_.reserve(strata);
        for (unsigned s = 0; s < strata; ++s) strata_.emplace_back(precision);
    }

    // The stratum of a group, given a uniform 64-bit hash of it, or not_sampled. Its low bits
    // choose: a caller whose group hash places items by its top bits (qmer's bins and windows)
    // keeps the sample spread over all of them.
    static unsigned stratum_of(uint64_t group_hash) noexcept {
        if ((group_hash & ((uint64_t{1} << sample_bits) - 1)) != 0) return not_sampled;
        return static_cast<unsigned>(group_hash >> sample_bits) & (strata - 1);
    }
    // An item of a sampled group (stratum_of's answer), by a uniform 64-bit hash of the item.
    void add(unsigned stratum, uint64_t item_hash) noexcept { strata_[stratum].add(item_hash); }

    // The distinct items of all groups, estimated.
    double estimate() const noexcept {
        double sum = 0;
        for (auto const& s : strata_) sum += s.estimate();
        return std::ldexp(sum, sample_bits);
    }

    // estimate()'s relative standard error: the strata's counts vary by their sample standard
    // deviation s around their mean, so their sum (as the whole's estimate) by sqrt(strata) s;
    // never less than the sketches' own error, which a few strata can understate by chance.
    // Infinite when the sample holds nothing: a set with items under a few groups, none of them
    // sampled, and an empty set look the same from here.
    double standard_error() const noexcept {
        std::vector<double> counts;
        for (auto const& s : strata_) counts.push_back(s.estimate());
        double mean = 0;
        for (double c : counts) mean += c;
        mean /= strata;
        if (mean <= 0) return std::numeric_limits<double>::infinity();
        double squares = 0;
        for (double c : counts) squares += (c - mean) * (c - mean);
        double const measured = std::sqrt(squares / (strata - 1) / strata) / mean;
        double const sketches = strata_.front().standard_error() / std::sqrt(double{strata});
        return std::max(measured, sketches);
    }

    size_t memory_bytes() const noexcept { return strata * strata_.front().memory_bytes(); }

  private:
    std::vector<hyperloglog> strata_;
};

}  // namespace qmer::sketch
