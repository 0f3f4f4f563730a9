#pragma once
// The concurrent quotient filter with local locking (Maier, Sanders, Williger,
// "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 3.2, Algorithm
// 1), with optional bounded growing ("Growing concurrently", end of section 3.2).
//
// Concurrency: insert, contains, remove, try_insert_into_empty_canonical, canonical_slot_empty and
// prefetch are safe from any number of threads at once. for_each_fingerprint, groups(),
// memory_bytes() and release_retired_tables() need a quiescent filter (no operation in flight);
// contains_final() needs a filter that no writer will touch again. After insert(h) returns, every
// contains(h) that starts later in any thread returns true, including during and after migrations.
//
// Layout: the slots of core/qf/sequential.hpp (remainder << 3 | occupied, continuation, shifted),
// packed in 64-bit atomic groups (core/qf/slot_storage.hpp), no wrap-around: overflow_slots_for(m)
// slots follow the m canonical ones (m = 2^q, or any m with core/qf/fingerprint.hpp's mapping). The
// status combinations that never occur naturally are the locks, stored in the table itself (no lock
// array):
//   110, remainder 0  write lock: the first empty slot after a supercluster; one writer (insert or
//                     remove) per supercluster. Released by overwriting it (insert) or with 000.
//   110, remainder 1  migration lock (bounded growing): never released; the table is being copied.
//   010               read lock: a cluster start (really 100) held by one operation; the holder
//                     alone reads or changes its cluster, writers shifting through wait for it.
// Lock order: write lock, then read lock on one's own cluster start, then waiting on read locks met
// while shifting. Holders of read locks never wait for anything, so there is no cycle.
//
// Fast paths without locks (section 3.2 "Avoiding locks"): an insert into an empty canonical slot
// is one CAS; a query whose canonical slot has no run, or whose answer lies within the one group
// that holds the canonical slot (cluster start and whole run inside it, nothing locked), loads one
// group.
//
// Writers change the table left to right, one group CAS at a time, and never make a cluster start
// visible unlocked before the cluster behind it is complete: a group snapshot is always consistent
// for any unlocked cluster start it contains (the basis of the one-group query).
//
// Scanning (the paths under locks, Blocks B-I): slots are read a whole group at a time - one
// acquire load per 64-bit group, the slot values taken out of the register, status bits of all
// slots of a group tested at once with lane masks (core/qf/sequential.hpp, namespace scan) -
// instead of one atomic load per slot. Reading k slots of a group from one load is what k loads
// would return had no write to that group fallen between them, an interleaving the slot-at-a-time
// scan allows, so the protocol is unchanged: every lock CAS still uses the group value it examined,
// a slot is read again (a fresh load) wherever the slot-at-a-time code re-read it (waiting on a
// lock, after a failed CAS, after taking a lock), and the checks made under a lock read the table
// after the lock was taken.
//
// `full`: with growing off (or when no remainder bit is left to give up) insert answers full when
// no empty slot follows its canonical slot. With growing on, reaching fill grow_at (or `full`)
// doubles the table: q+1 quotient bits, r-1 remainder bits, same q+r bit fingerprint. Migration
// runs in blocks claimed from an atomic counter by every thread that starts an insert or remove;
// phase 1 migration-locks every empty slot (waiting for in-flight writers), phase 2 copies
// superclusters into the new table (each block owns the superclusters starting in it, so the target
// needs no locks). Queries never help: they keep reading the old table, which stays intact. Old
// tables are kept until the filter is destroyed (they are at most as large as the current one
// together), since a query may still be reading them, or until release_retired_tables() at a
// quiescent point; memory_bytes() counts them.
//
// contains_final(h): a query without any lock or CAS, for a table nobody writes any more (the
// caller establishes that; see its comment). remove() and the write-lock scan: see
// acquire_write_lock() for the invariant that keeps a remove's hole from being locked twice.
//
// FPR (section 2): n stored fingerprints out of M = m 2^r give 1 - (1 - 1/M)^n ~ n / M; it grows
// linearly with n and does not change when the table grows.

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/filter/filter.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/sequential.hpp"
#include "core/qf/slot_storage.hpp"

