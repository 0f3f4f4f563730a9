// Both Bloom filters under concurrency: the typed oversubscribed stress suite (lost inserts, false
// negatives while writers run, size() = number of `inserted` answers), plus many threads inserting
// into the same few cache lines, where neighbouring bits of one word are set at the same time.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/bloom/bloom_makers.hpp"
#include "core/filter/contract_suite.hpp"

namespace qmer::test {
using bloom_types = ::testing::Types<qmer::bloom_filter, qmer::blocked_bloom_filter>;
INSTANTIATE_TYPED_TEST_SUITE_P(bloom, filter_concurrency, bloom_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in bloom_filter_test
}  // namespace qmer::test

namespace {

// A tiny filter (a handful of words, or two blocks) makes every insert collide with every other
// thread's on the same words; a lost fetch_or would show up as a false negative.
template <typename F>
void hammer_tiny_filter(F& f, unsigned threads, size_t per_thread) {
    std::vector<std::thread> pool;
    std::atomic<size_t> misses{0};
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            auto const keys = qmer::test::distinct_keys(per_thread, 500 + t);
            for (uint64_t key : keys) {
                f.insert(key);
                if (!f.contains(key)) misses.fetch_add(1);
            }
        });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(misses.load(), 0u);
    for (unsigned t = 0; t < threads; ++t)
        for (uint64_t key : qmer::test::distinct_keys(per_thread, 500 + t))
            ASSERT_TRUE(f.contains(key));
}

TEST(bloom_stress, sixteen_threads_on_a_few_words) {
    qmer::bloom_filter f(qmer::bloom_filter::geometry{256, 3, 64, 0.5});
    hammer_tiny_filter(f, 16, QMER_TEST_SANITIZED ? 20 : 200);
}

TEST(blocked_bloom_stress, sixteen_threads_on_two_blocks) {
    qmer::blocked_bloom_filter f(qmer::blocked_bloom_filter::geometry{2, 3, 64, 0.5});
    hammer_tiny_filter(f, 16, QMER_TEST_SANITIZED ? 20 : 200);
}

// All threads insert the same keys at the same time: for each key at most one `inserted` (the
// arbiter rule), so the answers never count an element twice.
template <typename F>
void racing_same_keys() {
    size_t const n = QMER_TEST_SANITIZED ? 500 : 5000;
    F f(n, 0.01);
    auto const keys = qmer::test::distinct_keys(n, 600);
    std::atomic<size_t> inserted{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < 8; ++t)
        pool.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            size_t local = 0;
            for (uint64_t key : keys) local += f.insert(key) == qmer::insert_result::inserted;
            inserted.fetch_add(local);
        });
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    EXPECT_LE(inserted.load(), n);
    EXPECT_GE(inserted.load(), n * 95 / 100);  // insert-time false positives are ~0.5% here
    EXPECT_EQ(f.size(), inserted.load());
    for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
}

TEST(bloom_stress, racing_inserts_of_the_same_keys_answer_inserted_at_most_once) {
    racing_same_keys<qmer::bloom_filter>();
}
TEST(blocked_bloom_stress, racing_inserts_of_the_same_keys_answer_inserted_at_most_once) {
    racing_same_keys<qmer::blocked_bloom_filter>();
}

}  // namespace
