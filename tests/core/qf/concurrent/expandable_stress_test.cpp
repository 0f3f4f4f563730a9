// The fully expandable quotient filter (core/qf/concurrent/expandable.hpp) under concurrency (label
// `concurrency`, run under ThreadSanitizer): the typed concurrency suite in both modes, and the
// growth check: 8 threads insert 64x the initial capacity (through every doubling and several
// level pushes) while 2 threads query keys already inserted; no false negative at any point, no
// lost insert, and the stack has the shape a single thread would give it.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/qf_makers.hpp"

namespace qmer::test {

// Makers as in expandable_test.cpp (each test file keeps its own; see qf_makers.hpp).
template <bool Cascading>
struct expandable_mode : qf::expandable_filter {
    expandable_mode(uint64_t expected, double fpr)
        : qf::expandable_filter(expected, fpr, Cascading) {}
};
using expandable_plain = expandable_mode<false>;
using expandable_cascading = expandable_mode<true>;

// Level 0 starts with exactly `capacity` slots (see expandable_test.cpp, which has the reason).
inline uint64_t expected_for_initial_capacity(size_t capacity) {
    return static_cast<uint64_t>(std::floor(0.9 * (8 * static_cast<double>(capacity) - 32)));
}

template <bool Cascading>
struct filter_maker<expandable_mode<Cascading>> {
    static constexpr bool fixed_capacity = false;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<expandable_mode<Cascading>> make(size_t capacity, double fpr) {
        return std::make_unique<expandable_mode<Cascading>>(expected_for_initial_capacity(capacity),
                                                            fpr);
    }
    static double expected_fpr(expandable_mode<Cascading> const& f, size_t) {
        return f.false_positive_rate();
    }
};

namespace {

using expandable_types = ::testing::Types<expandable_plain, expandable_cascading>;
INSTANTIATE_TYPED_TEST_SUITE_P(expandable, filter_concurrency, expandable_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in expandable_test

// 8 writers insert disjoint slices of 64x the initial capacity (plus a shared slice every writer
// inserts too, so writers collide on the same keys during pushes); 2 readers pick random keys
// among those whose insert has returned (done[w], release/acquire) and must find every one.
void grow_under_queries(bool cascading, size_t initial, unsigned writers, unsigned readers) {
    qf::expandable_filter f(expected_for_initial_capacity(initial), 1.0 / 1024, cascading);
    ASSERT_EQ(f.capacity(), initial);
    size_t const total = 64 * initial;
    size_t const shared_n = total / 16;
    size_t const own_n = (total - shared_n) / writers;
    auto const shared = distinct_keys(shared_n, 300);
    std::vector<std::vector<uint64_t>> own(writers);
    for (unsigned w = 0; w < writers; ++w) own[w] = distinct_keys(own_n, 400 + w);

    std::vector<std::atomic<size_t>> done(writers);
    std::atomic<bool> stop{false};
    std::atomic<size_t> false_negatives{0}, inserted{0}, full{0}, reader_checks{0};
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            size_t local = 0;
            for (size_t i = 0; i < own_n; ++i) {
                for (uint64_t key : {own[w][i], shared[(i * 7 + w) % shared_n]}) {
                    auto const r = f.insert(key);
                    full.fetch_add(r == insert_result::full);
                    local += r == insert_result::inserted;
                    if (!f.contains(key)) false_negatives.fetch_add(1);
                }
                done[w].store(i + 1, std::memory_order_release);
            }
            inserted.fetch_add(local);
        });
    }
    for (unsigned r = 0; r < readers; ++r) {
        threads.emplace_back([&, r] {
            uint64_t x = 1000 + r;
            size_t checks = 0;
            // do-while: on a loaded machine a reader may first run after the writers are done;
            // it still makes one full round of checks.
            do {
                for (unsigned w = 0; w < writers; ++w) {
                    size_t const d = done[w].load(std::memory_order_acquire);
                    if (d == 0) continue;
                    x = mix_key(x);
                    if (!f.contains(own[w][x % d])) false_negatives.fetch_add(1);
                    // The newest keys too: they are the ones racing with doublings and pushes.
                    if (!f.contains(own[w][d - 1])) false_negatives.fetch_add(1);
                    checks += 2;
                }
            } while (!stop.load(std::memory_order_acquire));
            reader_checks.fetch_add(checks);
        });
    }
    for (unsigned w = 0; w < writers; ++w) threads[w].join();
    stop.store(true, std::memory_order_release);
    for (size_t t = writers; t < threads.size(); ++t) threads[t].join();

    EXPECT_EQ(full.load(), 0u);
    EXPECT_EQ(false_negatives.load(), 0u);
    EXPECT_GT(reader_checks.load(), 0u);
    for (unsigned w = 0; w < writers; ++w)
        for (size_t i = 0; i < own_n; ++i) ASSERT_TRUE(f.contains(own[w][i])) << w << " " << i;
    for (size_t i = 0; i < shared_n; ++i) ASSERT_TRUE(f.contains(shared[i])) << "shared " << i;
    // Every `inserted` answer stored one fingerprint (two racing inserts of one new key during a
    // push may both store it; both then answer inserted, and both are counted).
    EXPECT_EQ(f.size(), inserted.load());
    EXPECT_GE(f.levels(), 4u);
    auto const stats = f.level_stats();
    auto const k0 = f.first_level_final_geometry().fingerprint_bits();
    for (unsigned j = 0; j < stats.size(); ++j) {
        EXPECT_EQ(stats[j].quotient_bits + stats[j].remainder_bits, k0 + 2 * j);
        if (j + 1 < stats.size()) {
            EXPECT_EQ(stats[j].growths, 3u) << "level " << j;
        }
    }
    EXPECT_LE(f.false_positive_rate(), f.false_positive_bound());
    // The seal handshake never strands a level: with every insert returned, each level below the
    // top was sealed by the push or by its last writer (plain mode; cascading never seals).
    EXPECT_EQ(f.sealed_levels(), cascading ? 0u : f.levels() - 1);
    // And each sealed level got its lookup view, written by the thread that sealed it while the
    // others went on inserting and querying (the readers' checks above read through them).
    EXPECT_EQ(f.viewed_levels(), cascading ? 0u : f.levels() - 1);
}

size_t const initial_capacity = QMER_TEST_SANITIZED ? 256 : 2048;

TEST(expandable_stress, eight_writers_two_readers_plain) {
    grow_under_queries(false, initial_capacity, 8, 2);
}
TEST(expandable_stress, eight_writers_two_readers_cascading) {
    grow_under_queries(true, initial_capacity, 8, 2);
}
TEST(expandable_stress, repeated_small_runs_cascading) {
    for (int round = 0; round < (QMER_TEST_SANITIZED ? 2 : 10); ++round)
        grow_under_queries(true, 128, 8, 2);
}
TEST(expandable_stress, repeated_small_runs_plain) {
    for (int round = 0; round < (QMER_TEST_SANITIZED ? 2 : 10); ++round)
        grow_under_queries(false, 128, 8, 2);
}

}  // namespace
}  // namespace qmer::test
