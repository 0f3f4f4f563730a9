#include "bench/qf/two_status_bit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <memory>
#include <set>
#include <vector>

#include "core/filter/contract_suite.hpp"

using qmer::insert_result;
using qmer::qf::two_status_bit;

// r so that fill / (2^r - 1) (section 2.1) is about `fpr` at max_fill.
template <>
struct qmer::test::filter_maker<two_status_bit> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<two_status_bit> make(size_t capacity, double fpr) {
        unsigned q = 1;
        while ((size_t{1} << q) < capacity) ++q;
        int const r = static_cast<int>(std::ceil(std::log2(max_fill / fpr + 1)));
        return std::make_unique<two_status_bit>(q, static_cast<unsigned>(std::max(2, r)));
    }
    static double expected_fpr(two_status_bit const& f, size_t n) {
        return two_status_bit::expected_fpr(f.quotient_bits(), f.remainder_bits(), n);
    }
};

namespace qmer::test {
// Sequential filter: the contract suite only; the concurrency suite does not apply.
using tsb_types = ::testing::Types<two_status_bit>;
INSTANTIATE_TYPED_TEST_SUITE_P(two_status_bit, filter_contract, tsb_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);
}  // namespace qmer::test

namespace {

using qmer::test::distinct_keys;

uint64_t fingerprint(two_status_bit const& f, uint64_t h) {
    return ((h >> (64 - f.quotient_bits())) << f.remainder_bits()) | f.remainder(h);
}

// Reads the table back into fingerprints: run heads (continuation 0) take the next occupied
// quotient not yet given a run; every filled slot has a non-zero remainder; an empty slot ends the
// supercluster with no quotient left waiting; no run starts before its quotient.
std::vector<uint64_t> decode(two_status_bit const& f) {
    unsigned const r = f.remainder_bits();
    std::vector<uint64_t> fps;
    std::deque<size_t> waiting;
    size_t quotient = 0;
    for (size_t s = 0; s < f.slots().slot_count(); ++s) {
        uint64_t const v = f.slots().get(s);
        if (v & two_status_bit::occupied) waiting.push_back(s);
        if ((v >> 2) == 0) {
            EXPECT_EQ(v, 0u) << "status bits on an empty slot at " << s;
            EXPECT_TRUE(waiting.empty()) << "an empty slot inside a supercluster at " << s;
            waiting.clear();
            continue;
        }
        if (!(v & two_status_bit::continuation)) {
            if (waiting.empty()) {
                ADD_FAILURE() << "a run starts at " << s << " with no occupied quotient";
                return fps;
            }
            quotient = waiting.front();
            waiting.pop_front();
            EXPECT_LE(quotient, s);
        }
        fps.push_back((uint64_t{quotient} << r) | (v >> 2));
    }
    return fps;
}

// Exact oracle: the filter stores each distinct (quotient, non-zero remainder) once, so every
// insert answer and every contains() answer (false positives included) follows from a set.
void check_against_set(unsigned q, unsigned r, double fill, uint64_t stream) {
    two_status_bit f(q, r);
    std::set<uint64_t> model;
    size_t const n = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
    auto const keys = distinct_keys(n, stream);
    for (size_t i = 0; i < n; ++i) {
        bool const fresh = model.insert(fingerprint(f, keys[i])).second;
        ASSERT_EQ(f.insert(keys[i]),
                  fresh ? insert_result::inserted : insert_result::already_present)
            << i;
        if (i % 4096 == 0) {
            ASSERT_EQ(decode(f), std::vector<uint64_t>(model.begin(), model.end())) << i;
        }
    }
    EXPECT_EQ(f.size(), model.size());
    EXPECT_EQ(decode(f), std::vector<uint64_t>(model.begin(), model.end()));
    for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
    for (uint64_t key : distinct_keys(300000, stream + 1))
        ASSERT_EQ(f.contains(key), model.count(fingerprint(f, key)) != 0);
}

TEST(two_status_bit, matches_an_exact_fingerprint_set_up_to_95_percent_fill) {
    check_against_set(12, 3, 0.95, 70);  // 7 remainder values: long runs, many duplicates
    check_against_set(14, 11, 0.95, 80);
}

TEST(two_status_bit, remainders_are_never_zero) {
    two_status_bit f(10, 4);
    for (uint64_t key : distinct_keys(100000, 90)) ASSERT_NE(f.remainder(key), 0u);
    uint64_t const zero_top = (uint64_t{5} << 54) | 0x9;  // top remainder 0, low bits 1001
    EXPECT_EQ(f.remainder(zero_top), 9u);
    EXPECT_EQ(f.remainder(uint64_t{5} << 54), 1u);
}

TEST(two_status_bit, space_saving_depends_on_the_packing) {
    // r = 13: 15-bit slots still pack 4 per word, like 16-bit ones: no saving.
    EXPECT_DOUBLE_EQ(two_status_bit::bits_per_slot(13), 16.0);
    // r = 10: 12-bit slots pack 5 per word, 13-bit ones only 4.
    EXPECT_DOUBLE_EQ(two_status_bit::bits_per_slot(10), 12.8);
    two_status_bit a(16, 10), b(16, 13);
    EXPECT_LT(a.memory_bytes(), b.memory_bytes() * 81 / 100);
}

TEST(two_status_bit, full_past_the_overflow_area) {
    two_status_bit f(6, 10);
    size_t inserted = 0;
    for (uint64_t i = 0;; ++i) {
        ASSERT_LT(i, 1000000u) << "never reported full";
        auto const res = f.insert(qmer::test::mix_key(i));
        if (res == insert_result::full) break;
        inserted += res == insert_result::inserted;
    }
    EXPECT_EQ(f.size(), inserted);
    EXPECT_EQ(decode(f).size(), inserted);
}

}  // namespace
