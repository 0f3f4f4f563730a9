#pragma once
// The locks of the locally locked quotient filter (Maier, Sanders, Williger, "Concurrent Expandable
// AMQs on the Basis of Quotient Filters", SEA 2020, section 3.2, Blocks B, C and G), stored in the
// table's own slots (table.hpp): one write lock per supercluster (the first empty slot after it),
// then a read lock on one's own cluster start; holders of read locks never wait, so there is no
// cycle. Lock order and the invariants each lock gives: core/qf/concurrent/locally_locked.hpp, top.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/qf/concurrent/locally_locked/table.hpp"

namespace qmer::qf::locally_locked {

enum class lock_result { locked, retry, full, migrating };
enum class stop_kind { locked, again, hole };
inline stop_kind try_read_lock(table& t, size_t c, uint64_t gv);
inline void release_read_lock(table& t, size_t c, uint64_t final_value);
inline void release_write_lock(table& t, size_t w);

// Block B. Scans right from q for the first empty slot and locks it (110, remainder 0). A write
// lock met on the way belongs to another writer of this supercluster: wait for it, then start
// over from q (a remove may have opened a hole behind the scan). An empty q means the trivial
// insert is possible again: retry.
//
// Invariant the lock must give (everything under it relies on it): when we hold w, [q, w) holds
// no hole, so w ends q's supercluster and no other writer holds a write lock between our
// cluster start and w. The scan alone does not ensure it, because it reads one group at a time:
//   1. the scan loads the group of slot x (an element) and moves on;
//   2. a remove R whose cluster holds x rebuilds it, x becomes the hole, R releases its write
//      lock w0 (> x) to empty;
//   3. the scan reaches w0, finds it empty and locks it.
// We now hold w0 with a hole at x inside [q, w0). Another writer can lock x, and its region
// [its cluster start, x] overlaps ours: an insert shifting through our cluster with a stale
// copy of it, or our own shift moving the hole (a phantom element) - the lost removes, false
// negatives and survivors the stress test saw. Removes therefore count holes_opened after
// writing their hole and before releasing their write lock (release), and we compare the count
// read before the scan (acquire) with the count after our lock CAS: in the interleaving above
// the CAS (or the load that found w0 refilled: every group write is an RMW, so it continues
// R's release sequence) synchronises with R's release, so the second read sees R's increment
// and we let go of w0 and retry. If the first read already saw the increment, R's hole
// happened-before every later load of the scan, which then stops at it. Inserts never open
// holes, and removes are rare (qmer's index and query never call them), so the retries cost
// nothing in the tool.
inline lock_result acquire_write_lock(locally_locked::table& t, uint64_t q, size_t& w) {
    auto& s = t.slots;
    auto const& l = t.lanes;
    uint64_t const holes_before = t.holes_opened.load(std::memory_order_acquire);
    for (size_t i = q;;) {
        // The first empty or write-locked slot at or right of i, one group load at a time: the
        // slots passed over hold elements or read locks, which the scan steps over anyway.
        uint64_t gv = 0;
        i = scan::first_hole_at_or_after(s, l, i, gv);
        if (i == scan::npos) return lock_result::full;
        size_t const g = l.group_of(i);
        unsigned const k = static_cast<unsigned>(i - l.first_slot(g));
        uint64_t const v = l.slot(gv, k);
        if (locally_locked::status_bits_of(v) == status::write_lock) {
            if (locally_locked::remainder_of(v) != 0) return lock_result::migrating;
            while (t.get(i) == v) locally_locked::pause();
            return lock_result::retry;
        }
        if (i == q) return lock_result::retry;
        if (s.cas_group(g, gv,
                        grouped_slots::with_slot(gv, k, l.slot_bits(), status::write_lock))) {
            // acquire: ordered after the CAS (see above for why that suffices).
            if (t.holes_opened.load(std::memory_order_acquire) != holes_before) {
                release_write_lock(t, i);
                return lock_result::retry;
            }
            w = i;
            return lock_result::locked;
        }
        // The group changed: re-examine slot i with a fresh load.
    }
}

// Block C / G: scan left from q to the cluster start and read lock it (100 -> 010). Waits on a
// read lock. Only for callers holding the supercluster's write lock (the cluster cannot
// change).
inline constexpr size_t no_slot = ~size_t{0};
inline size_t acquire_read_lock_from(locally_locked::table& t, uint64_t q) {
    for (size_t c = q;;) {
        // Shifted elements are passed over a group at a time; c is the nearest unshifted slot.
        // A hole there (or no unshifted slot down to 0) cannot appear while we hold the write
        // lock; should the table say otherwise, the caller starts over.
        uint64_t gv = 0;
        c = scan::last_stop_at_or_before(t.slots, t.lanes, c, gv);
        if (c == scan::npos) return no_slot;
        switch (try_read_lock(t, c, gv)) {
            case stop_kind::locked:
                return c;
            case stop_kind::again:
                continue;  // read locked, or the CAS lost: look at c again (fresh load)
            case stop_kind::hole:
                return no_slot;
        }
    }
}

// What a left scan found at its stop c (a slot with the shifted bit clear, read from group
// value gv): a cluster start is read locked (100 -> 010) with one CAS on gv; a read lock held
// by someone else is waited for (pause, then the caller reloads); a hole ends the scan.
inline stop_kind try_read_lock(locally_locked::table& t, size_t c, uint64_t gv) {
    auto const& l = t.lanes;
    size_t const g = l.group_of(c);
    unsigned const k = static_cast<unsigned>(c - l.first_slot(g));
    uint64_t const v = l.slot(gv, k);
    if (locally_locked::status_bits_of(v) == status::read_lock) {
        locally_locked::pause();
        return stop_kind::again;
    }
    if (locally_locked::status_bits_of(v) == status::cluster_start) {
        if (t.slots.cas_group(g, gv,
                              grouped_slots::with_slot(gv, k, l.slot_bits(),
                                                       (v & ~status::mask) | status::read_lock)))
            return stop_kind::locked;
        return stop_kind::again;
    }
    return stop_kind::hole;
}

inline void release_read_lock(locally_locked::table& t, size_t c, uint64_t final_value) {
    auto& s = t.slots;
    size_t const g = t.lanes.group_of(c);
    unsigned const k = static_cast<unsigned>(c - t.lanes.first_slot(g));
    uint64_t gv = s.load_group(g);
    // acq_rel CAS: release publishes every write made under the lock to the next holder.
    while (!s.cas_group(g, gv, grouped_slots::with_slot(gv, k, s.slot_bits(), final_value))) {
    }
}

inline void release_write_lock(locally_locked::table& t, size_t w) {
    release_read_lock(t, w, status::empty);
}

// Blocks B and C, what every writer does before changing a cluster: the write lock w that ends q's
// supercluster, then the read lock on q's cluster start c. `retry` when either scan must start
// over (the write lock, if taken, is released first).
inline lock_result lock_cluster(locally_locked::table& t, uint64_t q, size_t& w, size_t& c) {
    lock_result const r = acquire_write_lock(t, q, w);
    if (r != lock_result::locked) return r;
    // No remove can change this supercluster while we hold its write lock, so the slots between
    // the cluster start and q stay shifted.
    c = acquire_read_lock_from(t, q);
    if (c != no_slot) return lock_result::locked;
    release_write_lock(t, w);
    return lock_result::retry;
}

}  // namespace qmer::qf::locally_locked
