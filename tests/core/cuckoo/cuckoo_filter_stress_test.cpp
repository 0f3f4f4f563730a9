// The lock-free cuckoo filter under concurrency: the typed oversubscribed stress suite (also with a
// hook that yields between the query's reads, to widen the windows that bouncing needs), the
// deterministic bouncing test of the two-phase query, and a randomized bouncing test.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/filter/contract_suite.hpp"

// Yields the querying thread after a pseudo-random eighth of its bucket reads (the "delay" of the
// issue): enough to reorder threads often on 2 cores without making the suite slow.
struct yield_hook {
    static void at(qmer::query_point, uint64_t word) noexcept {
        thread_local uint64_t x = 0x2545f4914f6cdd1dULL;
        x ^= word + 0x9e3779b97f4a7c15ULL;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if ((x & 7) == 0) std::this_thread::yield();
    }
};

template <typename Hook>
struct qmer::test::filter_maker<qmer::basic_cuckoo_filter<Hook>> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.9;
    static std::unique_ptr<qmer::basic_cuckoo_filter<Hook>> make(size_t capacity, double) {
        return std::make_unique<qmer::basic_cuckoo_filter<Hook>>(capacity);
    }
    static double expected_fpr(qmer::basic_cuckoo_filter<Hook> const& f, size_t n) {
        return f.fpr_after(n);
    }
};

