#pragma once
// Queries of the locally locked quotient filter (Maier, Sanders, Williger, "Concurrent Expandable
// AMQs on the Basis of Quotient Filters", SEA 2020, section 3.2, Blocks F-I): the one-group fast
// path, the query under the cluster start's read lock, and the lock-free query of a table nobody
// writes any more (query_final).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/qf/concurrent/locally_locked/locks.hpp"
#include "core/qf/concurrent/locally_locked/table.hpp"

namespace qmer::qf::locally_locked {

inline int query_in_group(uint64_t gv, unsigned iq, unsigned spg, unsigned bits,
                          uint64_t r) noexcept;
inline bool query_locked(table& t, uint64_t q, uint64_t r) noexcept;

// ---------------------------------------------------------------------------------------
// Blocks F-I: query.
inline bool query(locally_locked::table& t, uint64_t h) noexcept {
    auto& s = t.slots;
    unsigned const bits = s.slot_bits();
    uint64_t const q = t.g.quotient(h);
    uint64_t const r = t.g.remainder(h);
    // Block F: the answer from the canonical slot's group alone.
    size_t const gq = t.lanes.group_of(q);
    uint64_t const gv = s.load_group(gq);
    auto const iq = static_cast<unsigned>(q - t.lanes.first_slot(gq));
    uint64_t const v = grouped_slots::slot_in(gv, iq, bits);
    if (!locally_locked::occupied(v)) return false;
    if (locally_locked::status_bits_of(v) == status::cluster_start &&
        locally_locked::remainder_of(v) == r)
        return true;
    int const local = query_in_group(gv, iq, s.slots_per_group(), bits, r);
    if (local >= 0) return local == 1;
    return query_locked(t, q, r);
}

// -1 when the group cannot answer: its cluster start must be inside the group and unlocked, and
// the run must end inside the group. A group snapshot is consistent for such a cluster (see
// top).
inline int query_in_group(uint64_t gv, unsigned iq, unsigned spg, unsigned bits,
                          uint64_t r) noexcept {
    auto at = [&](unsigned i) { return grouped_slots::slot_in(gv, i, bits); };
    unsigned c = iq;
    for (;;) {
        uint64_t const v = at(c);
        if (!locally_locked::has_element(v) ||
            locally_locked::status_bits_of(v) == status::read_lock)
            return -1;
        if (locally_locked::status_bits_of(v) == status::cluster_start) break;
        if (c == 0) return -1;
        --c;
    }
    unsigned b = c, s = c;
    while (b != iq) {
        do {
            if (++s >= spg) return -1;
        } while (locally_locked::continuation(at(s)));
        do ++b;
        while (!locally_locked::occupied(at(b)));
    }
    for (unsigned i = s;;) {
        uint64_t const x = locally_locked::remainder_of(at(i));
        if (x == r) return 1;
        if (x > r) return 0;
        if (++i >= spg) return -1;
        if (!locally_locked::continuation(at(i))) return 0;
    }
}

// Blocks G-I: read lock the cluster start, check it still starts q's cluster (a concurrent
// remove may have split the cluster or emptied slots while we scanned), then search the run.
inline bool query_locked(locally_locked::table& t, uint64_t q, uint64_t r) noexcept {
    auto& s = t.slots;
    auto const& l = t.lanes;
    for (;;) {
        // Block G: scan left (a group at a time) to the nearest unshifted slot and read lock
        // it if it is a cluster start.
        size_t c = q;
        bool restart = false;
        for (;;) {
            uint64_t gv = 0;
            c = scan::last_stop_at_or_before(s, l, c, gv);
            if (c == scan::npos) {
                restart = true;  // shifted down to slot 0: the table changed under the scan
                break;
            }
            stop_kind const k = try_read_lock(t, c, gv);
            if (k == stop_kind::locked) break;
            if (k == stop_kind::hole) {
                restart = true;  // a hole: the table changed under the scan
                break;
            }
        }
        if (restart) {
            if (!locally_locked::occupied(t.get(q))) return false;
            locally_locked::pause();
            continue;
        }
        // Under the lock (every load below comes after the lock CAS): every slot in (c, q]
        // must still be shifted, i.e. in c's cluster. The same pass counts the runs to step
        // over (occupied slots in (c, q]) and the run starts before q.
        scan::span_summary const sum = scan::summarize(s, l, c, q);
        uint64_t const start_unlocked = (sum.start_value & ~status::mask) | status::cluster_start;
        if (!sum.all_shifted) {
            release_read_lock(t, c, start_unlocked);
            continue;
        }
        bool found = false;
        if (locally_locked::occupied(sum.q_value)) {
            // Block H: run q begins at the sum.occupied-th run start after c; runs begin at or
            // after their canonical slot, so after the run starts counted in (c, q) it is
            // among those from q on (the general form is kept should that not hold).
            size_t p = c;
            if (q != c) {
                p = scan::run_start_in_cluster(s, l, c, q, sum.occupied, sum.run_starts);
            }
            // Block I: search the sorted run.
            found = p < t.total_slots && scan::run_contains(s, l, t.total_slots, p, r);
        }
        release_read_lock(t, c, start_unlocked);
        return found;
    }
}

// The query of a final table (locally_locked_filter::contains_final, which says when a table is
// final): plain group loads, no lock, no CAS.
inline bool query_final(table const& t, uint64_t h) noexcept {
    auto const& s = t.slots;
    auto const& l = t.lanes;
    uint64_t const q = t.g.quotient(h);
    uint64_t const r = t.g.remainder(h);
    size_t const gq = l.group_of(q);
    uint64_t const gv = s.load_group(gq);
    auto const iq = static_cast<unsigned>(q - l.first_slot(gq));
    uint64_t const v = grouped_slots::slot_in(gv, iq, s.slot_bits());
    if (!locally_locked::occupied(v)) return false;
    if (!locally_locked::shifted(v) && locally_locked::remainder_of(v) == r)
        return true;  // cluster start or read lock
    int const local = query_in_group(gv, iq, s.slots_per_group(), s.slot_bits(), r);
    if (local >= 0) return local == 1;
    // Blocks G and H in one pass without the lock: walk left a group at a time to the nearest
    // unshifted slot, which in a final, consistent table is q's cluster start c (neither
    // empty nor write locked), counting on the way what scan::summarize(c, q) counts - the
    // occupied slots in (c, q] and the run starts in (c, q) - from the same group values,
    // instead of reading [c, q] a second time.
    size_t g = gq;
    uint64_t lanes = l.upto(iq);              // slots of this group at or below the scan
    uint64_t before_q = lanes & ~l.from(iq);  // the same, q excluded (run starts in (c, q))
    unsigned occupied = 0, run_starts = 0;
    uint64_t gvc = gv;
    size_t c = 0;
    for (;;) {
        if (uint64_t const hit = l.stops(gvc) & lanes; hit != 0) {
            unsigned const kc = l.lane_at_bit(63u - static_cast<unsigned>(__builtin_clzll(hit)));
            uint64_t const after_c = ~l.upto(kc);
            occupied += l.count(l.occ_bit(gvc) & lanes & after_c);
            run_starts += l.count(l.not_continuation(gvc) & before_q & after_c);
            c = l.first_slot(g) + kc;
            break;
        }
        occupied += l.count(l.occ_bit(gvc) & lanes);
        run_starts += l.count(l.not_continuation(gvc) & before_q);
        if (g == 0) return false;  // all shifted down to slot 0: not a consistent table
        gvc = s.load_group(--g);
        lanes = before_q = l.lane0();
    }
    // Block H as in query_locked(): run q begins at the occupied-th run start after c.
    size_t const p = scan::run_start_in_cluster(s, l, c, q, occupied, run_starts);
    return p < t.total_slots && scan::run_contains(s, l, t.total_slots, p, r);
}

}  // namespace qmer::qf::locally_locked