namespace qmer::qf {

struct growing_policy {
    bool enabled = false;
    double grow_at = 0.9;  // delta_grow: fill of the canonical slots that triggers a doubling
    // No doubling past 2^max_quotient_bits canonical slots: the level of an expandable filter
    // (core/qf/expandable.hpp) stops at its final size, where `full` (or its owner) takes over.
    unsigned max_quotient_bits = qf::max_quotient_bits;
};

namespace ll {

// Slot predicates that see through the locks.
inline uint64_t st(uint64_t v) noexcept {
    return v & status::mask;
}
inline uint64_t rem(uint64_t v) noexcept {
    return v >> 3;
}
inline bool has_element(uint64_t v) noexcept {
    return st(v) != status::empty && st(v) != status::write_lock;
}
inline bool occupied(uint64_t v) noexcept {
    return st(v) == status::read_lock || (st(v) != status::write_lock && (v & status::occupied));
}
inline bool continuation(uint64_t v) noexcept {
    return st(v) != status::read_lock && st(v) != status::write_lock && (v & status::continuation);
}
inline bool shifted(uint64_t v) noexcept {
    return v & status::shifted;
}
inline bool is_migration_lock(uint64_t v) noexcept {
    return st(v) == status::write_lock && rem(v) != 0;
}
// The slot as the sequential layout has it (a read lock is a cluster start, a lock is empty).
inline uint64_t normalized(uint64_t v) noexcept {
    if (st(v) == status::read_lock) return (v & ~status::mask) | status::cluster_start;
    if (st(v) == status::write_lock) return 0;
    return v;
}
inline void pause() noexcept {
    std::this_thread::yield();
}

struct table {
    table(qf::geometry geo, size_t total)
        : g(geo), total_slots(total), slots(total, geo.remainder_bits + 3), lanes(slots) {}
    qf::geometry g;
    size_t total_slots;
    grouped_slots slots;
    scan::layout lanes;  // lane masks and division-free group arithmetic for `slots`
    // Removes in flight on this table; a migration waits for zero before locking (see remove()).
    std::atomic<size_t> removers{0};
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

}  // namespace ll

class locally_locked_filter {
  public:
    locally_locked_filter(unsigned quotient_bits, unsigned remainder_bits,
                          growing_policy policy = {})
        : locally_locked_filter(qf::geometry{quotient_bits, remainder_bits}, policy) {}

    // Any canonical slot count (qf::geometry::with_slots), not only 2^q.
    explicit locally_locked_filter(qf::geometry g, growing_policy policy = {}) : policy_(policy) {
        validate(g);
        adopt(std::make_unique<ll::table>(
            g, g.canonical_slots() + overflow_slots_for(g.canonical_slots())));
    }

    // An empty filter with total_slots slots (at least its canonical ones): the shape of a saved
    // table, for append_sorted to refill (core/qf/rank_select.hpp, thaw_rank_select).
    locally_locked_filter(qf::geometry g, size_t total_slots, growing_policy policy)
        : policy_(policy) {
        validate(g);
        if (total_slots < g.canonical_slots())
            throw std::invalid_argument("quotient filter: fewer slots than canonical slots");
        adopt(std::make_unique<ll::table>(g, total_slots));
    }

    // A filter from saved words (the index file): geometry, slot count and the raw groups as
    // groups() gave them, and the element count.
    locally_locked_filter(unsigned quotient_bits, unsigned remainder_bits, size_t total_slots,
                          std::span<uint64_t const> words, size_t size, growing_policy policy = {})
        : locally_locked_filter(qf::geometry{quotient_bits, remainder_bits}, total_slots, words,
                                size, policy) {}
    locally_locked_filter(qf::geometry g, size_t total_slots, std::span<uint64_t const> words,
                          size_t size, growing_policy policy = {})
        : policy_(policy) {
        validate(g);
        if (total_slots < g.canonical_slots())
            throw std::invalid_argument("quotient filter: fewer slots than canonical slots");
        auto t = std::make_unique<ll::table>(g, total_slots);
        if (words.size() != t->slots.group_count())
            throw std::invalid_argument("quotient filter: word count does not match the geometry");
        for (size_t i = 0; i < words.size(); ++i)
            t->slots.groups()[i].store(words[i], std::memory_order_relaxed);
        size_.store(size, std::memory_order_relaxed);
        adopt(std::move(t));
    }

    locally_locked_filter(locally_locked_filter const&) = delete;
    locally_locked_filter& operator=(locally_locked_filter const&) = delete;

    insert_result insert(uint64_t h) {
        for (;;) {
            ll::table* t = table_for_writing();
            switch (insert_into(*t, h)) {
                case outcome::done:
                    after_insert(t);
                    return insert_result::inserted;
                case outcome::present:
                    return insert_result::already_present;
                case outcome::full:
                    if (!can_grow(*t)) return insert_result::full;
                    start_migration(t);
                    break;
                case outcome::migrating:
                    break;  // table_for_writing() helps, then we retry on the new table
            }
        }
    }

