// Both Bloom filters (core/bloom/): the typed filter contract suite (oracle, FPR within 20% of the
// analysis on 10^6 absent keys, no `full`), plus the sizing, probe placement and index round trip.
#include "core/bloom/bloom_filter.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <vector>

#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_makers.hpp"
#include "core/filter/contract_suite.hpp"

namespace qmer::test {
using bloom_types = ::testing::Types<qmer::bloom_filter, qmer::blocked_bloom_filter>;
INSTANTIATE_TYPED_TEST_SUITE_P(bloom, filter_contract, bloom_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in the stress test
}  // namespace qmer::test

namespace {

using qmer::blocked_bloom_filter;
using qmer::bloom_filter;
using qmer::insert_result;
using qmer::test::distinct_keys;

static_assert(qmer::amq_filter<bloom_filter>);
static_assert(qmer::amq_filter<blocked_bloom_filter>);

TEST(bloom_filter, plan_gives_the_textbook_size_and_probe_count) {
    // p = 1%: m/n = ln(100)/ln(2)^2 = 9.585 bits, k = round(9.585 ln 2) = 7.
    auto const g = bloom_filter::plan(1000000, 0.01);
    EXPECT_NEAR(static_cast<double>(g.bits) / 1e6, 9.585, 0.001);
    EXPECT_EQ(g.bits % 64, 0u);
    EXPECT_EQ(g.probes, 7u);
    // p = 0.1%: 14.38 bits, k = 10.
    auto const g3 = bloom_filter::plan(1000000, 0.001);
    EXPECT_NEAR(static_cast<double>(g3.bits) / 1e6, 14.378, 0.001);
    EXPECT_EQ(g3.probes, 10u);
    bloom_filter const f(g3);
    EXPECT_NEAR(f.fpr_after(1000000), 0.001, 0.00005);
}

TEST(bloom_filter, impossible_parameters_are_refused) {
    EXPECT_THROW(bloom_filter(0, 0.01), std::invalid_argument);
    EXPECT_THROW(bloom_filter(100, 0.0), std::invalid_argument);
    EXPECT_THROW(bloom_filter(100, 1.0), std::invalid_argument);
    EXPECT_THROW(blocked_bloom_filter(100, -0.5), std::invalid_argument);
    EXPECT_THROW(blocked_bloom_filter(0, 0.01), std::invalid_argument);
}

TEST(bloom_filter, one_insert_sets_at_most_k_bits_and_answers_inserted_once) {
    bloom_filter f(1000, 0.01);
    EXPECT_EQ(f.insert(42), insert_result::inserted);
    size_t const set = f.bits().count();
    EXPECT_GE(set, 1u);
    EXPECT_LE(set, f.shape().probes);
    EXPECT_EQ(f.insert(42), insert_result::already_present);
    EXPECT_EQ(f.bits().count(), set);
    EXPECT_EQ(f.size(), 1u);
    EXPECT_TRUE(f.contains(42));
}

TEST(blocked_bloom_filter, plan_meets_the_target_and_pays_for_blocking) {
    for (double p : {0.01, 0.001, 0.0001}) {
        auto const g = blocked_bloom_filter::plan(1000000, p);
        double const fpr = blocked_bloom_filter::blocked_fpr(1e6, g.blocks, g.probes);
        EXPECT_LE(fpr, p);
        // Not wastefully large: one 1% step less would miss the target or be within a block.
        EXPECT_GT(fpr, 0.9 * p) << p;
        double const plain_bits = static_cast<double>(bloom_filter::plan(1000000, p).bits);
        double const blocked_bits = static_cast<double>(g.blocks * 512);
        EXPECT_GT(blocked_bits, plain_bits) << "blocking costs space at the same p";
        EXPECT_LT(blocked_bits, 1.6 * plain_bits) << p;
    }
}

TEST(blocked_bloom_filter, all_probes_fall_in_one_cache_line) {
    blocked_bloom_filter f(100000, 0.001);
    for (uint64_t key : distinct_keys(200, 9)) {
        blocked_bloom_filter g(f.shape());
        ASSERT_EQ(g.insert(key), insert_result::inserted);
        std::vector<uint64_t> words(g.bits().word_count());
        g.bits().copy_words_to(words);
        size_t first = words.size(), last = 0, set = 0;
        for (size_t w = 0; w < words.size(); ++w) {
            if (words[w] == 0) continue;
            first = std::min(first, w);
            last = w;
            set += std::popcount(words[w]);
        }
        ASSERT_LT(first, words.size());
        EXPECT_EQ(first / 8, last / 8) << "bits in two different 512-bit blocks";
        EXPECT_LE(set, f.shape().probes);
    }
}

// Blocks start at multiples of 8 words of a 64-byte aligned array: one block is one cache line.
TEST(blocked_bloom_filter, words_are_cache_line_aligned) {
    qmer::atomic_word_array w(1024);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data()) % 64, 0u);
    qmer::atomic_word_array big(size_t{1} << 20);  // 8 MiB: huge-page aligned
    EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % (size_t{2} << 20), 0u);
}

