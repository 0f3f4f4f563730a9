// The lock-free cuckoo filter (core/cuckoo/cuckoo_filter.hpp), single-threaded: the typed filter
// contract suite (oracle, FPR within 20% of the analysis on 10^6 absent keys, `full` without losing
// anything), the bucket word encoding, partial-key cuckoo hashing and the retry test's arithmetic.
#include "core/cuckoo/cuckoo_filter.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/filter/contract_suite.hpp"

template <typename Hook>
struct qmer::test::filter_maker<qmer::basic_cuckoo_filter<Hook>> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.9;  // of the slots; 4-slot buckets reach ~95%
    static std::unique_ptr<qmer::basic_cuckoo_filter<Hook>> make(size_t capacity, double) {
        return std::make_unique<qmer::basic_cuckoo_filter<Hook>>(capacity);
    }
    static double expected_fpr(qmer::basic_cuckoo_filter<Hook> const& f, size_t n) {
        return f.fpr_after(n);
    }
};

namespace qmer::test {
using cuckoo_types = ::testing::Types<qmer::cuckoo_filter>;
INSTANTIATE_TYPED_TEST_SUITE_P(cuckoo, filter_contract, cuckoo_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in the stress test
}  // namespace qmer::test

namespace {

using qmer::cuckoo_filter;
using qmer::insert_result;
using qmer::test::distinct_keys;

static_assert(qmer::amq_filter<cuckoo_filter>);

TEST(cuckoo_filter, bucket_word_holds_four_fingerprints_and_a_counter) {
    uint64_t w = 0;
    w = cuckoo_filter::changed(w, 0, 0xabc);
    w = cuckoo_filter::changed(w, 3, 0xfff);
    EXPECT_EQ(cuckoo_filter::slot(w, 0), 0xabcu);
    EXPECT_EQ(cuckoo_filter::slot(w, 1), 0u);
    EXPECT_EQ(cuckoo_filter::slot(w, 3), 0xfffu);
    EXPECT_EQ(cuckoo_filter::counter(w), 2u);
    EXPECT_EQ(cuckoo_filter::find(w, 0), 1);
    EXPECT_EQ(cuckoo_filter::find(w, 0xfff), 3);
    w = cuckoo_filter::changed(w, 0, 0);  // clearing also counts as a change
    EXPECT_EQ(cuckoo_filter::slot(w, 0), 0u);
    EXPECT_EQ(cuckoo_filter::counter(w), 3u);
    // The counter wraps modulo 2^16 without touching the fingerprints.
    uint64_t x = cuckoo_filter::changed(0, 2, 0x123) | (uint64_t{0xffff} << 48);
    x = cuckoo_filter::changed(x, 1, 0x456);
    EXPECT_EQ(cuckoo_filter::counter(x), 0u);
    EXPECT_EQ(cuckoo_filter::slot(x, 2), 0x123u);
    EXPECT_EQ(cuckoo_filter::slot(x, 1), 0x456u);
}

TEST(cuckoo_filter, zero_fingerprint_becomes_one) {
    EXPECT_EQ(cuckoo_filter::fingerprint(0x1000), 1u);
    EXPECT_EQ(cuckoo_filter::fingerprint(0xabcd000), 1u);
    EXPECT_EQ(cuckoo_filter::fingerprint(0x1001), 1u);
    EXPECT_EQ(cuckoo_filter::fingerprint(0x1fff), 0xfffu);
    cuckoo_filter f(100);
    EXPECT_EQ(f.insert(0x1000), insert_result::inserted);
    EXPECT_TRUE(f.contains(0x1000));
    EXPECT_TRUE(f.contains(0x1001))
        << "same fingerprint 1, same bucket: a false positive by design";
}

TEST(cuckoo_filter, partial_key_alternate_is_an_involution_onto_a_different_bucket) {
    for (uint64_t buckets : {2u, 4u, 1024u, 65536u}) {
        cuckoo_filter f(buckets, 0);
        for (uint64_t key : distinct_keys(5000, 40)) {
            uint64_t const fp = cuckoo_filter::fingerprint(key);
            uint64_t const i1 = f.first_bucket(key);
            uint64_t const i2 = f.alt_bucket(i1, fp);
            ASSERT_LT(i1, buckets);
            ASSERT_LT(i2, buckets);
            ASSERT_NE(i1, i2);
            ASSERT_EQ(f.alt_bucket(i2, fp), i1);
        }
    }
}

TEST(cuckoo_filter, sizing_and_bad_geometry) {
    EXPECT_EQ(cuckoo_filter::buckets_for(1), 2u);
    EXPECT_EQ(cuckoo_filter::buckets_for(1000), 512u);  // 1000 / 3.8 = 264 -> 512
    cuckoo_filter f(1000);
    EXPECT_EQ(f.capacity(), 2048u);
    EXPECT_EQ(f.memory_bytes() >= 512 * 8, true);
    EXPECT_THROW(cuckoo_filter(0), std::invalid_argument);
    EXPECT_THROW(cuckoo_filter(uint64_t{3}, 0), std::invalid_argument);
    EXPECT_THROW(cuckoo_filter(uint64_t{1}, 0), std::invalid_argument);
}

TEST(cuckoo_filter, retry_test_counts_modulo_two_to_the_sixteen) {
    EXPECT_TRUE(cuckoo_filter::must_retry(5, 9, 7, 11));
    EXPECT_FALSE(cuckoo_filter::must_retry(5, 9, 6, 11));
    EXPECT_FALSE(cuckoo_filter::must_retry(5, 9, 7, 10));
    EXPECT_TRUE(cuckoo_filter::must_retry(65535, 65534, 1, 0));  // both wrapped, both moved twice
    EXPECT_FALSE(cuckoo_filter::must_retry(65535, 65534, 0, 0));
}

// Fill tiny tables to `full` many times: every element answered `inserted` before must still be
// there (a failed kick chain loses nothing), and the load reached is what 4-slot buckets allow.
TEST(cuckoo_filter, full_loses_nothing_and_comes_late) {
    double min_load = 1;
    for (uint64_t round = 0; round < 40; ++round) {
        cuckoo_filter f(uint64_t{64}, 0);  // 256 slots
        auto const keys = distinct_keys(1000, 50 + round);
        std::vector<uint64_t> stored;
        size_t i = 0;
        for (; i < keys.size(); ++i) {
            auto const r = f.insert(keys[i]);
            if (r == insert_result::full) break;
            if (r == insert_result::inserted) stored.push_back(keys[i]);
        }
        ASSERT_LT(i, keys.size());
        for (uint64_t key : stored) ASSERT_TRUE(f.contains(key)) << round;
        EXPECT_EQ(f.size(), stored.size());
        // After `full`, more inserts keep answering and still lose nothing.
        for (size_t j = i; j < i + 50; ++j) (void)f.insert(keys[j]);
        for (uint64_t key : stored) ASSERT_TRUE(f.contains(key)) << round;
        min_load = std::min(min_load, static_cast<double>(i) / f.capacity());
    }
    EXPECT_GT(min_load, 0.85);
}

TEST(cuckoo_filter, migrate_moves_between_the_two_buckets_and_keeps_the_key) {
    cuckoo_filter f(uint64_t{256}, 0);
    uint64_t const key = distinct_keys(1, 60)[0];
    ASSERT_EQ(f.insert(key), insert_result::inserted);
    uint64_t const fp = cuckoo_filter::fingerprint(key);
    uint64_t const i1 = f.first_bucket(key);
    uint64_t const i2 = f.alt_bucket(i1, fp);
    auto word = [&](uint64_t b) { return f.buckets()[b].load(); };
    ASSERT_TRUE(cuckoo_filter::holds(word(i1), fp));
    for (int k = 0; k < 5; ++k) {
        ASSERT_TRUE(f.migrate(key));
        bool const in1 = cuckoo_filter::holds(word(i1), fp);
        EXPECT_NE(in1, cuckoo_filter::holds(word(i2), fp)) << "exactly one copy after a move";
        EXPECT_EQ(in1, k % 2 == 1);
        EXPECT_TRUE(f.contains(key));
    }
    EXPECT_EQ(cuckoo_filter::counter(word(i1)), 6u);  // insert + 5 moves
    EXPECT_EQ(cuckoo_filter::counter(word(i2)), 5u);
    EXPECT_FALSE(f.migrate(distinct_keys(1, 61)[0]));
}

TEST(cuckoo_filter, raw_words_round_trip) {
    cuckoo_filter f(5000);
    auto const keys = distinct_keys(4000, 70);
    for (uint64_t key : keys) ASSERT_NE(f.insert(key), insert_result::full);
    std::vector<uint64_t> words(f.bucket_count());
    f.buckets().copy_to(words);
    cuckoo_filter g(f.bucket_count(), 0);
    g.restore(words, f.size());
    for (uint64_t key : keys) ASSERT_TRUE(g.contains(key));
    for (uint64_t key : distinct_keys(10000, 71)) ASSERT_EQ(g.contains(key), f.contains(key));
}

}  // namespace