    bool contains(uint64_t h) const noexcept {
        // acquire: the table we read was fully built (published with release by the migration).
        return query(*current_.load(std::memory_order_acquire), h);
    }

    // Lock-free query of a table whose contents are final (section 4 queries the lower levels of
    // the expandable filter this way): the caller guarantees that no insert, remove or migration
    // is in flight or will start, and that every write they made happens-before this call (for
    // expandable_filter, its per-level sealed flag, stored with release after the level's last
    // writer left and loaded with acquire). contains() calls that began before may still hold
    // read locks (100 -> 010 -> 100 on a cluster start, the remainder unchanged); the ll::
    // predicates and the scan helpers see a read lock as the cluster start it is, so the table
    // reads the same. Plain group loads, no CAS: the sequential query, a group at a time.
    bool contains_final(uint64_t h) const noexcept {
        ll::table const& t = *current_.load(std::memory_order_acquire);
        auto const& s = t.slots;
        auto const& l = t.lanes;
        uint64_t const q = t.g.quotient(h);
        uint64_t const r = t.g.remainder(h);
        size_t const gq = l.group_of(q);
        uint64_t const gv = s.load_group(gq);
        auto const iq = static_cast<unsigned>(q - l.first_slot(gq));
        uint64_t const v = grouped_slots::slot_in(gv, iq, s.slot_bits());
        if (!ll::occupied(v)) return false;
        if (!ll::shifted(v) && ll::rem(v) == r) return true;  // cluster start or read lock
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
                unsigned const kc =
                    l.lane_at_bit(63u - static_cast<unsigned>(__builtin_clzll(hit)));
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
        size_t const p = occupied > run_starts
                             ? scan::nth_run_start_after(s, l, q - 1, occupied - run_starts)
                             : scan::nth_run_start_after(s, l, c, occupied);
        return p < t.total_slots && scan::run_contains(s, l, t.total_slots, p, r);
    }

    // Quiescent only (no operation in flight, and none that could still read an old table): frees
    // the tables left behind by bounded growing, which are kept only because a query that loaded
    // current_ before a migration may still read them. Returns the bytes freed.
    size_t release_retired_tables() {
        ll::table* const cur = current_.load(std::memory_order_acquire);
        size_t freed = 0;
        std::vector<std::unique_ptr<ll::table>> kept;
        for (auto& t : tables_) {
            if (t.get() == cur)
                kept.push_back(std::move(t));
            else
                freed += t->slots.memory_bytes();
        }
        released_tables_ += tables_.size() - kept.size();
        tables_ = std::move(kept);
        // Finished migrations point at the freed tables; a running one cannot exist (quiescent).
        if (migration_.load(std::memory_order_acquire) == nullptr) migrations_.clear();
        return freed;
    }

    // Removes h's fingerprint if stored (false otherwise). Takes the write lock, then the read lock
    // (section 3.2), and rebuilds the cluster with the fingerprint left out.
    bool remove(uint64_t h) {
        for (;;) {
            ll::table* t = table_for_writing();
            // Dekker handshake with start_migration(): both sides are seq_cst, so either this
            // remove sees the migration (and steps back to help), or the migration sees this
            // remove in the counter and waits for it before locking anything.
            t->removers.fetch_add(1, std::memory_order_seq_cst);
            if (migration_.load(std::memory_order_seq_cst) != nullptr) {
                t->removers.fetch_sub(1, std::memory_order_release);
                continue;
            }
            bool const removed = remove_from(*t, h);
            t->removers.fetch_sub(1, std::memory_order_release);
            if (removed) size_.fetch_sub(1, std::memory_order_relaxed);
            return removed;
        }
    }

    // Cascading inserts (expandable filter): stores h only if its canonical slot is empty, with one
    // CAS. True if stored; false if the slot holds something (nothing changed).
    bool try_insert_into_empty_canonical(uint64_t h) {
        for (;;) {
            ll::table* t = table_for_writing();
            auto& s = t->slots;
            uint64_t const q = t->g.quotient(h);
            size_t const g = t->lanes.group_of(q);
            unsigned const i = static_cast<unsigned>(q - t->lanes.first_slot(g));
            uint64_t gv = s.load_group(g);
            for (;;) {
                uint64_t const v = grouped_slots::slot_in(gv, i, s.slot_bits());
                if (ll::is_migration_lock(v)) break;  // help, then retry on the new table
                if (ll::st(v) != status::empty) return false;
                uint64_t const nv = grouped_slots::with_slot(
                    gv, i, s.slot_bits(), (t->g.remainder(h) << 3) | status::cluster_start);
                if (s.cas_group(g, gv, nv)) {
                    after_insert(t);
                    return true;
                }
            }
        }
    }