// The formula also holds past the expected n (the FPR a user gets by under-sizing), here at 2n.
template <typename F>
void check_overfilled_fpr() {
    F f(20000, 0.01);
    for (uint64_t key : distinct_keys(40000, 21)) f.insert(key);
    size_t fp = 0;
    size_t const probes = 1000000;
    for (uint64_t key : distinct_keys(probes, 22)) fp += f.contains(key);
    double const measured = static_cast<double>(fp) / probes;
    double const expected = f.fpr_after(40000);
    EXPECT_GT(expected * probes, 1000.0);
    EXPECT_NEAR(measured, expected, 0.2 * expected) << fp;
    // false_positive_rate() reads the fill off the bits: it predicts what was measured.
    EXPECT_NEAR(f.false_positive_rate(), measured, 0.2 * expected);
    EXPECT_LT(f.size(), 40000u) << "insert-time false positives answer already_present";
}

TEST(bloom_filter, fpr_matches_the_formula_when_overfilled) {
    check_overfilled_fpr<bloom_filter>();
}
TEST(blocked_bloom_filter, fpr_matches_the_formula_when_overfilled) {
    check_overfilled_fpr<blocked_bloom_filter>();
}

// p = 0.1% needs k > 7 probes, past the 7 nine-bit fields one remix of the blocked filter gives:
// the probes after the 7th must be as independent as the first (an early version reused one bit of
// entropy for them, and its FPR stayed within 20% at the contract suite's k <= 7).
template <typename F>
void check_many_probes_fpr() {
    F f(200000, 0.001);
    ASSERT_GT(f.shape().probes, 7u);
    for (uint64_t key : distinct_keys(200000, 23)) f.insert(key);
    size_t fp = 0;
    size_t const probes = 1000000;
    for (uint64_t key : distinct_keys(probes, 24)) fp += f.contains(key);
    double const expected = f.fpr_after(200000);
    EXPECT_GT(expected * probes, 900.0);
    EXPECT_NEAR(static_cast<double>(fp) / probes, expected, 0.2 * expected) << fp;
}

TEST(bloom_filter, fpr_matches_with_more_than_seven_probes) {
    check_many_probes_fpr<bloom_filter>();
}
TEST(blocked_bloom_filter, fpr_matches_with_more_than_seven_probes) {
    check_many_probes_fpr<blocked_bloom_filter>();
}

template <typename F>
void check_round_trip() {
    F f(5000, 0.01);
    auto const keys = distinct_keys(5000, 30);
    for (uint64_t key : keys) f.insert(key);
    std::vector<uint64_t> words(f.bits().word_count());
    f.bits().copy_words_to(words);
    F g(f.shape());
    g.restore(words, f.size());
    EXPECT_EQ(g.size(), f.size());
    for (uint64_t key : keys) ASSERT_TRUE(g.contains(key));
    for (uint64_t key : distinct_keys(10000, 31)) ASSERT_EQ(g.contains(key), f.contains(key));
}

TEST(bloom_filter, raw_words_round_trip) {
    check_round_trip<bloom_filter>();
}
TEST(blocked_bloom_filter, raw_words_round_trip) {
    check_round_trip<blocked_bloom_filter>();
}

}  // namespace
