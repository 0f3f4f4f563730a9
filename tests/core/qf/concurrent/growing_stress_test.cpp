// Bounded growing under concurrency (label `concurrency`, run under TSan): 8+ writers insert 64x
// the initial capacity through several doublings while 2 threads query keys already inserted: no
// false negative at any point, no lost insert, and the final contents equal the sequential
// reference.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/qf_makers.hpp"

namespace qmer::test {
namespace {

using qf::growing_policy;
using qf::locally_locked_filter;

using growing_types = ::testing::Types<growing_locally_locked, odd_growing_locally_locked>;
INSTANTIATE_TYPED_TEST_SUITE_P(growing, filter_concurrency, growing_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in growing_test

void grow_under_load(unsigned q0, unsigned writers, uint64_t stream) {
    locally_locked_filter f(q0, 16, growing_policy{true, 0.9});
    size_t const total = (size_t{1} << q0) * 64;
    size_t const per = total / writers;
    std::vector<std::vector<uint64_t>> keys(writers);
    for (unsigned w = 0; w < writers; ++w) keys[w] = distinct_keys(per, stream + w);
    std::vector<std::atomic<size_t>> done(writers);
    std::atomic<bool> stop{false};
    std::atomic<size_t> false_negatives{0}, full{0}, checks{0};
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w)
        threads.emplace_back([&, w] {
            for (size_t i = 0; i < per; ++i) {
                if (f.insert(keys[w][i]) == insert_result::full) full.fetch_add(1);
                if (!f.contains(keys[w][i])) false_negatives.fetch_add(1);
                done[w].store(i + 1, std::memory_order_release);
            }
        });
    for (unsigned r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
            uint64_t x = r + 1;
            // A reader that first runs after the writers are done (a loaded CI machine) still
            // makes a round of checks before it looks at `stop`.
            size_t mine = 0;
            while (mine < 64 || !stop.load(std::memory_order_acquire)) {
                x = mix_key(x);
                unsigned const w = static_cast<unsigned>(x % writers);
                size_t const d = done[w].load(std::memory_order_acquire);
                if (d == 0) continue;
                if (!f.contains(keys[w][x % d])) false_negatives.fetch_add(1);
                checks.fetch_add(1, std::memory_order_relaxed);
                ++mine;
            }
        });
    for (unsigned w = 0; w < writers; ++w) threads[w].join();
    stop.store(true, std::memory_order_release);
    for (size_t t = writers; t < threads.size(); ++t) threads[t].join();
    EXPECT_EQ(full.load(), 0u);
    EXPECT_EQ(false_negatives.load(), 0u);
    EXPECT_GT(checks.load(), 0u);
    EXPECT_EQ(f.growths(), 7u);  // 64x at delta_grow 0.9 takes 7 doublings
    qf::sequential_filter ref(f.geometry().quotient_bits, f.geometry().remainder_bits);
    for (auto const& v : keys)
        for (uint64_t k : v) ref.insert(k);
    EXPECT_EQ(f.size(), ref.size());
    EXPECT_EQ(fingerprints_of(f), fingerprints_of(ref));
}

TEST(growing_stress, eight_writers_two_queriers_through_seven_doublings) {
    for (int round = 0; round < (QMER_TEST_SANITIZED ? 2 : 10); ++round)
        grow_under_load(8, 8, 500 + 50 * round);
}

TEST(growing_stress, sixteen_writers_larger_start) {
    grow_under_load(QMER_TEST_SANITIZED ? 10 : 12, 16, 900);
}

}  // namespace
}  // namespace qmer::test
