// Bounded growing of core/qf/concurrent/locally_locked.hpp, single-threaded: every migration keeps
// the contents exactly (compared with the sequential reference fed the same keys), the contract
// suite runs through several doublings, and the false-positive rate grows linearly with n
// (printed).

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <vector>

#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/qf_makers.hpp"

namespace qmer::test {
namespace {

using qf::growing_policy;
using qf::locally_locked_filter;

using growing_types = ::testing::Types<growing_locally_locked, odd_growing_locally_locked>;
INSTANTIATE_TYPED_TEST_SUITE_P(growing, filter_contract, growing_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in growing_stress_test

TEST(growing, every_migration_keeps_the_contents) {
    locally_locked_filter f(8, 16, growing_policy{true, 0.9});
    std::set<uint64_t> oracle;
    auto const keys = distinct_keys(size_t{1} << 14, 31);  // 64x the initial capacity
    size_t growths = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
        ASSERT_NE(f.insert(keys[i]), insert_result::full) << i;
        oracle.insert(f.geometry().fingerprint(keys[i]));
        if (f.growths() != growths) {
            growths = f.growths();
            auto const g = f.geometry();
            EXPECT_EQ(g.fingerprint_bits(), 24u);
            // The new table equals the sequential reference of the new geometry fed the same keys.
            qf::sequential_filter ref(g.quotient_bits, g.remainder_bits);
            for (size_t j = 0; j <= i; ++j) ref.insert(keys[j]);
            ASSERT_EQ(fingerprints_of(f), fingerprints_of(ref)) << "after growth " << growths;
            ASSERT_EQ(fingerprints_of(f), std::vector<uint64_t>(oracle.begin(), oracle.end()));
            for (size_t j = 0; j <= i; ++j) ASSERT_TRUE(f.contains(keys[j])) << j;
        }
    }
    EXPECT_EQ(f.growths(), 7u);  // 256 -> 32768 slots: 16384 > 0.9 * 16384
    EXPECT_EQ(f.size(), oracle.size());
}

// release_retired_tables() frees exactly the tables left behind, keeps the contents and the
// growth count, and the filter goes on growing afterwards.
TEST(growing, release_retired_tables_frees_old_tables_only) {
    locally_locked_filter f(8, 16, growing_policy{true, 0.9});
    auto const keys = distinct_keys(size_t{1} << 14, 33);
    size_t const half = keys.size() / 2;
    for (size_t i = 0; i < half; ++i) ASSERT_NE(f.insert(keys[i]), insert_result::full);
    size_t const growths = f.growths();
    ASSERT_GE(growths, 5u);
    auto const before = fingerprints_of(f);
    size_t const bytes = f.memory_bytes();
    size_t const live = f.groups().size() * sizeof(uint64_t);
    size_t const freed = f.release_retired_tables();
    EXPECT_GT(freed, 0u);
    EXPECT_EQ(f.memory_bytes(), bytes - freed);
    EXPECT_LE(f.memory_bytes(), sizeof(f) + live + 64);  // the live table (64-byte rounding)
    EXPECT_EQ(f.growths(), growths);
    EXPECT_EQ(fingerprints_of(f), before);
    EXPECT_EQ(f.release_retired_tables(), 0u);  // nothing left to free
    for (size_t i = 0; i < half; ++i) ASSERT_TRUE(f.contains(keys[i])) << i;
    for (size_t i = half; i < keys.size(); ++i) ASSERT_NE(f.insert(keys[i]), insert_result::full);
    EXPECT_EQ(f.growths(), 7u);
    for (uint64_t k : keys) ASSERT_TRUE(f.contains(k));
}

// The element count publishes a thread's inserts once per count_batch of them (core/filter/
// sharded_count.hpp), and growth is decided on the published count: a doubling starts within one
// batch of grow_at on one thread (within shards * batch on many), 1/256 of the table at most.
TEST(growing, growth_starts_within_a_batch_of_its_fill) {
    for (double grow_at : {0.5, 0.9}) {
        locally_locked_filter f(18, 16, growing_policy{true, grow_at});
        size_t const batch = locally_locked_filter::count_batch(f.geometry());
        ASSERT_GT(batch, 1u);  // the published count really lags here
        double const threshold = grow_at * static_cast<double>(size_t{1} << 18);
        auto const keys = distinct_keys(size_t{1} << 18, 35);
        size_t inserted = 0;
        for (uint64_t k : keys) {
            insert_result const r = f.insert(k);
            ASSERT_NE(r, insert_result::full);
            inserted += r == insert_result::inserted;  // a fingerprint seen before adds nothing
            if (f.growths() != 0) break;
        }
        ASSERT_EQ(f.growths(), 1u) << grow_at;
        EXPECT_GE(static_cast<double>(inserted), threshold) << grow_at;
        EXPECT_LT(static_cast<double>(inserted), threshold + static_cast<double>(batch)) << grow_at;
        EXPECT_EQ(f.size(), inserted);
    }
}

TEST(growing, out_of_remainder_bits_answers_full) {
    locally_locked_filter f(10, 2, growing_policy{true, 0.9});
    size_t i = 0;
    auto const keys = distinct_keys(20000, 32);  // 4096 distinct 12-bit fingerprints
    for (; i < keys.size(); ++i)
        if (f.insert(keys[i]) == insert_result::full) break;
    EXPECT_LT(i, keys.size());
    EXPECT_EQ(f.geometry().remainder_bits, 1u);
    EXPECT_EQ(f.growths(), 1u);
    for (size_t j = 0; j < i; ++j) ASSERT_TRUE(f.contains(keys[j]));
}

// Section 2: the fingerprint keeps q + r bits, so the FPR is n / 2^(q+r) and doubles with n while
// the table grows. Measured after each doubling, printed, and checked against the formula.
TEST(growing, false_positive_rate_grows_linearly) {
    locally_locked_filter f(10, 12, growing_policy{true, 0.9});
    auto const keys = distinct_keys(size_t{1} << 16, 33);
    auto const probes = distinct_keys(QMER_TEST_SANITIZED ? 50000 : 400000, 34);
    size_t next = 1024;
    for (size_t i = 0; i < keys.size(); ++i) {
        f.insert(keys[i]);
        if (i + 1 == next) {
            size_t fp = 0;
            for (uint64_t k : probes) fp += f.contains(k);
            double const measured = static_cast<double>(fp) / static_cast<double>(probes.size());
            double const expected = qf_expected_fpr(f.geometry(), f.size());
            std::printf("n = %6zu  q = %2u  r = %2u  fpr measured %.6f  expected %.6f\n", f.size(),
                        f.geometry().quotient_bits, f.geometry().remainder_bits, measured,
                        expected);
            double const sd = std::sqrt(expected / static_cast<double>(probes.size()));
            EXPECT_NEAR(measured, expected, std::max(0.2 * expected, 4 * sd));
            next *= 2;
        }
    }
}

}  // namespace
}  // namespace qmer::test
