// Concurrency tests of core/qf/concurrent/locally_locked.hpp (label `concurrency`, run under TSan):
// the typed concurrency suite (oversubscribed writers and readers, no lost insert, no false
// negative), and removes on keys nobody else touches while inserters and queriers run.

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/qf_makers.hpp"

namespace qmer::test {
namespace {

using qf::locally_locked_filter;

using ll_types = ::testing::Types<locally_locked_filter, odd_locally_locked>;
INSTANTIATE_TYPED_TEST_SUITE_P(locally_locked, filter_concurrency, ll_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_contract);  // in locally_locked_test

// A small table (long clusters) pre-filled with `doomed` keys; 4 removers delete them while 8
// inserters add fresh keys and 2 queriers check keys whose insert has finished. Afterwards every
// surviving key is found, the removed ones are gone unless their fingerprint is shared with a
// survivor, and the table equals a sequential reference built from the survivors.
void remove_under_load(unsigned q, unsigned r, uint64_t stream) {
    locally_locked_filter f(q, r);
    size_t const cap = f.capacity();
    auto const g = f.geometry();
    auto const kept = distinct_keys(cap * 20 / 100, stream + 1);
    unsigned const inserters = 8, removers = 4, queriers = 2;
    size_t const per_inserter = cap * 40 / 100 / inserters;
    std::vector<std::vector<uint64_t>> fresh(inserters);
    for (unsigned i = 0; i < inserters; ++i)
        fresh[i] = distinct_keys(per_inserter, stream + 10 + i);
    // Doomed keys share no fingerprint with any other key: removing one must not remove a survivor.
    std::set<uint64_t> taken;
    for (uint64_t k : kept) taken.insert(g.fingerprint(k));
    for (auto const& v : fresh)
        for (uint64_t k : v) taken.insert(g.fingerprint(k));
    std::vector<uint64_t> doomed;
    for (uint64_t k : distinct_keys(cap * 35 / 100, stream))
        if (taken.insert(g.fingerprint(k)).second) doomed.push_back(k);
    for (uint64_t k : doomed) ASSERT_EQ(f.insert(k), insert_result::inserted);
    for (uint64_t k : kept) f.insert(k);
    std::vector<std::atomic<size_t>> done(inserters);
    std::atomic<bool> stop{false};
    std::atomic<size_t> false_negatives{0}, failed_removes{0};
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < inserters; ++i)
        threads.emplace_back([&, i] {
            for (size_t j = 0; j < per_inserter; ++j) {
                if (f.insert(fresh[i][j]) == insert_result::full) false_negatives.fetch_add(1);
                if (!f.contains(fresh[i][j])) false_negatives.fetch_add(1);
                done[i].store(j + 1, std::memory_order_release);
            }
        });
    for (unsigned i = 0; i < removers; ++i)
        threads.emplace_back([&, i] {
            for (size_t j = i; j < doomed.size(); j += removers)
                if (!f.remove(doomed[j])) failed_removes.fetch_add(1);
        });
    for (unsigned i = 0; i < queriers; ++i)
        threads.emplace_back([&, i] {
            uint64_t x = i;
            while (!stop.load(std::memory_order_acquire)) {
                x = mix_key(x);
                if (!f.contains(kept[x % kept.size()])) false_negatives.fetch_add(1);
                unsigned const w = static_cast<unsigned>(x % inserters);
                size_t const d = done[w].load(std::memory_order_acquire);
                if (d > 0 && !f.contains(fresh[w][x % d])) false_negatives.fetch_add(1);
            }
        });
    for (unsigned i = 0; i < inserters + removers; ++i) threads[i].join();
    stop.store(true, std::memory_order_release);
    for (size_t i = inserters + removers; i < threads.size(); ++i) threads[i].join();
    EXPECT_EQ(false_negatives.load(), 0u);
    EXPECT_EQ(failed_removes.load(), 0u);
    // The result equals the sequential reference holding exactly the survivors.
    qf::sequential_filter ref(q, r);
    for (uint64_t k : kept) ref.insert(k);
    for (auto const& v : fresh)
        for (uint64_t k : v) ref.insert(k);
    EXPECT_EQ(f.size(), ref.size());
    EXPECT_EQ(fingerprints_of(f), fingerprints_of(ref));
}

TEST(locally_locked_remove, removers_inserters_and_queriers_together) {
    for (int round = 0; round < (QMER_TEST_SANITIZED ? 3 : 20); ++round)
        remove_under_load(10, 12, 1000 + 100 * round);
}

// contains_final() on a table nobody writes any more, while other threads query it with
// contains(), whose locked path read-locks cluster starts (100 -> 010 -> 100): the lock-free reads
// see through those locks and answer exactly as the sequential reference does.
TEST(locally_locked_final, lock_free_queries_beside_read_locking_queries) {
    unsigned const q = QMER_TEST_SANITIZED ? 12 : 15, r = 6;  // short remainders: positives
    locally_locked_filter f(q, r);
    qf::sequential_filter ref(q, r);
    auto const keys = distinct_keys(f.capacity() * 93 / 100, 61);  // long clusters
    for (uint64_t k : keys) {
        f.insert(k);
        ref.insert(k);
    }
    auto const probes = distinct_keys(QMER_TEST_SANITIZED ? 20000 : 200000, 62);
    std::atomic<size_t> wrong{0};
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < 6; ++i)
        threads.emplace_back([&, i] {
            bool const final_path = i % 2 == 0;
            for (size_t j = i; j < probes.size(); j += 3) {
                uint64_t const h = probes[j];
                bool const got = final_path ? f.contains_final(h) : f.contains(h);
                if (got != ref.contains(h)) wrong.fetch_add(1);
                uint64_t const k = keys[j % keys.size()];
                if (!(final_path ? f.contains_final(k) : f.contains(k))) wrong.fetch_add(1);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0u);
}

TEST(locally_locked_remove, larger_table) {
    remove_under_load(QMER_TEST_SANITIZED ? 13 : 16, 10, 7);
}

}  // namespace
}  // namespace qmer::test
