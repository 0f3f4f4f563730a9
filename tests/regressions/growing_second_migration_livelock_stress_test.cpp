// Bounded growing started a second migration from a table that had just been replaced: the
// starter read "current table is t" before the last helper of t's migration published the new
// table, and "no migration running" after it cleared the migration (without the mutex the starter
// holds). The second migration's target could never become current (its CAS expects the old
// table), so the migration pointer was never cleared again and every insert helped it and
// retried, forever: CI's repeated stress stage hung in expandable_stress.repeated_small_runs_
// cascading (25 Nov 2026; the core showed a level whose tables went 10 -> 11 quotient bits twice
// from the same source, the first one current). start_migration now reads the migration pointer
// first (core/qf/concurrent/locally_locked.hpp).
//
// The window is two adjacent loads wide (the starter must be preempted between them while the
// migration it raced with publishes), so this can only be a stress test: tiny tables that double
// six times a round under sixteen writers, each round under a watchdog that fails the test
// instead of hanging it. Honest limit: it did not reproduce the hang before the fix (4 x 15 x
// 2000 rounds, 2 vCPUs); the fix rests on the core dump (two migrations from one source table,
// only possible through this interleaving) and on the argument in start_migration. The hang was
// met once, in CI's stress stage at load ~13 (every stress test repeated 20 times, two at once).
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