    // True if h's canonical slot holds no element (so h's level cannot hold h's run start there).
    bool canonical_slot_empty(uint64_t h) const noexcept {
        ll::table const* t = current_.load(std::memory_order_acquire);
        return !ll::has_element(t->get(t->g.quotient(h)));
    }

    // Batched queries: prefetch the groups of the next hashes, then contains() them.
    void prefetch(uint64_t h) const noexcept {
        ll::table const* t = current_.load(std::memory_order_acquire);
        size_t const g = t->lanes.group_of(t->g.quotient(h));
        auto const* groups = t->slots.groups().data();
        __builtin_prefetch(groups + g, 0, 3);
        // The cache line before too: in a full table most queries walk left from their canonical
        // slot to the cluster start, often into the line before. The line after (the forward run
        // search) showed no gain (bench/MEASUREMENTS.md).
        if (g >= 8) __builtin_prefetch(groups + g - 8, 0, 3);
    }

    qf::geometry geometry() const noexcept { return current_.load(std::memory_order_acquire)->g; }
    size_t total_slots() const noexcept {
        return current_.load(std::memory_order_acquire)->total_slots;
    }
    size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }
    size_t capacity() const noexcept { return static_cast<size_t>(geometry().canonical_slots()); }
    size_t memory_bytes() const noexcept {
        size_t bytes = sizeof(*this);
        for (auto const& t : tables_) bytes += t->slots.memory_bytes();
        return bytes;
    }
    double false_positive_rate() const noexcept {
        return -std::expm1(static_cast<double>(size()) *
                           std::log1p(-1.0 / static_cast<double>(geometry().fingerprint_space())));
    }
    growing_policy const& policy() const noexcept { return policy_; }
    size_t growths() const noexcept { return tables_.size() - 1 + released_tables_; }

    // Bulk loading (qmer index builds a counted first level this way instead of by inserts).
    // Appends fingerprints (geometry().fingerprint(h), increasing; equal ones are stored once) to
    // a filter that no other thread uses yet and that holds only what earlier calls appended, in
    // one sequential pass: each element goes to the first free slot at or after its quotient, as
    // in copy_block(). A quotient filter's layout is a function of its set (runs sorted, clusters
    // packed), so the table equals one built by insert() word for word. Stops before the first
    // fingerprint that would run past the overflow area, or be the (max_new + 1)-th new element,
    // and returns how many it consumed; the caller inserts the rest. Plain relaxed loads and stores
    // (one writer); whoever shares the filter afterwards supplies the happens-before (a thread
    // join, the pipeline's end).
    struct sorted_append_state {
        size_t next = 0;                  // the first free slot
        uint64_t last_fp = ~uint64_t{0};  // the previous fingerprint appended
        uint64_t last_q = ~uint64_t{0};   // and its quotient
    };
    size_t append_sorted(std::span<uint64_t const> fingerprints, sorted_append_state& st,
                         size_t max_new = ~size_t{0}) {
        ll::table& t = *current_.load(std::memory_order_relaxed);
        auto words = t.slots.groups();
        // One writer: a plain load and store, not an atomic read-modify-write.
        auto or_bits = [&](size_t g, uint64_t bits) {
            words[g].store(words[g].load(std::memory_order_relaxed) | bits,
                           std::memory_order_relaxed);
        };
        size_t stored = 0, i = 0;
        for (; i < fingerprints.size(); ++i) {
            uint64_t const fp = fingerprints[i];
            if (fp == st.last_fp) continue;
            assert(st.last_fp == ~uint64_t{0} || fp > st.last_fp);
            if (stored == max_new || !place_sorted(t, fp, st, or_bits)) break;
            ++stored;
        }
        size_.fetch_add(stored, std::memory_order_relaxed);
        return i;
    }

    // Quiescent only. The current table's raw words (index file).
    std::span<std::atomic<uint64_t> const> groups() const noexcept {
        return std::as_const(*current_.load(std::memory_order_acquire)).slots.groups();
    }

    // Quiescent only. f(fingerprint) for every stored fingerprint, increasing.
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        ll::table const& t = *current_.load(std::memory_order_acquire);
        // Two one-group caches: the scan position and the canonical slot it belongs to.
        scan::cached_reader at(t.slots, t.lanes), canonical(t.slots, t.lanes);
        uint64_t quot = 0;
        for (size_t i = 0; i < t.total_slots; ++i) {
            uint64_t const v = at(i);
            if (!ll::has_element(v)) continue;
            if (!ll::shifted(v)) {
                quot = i;
            } else if (!ll::continuation(v)) {
                do ++quot;
                while (!ll::occupied(canonical(quot)));
            }
            f(t.g.fingerprint_of(quot, ll::rem(v)));
        }
    }

