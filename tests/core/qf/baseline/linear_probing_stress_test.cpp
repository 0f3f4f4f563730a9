// Oversubscribed stress tests of the lock-free linear probing quotient filter (label concurrency,
// run under ThreadSanitizer): the shared typed suite plus a race on one canonical slot.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/baseline/linear_probing_maker.hpp"

using qmer::insert_result;
using qmer::qf::linear_probing;

namespace qmer::test {
using lp_types = ::testing::Types<linear_probing>;
INSTANTIATE_TYPED_TEST_SUITE_P(linear_probing, filter_concurrency, lp_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in linear_probing_test
}  // namespace qmer::test

namespace {

// 16 threads insert the same 200 keys, all with canonical slot 0, so every CAS races for the same
// few groups. Each distinct remainder must be stored exactly once: the slots hold no duplicate and
// the `inserted` answers add up to size().
TEST(linear_probing_stress, one_canonical_slot_many_threads_no_duplicates) {
    for (int round = 0; round < 20; ++round) {
        linear_probing f(10, 13);
        std::vector<uint64_t> keys;
        for (uint64_t i = 0; i < 200; ++i) keys.push_back(qmer::test::mix_key(i) >> 10);
        std::atomic<size_t> inserted{0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 16; ++t) {
            threads.emplace_back([&, t] {
                size_t mine = 0;
                for (size_t i = 0; i < keys.size(); ++i) {
                    uint64_t const key = keys[(i + t * 13) % keys.size()];
                    mine += f.insert(key) == insert_result::inserted;
                    if (!f.contains(key)) ADD_FAILURE() << "false negative right after insert";
                }
                inserted.fetch_add(mine);
            });
        }
        for (auto& t : threads) t.join();
        EXPECT_EQ(f.size(), inserted.load());
        std::vector<uint64_t> stored;
        for (size_t s = 0; s < f.slots().slot_count(); ++s)
            if (uint64_t v = f.slots().get(s)) stored.push_back(v);
        EXPECT_EQ(stored.size(), f.size());
        std::sort(stored.begin(), stored.end());
        EXPECT_EQ(std::adjacent_find(stored.begin(), stored.end()), stored.end())
            << "a remainder was stored twice";
        for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
    }
}

}  // namespace
