#pragma once
// One typed suite that runs ARCHITECTURE.md's filter contract on every filter kind (SeqAn3's
// TYPED_TEST_SUITE pattern). A filter family instantiates it in its own test file:
//
//   template <> struct qmer::test::filter_maker<my_filter> {
//       static constexpr bool fixed_capacity = true;      // insert() may answer `full`
//       static constexpr double max_fill = 0.95;          // oracle fills capacity * max_fill
//       // A filter that can hold `capacity` elements, configured for a k-mer FPR near `fpr`.
//       static std::unique_ptr<my_filter> make(size_t capacity, double fpr);
//       // The analytic false-positive rate after `n` distinct inserts (the paper's formula).
//       static double expected_fpr(my_filter const& f, size_t n);
//   };
//   using my_types = ::testing::Types<my_filter>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(my_family, filter_contract, my_types);     // *_test.cpp
//   INSTANTIATE_TYPED_TEST_SUITE_P(my_family, filter_concurrency, my_types);  // *_stress_test.cpp
//
// Keys are distinct pseudo-random 64-bit values (splitmix64 of a counter is a bijection), standing
// in for XXH3 hashes of k-mers.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/filter/filter.hpp"
#include "sanitized.hpp"

namespace qmer::test {

template <typename F>
struct filter_maker;  // specialised per filter kind, see above

// splitmix64: a bijection on 64-bit values, so distinct inputs give distinct keys.
inline uint64_t mix_key(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Keys [first, first + n) of stream `stream`; different streams never share a key.
inline std::vector<uint64_t> distinct_keys(size_t n, uint64_t stream, uint64_t first = 0) {
    std::vector<uint64_t> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = mix_key((stream << 40) | (first + i));
    return keys;
}

template <typename F>
class filter_contract : public ::testing::Test {};
TYPED_TEST_SUITE_P(filter_contract);

TYPED_TEST_P(filter_contract, new_filter_is_empty) {
    auto f = filter_maker<TypeParam>::make(1 << 12, 0.01);
    EXPECT_EQ(f->size(), 0u);
    EXPECT_GE(f->capacity(), size_t{1} << 12);
    EXPECT_GT(f->memory_bytes(), 0u);
    size_t hits = 0;
    for (uint64_t key : distinct_keys(10000, 7)) hits += f->contains(key);
    EXPECT_LT(hits, 10u) << "an empty filter should (almost) never answer true";
}

TYPED_TEST_P(filter_contract, oracle_no_false_negative_up_to_max_fill) {
    using maker = filter_maker<TypeParam>;
    size_t const capacity = size_t{1} << 16;
    auto f = maker::make(capacity, 0.001);
    size_t const n = static_cast<size_t>(static_cast<double>(f->capacity()) * maker::max_fill);
    auto const keys = distinct_keys(n, 1);
    size_t inserted = 0;
    for (size_t i = 0; i < n; ++i) {
        auto const r = f->insert(keys[i]);
        ASSERT_NE(r, insert_result::full) << "full after " << i << " of " << n;
        inserted += r == insert_result::inserted;
        // Read-your-writes, and every earlier key still present (checked on a sample for speed).
        ASSERT_TRUE(f->contains(keys[i])) << "key " << i;
        if (i % 97 == 0) {
            for (size_t j = 0; j <= i; j += 1 + i / 64) {
                ASSERT_TRUE(f->contains(keys[j])) << j;
            }
        }
    }
    EXPECT_EQ(f->size(), inserted);
    for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(f->contains(keys[i])) << "key " << i;
    }
    // Inserting again changes nothing.
    for (size_t i = 0; i < n; i += 13)
        EXPECT_EQ(f->insert(keys[i]), insert_result::already_present);
    EXPECT_EQ(f->size(), inserted);
}

TYPED_TEST_P(filter_contract, false_positive_rate_matches_the_analysis) {
    using maker = filter_maker<TypeParam>;
    auto f = maker::make(size_t{1} << 16, 0.005);
    size_t const n = static_cast<size_t>(static_cast<double>(f->capacity()) * maker::max_fill);
    for (uint64_t key : distinct_keys(n, 2)) ASSERT_NE(f->insert(key), insert_result::full);
    size_t const probes = QMER_TEST_SANITIZED ? 200000 : 1000000;
    size_t false_positives = 0;
    for (uint64_t key : distinct_keys(probes, 3)) false_positives += f->contains(key);
    double const measured = static_cast<double>(false_positives) / static_cast<double>(probes);
    double const expected = maker::expected_fpr(*f, n);
    // 20% (the bound) or 4 standard deviations of the binomial count, whichever is wider.
    double const sd = std::sqrt(expected * (1 - expected) / static_cast<double>(probes));
    EXPECT_NEAR(measured, expected, std::max(0.2 * expected, 4 * sd))
        << false_positives << " false positives in " << probes << " probes at n = " << n;
}

TYPED_TEST_P(filter_contract, full_is_answered_not_crashed) {
    using maker = filter_maker<TypeParam>;
    if constexpr (!maker::fixed_capacity) {
        GTEST_SKIP() << "this filter has no capacity limit";
    } else {
        auto f = maker::make(1 << 10, 0.01);
        auto const keys = distinct_keys(f->capacity() * 4, 4);
        size_t i = 0;
        for (; i < keys.size(); ++i)
            if (f->insert(keys[i]) == insert_result::full) break;
        ASSERT_LT(i, keys.size()) << "never reported full";
        EXPECT_GE(static_cast<double>(i),
                  0.9 * maker::max_fill * static_cast<double>(f->capacity()));
        for (size_t j = 0; j < i; ++j) ASSERT_TRUE(f->contains(keys[j])) << j;
    }
}

REGISTER_TYPED_TEST_SUITE_P(filter_contract, new_filter_is_empty,
                            oracle_no_false_negative_up_to_max_fill,
                            false_positive_rate_matches_the_analysis, full_is_answered_not_crashed);

// Concurrency: more threads than cores (the machine has 2), disjoint and overlapping key sets,
// readers checking published keys while writers insert.
template <typename F>
class filter_concurrency : public ::testing::Test {};
TYPED_TEST_SUITE_P(filter_concurrency);

template <typename F>
void run_stress(unsigned writers, unsigned readers, size_t capacity, double fill) {
    using maker = filter_maker<F>;
    auto f = maker::make(capacity, 0.01);
    size_t const total = static_cast<size_t>(static_cast<double>(f->capacity()) * fill);
    size_t const shared_n = total / 8;  // every writer inserts these too: overlapping inserts
    size_t const own_n = (total - shared_n) / writers;
    auto const shared = distinct_keys(shared_n, 100);

    std::vector<std::vector<uint64_t>> own(writers);
    for (unsigned w = 0; w < writers; ++w) own[w] = distinct_keys(own_n, 200 + w);
    // done[w] = how many of own[w] are finished; release on store, acquire on load, so a reader
    // that sees done[w] = d may rely on inserts [0, d) having returned (the contract's "happens
    // before").
    std::vector<std::atomic<size_t>> done(writers);
    std::atomic<bool> stop{false};
    std::atomic<size_t> false_negatives{0}, inserted{0}, full{0};

    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            size_t local_inserted = 0;
            for (size_t i = 0; i < own_n; ++i) {
                // Interleave shared keys so writers collide on them throughout the run.
                size_t const s = (i * writers + w) % std::max<size_t>(shared_n, 1);
                for (uint64_t key : {own[w][i], shared_n ? shared[s] : own[w][i]}) {
                    auto const r = f->insert(key);
                    if (r == insert_result::full) full.fetch_add(1);
                    local_inserted += r == insert_result::inserted;
                    if (!f->contains(key)) false_negatives.fetch_add(1);
                }
                done[w].store(i + 1, std::memory_order_release);
            }
            inserted.fetch_add(local_inserted);
        });
    }
    for (unsigned r = 0; r < readers; ++r) {
        threads.emplace_back([&, r] {
            uint64_t x = r;
            while (!stop.load(std::memory_order_acquire)) {
                for (unsigned w = 0; w < writers; ++w) {
                    size_t const d = done[w].load(std::memory_order_acquire);
                    if (d == 0) continue;
                    x = mix_key(x);
                    if (!f->contains(own[w][x % d])) false_negatives.fetch_add(1);
                }
                std::this_thread::yield();
            }
        });
    }
    for (unsigned w = 0; w < writers; ++w) threads[w].join();
    stop.store(true, std::memory_order_release);
    for (size_t t = writers; t < threads.size(); ++t) threads[t].join();

    EXPECT_EQ(full.load(), 0u);
    EXPECT_EQ(false_negatives.load(), 0u);
    // No lost insert: every key is present afterwards, and size() counts each `inserted` once.
    for (unsigned w = 0; w < writers; ++w)
        for (size_t i = 0; i < own_n; ++i) ASSERT_TRUE(f->contains(own[w][i])) << w << " " << i;
    for (size_t i = 0; i < shared_n; ++i) ASSERT_TRUE(f->contains(shared[i])) << "shared " << i;
    EXPECT_EQ(f->size(), inserted.load());
    EXPECT_LE(f->size(), shared_n + own_n * writers);
}

TYPED_TEST_P(filter_concurrency, sixteen_writers_four_readers) {
    run_stress<TypeParam>(16, 4, QMER_TEST_SANITIZED ? 1 << 14 : 1 << 18, 0.85);
}

TYPED_TEST_P(filter_concurrency, thirty_two_writers_on_a_small_table) {
    // A small table makes clusters long and writers meet inside them.
    run_stress<TypeParam>(32, 2, 1 << 12, 0.9);
}

TYPED_TEST_P(filter_concurrency, repeated_small_runs_find_rare_interleavings) {
    for (int round = 0; round < (QMER_TEST_SANITIZED ? 5 : 50); ++round)
        run_stress<TypeParam>(8, 2, 1 << 10, 0.9);
}

REGISTER_TYPED_TEST_SUITE_P(filter_concurrency, sixteen_writers_four_readers,
                            thirty_two_writers_on_a_small_table,
                            repeated_small_runs_find_rare_interleavings);

}  // namespace qmer::test
