// Tests of core/qf/baseline/sequential.hpp, the reference quotient filter: the typed contract
// suite, and an exact oracle (a std::set of fingerprints) under random inserts and removes up to
// 95% fill.

#include "core/qf/baseline/sequential.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "core/qf/qf_makers.hpp"

namespace qmer::test {
namespace {

using qf::sequential_filter;

using sequential_types = ::testing::Types<sequential_filter>;
INSTANTIATE_TYPED_TEST_SUITE_P(sequential, filter_contract, sequential_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // not concurrent

// Random inserts and removes against std::set<fingerprint>. Short fingerprints (q + r = 14 bits)
// make equal fingerprints, long runs and long clusters common, so every shift path is exercised.
void run_oracle(unsigned q, unsigned r, uint64_t seed) {
    sequential_filter f(q, r);
    std::set<uint64_t> oracle;
    std::vector<uint64_t> stored_hashes;  // one hash per oracle fingerprint, to pick removes
    std::mt19937_64 rng(seed);
    size_t const target = static_cast<size_t>(0.95 * static_cast<double>(f.capacity()));
    auto const& g = f.geometry();
    for (int step = 0; step < 20000; ++step) {
        bool const do_remove =
            !stored_hashes.empty() && (oracle.size() >= target || rng() % 3 == 0);
        if (do_remove) {
            size_t const i = rng() % stored_hashes.size();
            uint64_t const h = stored_hashes[i];
            ASSERT_TRUE(f.remove(h)) << "step " << step;
            oracle.erase(g.fingerprint(h));
            stored_hashes[i] = stored_hashes.back();
            stored_hashes.pop_back();
            // Removing again finds nothing (the fingerprint was stored once).
            ASSERT_FALSE(f.remove(h)) << "step " << step;
        } else {
            uint64_t const h = rng();
            auto const res = f.insert(h);
            ASSERT_NE(res, insert_result::full) << "step " << step << " size " << f.size();
            bool const fresh = oracle.insert(g.fingerprint(h)).second;
            ASSERT_EQ(res, fresh ? insert_result::inserted : insert_result::already_present);
            if (fresh) stored_hashes.push_back(h);
        }
        ASSERT_EQ(f.size(), oracle.size());
        if (step % 997 == 0 || step > 19950) {
            // Ordered iteration equals the sorted oracle, and every present element is found.
            ASSERT_EQ(fingerprints_of(f), std::vector<uint64_t>(oracle.begin(), oracle.end()))
                << "step " << step;
            for (uint64_t h : stored_hashes) ASSERT_TRUE(f.contains(h));
            // Absent fingerprints are answered false: with an exact fingerprint set, contains() is
            // true iff the fingerprint is in the oracle.
            for (int k = 0; k < 2000; ++k) {
                uint64_t const h = rng();
                ASSERT_EQ(f.contains(h), oracle.count(g.fingerprint(h)) == 1);
            }
        }
    }
}

TEST(sequential_oracle, short_fingerprints_many_collisions) {
    run_oracle(10, 4, 1);
}
TEST(sequential_oracle, long_remainders) {
    run_oracle(11, 20, 2);
}
TEST(sequential_oracle, one_remainder_bit) {
    run_oracle(9, 1, 3);
}

TEST(sequential, iteration_is_sorted_and_matches_inserts) {
    sequential_filter f(12, 9);
    std::set<uint64_t> oracle;
    for (uint64_t key : distinct_keys(3800, 11)) {
        f.insert(key);
        oracle.insert(f.geometry().fingerprint(key));
    }
    EXPECT_EQ(fingerprints_of(f), std::vector<uint64_t>(oracle.begin(), oracle.end()));
}

TEST(sequential, full_table_answers_full_and_keeps_contents) {
    sequential_filter f(6, 8);
    std::set<uint64_t> oracle;
    size_t n = 0;
    for (uint64_t key : distinct_keys(10000, 12)) {
        auto const res = f.insert(key);
        if (res == insert_result::full) break;
        oracle.insert(f.geometry().fingerprint(key));
        ++n;
    }
    EXPECT_GE(n, f.capacity());
    EXPECT_LE(n, f.total_slots());
    EXPECT_EQ(fingerprints_of(f), std::vector<uint64_t>(oracle.begin(), oracle.end()));
}

}  // namespace
}  // namespace qmer::test
