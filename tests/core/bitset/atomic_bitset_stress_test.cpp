// The race test of the blog post "Write your own concurrent Java BitSet with blackjack and thread
// safety" for qmer::atomic_bitset and a many-thread flip test. A bit set built on
// plain read-modify-write of words fails both (a lost update clears a neighbour's bit or cancels a
// flip); one atomic RMW per operation passes them.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/bitset/atomic_bitset.hpp"

#if defined(__SANITIZE_THREAD__)
constexpr int race_rounds = 10000;  // TSan runs each round ~50x slower
#else
constexpr int race_rounds = 100000;
#endif

namespace {

// That post's correctness test: two threads set neighbouring bits 1 and 2 of the same word at the
// same moment, on a fresh set, repeated 10^5 times; both bits must be set every time. The threads
// are started once and meet at a barrier per round (spawning 2 * 10^5 threads would measure the
// scheduler, not the race).
TEST(atomic_bitset_race, two_threads_set_neighbouring_bits_of_one_word) {
    std::vector<qmer::atomic_bitset> sets;
    sets.reserve(race_rounds);
    for (int r = 0; r < race_rounds; ++r) sets.emplace_back(64);
    std::atomic<int> go{-1};  // round both threads may run
    std::atomic<int> finished{0};
    auto worker = [&](size_t bit) {
        for (int r = 0; r < race_rounds; ++r) {
            // Spin briefly (so the two threads usually start the round together), then yield: three
            // threads share 2 cores.
            for (int spin = 0; go.load(std::memory_order_acquire) < r; ++spin)
                if (spin > 64) std::this_thread::yield();
            sets[r].set(bit);
            finished.fetch_add(1, std::memory_order_acq_rel);
        }
    };
    std::thread a(worker, 1), b(worker, 2);
    int failures = 0;
    for (int r = 0; r < race_rounds; ++r) {
        go.store(r, std::memory_order_release);
        while (finished.load(std::memory_order_acquire) < 2 * (r + 1)) std::this_thread::yield();
        failures += !(sets[r].get(1) && sets[r].get(2));
    }
    a.join();
    b.join();
    EXPECT_EQ(failures, 0);
}

// 8 threads (4x the cores) flip bits of a few shared words; each bit's final value must be the
// parity of the number of flips it received. Every thread flips bit i (i + t) % 7 + 1 times per
// round, so the expected parities are known exactly.
TEST(atomic_bitset_race, many_threads_flip_and_parity_holds) {
    constexpr unsigned threads = 8;
    constexpr size_t bits = 192;  // three words: every word is shared by all threads
#if defined(__SANITIZE_THREAD__)
    constexpr int rounds = 200;
#else
    constexpr int rounds = 3000;
#endif
    qmer::atomic_bitset set(bits);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r)
                for (size_t i = 0; i < bits; ++i)
                    for (size_t k = 0; k < (i + t) % 7 + 1; ++k) set.flip(i);
        });
    for (auto& th : pool) th.join();
    for (size_t i = 0; i < bits; ++i) {
        uint64_t flips = 0;
        for (unsigned t = 0; t < threads; ++t) flips += ((i + t) % 7 + 1) * uint64_t{rounds};
        ASSERT_EQ(set.get(i), flips % 2 == 1) << "bit " << i << " after " << flips << " flips";
    }
}

// test_and_set elects exactly one winner per bit among racing threads.
TEST(atomic_bitset_race, test_and_set_has_exactly_one_winner_per_bit) {
    constexpr unsigned threads = 8;
    constexpr size_t bits = 4096;
    qmer::atomic_bitset set(bits);
    std::atomic<size_t> wins{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            size_t local = 0;
            for (size_t i = 0; i < bits; ++i) local += !set.test_and_set((i * 7 + t * 512) % bits);
            wins.fetch_add(local);
        });
    for (auto& th : pool) th.join();
    EXPECT_EQ(wins.load(), bits);
    EXPECT_EQ(set.count(), bits);
}

}  // namespace
