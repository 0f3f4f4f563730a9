#include "core/sketch/hyperloglog.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/kmer/hash.hpp"

namespace {

using qmer::sketch::hyperloglog;

// n distinct hashes (a seeded XXH3 of 0..n-1, as qmer hashes k-mers), each added `copies` times.
double estimate_of(uint64_t n, unsigned copies, unsigned precision = 14) {
    hyperloglog h(precision);
    qmer::kmer_hasher const hasher{12345};
    for (unsigned c = 0; c < copies; ++c)
        for (uint64_t i = 0; i < n; ++i) h.add(hasher(i));
    return h.estimate();
}

TEST(hyperloglog, empty_estimates_zero) {
    EXPECT_EQ(hyperloglog().estimate(), 0.0);
}

// Within 4 standard errors (0.81% each at p = 14) of the exact count, small and large.
TEST(hyperloglog, estimates_distinct_counts_within_four_standard_errors) {
    for (uint64_t n : {100u, 1000u, 10000u, 40000u, 100000u, 1000000u, 4000000u}) {
        double const e = estimate_of(n, 1);
        EXPECT_NEAR(e, static_cast<double>(n), 4 * 0.0081 * static_cast<double>(n)) << n;
    }
}

TEST(hyperloglog, duplicates_do_not_change_the_estimate) {
    EXPECT_EQ(estimate_of(50000, 1), estimate_of(50000, 3));
}

TEST(hyperloglog, lower_precision_is_less_accurate_but_still_close) {
    hyperloglog h(10);
    EXPECT_NEAR(h.standard_error(), 1.04 / 32, 1e-12);
    double const e = estimate_of(200000, 1, 10);
    EXPECT_NEAR(e, 200000.0, 4 * (1.04 / 32) * 200000.0);
}

TEST(hyperloglog, rejects_an_unusable_precision) {
    EXPECT_THROW(hyperloglog(3), std::invalid_argument);
    EXPECT_THROW(hyperloglog(19), std::invalid_argument);
}

}  // namespace
