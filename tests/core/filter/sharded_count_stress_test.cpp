// core/filter/sharded_count.hpp under many threads, more than the cores and more than the shards
// (threads then share shards): the count is exact once they are joined, the published estimate
// never exceeds it and lags it by less than shards * batch, and every publication a thread sees
// is a value the total really passed through.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/filter/sharded_count.hpp"
#include "sanitized.hpp"

namespace qmer {
namespace {

void run_threads(unsigned n, auto body) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(body, t);
    for (auto& t : pool) t.join();
}

TEST(sharded_count, exact_after_join_with_more_threads_than_shards) {
    for (unsigned threads : {1u, 8u, 32u, sharded_count::shards + 16}) {
        for (size_t batch : {size_t{1}, size_t{7}, size_t{64}}) {
            sharded_count c;
            size_t const each = QMER_TEST_SANITIZED ? 2000 : 20000;
            std::atomic<size_t> largest_seen{0};
            run_threads(threads, [&](unsigned) {
                size_t last = 0;
                for (size_t i = 0; i < each; ++i) {
                    size_t const p = c.add_one(batch);
                    if (p == 0) continue;
                    // A publication's result is the total after it: at least the batch it added,
                    // never more than all adds made.
                    EXPECT_GE(p, batch);
                    EXPECT_LE(p, threads * each);
                    last = std::max(last, p);
                }
                size_t seen = largest_seen.load();
                while (last > seen && !largest_seen.compare_exchange_weak(seen, last)) {
                }
            });
            size_t const n = threads * each;
            EXPECT_EQ(c.load(), n) << threads << " threads, batch " << batch;
            EXPECT_LE(c.published(), n);
            EXPECT_LT(n - c.published(), sharded_count::shards * batch);
            EXPECT_LE(largest_seen.load(), c.published());
            if (batch == 1) {
                EXPECT_EQ(c.published(), n);
            }
        }
    }
}

TEST(sharded_count, bulk_adds_and_removes_are_counted_at_once) {
    sharded_count c;
    c.reset(1000);
    EXPECT_EQ(c.load(), 1000u);
    EXPECT_EQ(c.published(), 1000u);
    run_threads(16, [&](unsigned t) {
        for (int i = 0; i < 500; ++i) {
            c.add_one(1u << 20);  // never published on its own
            if (t % 2 == 0) c.add(3);
            if (t % 2 == 1 && i % 5 == 0) c.sub(1);
            c.count_one();
        }
    });
    size_t const expected = 1000 + 16 * 500 * 2 + 8 * 500 * 3 - 8 * 100;
    EXPECT_EQ(c.load(), expected);
    EXPECT_EQ(c.published(), 1000u + 8 * 500 * 3 - 8 * 100);
    c.reset(7);
    EXPECT_EQ(c.load(), 7u);
}

TEST(sharded_count, threads_started_together_get_distinct_shards) {
    // The shard is the kernel's thread id modulo the shard count: threads made one after the
    // other get consecutive ids unless another process takes one in between, so 8 threads
    // alive together share a shard rarely; this checks they do not all collapse onto one.
    std::vector<unsigned> shards(8);
    std::atomic<unsigned> ready{0};
    run_threads(8, [&](unsigned t) {
        shards[t] = this_thread_shard(sharded_count::shards);
        ready.fetch_add(1);
        while (ready.load() < 8) std::this_thread::yield();  // all alive at once
    });
    std::sort(shards.begin(), shards.end());
    auto const distinct = std::unique(shards.begin(), shards.end()) - shards.begin();
    EXPECT_GE(distinct, 4) << "8 threads alive together fell on " << distinct << " shards";
}

}  // namespace
}  // namespace qmer
