#pragma once
// An element count that any number of threads increment without writing to a shared cache line
// on every increment: each thread adds to its own shard (a line it alone writes while threads
// are at most `shards`), and publishes what its shard gathered to one shared total only once per
// `batch` of its own increments. A fetch_add on one counter beside the table pointers every insert
// loads would move that line between all cores on every insert, and the filters' inserts would stop
// scaling after a few threads (bench/MEASUREMENTS.md).
//
//   add_one(batch)   one element: its shard only, and every `batch` of them (per shard) the
//                    shared total too; returns the total after a publication, else 0
//   count_one()      one element, its shard only (a filter that never looks at its fill)
//   add(n), sub(n)   bulk and removes (rare): to a base value, published at once
//   load()           the exact count when no add runs (a join supplies the happens-before)
//   published()      a lower estimate for growth decisions: load() - published() is in
//                    [0, shards * batch) (each shard holds fewer than `batch` unpublished)
//
// Memory order: relaxed throughout. The count orders nothing (no thread infers the table's
// contents from it); growth decisions only need an estimate, and a filter's table is handed
// over by its own release/acquire operations.
//
// Which shard: the thread's kernel id modulo `shards` (Linux): a pool of threads started together
// gets consecutive ids, so up to `shards` of them never share a shard. Threads that do share one
// stay correct (the shard's updates are atomic read-modify-writes), only slower. Elsewhere a hash
// of the thread's id. Each shard is two lines apart from the next (128 bytes: Intel's L2
// prefetcher pulls lines in adjacent pairs, which makes neighbours of one line share).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace qmer {

// This thread's shard of `count` (a power of two). The id is read once per thread and kept in
// a thread_local constant.
inline unsigned this_thread_shard(unsigned count) noexcept {
#if defined(__linux__)
    thread_local uint64_t const id = static_cast<uint64_t>(::gettid());
#else
    thread_local uint64_t const id = [] {
        uint64_t x = std::hash<std::thread::id>{}(std::this_thread::get_id());
        x ^= x >> 31;  // spread the bits a hash of a pointer leaves equal
        x *= 0x9E3779B97F4A7C15ULL;
        return x >> 32;
    }();
#endif
    return static_cast<unsigned>(id & (count - 1));
}

// Bytes between two independently written values (two cache lines: see the top).
inline constexpr size_t no_sharing_bytes = 128;

class sharded_count {
  public:
    static constexpr unsigned shards = 64;

    sharded_count() = default;
    sharded_count(sharded_count const&) = delete;
    sharded_count& operator=(sharded_count const&) = delete;

    // One element. `batch` >= 1: how many of this shard's elements wait before they are
    // published (the caller's choice, e.g. from its table's size; it may change between calls).
    // Returns the published total when this call published, else 0.
    size_t add_one(size_t batch) noexcept {
        shard& s = shards_[this_thread_shard(shards)];
        uint64_t const n = s.count.fetch_add(1, std::memory_order_relaxed) + 1;
        uint64_t f = s.flushed.load(std::memory_order_relaxed);
        // Signed: a thread sharing the shard may have published past our n already.
        if (static_cast<int64_t>(n - f) < static_cast<int64_t>(batch)) return 0;
        // The CAS gives [f, n) to one publisher (threads sharing a shard race for it).
        if (!s.flushed.compare_exchange_strong(f, n, std::memory_order_relaxed)) return 0;
        return static_cast<size_t>(total_.value.fetch_add(n - f, std::memory_order_relaxed) +
                                   (n - f));
    }

    // One element, never published on its own: for filters that decide nothing on their fill.
    void count_one() noexcept {
        shards_[this_thread_shard(shards)].count.fetch_add(1, std::memory_order_relaxed);
    }

    // Bulk additions and removes: counted and published at once.
    void add(size_t n) noexcept {
        base_.value.fetch_add(n, std::memory_order_relaxed);
        total_.value.fetch_add(n, std::memory_order_relaxed);
    }
    void sub(size_t n) noexcept {
        base_.value.fetch_sub(n, std::memory_order_relaxed);
        total_.value.fetch_sub(n, std::memory_order_relaxed);
    }

    // Exact when no add runs. Sums the shards: not for a hot path.
    size_t load() const noexcept {
        uint64_t sum = base_.value.load(std::memory_order_relaxed);
        for (auto const& s : shards_) sum += s.count.load(std::memory_order_relaxed);
        return static_cast<size_t>(sum);
    }
    size_t published() const noexcept {
        return static_cast<size_t>(total_.value.load(std::memory_order_relaxed));
    }

    // Sets the count when no add runs (a filter loaded from an index).
    void reset(size_t n) noexcept {
        for (auto& s : shards_) {
            s.count.store(0, std::memory_order_relaxed);
            s.flushed.store(0, std::memory_order_relaxed);
        }
        base_.value.store(n, std::memory_order_relaxed);
        total_.value.store(n, std::memory_order_relaxed);
    }

    // The line this thread's add_one() writes (tests check that inserts write nothing else).
    void const* this_thread_line() const noexcept { return &shards_[this_thread_shard(shards)]; }

  private:
    struct alignas(no_sharing_bytes) shard {
        std::atomic<uint64_t> count{0};    // add_one() calls made here
        std::atomic<uint64_t> flushed{0};  // of which published
    };
    struct alignas(no_sharing_bytes) cell {
        std::atomic<uint64_t> value{0};
    };
    shard shards_[shards];
    cell total_;  // published: base_ plus each shard's `flushed`
    cell base_;   // add() minus sub()
};

}  // namespace qmer
