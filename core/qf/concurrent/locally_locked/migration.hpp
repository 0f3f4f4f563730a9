#pragma once
// Bounded growing's two phases over one block of a locally locked quotient filter's table (Maier,
// Sanders, Williger, "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020,
// "Growing concurrently", end of section 3.2): phase 1 migration-locks every empty slot, phase 2
// copies the superclusters that start in the block into the doubled table. Who claims which block
// and when the new table takes over: locally_locked_filter::start_migration and help.

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "core/qf/concurrent/locally_locked/bulk.hpp"
#include "core/qf/concurrent/locally_locked/table.hpp"

namespace qmer::qf::locally_locked {

// Phase 1 for groups [g0, g1): every empty slot becomes a migration lock (110, remainder 1).
// A write lock (an insert or remove in flight) is waited out first: that writer finishes in the
// old table and its work is copied in phase 2.
inline void lock_block(locally_locked::table& t, size_t g0, size_t g1) {
    auto& s = t.slots;
    unsigned const bits = s.slot_bits();
    unsigned const spg = s.slots_per_group();
    for (size_t g = g0; g < g1; ++g) {
        uint64_t gv = s.load_group(g);
        for (;;) {
            uint64_t nv = gv;
            bool writer = false;
            for (unsigned k = 0; k < spg && g * spg + k < t.total_slots; ++k) {
                uint64_t const v = grouped_slots::slot_in(gv, k, bits);
                if (locally_locked::status_bits_of(v) == status::empty)
                    nv = grouped_slots::with_slot(nv, k, bits, (1u << 3) | status::write_lock);
                else if (locally_locked::status_bits_of(v) == status::write_lock &&
                         locally_locked::remainder_of(v) == 0)
                    writer = true;
            }
            if (writer) {
                locally_locked::pause();
                gv = s.load_group(g);
                continue;
            }
            if (nv == gv || s.cas_group(g, gv, nv)) break;
        }
    }
}

// Phase 2 for source slots [lo, hi): copies every supercluster that starts there (the last may
// run past hi). Elements come out in fingerprint order, so each goes to the first free target
// position at or after its new quotient. A supercluster of old positions [s, e) lands at target
// positions below 2e, before the next one's first quotient 2(e+1): blocks never share a target
// slot, and the target's slots are written with fetch_or on zeroed groups (each bit once).
inline void copy_block(locally_locked::table const& src, locally_locked::table& dst, size_t lo,
                       size_t hi) {
    // The source is frozen apart from read locks coming and going, which the locally_locked::
    // predicates see through: one load per group (two caches: scan position, canonical slot) is
    // enough.
    scan::cached_reader at(src.slots, src.lanes), canonical(src.slots, src.lanes);
    size_t p = lo;
    if (p > 0 && locally_locked::has_element(at(p - 1)))
        while (p < src.total_slots && locally_locked::has_element(at(p))) ++p;
    auto words = dst.slots.groups();
    // fetch_or: two blocks' superclusters may end and begin in one target group. relaxed:
    // published by the done2 / current_ chain in help().
    auto or_bits = [&](size_t g, uint64_t bits) {
        words[g].fetch_or(bits, std::memory_order_relaxed);
    };
    while (p < hi) {
        if (!locally_locked::has_element(at(p))) {
            ++p;
            continue;
        }
        uint64_t quot = p;
        sorted_append_state st;  // each supercluster is laid out on its own
        size_t i = p;
        for (; i < src.total_slots; ++i) {
            uint64_t const v = at(i);
            if (!locally_locked::has_element(v)) break;
            if (!locally_locked::shifted(v)) {
                quot = i;
            } else if (!locally_locked::continuation(v)) {
                do ++quot;
                while (!locally_locked::occupied(canonical(quot)));
            }
            [[maybe_unused]] bool const placed = place_sorted(
                dst, src.g.fingerprint_of(quot, locally_locked::remainder_of(v)), st, or_bits);
            assert(placed);  // the target holds twice the source's slots
        }
        p = i;
    }
}

}  // namespace qmer::qf::locally_locked
