#include "app/query/verdict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
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

// log P(Binomial(n, p) >= t), summed from t upward in log space until the terms vanish: exact,
// and quick for the tails these tests need (t above the mean).
double log_upper_tail(uint64_t n, double p, uint64_t t) {
    if (t > n) return -INFINITY;
    double const nn = static_cast<double>(n), tt = static_cast<double>(t);
    double const log_pmf = std::lgamma(nn + 1) - std::lgamma(tt + 1) - std::lgamma(nn - tt + 1) +
                           tt * std::log(p) + (nn - tt) * std::log1p(-p);
    double sum = 0, term = 1;
    for (uint64_t i = t; i <= n && term >= 1e-20 * sum; ++i) {
        sum += term;
        term *= (nn - static_cast<double>(i)) / (static_cast<double>(i) + 1) * p / (1 - p);
    }
    return log_pmf + std::log(sum);
}

// Regression: (1 - p)^n underflows to 0 once n p > ~745, and a threshold started from it would ask
// a 1 Mbp read copied from the reference (999,970 hits of 999,970 k-mers) for n + 1 hits and never
// call it. Reads up to 100 Mbp get a threshold whose chance tail is at most 1e-5, within a hair of
// the exact one.
TEST(verdict, long_reads_get_a_threshold_they_can_reach) {
    double const log_tail = std::log(1e-5);
    for (double p : {1e-2, 1e-3, 1.0 / 1024, 1e-4, 1.0 / 65536}) {
        for (uint64_t n : {10'000u, 100'000u, 745'000u, 999'970u, 4'000'000u, 100'000'000u}) {
            uint64_t const t = verdict_rule::chance_threshold(n, p, 1e-5);
            double const mean = static_cast<double>(n) * p;
            ASSERT_GE(static_cast<double>(t), mean) << n << " " << p;
            ASSERT_LE(static_cast<double>(t), mean + 6 * std::sqrt(mean) + 30) << n << " " << p;
            EXPECT_LE(log_upper_tail(n, p, t), log_tail) << n << " " << p;
            // At most 1 in 10^4 above the exact threshold (the exact one below 10^6 k-mers).
            uint64_t const slack = n < 1'000'000 ? 1 : std::max<uint64_t>(1, t / 10'000);
            EXPECT_GT(log_upper_tail(n, p, t - slack), log_tail) << n << " " << p;
            verdict_rule rule;
            rule.kmer_fpr = p;
            EXPECT_TRUE(rule.matches(n, n)) << n << " " << p;
            EXPECT_TRUE(rule.matches(n, t)) << n << " " << p;
            EXPECT_FALSE(rule.matches(n, t - 1)) << n << " " << p;
            EXPECT_FALSE(rule.matches(n, 0)) << n << " " << p;
        }
    }
    // The read: 999,970 31-mers at p = 0.001.
    EXPECT_EQ(verdict_rule::chance_threshold(999'970, 0.001, 1e-5), 1139u);
}

// --quick relies on the threshold never falling as a read grows (hits_settling_match): checked
// for every length up to 10^5 k-mers and around 10^6 and 10^8, where the bound takes over from
// the exact sum.
TEST(verdict, threshold_never_falls_as_reads_grow) {
    for (double p : {1e-2, 1e-3, 1.0 / 65536}) {
        auto check = [p](uint64_t from, uint64_t to) {
            uint64_t previous = verdict_rule::chance_threshold(from, p, 1e-5);
            for (uint64_t n = from + 1; n <= to; ++n) {
                uint64_t const t = verdict_rule::chance_threshold(n, p, 1e-5);
                ASSERT_GE(t, previous) << n << " " << p;
                previous = t;
            }
        };
        check(1, 100'000);
        check(999'000, 1'001'000);
        check(99'999'000, 100'001'000);
    }
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

// A preset's rule: the default rule and a minimum containment, both required.
verdict_rule preset_rule(double p, double containment) {
    return verdict_rule::for_index(p, "long", containment, -1, -1);
}

TEST(verdict, preset_rule_needs_the_chance_bound_and_the_containment) {
    verdict_rule const rule = preset_rule(1e-3, 0.02);
    EXPECT_TRUE(rule.uses_chance_bound());
    EXPECT_FALSE(rule.is_default());
    // Short reads: the chance bound is the larger (4 of 120 k-mers; 0.02 * 120 = 2.4).
    EXPECT_FALSE(rule.matches(120, 3));
    EXPECT_TRUE(rule.matches(120, 4));
    // Long reads: the containment is (10 hits pass the chance bound of 1,482 k-mers at 0.001,
    // 0.02 * 1,482 = 29.64 asks for 30).
    EXPECT_EQ(verdict_rule::chance_threshold(1482, 1e-3, 1e-5), 10u);
    EXPECT_FALSE(rule.matches(1482, 29));
    EXPECT_TRUE(rule.matches(1482, 30));
    EXPECT_FALSE(rule.matches(0, 0));
    // A product that is an integer is reached exactly: 0.02 * 5,000 = 100.
    EXPECT_FALSE(rule.matches(5000, 99));
    EXPECT_TRUE(rule.matches(5000, 100));
}

TEST(verdict, options_replace_a_preset_rule) {
    verdict_rule const hits = verdict_rule::for_index(1e-3, "long", 0.02, 5, -1);
    EXPECT_FALSE(hits.uses_chance_bound());
    EXPECT_TRUE(hits.from_options);
    EXPECT_TRUE(hits.matches(1482, 5));  // the preset's 30 no longer applies
    EXPECT_FALSE(hits.matches(1482, 4));
    verdict_rule const containment = verdict_rule::for_index(1e-3, "long", 0.02, -1, 0.1);
    EXPECT_FALSE(containment.matches(1000, 99));
    EXPECT_TRUE(containment.matches(1000, 100));
    // No preset and no options: the default rule.
    verdict_rule const plain = verdict_rule::for_index(1e-3, "", -1, -1, -1);
    EXPECT_TRUE(plain.is_default());
    EXPECT_TRUE(plain.matches(1482, 10));
}

TEST(verdict, preset_rule_settles_and_tabulates_as_it_matches) {
    for (auto const& rule :
         {preset_rule(1e-3, 0.02), preset_rule(1e-2, 0.1), preset_rule(0, 0.5)}) {
        for (uint64_t max = 0; max <= 400; ++max) {
            uint64_t const settle = rule.hits_settling_match(max);
            ASSERT_GE(settle, 1u);
            for (uint64_t n = std::max<uint64_t>(settle, 1); n <= max; ++n)
                ASSERT_TRUE(rule.matches(n, settle)) << "max " << max << " n " << n;
            if (settle > 1 && settle <= max) {
                EXPECT_FALSE(rule.matches(max, settle - 1)) << "max " << max;
            }
        }
        qmer::app::verdict_table const table(rule, 300);
        for (uint64_t n : {0u, 1u, 2u, 31u, 120u, 299u, 300u, 301u, 1000u, 1482u}) {
            ASSERT_EQ(table.hits_settling_match(n), rule.hits_settling_match(n)) << n;
            for (uint64_t h = 0; h <= std::min<uint64_t>(n, 600); ++h)
                ASSERT_EQ(table.matches(n, h), rule.matches(n, h)) << n << " " << h;
        }
    }
}

TEST(verdict, describes_where_the_rule_comes_from) {
    EXPECT_EQ(preset_rule(0.001, 0.02).describe(false),
              "hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= 1e-5 (fpr = 0.001000) and "
              "containment >= 0.020000 (the rule of the index's preset long)");
    EXPECT_EQ(verdict_rule::for_index(0.001, "long", 0.02, 3, -1).describe(false),
              "hits >= 3 and containment >= 0.000000 (from --min-hits/--min-containment, in place "
              "of the rule of the index's preset long)");
    EXPECT_EQ(verdict_rule::for_index(0.001, "", -1, -1, 0.5).describe(false),
              "hits >= 0 and containment >= 0.500000 (from --min-hits/--min-containment)");
    // An index without a preset and a query without options: the default rule's text, as before.
    EXPECT_EQ(verdict_rule::for_index(0.001, "", -1, -1, -1).describe(false),
              verdict_rule{}.describe(false));
}

// The rule says what it decides: the text written to the TSV preamble and the summary.
TEST(verdict, describes_itself) {
    verdict_rule rule;
    rule.kmer_fpr = 0.001;
    EXPECT_EQ(rule.describe(false),
              "hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= 1e-5 (fpr = 0.001000)");
    rule.min_hits = 3;
    EXPECT_EQ(rule.describe(false), "hits >= 3 and containment >= 0.000000");
    rule.min_hits = -1;
    rule.min_containment = 0.5;
    EXPECT_EQ(rule.describe(false), "hits >= 0 and containment >= 0.500000");
    std::string const quick = rule.describe(true);
    EXPECT_EQ(quick.rfind("hits >= 0 and containment >= 0.500000; --quick: ", 0), 0u) << quick;
    // The default text's tail is the rule's.
    EXPECT_EQ(verdict_rule{}.tail, 1e-5);
}

}  // namespace
