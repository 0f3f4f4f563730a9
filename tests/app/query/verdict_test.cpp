#include "app/query/verdict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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

// --quick stops a read's lookups at hits_settling_match(max): every read with at most max k-mers
// and that many hits must match, whatever its other k-mers hold, and (except for the rule that
// calls everything) one hit fewer must not be enough at max k-mers, or --quick would stop late.
TEST(verdict, settling_hits_decide_every_read_up_to_the_bound) {
    auto rule_with = [](double p, int64_t hits, double containment) {
        verdict_rule r;
        r.kmer_fpr = p;
        r.min_hits = hits;
        r.min_containment = containment;
        return r;
    };
    std::vector<verdict_rule> const rules = {
        rule_with(1e-3, -1, -1),   rule_with(1.0 / 65536, -1, -1), rule_with(0, -1, -1),
        rule_with(1e-2, -1, -1),   rule_with(1e-3, 10, -1),        rule_with(1e-3, -1, 0.5),
        rule_with(1e-3, 60, 0.25), rule_with(1e-3, 0, -1)};
    for (auto const& rule : rules) {
        bool const calls_everything = rule.min_hits == 0 && rule.min_containment <= 0;
        for (uint64_t max = 0; max <= 300; ++max) {
            uint64_t const settle = rule.hits_settling_match(max);
            ASSERT_GE(settle, 1u);
            for (uint64_t n = std::max<uint64_t>(settle, 1); n <= max; ++n)
                ASSERT_TRUE(rule.matches(n, settle)) << "max " << max << " n " << n;
            if (!calls_everything && settle > 1 && settle <= max) {
                EXPECT_FALSE(rule.matches(max, settle - 1)) << "max " << max;
            }
        }
    }
}

// The table answers exactly as the rule, inside and past its precomputed range.
TEST(verdict, table_answers_as_the_rule) {
    for (double p : {0.0, 1e-3, 1e-2}) {
        for (int64_t min_hits : {int64_t{-1}, int64_t{5}}) {
            verdict_rule rule;
            rule.kmer_fpr = p;
            rule.min_hits = min_hits;
            qmer::app::verdict_table const table(rule, 300);
            for (uint64_t n : {0u, 1u, 2u, 31u, 120u, 299u, 300u, 301u, 1000u}) {
                ASSERT_EQ(table.hits_settling_match(n), rule.hits_settling_match(n)) << n;
                for (uint64_t h = 0; h <= std::min<uint64_t>(n, 40); ++h)
                    ASSERT_EQ(table.matches(n, h), rule.matches(n, h)) << p << " " << n << " " << h;
            }
        }
    }
}

}  // namespace