  private:
    enum class outcome { done, present, full, migrating };

    static void validate(qf::geometry const& g) {
        g.validate();
        if (g.remainder_bits + 3 > 64)
            throw std::invalid_argument("quotient filter: remainder bits + 3 must fit 64");
    }

    void adopt(std::unique_ptr<ll::table> t) {
        current_.store(t.get(), std::memory_order_release);
        tables_.push_back(std::move(t));
    }

    bool can_grow(ll::table const& t) const noexcept {
        return policy_.enabled && t.g.remainder_bits >= 2 &&
               t.g.quotient_bits < std::min(qf::max_quotient_bits, policy_.max_quotient_bits);
    }

    void after_insert(ll::table* t) {
        // relaxed: the count only triggers growth and answers size(); no data depends on it.
        size_t const n = size_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (can_grow(*t) &&
            static_cast<double>(n) >= policy_.grow_at * static_cast<double>(t->g.canonical_slots()))
            start_migration(t);
    }

    // The table an insert or remove works on: helps a running migration to its end first.
    ll::table* table_for_writing() {
        if (policy_.enabled) {
            // acquire: pairs with the release store of the migration pointer.
            ll::migration* m = migration_.load(std::memory_order_acquire);
            if (m != nullptr) help(*m);
        }
        return current_.load(std::memory_order_acquire);
    }

