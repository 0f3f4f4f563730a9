// Concurrent adds give exactly the sketch of sequential adds: a register is the max of its
// ranks, whatever the interleaving (more threads than cores, overlapping and disjoint hashes).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/sketch/hyperloglog.hpp"

namespace {

TEST(hyperloglog_stress, concurrent_adds_equal_sequential_adds) {
    constexpr uint64_t n = 200000;
    constexpr unsigned threads = 16;
    qmer::kmer_hasher const hasher{7};
    qmer::sketch::hyperloglog sequential, concurrent;
    for (uint64_t i = 0; i < n; ++i) sequential.add(hasher(i));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            // Each thread adds a strided share, and every thread also adds the first 1000 (the
            // same registers raced by all).
            for (uint64_t i = t; i < n; i += threads) concurrent.add(hasher(i));
            for (uint64_t i = 0; i < 1000; ++i) concurrent.add(hasher(i));
        });
    for (auto& th : pool) th.join();
    EXPECT_EQ(concurrent.estimate(), sequential.estimate());
}

}  // namespace
