#pragma once
// The "semi-concurrent" Bloom filter of a blog post (Guava's BloomFilter plus a ConcurrentHashMap),
// for bench/filters/bloom_cuckoo_bench.cpp only: the baseline qmer's lock-free
// core/bloom/bloom_filter.hpp is measured against. A plain (non-atomic) Bloom filter published
// through an atomic shared pointer, plus a concurrent set of pending inserts (the post's
// ConcurrentHashMap; here 64 mutex-striped std::unordered_set shards). insert() puts a key the
// published filter does not hold into the pending set; every `compact_every` pending inserts, the
// inserting thread copies the whole bit array, adds the pending keys it saw, and CASes the copy in;
// only if the CAS wins does it remove those keys from the pending set (so a key is always in the
// set or in the published filter, and contains() checks the set first, then the filter).
// std::shared_ptr frees a replaced filter when its last reader lets go (Java's GC in the seed).
// Probes are bloom_filter's (same m, k, double hashing), so FPRs compare.
//
// Memory: the bit array, the pending set, and during each compaction a second copy of the array.

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "core/bloom/bloom_filter.hpp"
#include "core/filter/filter.hpp"

namespace qmer::bench {

class pending_map_bloom {
  public:
    pending_map_bloom(size_t expected_n, double fpr, size_t compact_every = 1024)
        : geometry_(bloom_filter::plan(expected_n, fpr)), compact_every_(compact_every) {
        main_.store(std::make_shared<plain_bloom const>(geometry_));
    }

    insert_result insert(uint64_t h) {
        if (main_.load(std::memory_order_acquire)->contains(h))
            return insert_result::already_present;
        shard& s = shard_of(h);
        {
            std::lock_guard lock(s.mutex);
            if (!s.keys.insert(h).second) return insert_result::already_present;
        }
        size_.fetch_add(1, std::memory_order_relaxed);
        // As the post: compact when the count since the last compaction hits a multiple.
        int64_t const n = since_compact_.fetch_add(1, std::memory_order_acq_rel) + 1;
        if (n > 0 && n % static_cast<int64_t>(compact_every_) == 0) compact();
        return insert_result::inserted;
    }

    bool contains(uint64_t h) const {
        shard& s = shard_of(h);
        {
            std::lock_guard lock(s.mutex);
            if (s.keys.count(h) != 0) return true;
        }
        // A key missing from the set was removed after a filter holding it was published, and this
        // load comes after that removal (the shard mutex orders them): it sees that filter or a
        // later copy of it.
        return main_.load(std::memory_order_acquire)->contains(h);
    }

    size_t size() const { return size_.load(std::memory_order_relaxed); }
    size_t capacity() const { return geometry_.expected_n; }
    size_t memory_bytes() const {
        size_t pending = 0;
        for (auto& s : shards_) {
            std::lock_guard lock(s.mutex);
            pending += s.keys.bucket_count() * sizeof(void*) + s.keys.size() * 32;
        }
        return geometry_.bits / 8 + pending + sizeof(*this);
    }
    double false_positive_rate() const { return 0; }  // not used by the benchmark
    size_t compactions() const { return compactions_.load(); }

  private:
    struct plain_bloom {
        explicit plain_bloom(bloom_filter::geometry shape) : g(shape), words(shape.bits / 64) {}
        bool contains(uint64_t h) const {
            uint64_t x = h;
            uint64_t const step = std::rotl(h, 32) | 1;
            for (uint32_t i = 0; i < g.probes; ++i, x += step) {
                uint64_t const pos = bloom_detail::reduce(x, g.bits);
                if (((words[pos >> 6] >> (pos & 63)) & 1) == 0) return false;
            }
            return true;
        }
        void add(uint64_t h) {
            uint64_t x = h;
            uint64_t const step = std::rotl(h, 32) | 1;
            for (uint32_t i = 0; i < g.probes; ++i, x += step) {
                uint64_t const pos = bloom_detail::reduce(x, g.bits);
                words[pos >> 6] |= uint64_t{1} << (pos & 63);
            }
        }
        bloom_filter::geometry g;
        std::vector<uint64_t> words;
    };
    struct alignas(64) shard {
        mutable std::mutex mutex;
        std::unordered_set<uint64_t> keys;
    };
    shard& shard_of(uint64_t h) const { return shards_[h >> 58]; }

    void compact() {
        std::vector<uint64_t> moving;  // the post bounds this to the set's size when it started
        for (auto& s : shards_) {
            std::lock_guard lock(s.mutex);
            moving.insert(moving.end(), s.keys.begin(), s.keys.end());
        }
        auto old = main_.load(std::memory_order_acquire);
        auto copy = std::make_shared<plain_bloom>(*old);
        for (uint64_t h : moving) copy->add(h);
        std::shared_ptr<plain_bloom const> next = std::move(copy);
        if (!main_.compare_exchange_strong(old, next, std::memory_order_acq_rel)) return;
        for (uint64_t h : moving) {
            shard& s = shard_of(h);
            std::lock_guard lock(s.mutex);
            s.keys.erase(h);
        }
        since_compact_.fetch_sub(static_cast<int64_t>(moving.size()), std::memory_order_acq_rel);
        compactions_.fetch_add(1, std::memory_order_relaxed);
    }

    bloom_filter::geometry geometry_;
    size_t compact_every_;
    std::atomic<std::shared_ptr<plain_bloom const>> main_;
    mutable std::array<shard, 64> shards_;
    std::atomic<size_t> size_{0};
    std::atomic<int64_t> since_compact_{0};
    std::atomic<size_t> compactions_{0};
};

}  // namespace qmer::bench
