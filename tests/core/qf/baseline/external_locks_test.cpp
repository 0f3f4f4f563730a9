#include "core/qf/baseline/external_locks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <memory>
#include <set>
#include <vector>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/external_locks_maker.hpp"

using qmer::insert_result;
using qmer::qf::external_locks_filter;

// r so that fill * 2^-r (section 2) is about `fpr` at max_fill.

namespace qmer::test {
using el_types = ::testing::Types<external_locks_filter>;
INSTANTIATE_TYPED_TEST_SUITE_P(external_locks_filter, filter_contract, el_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in the *_stress_test
}  // namespace qmer::test

namespace {

using qmer::test::distinct_keys;

uint64_t fingerprint(external_locks_filter const& f, uint64_t h) {
    return h >> (64 - f.quotient_bits() - f.remainder_bits());
}

// Reads the whole table back into the fingerprints it encodes, checking Table 1's invariants on
// the way: every run start belongs to the next occupied quotient not yet given a run, no run
// starts before its quotient, empty slots end every cluster with no quotient left waiting.
std::vector<uint64_t> decode(external_locks_filter const& f) {
    namespace E = qmer::qf::status;
    unsigned const r = f.remainder_bits();
    std::vector<uint64_t> fps;
    std::deque<size_t> waiting;  // occupied quotients whose run has not started yet
    size_t quotient = 0;
    for (size_t s = 0; s < f.slots().slot_count(); ++s) {
        uint64_t const v = f.slots().get(s);
        if (v & E::occupied) waiting.push_back(s);
        if (v == 0) {
            EXPECT_TRUE(waiting.empty()) << "an empty slot inside a cluster at " << s;
            waiting.clear();
            continue;
        }
        EXPECT_NE(v & E::mask, E::continuation) << "unused status 010 at " << s;
        if (!(v & E::shifted)) {
            EXPECT_TRUE(v & E::occupied) << "unshifted element off its slot";
        }
        if (!(v & E::continuation)) {
            if (waiting.empty()) {
                ADD_FAILURE() << "a run starts at " << s << " with no occupied quotient";
                return fps;
            }
            quotient = waiting.front();
            waiting.pop_front();
            EXPECT_EQ(quotient == s, !(v & E::shifted)) << "shifted bit wrong at " << s;
        }
        fps.push_back((uint64_t{quotient} << r) | (v >> 3));
    }
    return fps;
}

// The oracle is exact for a 3-bit quotient filter: it stores each distinct fingerprint once, so
// insert answers `inserted` exactly for new fingerprints and contains() is true exactly for
// fingerprints in the set - false positives included.
void check_against_set(unsigned q, unsigned r, double fill, uint64_t stream) {
    external_locks_filter f(q, r);
    std::set<uint64_t> model;
    size_t const n = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
    auto const keys = distinct_keys(n, stream);
    for (size_t i = 0; i < n; ++i) {
        bool const fresh = model.insert(fingerprint(f, keys[i])).second;
        ASSERT_EQ(f.insert(keys[i]),
                  fresh ? insert_result::inserted : insert_result::already_present)
            << i;
        if (i % 4096 == 0) {
            auto const fps = decode(f);
            ASSERT_EQ(fps, std::vector<uint64_t>(model.begin(), model.end())) << "after " << i;
        }
    }
    EXPECT_EQ(f.size(), model.size());
    auto const fps = decode(f);
    EXPECT_EQ(fps, std::vector<uint64_t>(model.begin(), model.end()));
    for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
    size_t positives = 0;
    for (uint64_t key : distinct_keys(300000, stream + 1)) {
        bool const expected = model.count(fingerprint(f, key)) != 0;
        ASSERT_EQ(f.contains(key), expected);
        positives += expected;
    }
    if (r <= 4) {
        EXPECT_GT(positives, 0u);
    }
}

TEST(external_locks_filter, matches_an_exact_fingerprint_set_up_to_95_percent_fill) {
    check_against_set(12, 4, 0.95, 50);   // 4-bit remainders: long runs, many duplicates
    check_against_set(14, 10, 0.95, 60);  // clusters cross the 4096-slot lock stripes
}

TEST(external_locks_filter, clusters_spill_into_the_overflow_area_then_full) {
    external_locks_filter f(6, 10);  // 64 canonical slots + 256 overflow slots
    size_t inserted = 0;
    for (uint64_t i = 0;; ++i) {
        ASSERT_LT(i, 1000000u) << "never reported full";
        auto const res = f.insert(qmer::test::mix_key(i));
        if (res == insert_result::full) break;
        inserted += res == insert_result::inserted;
    }
    EXPECT_EQ(f.size(), inserted);
    EXPECT_GT(inserted, 64u) << "the overflow area holds elements too";
    EXPECT_EQ(decode(f).size(), inserted);
}

TEST(external_locks_filter, geometry_is_checked) {
    EXPECT_THROW(external_locks_filter(0, 8), std::invalid_argument);
    EXPECT_THROW(external_locks_filter(10, 60), std::invalid_argument);
}

}  // namespace
