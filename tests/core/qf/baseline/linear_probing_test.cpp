#include "core/qf/baseline/linear_probing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/linear_probing_maker.hpp"

using qmer::insert_result;
using qmer::qf::linear_probing;

// Size for `capacity` elements at a k-mer FPR near `fpr` when filled to max_fill: at 95% fill a
// query compares ~200 remainders (Knuth), so the stored remainder needs log2(200 / fpr) bits.

namespace qmer::test {
using lp_types = ::testing::Types<linear_probing>;
INSTANTIATE_TYPED_TEST_SUITE_P(linear_probing, filter_contract, lp_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in the *_stress_test
}  // namespace qmer::test

namespace {

using qmer::test::distinct_keys;

// The obviously correct model: an array of remainders, probed slot by slot. The filter must hold
// exactly the same remainders in exactly the same slots, and answer every query as the model does.
struct lp_model {
    std::vector<uint64_t> slots;
    explicit lp_model(size_t n) : slots(n, 0) {}
    insert_result insert(size_t c, uint64_t rem) {
        for (size_t s = c; s < slots.size(); ++s) {
            if (slots[s] == rem) return insert_result::already_present;
            if (slots[s] == 0) {
                slots[s] = rem;
                return insert_result::inserted;
            }
        }
        return insert_result::full;
    }
    bool contains(size_t c, uint64_t rem) const {
        for (size_t s = c; s < slots.size(); ++s) {
            if (slots[s] == rem) return true;
            if (slots[s] == 0) return false;
        }
        return false;
    }
};

TEST(linear_probing, fingerprint_is_the_top_bits_and_remainders_are_never_zero) {
    linear_probing f(10, 5);  // stored remainders of 8 bits
    uint64_t const h = 0xABCDEF0123456789ULL;
    EXPECT_EQ(f.quotient(h), h >> 54);
    EXPECT_EQ(f.remainder(h), (h >> 46) & 0xFF);
    // A zero top remainder takes the low bits of the hash instead, then 1.
    uint64_t const zero_top = (uint64_t{0x155} << 54) | 0x2A;
    EXPECT_EQ(f.remainder(zero_top), 0x2Au);
    EXPECT_EQ(f.remainder(uint64_t{0x155} << 54), 1u);
    for (uint64_t key : distinct_keys(100000, 11)) ASSERT_NE(f.remainder(key), 0u);
    EXPECT_EQ(f.slot_bits(), 8u);
    EXPECT_EQ(f.capacity(), 1024u);
}

TEST(linear_probing, matches_the_model_slot_for_slot_up_to_95_percent_fill) {
    unsigned const q = 14, r = 3;  // short remainders: many equal remainders, many false positives
    linear_probing f(q, r);
    lp_model model(f.slots().slot_count());
    size_t const n = (size_t{1} << q) * 95 / 100;
    auto const keys = distinct_keys(n, 21);
    size_t stored = 0;
    for (uint64_t key : keys) {
        auto const expected = model.insert(f.quotient(key), f.remainder(key));
        ASSERT_EQ(f.insert(key), expected);
        stored += expected == insert_result::inserted;
    }
    EXPECT_EQ(f.size(), stored);
    EXPECT_LT(stored, n) << "with 6-bit remainders some inserts must meet their remainder";
    for (size_t s = 0; s < model.slots.size(); ++s)
        ASSERT_EQ(f.slots().get(s), model.slots[s]) << s;
    for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
    // Absent keys: the filter answers exactly what the model answers, false positives included.
    size_t positives = 0;
    for (uint64_t key : distinct_keys(200000, 22)) {
        bool const expected = model.contains(f.quotient(key), f.remainder(key));
        ASSERT_EQ(f.contains(key), expected);
        positives += expected;
    }
    EXPECT_GT(positives, 0u);
}

TEST(linear_probing, elements_probe_into_the_overflow_area_and_then_report_full) {
    linear_probing f(4, 10);  // 16 canonical slots + 256 overflow slots
    // Every key has the last canonical slot: each insert goes one slot further, until the end.
    size_t const total = f.slots().slot_count();
    std::vector<uint64_t> keys;
    for (uint64_t i = 0;; ++i) {
        ASSERT_LT(i, 100000u) << "never reported full";
        uint64_t const key = (uint64_t{15} << 60) | (qmer::test::mix_key(i) >> 4);
        auto const r = f.insert(key);
        if (r == insert_result::full) break;
        if (r == insert_result::inserted) keys.push_back(key);
    }
    EXPECT_EQ(f.size(), total - 15) << "slots 15 .. end are all taken";
    EXPECT_EQ(keys.size(), total - 15);
    for (uint64_t key : keys) EXPECT_TRUE(f.contains(key));
    // An element with another canonical slot still fits before slot 15.
    EXPECT_EQ(f.insert(uint64_t{3} << 60 | 0x77777), insert_result::inserted);
}

// Measured on 10^6 absent keys against this table's exact expectation and Knuth's formula (sparse
// and medium fill, where one table is representative).
TEST(linear_probing, false_positive_rate_follows_knuth_on_sparse_tables) {
    unsigned const q = 16, r = 7;  // 10-bit stored remainders: thousands of false positives
    for (double fill : {0.3, 0.5, 0.7}) {
        linear_probing f(q, r);
        size_t const n = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
        for (uint64_t key : distinct_keys(n, 31)) ASSERT_NE(f.insert(key), insert_result::full);
        size_t const probes = 1000000;
        size_t fp = 0;
        for (uint64_t key : distinct_keys(probes, 32)) fp += f.contains(key);
        double const measured = static_cast<double>(fp) / probes;
        double const expected = linear_probing::expected_fpr(q, r, f.size());
        EXPECT_NEAR(measured, expected, 0.2 * expected) << "fill " << fill;
        EXPECT_NEAR(measured, f.table_fpr(), 0.1 * f.table_fpr()) << "fill " << fill;
        EXPECT_LE(measured, linear_probing::corollary1_fpr(r, fill)) << "fill " << fill;
        EXPECT_DOUBLE_EQ(f.false_positive_rate(), expected);
    }
}

// On dense tables the clustering of one table varies a lot; Knuth's formula is an average over
// tables, so compare it with the mean of 8 tables' exact expectations. The mean sits a little
// below Knuth's value: his formula is for a circular table, ours has no wrap-around, and slots near
// the start of the table receive no probes from before it.
TEST(linear_probing, false_positive_rate_follows_knuth_on_average_over_dense_tables) {
    unsigned const q = 16, r = 13;  // long remainders: almost no insert meets its remainder
    for (double fill : {0.9, 0.95}) {
        double sum = 0;
        int const tables = 8;
        for (int t = 0; t < tables; ++t) {
            linear_probing f(q, r);
            size_t const n = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
            for (uint64_t key : distinct_keys(n, 40 + t))
                ASSERT_NE(f.insert(key), insert_result::full);
            sum += f.table_fpr();
        }
        double const mean = sum / tables;
        double const expected =
            linear_probing::expected_fpr(q, r, static_cast<size_t>(fill * 65536));
        EXPECT_NEAR(mean, expected, 0.2 * expected) << "fill " << fill;
        EXPECT_LE(mean, linear_probing::corollary1_fpr(r, fill)) << "fill " << fill;
    }
}

TEST(linear_probing, rejects_impossible_geometry) {
    EXPECT_THROW(linear_probing(0, 8), std::invalid_argument);
    EXPECT_THROW(linear_probing(40, 22), std::invalid_argument);
    EXPECT_NO_THROW(linear_probing(8, 53));
}

}  // namespace
