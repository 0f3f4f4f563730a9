// Bounded growing must not start a second migration from a table that has just been replaced: a
// starter that reads "current table is t" before the last helper of t's migration publishes the new
// table, and "no migration running" after it clears the migration (without the mutex the starter
// holds), starts one whose target can never become current (its CAS expects the old table), so the
// migration pointer is never cleared again and every insert helps it and retries, forever (a level
// whose tables go the same doubling twice from one source). start_migration therefore reads the
// migration pointer first (core/qf/concurrent/locally_locked.hpp).
//
// The window is two adjacent loads wide (the starter must be preempted between them while the
// migration it raced with publishes), so this can only be a stress test: tiny tables that double
// six times a round under sixteen writers, each round under a watchdog that fails the test instead
// of hanging it. Its limit: on a machine of few cores the window is rarely met, so a pass is weak
// evidence; the order's correctness rests on the argument in start_migration, and the hang shows
// only under heavy load (many stress tests at once).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/qf/concurrent/locally_locked.hpp"
#include "sanitized.hpp"

namespace {

using qmer::qf::growing_policy;
using qmer::qf::locally_locked_filter;

TEST(growing_second_migration_livelock, every_round_of_racing_doublings_finishes) {
    int const rounds = QMER_TEST_SANITIZED ? 20 : 300;
    unsigned const writers = 16;
    for (int round = 0; round < rounds; ++round) {
        // 16 slots, doubling at half full up to 2^10: six doublings while the keys go in.
        locally_locked_filter f(4, 20, growing_policy{true, 0.5, 10});
        size_t const per_writer = 30;
        std::vector<std::vector<uint64_t>> keys(writers);
        std::mt19937_64 rng(static_cast<uint64_t>(round) + 1);
        for (auto& k : keys)
            for (size_t i = 0; i < per_writer; ++i) k.push_back(rng());

        std::mutex m;
        std::condition_variable finished;
        unsigned done = 0;
        std::vector<std::thread> threads;
        for (unsigned w = 0; w < writers; ++w) {
            threads.emplace_back([&, w] {
                for (uint64_t k : keys[w]) f.insert(k);
                std::lock_guard lock(m);
                ++done;
                finished.notify_one();
            });
        }
        {
            std::unique_lock lock(m);
            if (!finished.wait_for(lock, std::chrono::seconds(60),
                                   [&] { return done == writers; })) {
                // Livelocked threads cannot be joined: report and stop the process.
                std::fprintf(stderr,
                             "round %d: the inserts did not finish in 60 s (a migration that can "
                             "never complete)\n",
                             round);
                std::abort();
            }
        }
        for (auto& t : threads) t.join();
        for (auto const& k : keys)
            for (uint64_t key : k) ASSERT_TRUE(f.contains(key)) << "round " << round;
        // Grown as far as the keys demand, and a later insert on one thread completes.
        EXPECT_GE(f.geometry().quotient_bits, 9u) << "round " << round;
        f.insert(rng());
    }
}

}  // namespace
