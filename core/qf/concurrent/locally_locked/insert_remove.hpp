#pragma once
// Insert and remove of the locally locked quotient filter: Algorithm 1 of Maier, Sanders, Williger,
// "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 3.2 (Blocks
// A-E), and the remove that rebuilds a cluster under the same two locks (locks.hpp). The region a
// writer changes is [its cluster start, its write lock], written left to right one group CAS at a
// time.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/qf/concurrent/locally_locked/locks.hpp"
#include "core/qf/concurrent/locally_locked/table.hpp"

namespace qmer::qf::locally_locked {

// Writes new slot values for positions [lo, lo + vals.size()) left to right, one group CAS at a
// time. Waits while a slot to be overwritten is read locked by someone else (a query holding a
// later cluster of our supercluster): section 3.2, Block E. `own` is our read-locked slot. A
// read lock that the write would leave unchanged is not waited for.
inline void write_range(locally_locked::table& t, size_t lo, std::vector<uint64_t> const& vals,
                        size_t own) {
    auto& s = t.slots;
    auto const& l = t.lanes;
    unsigned const bits = s.slot_bits();
    uint64_t const slot_mask = grouped_slots::slot_mask(bits);
    size_t const hi = lo + vals.size();
    size_t i = lo;
    while (i < hi) {
        size_t const g = l.group_of(i);
        size_t const base = l.first_slot(g);
        size_t const last = std::min(hi, l.first_slot(g + 1));
        // The new lanes of this group, as one value and one mask.
        uint64_t put = 0, mask = 0;
        for (size_t j = i; j < last; ++j) {
            unsigned const shift = static_cast<unsigned>(j - base) * bits;
            put |= (vals[j - lo] & slot_mask) << shift;
            mask |= slot_mask << shift;
        }
        // Lanes (bit 0 of each) we overwrite that may hold someone else's read lock.
        uint64_t mine = mask & l.lane0();
        if (own >= base && own < last) mine &= ~(uint64_t{1} << ((own - base) * bits));
        uint64_t gv = s.load_group(g);
        for (;;) {
            // Read locks (010: shifted 0, continuation 1, occupied 0) among those lanes whose
            // value the write would change.
            uint64_t locked = l.stops(gv) & l.cont_bit(gv) & ~l.occ_bit(gv) & mine;
            bool locked_by_other = false;
            for (; locked != 0; locked &= locked - 1) {
                unsigned const shift = static_cast<unsigned>(__builtin_ctzll(locked));
                if (((gv ^ put) >> shift & slot_mask) != 0) locked_by_other = true;
            }
            if (locked_by_other) {
                locally_locked::pause();
                gv = s.load_group(g);
                continue;
            }
            uint64_t const nv = (gv & ~mask) | put;
            if (nv == gv || s.cas_group(g, gv, nv)) break;
        }
        i = last;
    }
}

// Slots [lo, lo + out.size()) as the sequential layout has them, one load per group. Only for
// a region held under the write lock and the cluster's read lock (it cannot change).
inline void read_normalized(locally_locked::table const& t, size_t lo, std::vector<uint64_t>& out) {
    auto const& l = t.lanes;
    unsigned const spg = l.slots_per_group();
    size_t g = l.group_of(lo);
    auto k = static_cast<unsigned>(lo - l.first_slot(g));
    uint64_t gv = out.empty() ? 0 : t.slots.load_group(g);
    for (size_t i = 0; i < out.size(); ++i, ++k) {
        if (k == spg) {
            gv = t.slots.load_group(++g);
            k = 0;
        }
        out[i] = locally_locked::normalized(l.slot(gv, k));
    }
}

// Blocks D-E under both locks (the region [c, w] cannot change under us): find where run q
// begins with group scans over [c, q], decode [q, w], insert like the sequential filter, write
// back [q, w].
inline outcome insert_locked(locally_locked::table& t, uint64_t q, uint64_t r, size_t c, size_t w) {
    thread_local std::vector<uint64_t> buf;
    buf.resize(w - q + 1);
    read_normalized(t, q, buf);
    auto occ = [&](size_t i) { return (buf[i - q] & status::occupied) != 0; };
    auto cont = [&](size_t i) { return (buf[i - q] & status::continuation) != 0; };
    // q's slot counts as occupied from here on: where run q is, or would begin.
    bool const had_run = occ(q);
    buf[0] |= status::occupied;
    // Block D: step over one run per occupied slot in (c, q] from the cluster start. Runs
    // begin at or after their canonical slot, so run q begins in [q, w].
    size_t s = c;
    uint64_t start_value = buf[0];  // slot c, normalized (a cluster start)
    if (q != c) {
        scan::span_summary const sum = scan::summarize(t.slots, t.lanes, c, q);
        start_value = locally_locked::normalized(sum.start_value);
        unsigned const runs = sum.occupied + (had_run ? 0 : 1);
        s = scan::run_start_in_cluster(t.slots, t.lanes, c, q, runs, sum.run_starts);
    }
    assert(s >= q && s <= w);
    size_t p = s;
    if (had_run) {
        for (;;) {
            uint64_t const x = buf[p - q] >> 3;
            if (x == r) {
                release_read_lock(t, c, (start_value & ~status::mask) | status::cluster_start);
                release_write_lock(t, w);
                return outcome::present;
            }
            if (x > r) break;
            ++p;
            if (p >= w || !cont(p)) break;
        }
    }
    // Block E: shift [p, w) right by one into the write-locked slot w, in place.
    uint64_t element =
        (r << 3) | (p != q ? status::shifted : 0) | (had_run && p != s ? status::continuation : 0);
    bool const displaced_run_start = had_run && p == s;
    for (size_t i = p; i <= w; ++i) {
        uint64_t const old = buf[i - q];
        uint64_t old_element = old & ~status::occupied;
        if (i == p && displaced_run_start) old_element |= status::continuation;
        buf[i - q] = element | (old & status::occupied);
        element = old_element | status::shifted;
    }
    // The cluster start stays read locked until everything behind it is written.
    if (q == c) {
        start_value = buf[0];
        buf[0] = (buf[0] & ~status::mask) | status::read_lock;
    }
    write_range(t, q, buf, c);
    release_read_lock(t, c, (start_value & ~status::mask) | status::cluster_start);
    return outcome::done;
}

// ---------------------------------------------------------------------------------------
// Blocks A-E: insert.
inline outcome insert_into(locally_locked::table& t, uint64_t h) {
    auto& s = t.slots;
    unsigned const bits = s.slot_bits();
    uint64_t const q = t.g.quotient(h);
    uint64_t const r = t.g.remainder(h);
    for (;;) {
        // Block A: trivial insert into an empty canonical slot, one CAS.
        size_t const gq = t.lanes.group_of(q);
        unsigned const iq = static_cast<unsigned>(q - t.lanes.first_slot(gq));
        uint64_t gv = s.load_group(gq);
        uint64_t v = grouped_slots::slot_in(gv, iq, bits);
        if (locally_locked::status_bits_of(v) == status::empty) {
            if (s.cas_group(
                    gq, gv,
                    grouped_slots::with_slot(gv, iq, bits, (r << 3) | status::cluster_start)))
                return outcome::done;
            continue;
        }
        if (locally_locked::is_migration_lock(v)) return outcome::migrating;
        // Blocks B and C: write lock the first empty slot right of q, read lock our cluster start.
        size_t w = 0, c = 0;
        switch (lock_cluster(t, q, w, c)) {
            case lock_result::locked:
                break;
            case lock_result::retry:
                continue;
            case lock_result::full:
                return outcome::full;
            case lock_result::migrating:
                return outcome::migrating;
        }
        return insert_locked(t, q, r, c, w);
    }
}

inline bool remove_locked(table& t, uint64_t q, uint64_t r, size_t c, size_t w);

// ---------------------------------------------------------------------------------------
// Remove: write lock, read lock, rebuild the cluster without the fingerprint.
inline bool remove_from(locally_locked::table& t, uint64_t h) {
    uint64_t const q = t.g.quotient(h);
    uint64_t const r = t.g.remainder(h);
    for (;;) {
        uint64_t const v = t.get(q);
        if (!locally_locked::occupied(v)) return false;
        size_t w = 0, c = 0;
        switch (lock_cluster(t, q, w, c)) {
            case lock_result::locked:
                break;
            case lock_result::retry:
                continue;
            case lock_result::full:  // no empty slot right of q: cannot happen while q has a
                                     // run
            case lock_result::migrating:
                return false;  // excluded by the removers handshake
        }
        return remove_locked(t, q, r, c, w);
    }
}

inline bool remove_locked(locally_locked::table& t, uint64_t q, uint64_t r, size_t c, size_t w) {
    thread_local std::vector<uint64_t> buf, out;
    thread_local std::vector<std::pair<uint64_t, uint64_t>> entries;
    size_t const n = w - c;
    buf.resize(n);
    read_normalized(t, c, buf);
    // Decode c's cluster.
    entries.clear();
    uint64_t quot = c;
    size_t end = c;
    for (; end < w; ++end) {
        uint64_t const x = buf[end - c];
        if (end != c && !(x & status::shifted)) break;
        if (end != c && !(x & status::continuation)) {
            do ++quot;
            while (!(buf[quot - c] & status::occupied));
        }
        entries.emplace_back(quot, x >> 3);
    }
    auto const it = std::find(entries.begin(), entries.end(), std::pair{q, r});
    uint64_t const start_unlocked = (buf[0] & ~status::mask) | status::cluster_start;
    if (it == entries.end()) {
        release_read_lock(t, c, start_unlocked);
        release_write_lock(t, w);
        return false;
    }
    entries.erase(it);
    // Rebuild [c, end): each entry at the first free position at or after its quotient.
    out.assign(end - c, 0);
    sorted_placement placement{.next = c};
    for (auto [eq, er] : entries)
        placement.place(eq, er, [&](size_t slot, uint64_t bits) { out[slot - c] |= bits; });
    // New cluster starts (and c) stay read locked until the whole cluster is written.
    std::vector<size_t> starts;
    for (size_t i = 0; i < out.size(); ++i)
        if (locally_locked::status_bits_of(out[i]) == status::cluster_start) {
            starts.push_back(c + i);
            out[i] = (out[i] & ~status::mask) | status::read_lock;
        }
    std::vector<uint64_t> finals;
    for (size_t x : starts) finals.push_back((out[x - c] & ~status::mask) | status::cluster_start);
    if (locally_locked::status_bits_of(out[0]) != status::read_lock) {
        // c emptied (its single element removed): keep it locked while writing the rest.
        uint64_t const final_c = out[0];
        out[0] = (buf[0] & ~status::mask) | status::read_lock;
        write_range(t, c, out, c);
        release_read_lock(t, c, final_c);
    } else {
        write_range(t, c, out, c);
    }
    for (size_t i = 0; i < starts.size(); ++i) release_read_lock(t, starts[i], finals[i]);
    // The hole is written (c's release above included): count it before the write lock goes,
    // so a write-lock scan that passed the hole and then finds w unlocked retries (see
    // acquire_write_lock()). release: the hole's writes happen-before a reader of the count.
    t.holes_opened.fetch_add(1, std::memory_order_release);
    release_write_lock(t, w);
    return true;
}

}  // namespace qmer::qf::locally_locked
