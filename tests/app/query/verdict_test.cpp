#include "app/query/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using qmer::app::verdict_rule;

// Exact binomial upper tail for checking the threshold.
double upper_tail(uint64_t n, double p, uint64_t t) {
    double sum = 0;
    for (uint64_t i = t; i <= n; ++i)
        sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                        static_cast<double>(i) * std::log(p) +
                        static_cast<double>(n - i) * std::log1p(-p));
    return sum;
}

TEST(verdict, exact_set_needs_one_hit) {
    verdict_rule rule;
    rule.kmer_fpr = 0;
    EXPECT_FALSE(rule.matches(120, 0));
    EXPECT_TRUE(rule.matches(120, 1));
    EXPECT_FALSE(rule.matches(0, 0));
}

TEST(verdict, threshold_is_the_smallest_with_a_small_enough_tail) {
    for (double p : {1e-2, 1e-3, 1.0 / 1024, 1e-4, 1.0 / 65536}) {
        for (uint64_t n : {1u, 10u, 50u, 120u, 220u, 1000u, 10000u}) {
            uint64_t const t = verdict_rule::chance_threshold(n, p, 1e-5);
            ASSERT_GE(t, 1u);
            if (t <= n) {
                EXPECT_LE(upper_tail(n, p, t), 1e-5 * 1.0001) << n << " " << p;
            }
            if (t > 1) {
                EXPECT_GT(upper_tail(n, p, t - 1), 1e-5) << n << " " << p;
            }
        }
    }
    // The worked example of the header: 120 31-mers at p = 0.001 need 4 hits.
    EXPECT_EQ(verdict_rule::chance_threshold(120, 0.001, 1e-5), 4u);
}

TEST(verdict, user_thresholds_replace_the_default) {
    verdict_rule rule;
    rule.min_hits = 10;
    EXPECT_FALSE(rule.matches(100, 9));
    EXPECT_TRUE(rule.matches(100, 10));
    rule.min_hits = -1;
    rule.min_containment = 0.5;
    EXPECT_FALSE(rule.matches(100, 49));
    EXPECT_TRUE(rule.matches(100, 50));
    rule.min_hits = 60;
    EXPECT_FALSE(rule.matches(100, 55));
    EXPECT_TRUE(rule.matches(100, 60));
    EXPECT_FALSE(rule.matches(0, 0));
}

TEST(verdict, zero_thresholds_call_everything_with_kmers) {
    verdict_rule rule;
    rule.min_hits = 0;
    EXPECT_TRUE(rule.matches(10, 0));
    EXPECT_FALSE(rule.matches(0, 0));
}

}  // namespace