    // ---------------------------------------------------------------------------------------
    // Blocks A-E: insert.
    static outcome insert_into(ll::table& t, uint64_t h) {
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
            if (ll::st(v) == status::empty) {
                if (s.cas_group(
                        gq, gv,
                        grouped_slots::with_slot(gv, iq, bits, (r << 3) | status::cluster_start)))
                    return outcome::done;
                continue;
            }
            if (ll::is_migration_lock(v)) return outcome::migrating;
            // Block B: write lock the first empty slot right of q.
            size_t w = 0;
            switch (acquire_write_lock(t, q, w)) {
                case lock_result::locked:
                    break;
                case lock_result::retry:
                    continue;
                case lock_result::full:
                    return outcome::full;
                case lock_result::migrating:
                    return outcome::migrating;
            }
            // Block C: read lock our cluster start. No remove can change this supercluster while
            // we hold its write lock, so the slots between it and q stay shifted.
            size_t const c = acquire_read_lock_from(t, q);
            if (c == no_slot) {
                release_write_lock(t, w);
                continue;
            }
            return insert_locked(t, q, r, c, w);
        }
    }

    enum class lock_result { locked, retry, full, migrating };

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
    static lock_result acquire_write_lock(ll::table& t, uint64_t q, size_t& w) {
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
            if (ll::st(v) == status::write_lock) {
                if (ll::rem(v) != 0) return lock_result::migrating;
                while (t.get(i) == v) ll::pause();
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
    static constexpr size_t no_slot = ~size_t{0};
    static size_t acquire_read_lock_from(ll::table& t, uint64_t q) {
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
    enum class stop_kind { locked, again, hole };
    static stop_kind try_read_lock(ll::table& t, size_t c, uint64_t gv) {
        auto const& l = t.lanes;
        size_t const g = l.group_of(c);
        unsigned const k = static_cast<unsigned>(c - l.first_slot(g));
        uint64_t const v = l.slot(gv, k);
        if (ll::st(v) == status::read_lock) {
            ll::pause();
            return stop_kind::again;
        }
        if (ll::st(v) == status::cluster_start) {
            if (t.slots.cas_group(
                    g, gv,
                    grouped_slots::with_slot(gv, k, l.slot_bits(),
                                             (v & ~status::mask) | status::read_lock)))
                return stop_kind::locked;
            return stop_kind::again;
        }
        return stop_kind::hole;
    }

    static void release_read_lock(ll::table& t, size_t c, uint64_t final_value) {
        auto& s = t.slots;
        size_t const g = t.lanes.group_of(c);
        unsigned const k = static_cast<unsigned>(c - t.lanes.first_slot(g));
        uint64_t gv = s.load_group(g);
        // acq_rel CAS: release publishes every write made under the lock to the next holder.
        while (!s.cas_group(g, gv, grouped_slots::with_slot(gv, k, s.slot_bits(), final_value))) {
        }
    }

    static void release_write_lock(ll::table& t, size_t w) {
        release_read_lock(t, w, status::empty);
    }

    // Writes new slot values for positions [lo, lo + vals.size()) left to right, one group CAS at a
    // time. Waits while a slot to be overwritten is read locked by someone else (a query holding a
    // later cluster of our supercluster): section 3.2, Block E. `own` is our read-locked slot. A
    // read lock that the write would leave unchanged is not waited for.
    static void write_range(ll::table& t, size_t lo, std::vector<uint64_t> const& vals,
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
                    ll::pause();
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
    static void read_normalized(ll::table const& t, size_t lo, std::vector<uint64_t>& out) {
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
            out[i] = ll::normalized(l.slot(gv, k));
        }
    }

    // Blocks D-E under both locks (the region [c, w] cannot change under us): find where run q
    // begins with group scans over [c, q], decode [q, w], insert like the sequential filter, write
    // back [q, w].
    static outcome insert_locked(ll::table& t, uint64_t q, uint64_t r, size_t c, size_t w) {
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
            start_value = ll::normalized(sum.start_value);
            unsigned const runs = sum.occupied + (had_run ? 0 : 1);
            s = runs > sum.run_starts
                    ? scan::nth_run_start_after(t.slots, t.lanes, q - 1, runs - sum.run_starts)
                    : scan::nth_run_start_after(t.slots, t.lanes, c, runs);
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
        uint64_t element = (r << 3) | (p != q ? status::shifted : 0) |
                           (had_run && p != s ? status::continuation : 0);
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
    // Blocks F-I: query.
    static bool query(ll::table& t, uint64_t h) noexcept {
        auto& s = t.slots;
        unsigned const bits = s.slot_bits();
        uint64_t const q = t.g.quotient(h);
        uint64_t const r = t.g.remainder(h);
        // Block F: the answer from the canonical slot's group alone.
        size_t const gq = t.lanes.group_of(q);
        uint64_t const gv = s.load_group(gq);
        auto const iq = static_cast<unsigned>(q - t.lanes.first_slot(gq));
        uint64_t const v = grouped_slots::slot_in(gv, iq, bits);
        if (!ll::occupied(v)) return false;
        if (ll::st(v) == status::cluster_start && ll::rem(v) == r) return true;
        int const local = query_in_group(gv, iq, s.slots_per_group(), bits, r);
        if (local >= 0) return local == 1;
        return query_locked(t, q, r);
    }

    // -1 when the group cannot answer: its cluster start must be inside the group and unlocked, and
    // the run must end inside the group. A group snapshot is consistent for such a cluster (see
    // top).
    static int query_in_group(uint64_t gv, unsigned iq, unsigned spg, unsigned bits,
                              uint64_t r) noexcept {
        auto at = [&](unsigned i) { return grouped_slots::slot_in(gv, i, bits); };
        unsigned c = iq;
        for (;;) {
            uint64_t const v = at(c);
            if (!ll::has_element(v) || ll::st(v) == status::read_lock) return -1;
            if (ll::st(v) == status::cluster_start) break;
            if (c == 0) return -1;
            --c;
        }
        unsigned b = c, s = c;
        while (b != iq) {
            do {
                if (++s >= spg) return -1;
            } while (ll::continuation(at(s)));
            do ++b;
            while (!ll::occupied(at(b)));
        }
        for (unsigned i = s;;) {
            uint64_t const x = ll::rem(at(i));
            if (x == r) return 1;
            if (x > r) return 0;
            if (++i >= spg) return -1;
            if (!ll::continuation(at(i))) return 0;
        }
    }

    // Blocks G-I: read lock the cluster start, check it still starts q's cluster (a concurrent
    // remove may have split the cluster or emptied slots while we scanned), then search the run.
    static bool query_locked(ll::table& t, uint64_t q, uint64_t r) noexcept {
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
                if (!ll::occupied(t.get(q))) return false;
                ll::pause();
                continue;
            }
            // Under the lock (every load below comes after the lock CAS): every slot in (c, q]
            // must still be shifted, i.e. in c's cluster. The same pass counts the runs to step
            // over (occupied slots in (c, q]) and the run starts before q.
            scan::span_summary const sum = scan::summarize(s, l, c, q);
            uint64_t const start_unlocked =
                (sum.start_value & ~status::mask) | status::cluster_start;
            if (!sum.all_shifted) {
                release_read_lock(t, c, start_unlocked);
                continue;
            }
            bool found = false;
            if (ll::occupied(sum.q_value)) {
                // Block H: run q begins at the sum.occupied-th run start after c; runs begin at or
                // after their canonical slot, so after the run starts counted in (c, q) it is
                // among those from q on (the general form is kept should that not hold).
                size_t p = c;
                if (q != c) {
                    p = sum.occupied > sum.run_starts
                            ? scan::nth_run_start_after(s, l, q - 1, sum.occupied - sum.run_starts)
                            : scan::nth_run_start_after(s, l, c, sum.occupied);
                }
                // Block I: search the sorted run.
                found = p < t.total_slots && scan::run_contains(s, l, t.total_slots, p, r);
            }
            release_read_lock(t, c, start_unlocked);
            return found;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Remove: write lock, read lock, rebuild the cluster without the fingerprint.
    static bool remove_from(ll::table& t, uint64_t h) {
        uint64_t const q = t.g.quotient(h);
        uint64_t const r = t.g.remainder(h);
        for (;;) {
            uint64_t const v = t.get(q);
            if (!ll::occupied(v)) return false;
            size_t w = 0;
            switch (acquire_write_lock(t, q, w)) {
                case lock_result::locked:
                    break;
                case lock_result::retry:
                    continue;
                case lock_result::full:  // no empty slot right of q: cannot happen while q has a
                                         // run
                case lock_result::migrating:
                    return false;  // excluded by the removers handshake
            }
            size_t const c = acquire_read_lock_from(t, q);
            if (c == no_slot) {
                release_write_lock(t, w);
                continue;
            }
            return remove_locked(t, q, r, c, w);
        }
    }

    static bool remove_locked(ll::table& t, uint64_t q, uint64_t r, size_t c, size_t w) {
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
        size_t next = c;
        uint64_t prev_q = ~uint64_t{0};
        for (auto [eq, er] : entries) {
            size_t const pos = std::max<size_t>(eq, next);
            out[eq - c] |= status::occupied;
            out[pos - c] |= (er << 3) | (pos != eq ? status::shifted : 0) |
                            (eq == prev_q ? status::continuation : 0);
            prev_q = eq;
            next = pos + 1;
        }
        // New cluster starts (and c) stay read locked until the whole cluster is written.
        std::vector<size_t> starts;
        for (size_t i = 0; i < out.size(); ++i)
            if (ll::st(out[i]) == status::cluster_start) {
                starts.push_back(c + i);
                out[i] = (out[i] & ~status::mask) | status::read_lock;
            }
        std::vector<uint64_t> finals;
        for (size_t x : starts)
            finals.push_back((out[x - c] & ~status::mask) | status::cluster_start);
        if (ll::st(out[0]) != status::read_lock) {
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

    // ---------------------------------------------------------------------------------------
    // Bounded growing.
    void start_migration(ll::table* t) {
        ll::migration* m = nullptr;
        {
            std::lock_guard lock(grow_mutex_);
            if (current_.load(std::memory_order_acquire) != t ||
                migration_.load(std::memory_order_acquire) != nullptr)
                return;  // someone else grew it, or is growing it
            qf::geometry const g = t->g.grown();
            size_t const total = std::max<size_t>(
                g.canonical_slots() + overflow_slots_for(g.canonical_slots()), 2 * t->total_slots);
            tables_.push_back(std::make_unique<ll::table>(g, total));
            auto mig = std::make_unique<ll::migration>();
            mig->source = t;
            mig->target = tables_.back().get();
            mig->block_groups = 1024;
            mig->blocks = (t->slots.group_count() + mig->block_groups - 1) / mig->block_groups;
            m = mig.get();
            migrations_.push_back(std::move(mig));
            // seq_cst: the store side of the handshake with remove().
            migration_.store(m, std::memory_order_seq_cst);
        }
        while (t->removers.load(std::memory_order_seq_cst) != 0) ll::pause();
        m->ready.store(true, std::memory_order_release);
        help(*m);
    }

    void help(ll::migration& m) {
        while (!m.ready.load(std::memory_order_acquire)) {
            if (current_.load(std::memory_order_acquire) != m.source) return;
            ll::pause();
        }
        ll::table& src = *m.source;
        // Phase 1: migration-lock every empty slot, block by block. relaxed claim: the counter
        // only hands out block numbers; done1 (acq_rel) orders the work.
        for (size_t b; (b = m.claim1.fetch_add(1, std::memory_order_relaxed)) < m.blocks;) {
            lock_block(src, b * m.block_groups,
                       std::min(src.slots.group_count(), (b + 1) * m.block_groups));
            m.done1.fetch_add(1, std::memory_order_acq_rel);
        }
        while (m.done1.load(std::memory_order_acquire) < m.blocks) ll::pause();
        // Phase 2: the source is frozen (only read locks come and go); copy superclusters.
        size_t const spg = src.slots.slots_per_group();
        for (size_t b; (b = m.claim2.fetch_add(1, std::memory_order_relaxed)) < m.blocks;) {
            copy_block(src, *m.target, b * m.block_groups * spg,
                       std::min(src.total_slots, (b + 1) * m.block_groups * spg));
            m.done2.fetch_add(1, std::memory_order_acq_rel);
        }
        while (m.done2.load(std::memory_order_acquire) < m.blocks) ll::pause();
        // Publish: acq_rel on done2 made every helper's target writes visible here; the release
        // store of current_ hands them to every thread that loads the new table.
        ll::table* expected = m.source;
        if (current_.compare_exchange_strong(expected, m.target, std::memory_order_acq_rel))
            migration_.store(nullptr, std::memory_order_release);
    }

    // Phase 1 for groups [g0, g1): every empty slot becomes a migration lock (110, remainder 1).
    // A write lock (an insert or remove in flight) is waited out first: that writer finishes in the
    // old table and its work is copied in phase 2.
    static void lock_block(ll::table& t, size_t g0, size_t g1) {
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
                    if (ll::st(v) == status::empty)
                        nv = grouped_slots::with_slot(nv, k, bits, (1u << 3) | status::write_lock);
                    else if (ll::st(v) == status::write_lock && ll::rem(v) == 0)
                        writer = true;
                }
                if (writer) {
                    ll::pause();
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
    // The sorted layout shared by copy_block() and append_sorted(): places fp, larger than every
    // fingerprint placed before with `st`, at the first free slot at or after its quotient in t,
    // whose slots start zero; sets the quotient's occupied bit and the element's shifted and
    // continuation bits through or_bits(group, bits). False, writing nothing, past the table.
    template <typename OrBits>
    static bool place_sorted(ll::table const& t, uint64_t fp, sorted_append_state& st,
                             OrBits&& or_bits) {
        uint64_t const q = fp >> t.g.remainder_bits;
        size_t const pos = std::max<size_t>(q, st.next);
        if (pos >= t.total_slots) return false;
        auto const& l = t.lanes;
        auto put = [&](size_t slot, uint64_t bits) {
            size_t const g = l.group_of(slot);
            unsigned const shift = static_cast<unsigned>(slot - l.first_slot(g)) * l.slot_bits();
            or_bits(g, bits << shift);
        };
        if (q != st.last_q) put(q, status::occupied);
        put(pos, ((fp & t.g.remainder_mask()) << 3) | (pos != q ? status::shifted : 0) |
                     (q == st.last_q ? status::continuation : 0));
        st.last_fp = fp;
        st.last_q = q;
        st.next = pos + 1;
        return true;
    }

    static void copy_block(ll::table const& src, ll::table& dst, size_t lo, size_t hi) {
        // The source is frozen apart from read locks coming and going, which the ll:: predicates
        // see through: one load per group (two caches: scan position, canonical slot) is enough.
        scan::cached_reader at(src.slots, src.lanes), canonical(src.slots, src.lanes);
        size_t p = lo;
        if (p > 0 && ll::has_element(at(p - 1)))
            while (p < src.total_slots && ll::has_element(at(p))) ++p;
        auto words = dst.slots.groups();
        // fetch_or: two blocks' superclusters may end and begin in one target group. relaxed:
        // published by the done2 / current_ chain in help().
        auto or_bits = [&](size_t g, uint64_t bits) {
            words[g].fetch_or(bits, std::memory_order_relaxed);
        };
        while (p < hi) {
            if (!ll::has_element(at(p))) {
                ++p;
                continue;
            }
            uint64_t quot = p;
            sorted_append_state st;  // each supercluster is laid out on its own
            size_t i = p;
            for (; i < src.total_slots; ++i) {
                uint64_t const v = at(i);
                if (!ll::has_element(v)) break;
                if (!ll::shifted(v)) {
                    quot = i;
                } else if (!ll::continuation(v)) {
                    do ++quot;
                    while (!ll::occupied(canonical(quot)));
                }
                [[maybe_unused]] bool const placed =
                    place_sorted(dst, src.g.fingerprint_of(quot, ll::rem(v)), st, or_bits);
                assert(placed);  // the target holds twice the source's slots
            }
            p = i;
        }
    }

    growing_policy policy_;
    std::atomic<ll::table*> current_{nullptr};
    std::atomic<ll::migration*> migration_{nullptr};
    std::atomic<size_t> size_{0};
    std::mutex grow_mutex_;
    std::vector<std::unique_ptr<ll::table>> tables_;  // every table ever used (see top)
    size_t released_tables_ = 0;  // tables freed by release_retired_tables() (growths())
    std::vector<std::unique_ptr<ll::migration>> migrations_;
};

static_assert(amq_filter<locally_locked_filter>);

}  // namespace qmer::qf
