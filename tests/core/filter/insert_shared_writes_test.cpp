// An insert writes the table and its own thread's count shard, and nothing else of the filter
// object: no counter or flag that other inserting threads write too, none beside the pointers
// every insert reads. A shared write per insert moves one cache line between all inserting cores on
// every insert, and one fetch_add on an element count is enough to stop the inserts scaling after a
// few threads (bench/MEASUREMENTS.md).
//
// How: the filter object's bytes (and, for the expandable filter, its top level's) are copied,
// one thread inserts a few new keys, and the 128-byte blocks (core/filter/sharded_count.hpp's unit
// of separation) whose bytes changed are collected. Then a second thread, one whose count shard
// differs, does the same. Each thread may change at most one block, and never the other's: a
// write to a shared member changes the same block for both. Few enough keys that no thread
// publishes its count (8 keys; the locally locked filters' batch here is at least 16 inserts),
// which is a shared write by design, once per batch.
//
// The externally locked filter is left out: the paper's baseline locks a mutex per insert by
// design. The bit sets keep no count.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/filter/sharded_count.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace qmer {
namespace {

constexpr size_t block = no_sharing_bytes;

// A copy of an object's bytes and where they were.
struct region {
    unsigned char const* at;
    std::vector<unsigned char> bytes;
};

region copy_of(void const* p, size_t n) {
    auto const* b = static_cast<unsigned char const*>(p);
    return {b, std::vector<unsigned char>(b, b + n)};
}

// Absolute 128-byte block numbers where the region's bytes now differ from its copy.
void collect_changed(region const& r, std::set<uintptr_t>& blocks) {
    for (size_t i = 0; i < r.bytes.size(); ++i)
        if (r.at[i] != r.bytes[i]) blocks.insert(reinterpret_cast<uintptr_t>(r.at + i) / block);
}

uint64_t key(uint64_t i) {
    uint64_t z = i + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Runs `inserts(first_key)` on a new thread whose count shard is not `avoid` (threads are made
// until one qualifies) and returns the blocks of `objects` it changed, and its shard.
template <typename Objects, typename Inserts>
std::set<uintptr_t> blocks_changed_by_a_thread(Objects objects, Inserts inserts, uint64_t first,
                                               unsigned avoid, unsigned& shard) {
    std::set<uintptr_t> changed;
    for (int attempt = 0; attempt < 256; ++attempt) {
        std::vector<region> copies;
        bool done = false;
        std::thread t([&] {
            shard = this_thread_shard(sharded_count::shards);
            if (shard == avoid) return;
            for (auto [p, n] : objects()) copies.push_back(copy_of(p, n));
            inserts(first);
            for (auto const& c : copies) collect_changed(c, changed);
            done = true;
        });
        t.join();
        if (done) return changed;
    }
    ADD_FAILURE() << "no thread with another count shard in 256 attempts";
    return changed;
}

template <typename F, typename Objects>
void expect_no_shared_writes(F& f, Objects objects, std::string const& name) {
    auto inserts = [&](uint64_t first) {
        for (uint64_t i = first; i < first + 8; ++i)
            ASSERT_EQ(f.insert(key(i)), insert_result::inserted) << name << " key " << i;
    };
    unsigned a = 0, b = 0;
    auto const by_a = blocks_changed_by_a_thread(objects, inserts, 1000, ~0u, a);
    auto const by_b = blocks_changed_by_a_thread(objects, inserts, 2000, a, b);
    EXPECT_LE(by_a.size(), 1u) << name << ": one thread's inserts wrote " << by_a.size()
                               << " blocks of the filter object";
    EXPECT_LE(by_b.size(), 1u) << name << ": one thread's inserts wrote " << by_b.size()
                               << " blocks of the filter object";
    for (uintptr_t x : by_a)
        EXPECT_EQ(by_b.count(x), 0u) << name << ": two threads' inserts wrote the same block";
    for (uint64_t i = 1000; i < 1008; ++i) EXPECT_TRUE(f.contains(key(i))) << name;
    for (uint64_t i = 2000; i < 2008; ++i) EXPECT_TRUE(f.contains(key(i))) << name;
}

template <typename F>
auto just(F const& f) {
    return [&f] { return std::vector<std::pair<void const*, size_t>>{{&f, sizeof(F)}}; };
}

TEST(insert_shared_writes, locally_locked_filter_fixed_and_growing) {
    qf::locally_locked_filter fixed(20, 8);
    expect_no_shared_writes(fixed, just(fixed), "locally_locked");
    qf::locally_locked_filter growing(20, 8, qf::growing_policy{true, 0.9});
    expect_no_shared_writes(growing, just(growing), "locally_locked, growing");
}

TEST(insert_shared_writes, expandable_filter_and_its_top_level) {
    for (bool cascading : {false, true}) {
        qf::expandable_filter f(size_t{1} << 22, 1e-3, cascading);
        ASSERT_EQ(f.levels(), 1u);
        auto objects = [&f] {
            return std::vector<std::pair<void const*, size_t>>{
                {&f, sizeof(f)}, {&f.level(0), sizeof(qf::locally_locked_filter)}};
        };
        expect_no_shared_writes(f, objects, cascading ? "expandable, cascading" : "expandable");
    }
}

TEST(insert_shared_writes, linear_probing_bloom_and_cuckoo) {
    qf::linear_probing lp(20, 13);
    expect_no_shared_writes(lp, just(lp), "linear_probing");
    bloom_filter bloom(size_t{1} << 20, 0.01);
    expect_no_shared_writes(bloom, just(bloom), "bloom");
    blocked_bloom_filter blocked(size_t{1} << 20, 0.01);
    expect_no_shared_writes(blocked, just(blocked), "blocked_bloom");
    auto cuckoo = std::make_unique<cuckoo_filter>(size_t{1} << 20);
    expect_no_shared_writes(*cuckoo, just(*cuckoo), "cuckoo");
}

}  // namespace
}  // namespace qmer
