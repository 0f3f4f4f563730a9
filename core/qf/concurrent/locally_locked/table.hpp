#pragma once
// The locally locked quotient filter's table (core/qf/concurrent/locally_locked.hpp): the slots of
// core/qf/three_bit_layout.hpp in 64-bit atomic groups, the predicates that read a slot through the
// lock states stored in it (the status combinations that never occur naturally: 110 remainder 0 a
// write lock, 110 remainder 1 a migration lock, 010 a read lock), and the state of a migration
// (bounded growing). The algorithms over it: locks.hpp, insert_remove.hpp (insert and remove),
// query.hpp, migration.hpp, bulk.hpp.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "core/filter/sharded_count.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf::locally_locked {

// Slot predicates that see through the locks.
inline uint64_t status_bits_of(uint64_t v) noexcept {
    return v & status::mask;
}
inline uint64_t remainder_of(uint64_t v) noexcept {
    return v >> 3;
}
inline bool has_element(uint64_t v) noexcept {
    return status_bits_of(v) != status::empty && status_bits_of(v) != status::write_lock;
}
inline bool occupied(uint64_t v) noexcept {
    return status_bits_of(v) == status::read_lock ||
           (status_bits_of(v) != status::write_lock && (v & status::occupied));
}
inline bool continuation(uint64_t v) noexcept {
    return status_bits_of(v) != status::read_lock && status_bits_of(v) != status::write_lock &&
           (v & status::continuation);
}
inline bool shifted(uint64_t v) noexcept {
    return v & status::shifted;
}
inline bool is_migration_lock(uint64_t v) noexcept {
    return status_bits_of(v) == status::write_lock && remainder_of(v) != 0;
}
// The slot as the sequential layout has it (a read lock is a cluster start, a lock is empty).
inline uint64_t normalized(uint64_t v) noexcept {
    if (status_bits_of(v) == status::read_lock) return (v & ~status::mask) | status::cluster_start;
    if (status_bits_of(v) == status::write_lock) return 0;
    return v;
}
inline void pause() noexcept {
    std::this_thread::yield();
}

struct table {
    table(qf::geometry geo, size_t total, size_t batch)
        : g(geo),
          total_slots(total),
          count_batch(batch),
          slots(total, geo.remainder_bits + 3),
          lanes(slots) {}
    // Read by every operation, written never: apart from the counters below, which removes write.
    qf::geometry g;
    size_t total_slots;
    size_t count_batch;  // the filter's count publishes after this many inserts of a thread
    grouped_slots slots;
    scan::layout lanes;  // lane masks and division-free group arithmetic for `slots`
    // Removes in flight on this table; a migration waits for zero before locking (see remove()).
    alignas(no_sharing_bytes) std::atomic<size_t> removers{0};
    // Removes that opened a hole, counted after the hole is written and before their write lock is
    // released. A write-lock scan that sees it change retries (acquire_write_lock()).
    std::atomic<uint64_t> holes_opened{0};

    // One slot, one acquire load of its group.
    uint64_t get(size_t i) const noexcept {
        size_t const gi = lanes.group_of(i);
        return lanes.slot(slots.load_group(gi), static_cast<unsigned>(i - lanes.first_slot(gi)));
    }
};

struct migration {
    table* source = nullptr;
    table* target = nullptr;
    size_t blocks = 0;
    size_t block_groups = 0;
    std::atomic<bool> ready{false};  // no remove in flight on source any more
    std::atomic<size_t> claim1{0}, done1{0}, claim2{0}, done2{0};
};

// What an insert found (Algorithm 1's outcomes, and a migration to help first).
enum class outcome { done, present, full, migrating };

}  // namespace qmer::qf::locally_locked