namespace qmer::test {
using cuckoo_types = ::testing::Types<qmer::cuckoo_filter, qmer::basic_cuckoo_filter<yield_hook>>;
INSTANTIATE_TYPED_TEST_SUITE_P(cuckoo, filter_concurrency, cuckoo_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in cuckoo_filter_test
}  // namespace qmer::test

namespace {

// The bouncing test. A querying thread Q looks up key h while a mover thread M moves h's
// fingerprint between its two buckets. The hook stops Q after each of its bucket reads and lets M
// make exactly one move before Q reads again, so the fingerprint is always in the bucket Q is not
// reading:
//   Q reads B1 (f in B2) | M: B2->B1 | Q reads B2 | M: B1->B2 | Q reads B1 | M: B2->B1 | Q reads B2
// Every read misses f. The counters show the bounce and Q must retry; after `rounds` rounds M stops
// and Q must answer true. Each move bumps both buckets' counters, so with B1's counter ahead of
// B2's, the paper's extra clause t2' >= t1 + 3 would have answered a false negative: checked too.
struct bounce_hook {
    static inline std::atomic<int> turn{0};  // even: Q runs; odd: M owes one move
    static inline std::atomic<bool> armed{false};
    static inline std::vector<uint64_t> seen;  // words Q read, in order (written by Q only)
    static void at(qmer::query_point, uint64_t word) noexcept {
        seen.push_back(word);
        if (!armed.load(std::memory_order_acquire)) return;
        int const t = turn.fetch_add(1, std::memory_order_acq_rel) + 1;  // hand over to M
        while (turn.load(std::memory_order_acquire) == t) std::this_thread::yield();
    }
};

TEST(cuckoo_bouncing, two_phase_query_retries_and_finds_a_bouncing_fingerprint) {
    using filter = qmer::basic_cuckoo_filter<bounce_hook>;
    filter f(uint64_t{1024}, 0);
    uint64_t const h = qmer::test::distinct_keys(1, 80)[0];
    uint64_t const fp = filter::fingerprint(h);
    uint64_t const b1 = f.first_bucket(h);
    ASSERT_EQ(f.insert(h), qmer::insert_result::inserted);
    // Three more fingerprints in B1 push its counter ahead of B2's and leave one slot for bounces.
    for (uint64_t other = 1; other <= 3; ++other) {
        uint64_t const key = (b1 << (64 - 10)) | ((fp + other * 7) & 0xfff);
        ASSERT_EQ(f.first_bucket(key), b1);
        ASSERT_EQ(f.insert(key), qmer::insert_result::inserted);
    }
    ASSERT_TRUE(f.migrate(h));  // f now in B2 only
    ASSERT_FALSE(filter::holds(f.buckets()[b1].load(), fp));

    int const rounds = 4;
    bounce_hook::seen.clear();
    bounce_hook::turn.store(0);
    bounce_hook::armed.store(true, std::memory_order_release);
    std::atomic<bool> moves_ok{true};
    std::thread mover([&] {
        // Moves after reads 1, 2, 3 of each round; after read 4 one more move puts f back in B2 for
        // the next round (that one is not seen by the round it follows). The last round has no
        // reset, so Q's next first read finds f in B1.
        int const moves = rounds * 4 - 1;
        for (int m = 0; m < moves; ++m) {
            int const want = 2 * m + 1;
            while (bounce_hook::turn.load(std::memory_order_acquire) != want)
                std::this_thread::yield();
            if (!f.migrate(h)) moves_ok.store(false);
            // After the last move Q runs free: disarm before releasing it, so it sees the flag.
            if (m == moves - 1) bounce_hook::armed.store(false, std::memory_order_release);
            bounce_hook::turn.fetch_add(1, std::memory_order_acq_rel);
        }
    });
    bool const found = f.contains(h);
    mover.join();
    ASSERT_TRUE(moves_ok.load());
    EXPECT_TRUE(found) << "false negative: the query missed a bouncing fingerprint";
    // Q read 4 words per round, all misses (B1/B2 alternately missing f).
    ASSERT_GE(bounce_hook::seen.size(), size_t{4} * rounds);
    for (int r = 0; r < rounds; ++r) {
        auto const* w = &bounce_hook::seen[4 * r];
        for (int k = 0; k < 4; ++k) EXPECT_FALSE(filter::holds(w[k], fp)) << r << " " << k;
        uint16_t const t1 = filter::counter(w[0]), t2 = filter::counter(w[1]);
        uint16_t const t1p = filter::counter(w[2]), t2p = filter::counter(w[3]);
        EXPECT_TRUE(filter::must_retry(t1, t2, t1p, t2p));
        // The paper's literal condition would have stopped here and answered "absent".
        EXPECT_FALSE(filter::seed_retry_condition(t1, t2, t1p, t2p))
            << t1 << " " << t2 << " " << t1p << " " << t2p;
    }
}

// Movers bounce fingerprints of stored keys between their buckets non-stop while queriers (with a
// yielding hook) look them up: no lookup may miss.
TEST(cuckoo_bouncing, random_bouncing_never_causes_a_false_negative) {
    using filter = qmer::basic_cuckoo_filter<yield_hook>;
    filter f(uint64_t{256}, 0);  // 1024 slots, 20% full: moves almost always find a free slot
    auto const keys = qmer::test::distinct_keys(200, 90);
    for (uint64_t key : keys) ASSERT_NE(f.insert(key), qmer::insert_result::full);
    std::atomic<bool> stop{false};
    std::atomic<size_t> misses{0}, moved{0}, queries{0};
    std::vector<std::thread> threads;
    unsigned const movers = 2, queriers = 4;
    for (unsigned m = 0; m < movers; ++m)
        threads.emplace_back([&, m] {
            size_t local = 0;
            for (uint64_t i = m; !stop.load(std::memory_order_acquire); ++i) {
                local += f.migrate(keys[(i * 7) % 16]);  // 16 hot keys bounce the most
                if (i % 64 == 0) std::this_thread::yield();
            }
            moved.fetch_add(local);
        });
    for (unsigned q = 0; q < queriers; ++q)
        threads.emplace_back([&, q] {
            size_t const rounds = QMER_TEST_SANITIZED ? 2000 : 20000;
            for (size_t i = 0; i < rounds; ++i)
                if (!f.contains(keys[(i + q) % 16])) misses.fetch_add(1);
            queries.fetch_add(rounds);
        });
    for (size_t t = movers; t < threads.size(); ++t) threads[t].join();
    stop.store(true, std::memory_order_release);
    for (size_t t = 0; t < movers; ++t) threads[t].join();
    EXPECT_EQ(misses.load(), 0u) << "in " << queries.load() << " queries, " << moved.load()
                                 << " moves";
    EXPECT_GT(moved.load(), 100u);
    for (uint64_t key : keys) EXPECT_TRUE(f.contains(key));
}

// All threads insert the same keys at the same time into a table that must kick: exactly one
// `inserted` per key (the CAS on the first bucket decides), minus keys whose fingerprint was there.
TEST(cuckoo_stress, racing_inserts_of_the_same_keys_answer_inserted_at_most_once) {
    size_t const n = QMER_TEST_SANITIZED ? 800 : 3600;
    qmer::cuckoo_filter f(n / 0.9 / 4 < 256 ? uint64_t{256} : uint64_t{1024}, 0);
    auto const keys = qmer::test::distinct_keys(n, 610);
    std::atomic<size_t> inserted{0}, full{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < 8; ++t)
        pool.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            size_t local = 0;
            for (uint64_t key : keys) {
                auto const r = f.insert(key);
                local += r == qmer::insert_result::inserted;
                if (r == qmer::insert_result::full) full.fetch_add(1);
            }
            inserted.fetch_add(local);
        });
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    EXPECT_EQ(full.load(), 0u);
    EXPECT_LE(inserted.load(), n);
    EXPECT_GE(inserted.load(), n * 97 / 100);
    EXPECT_EQ(f.size(), inserted.load());
    for (uint64_t key : keys) ASSERT_TRUE(f.contains(key));
}

}  // namespace
