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
// Layout: the slots of core/qf/three_bit_layout.hpp (remainder << 3 | occupied, continuation,
// shifted), packed in 64-bit atomic groups (core/qf/slot_storage.hpp), no wrap-around:
// overflow_slots_for(m) slots follow the m canonical ones (m = 2^q, or any m with
// core/qf/fingerprint.hpp's mapping). The status combinations that never occur naturally are the
// locks, stored in the table itself (no lock array):
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
// slots of a group tested at once with lane masks (core/qf/three_bit_layout.hpp, namespace scan) -
// instead of one atomic load per slot. Reading k slots of a group from one load is what k loads
// would return had no write to that group fallen between them, an interleaving the paper's
// slot-at-a-time scan allows, so its protocol holds: every lock CAS uses the group value it
// examined, a slot is read again (a fresh load) wherever Algorithm 1 re-reads it (waiting on a
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
// Files: this class (the public operations, growth and its tables), and under locally_locked/ one
// job each: table.hpp (the table, the lock-aware slot predicates, a migration's state), locks.hpp
// (Blocks B, C, G), insert_remove.hpp (insert, Blocks A-E, and remove), query.hpp (Blocks F-I and
// the lock-free query of a final table), migration.hpp (bounded growing's two phases per block),
// bulk.hpp (sorted placement: append_sorted and the migration's copy).
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
#include "core/filter/sharded_count.hpp"
#include "core/qf/concurrent/locally_locked/bulk.hpp"
#include "core/qf/concurrent/locally_locked/insert_remove.hpp"
#include "core/qf/concurrent/locally_locked/migration.hpp"
#include "core/qf/concurrent/locally_locked/query.hpp"
#include "core/qf/concurrent/locally_locked/table.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf {

struct growing_policy {
    bool enabled = false;
    double grow_at = 0.9;  // delta_grow: fill of the canonical slots that triggers a doubling
    // No doubling past 2^max_quotient_bits canonical slots: the level of an expandable filter
    // (core/qf/concurrent/expandable.hpp) stops at its final size, where `full` (or its owner)
    // takes over.
    unsigned max_quotient_bits = qf::max_quotient_bits;
};

class locally_locked_filter {
  public:
    locally_locked_filter(unsigned quotient_bits, unsigned remainder_bits,
                          growing_policy policy = {})
        : locally_locked_filter(qf::geometry{quotient_bits, remainder_bits}, policy) {}

    // Any canonical slot count (qf::geometry::with_slots), not only 2^q.
    explicit locally_locked_filter(qf::geometry g, growing_policy policy = {}) : policy_(policy) {
        validate(g);
        adopt(std::make_unique<locally_locked::table>(
            g, g.canonical_slots() + overflow_slots_for(g.canonical_slots()), count_batch(g)));
    }

    // An empty filter with total_slots slots (at least its canonical ones): the shape of a saved
    // table, for append_sorted to refill (core/qf/concurrent/freeze_thaw.hpp, thaw_rank_select).
    locally_locked_filter(qf::geometry g, size_t total_slots, growing_policy policy)
        : policy_(policy) {
        validate(g);
        if (total_slots < g.canonical_slots())
            throw std::invalid_argument("quotient filter: fewer slots than canonical slots");
        adopt(std::make_unique<locally_locked::table>(g, total_slots, count_batch(g)));
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
        auto t = std::make_unique<locally_locked::table>(g, total_slots, count_batch(g));
        if (words.size() != t->slots.group_count())
            throw std::invalid_argument("quotient filter: word count does not match the geometry");
        for (size_t i = 0; i < words.size(); ++i)
            t->slots.groups()[i].store(words[i], std::memory_order_relaxed);
        size_.reset(size);
        adopt(std::move(t));
    }

    locally_locked_filter(locally_locked_filter const&) = delete;
    locally_locked_filter& operator=(locally_locked_filter const&) = delete;

    insert_result insert(uint64_t h) { return insert_counting(h).result; }

    // insert(h), and the published element count when this insert published its thread's
    // batch (core/filter/sharded_count.hpp), else 0: an owner that acts on the fill (the
    // expandable filter pushes a level) looks at the count only then, never per insert.
    struct counted_insert {
        insert_result result;
        size_t published;
    };
    counted_insert insert_counting(uint64_t h) {
        for (;;) {
            locally_locked::table* t = table_for_writing();
            switch (locally_locked::insert_into(*t, h)) {
                case locally_locked::outcome::done:
                    return {insert_result::inserted, after_insert(t)};
                case locally_locked::outcome::present:
                    return {insert_result::already_present, 0};
                case locally_locked::outcome::full:
                    if (!can_grow(*t)) return {insert_result::full, 0};
                    start_migration(t);
                    break;
                case locally_locked::outcome::migrating:
                    break;  // table_for_writing() helps, then we retry on the new table
            }
        }
    }

    bool contains(uint64_t h) const noexcept {
        // acquire: the table we read was fully built (published with release by the migration).
        return locally_locked::query(*current_.load(std::memory_order_acquire), h);
    }

    // Lock-free query of a table whose contents are final (section 4 queries the lower levels of
    // the expandable filter this way): the caller guarantees that no insert, remove or migration
    // is in flight or will start, and that every write they made happens-before this call (for
    // expandable_filter, its per-level sealed flag, stored with release after the level's last
    // writer left and loaded with acquire). contains() calls that began before may still hold
    // read locks (100 -> 010 -> 100 on a cluster start, the remainder unchanged); the
    // locally_locked:: predicates and the scan helpers see a read lock as the cluster start it is,
    // so the table reads the same. Plain group loads, no CAS: the sequential query, a group at a
    // time.
    bool contains_final(uint64_t h) const noexcept {
        return locally_locked::query_final(*current_.load(std::memory_order_acquire), h);
    }

    // Quiescent only (no operation in flight, and none that could still read an old table): frees
    // the tables left behind by bounded growing, which are kept only because a query that loaded
    // current_ before a migration may still read them. Returns the bytes freed.
    size_t release_retired_tables() {
        locally_locked::table* const cur = current_.load(std::memory_order_acquire);
        size_t freed = 0;
        std::vector<std::unique_ptr<locally_locked::table>> kept;
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
            locally_locked::table* t = table_for_writing();
            // Dekker handshake with start_migration(): both sides are seq_cst, so either this
            // remove sees the migration (and steps back to help), or the migration sees this
            // remove in the counter and waits for it before locking anything.
            t->removers.fetch_add(1, std::memory_order_seq_cst);
            if (migration_.load(std::memory_order_seq_cst) != nullptr) {
                t->removers.fetch_sub(1, std::memory_order_release);
                continue;
            }
            bool const removed = locally_locked::remove_from(*t, h);
            t->removers.fetch_sub(1, std::memory_order_release);
            if (removed) size_.sub(1);
            return removed;
        }
    }

    // Cascading inserts (expandable filter): stores h only if its canonical slot is empty, with one
    // CAS. True if stored; false if the slot holds something (nothing changed).
    bool try_insert_into_empty_canonical(uint64_t h) {
        for (;;) {
            locally_locked::table* t = table_for_writing();
            auto& s = t->slots;
            uint64_t const q = t->g.quotient(h);
            size_t const g = t->lanes.group_of(q);
            unsigned const i = static_cast<unsigned>(q - t->lanes.first_slot(g));
            uint64_t gv = s.load_group(g);
            for (;;) {
                uint64_t const v = grouped_slots::slot_in(gv, i, s.slot_bits());
                if (locally_locked::is_migration_lock(v))
                    break;  // help, then retry on the new table
                if (locally_locked::status_bits_of(v) != status::empty) return false;
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
        locally_locked::table const* t = current_.load(std::memory_order_acquire);
        return !locally_locked::has_element(t->get(t->g.quotient(h)));
    }

    // Batched queries: prefetch the groups of the next hashes, then contains() them.
    void prefetch(uint64_t h) const noexcept {
        locally_locked::table const* t = current_.load(std::memory_order_acquire);
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
    // Exact when no insert runs; sums the count's shards (not for a hot path).
    size_t size() const noexcept { return size_.load(); }
    // At most size(), and within sharded_count::shards * count_batch() of it: for decisions on
    // the fill while inserts run.
    size_t published_size() const noexcept { return size_.published(); }
    // How many inserts a thread makes before it publishes them: the table's canonical slots /
    // 2^14, so that the published count lags the real one by at most 1/256 of the table.
    static size_t count_batch(qf::geometry const& g) noexcept {
        return std::max<size_t>(1, static_cast<size_t>(g.canonical_slots() >> 14));
    }
    // The line an insert from this thread writes besides the table (tests: nothing else is).
    void const* this_thread_count_line() const noexcept { return size_.this_thread_line(); }
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
    // in locally_locked::copy_block(). A quotient filter's layout is a function of its set (runs
    // sorted, clusters packed), so the table equals one built by insert() word for word. Stops
    // before the first fingerprint that would run past the overflow area, or be the (max_new +
    // 1)-th new element, and returns how many it consumed; the caller inserts the rest. Plain
    // relaxed loads and stores (one writer); whoever shares the filter afterwards supplies the
    // happens-before (a thread join, the pipeline's end).
    using sorted_append_state = locally_locked::sorted_append_state;
    size_t append_sorted(std::span<uint64_t const> fingerprints, sorted_append_state& st,
                         size_t max_new = ~size_t{0}) {
        locally_locked::table& t = *current_.load(std::memory_order_relaxed);
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
            if (stored == max_new || !locally_locked::place_sorted(t, fp, st, or_bits)) break;
            ++stored;
        }
        size_.add(stored);
        return i;
    }

    // Quiescent only. The current table's raw words (index file).
    std::span<std::atomic<uint64_t> const> groups() const noexcept {
        return std::as_const(*current_.load(std::memory_order_acquire)).slots.groups();
    }

    // Quiescent only. f(fingerprint) for every stored fingerprint, increasing.
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        locally_locked::table const& t = *current_.load(std::memory_order_acquire);
        // Two one-group caches: the scan position and the canonical slot it belongs to.
        scan::cached_reader at(t.slots, t.lanes), canonical(t.slots, t.lanes);
        uint64_t quot = 0;
        for (size_t i = 0; i < t.total_slots; ++i) {
            uint64_t const v = at(i);
            if (!locally_locked::has_element(v)) continue;
            if (!locally_locked::shifted(v)) {
                quot = i;
            } else if (!locally_locked::continuation(v)) {
                do ++quot;
                while (!locally_locked::occupied(canonical(quot)));
            }
            f(t.g.fingerprint_of(quot, locally_locked::remainder_of(v)));
        }
    }

  private:
    static void validate(qf::geometry const& g) {
        g.validate();
        if (g.remainder_bits + 3 > 64)
            throw std::invalid_argument("quotient filter: remainder bits + 3 must fit 64");
    }

    void adopt(std::unique_ptr<locally_locked::table> t) {
        current_.store(t.get(), std::memory_order_release);
        tables_.push_back(std::move(t));
    }

    bool can_grow(locally_locked::table const& t) const noexcept {
        return policy_.enabled && t.g.remainder_bits >= 2 &&
               t.g.quotient_bits < std::min(qf::max_quotient_bits, policy_.max_quotient_bits);
    }

    // Counts an insert in this thread's shard; returns the published count when it published.
    // Growth is decided on the published count only: it lags by at most 1/256 of the table
    // (count_batch), so a table starts doubling within that of grow_at.
    size_t after_insert(locally_locked::table* t) {
        size_t const n = size_.add_one(t->count_batch);
        if (n != 0 && can_grow(*t) &&
            static_cast<double>(n) >= policy_.grow_at * static_cast<double>(t->g.canonical_slots()))
            start_migration(t);
        return n;
    }

    // The table an insert or remove works on: helps a running migration to its end first.
    locally_locked::table* table_for_writing() {
        if (policy_.enabled) {
            // acquire: pairs with the release store of the migration pointer.
            locally_locked::migration* m = migration_.load(std::memory_order_acquire);
            if (m != nullptr) help(*m);
        }
        return current_.load(std::memory_order_acquire);
    }

    // Bounded growing: a migration's state and its phases over blocks are locally_locked::
    // (migration.hpp); here, starting one and helping it.
    void start_migration(locally_locked::table* t) {
        locally_locked::migration* m = nullptr;
        {
            std::lock_guard lock(grow_mutex_);
            // No migration running, then t still current: in this order. A migration's last
            // helper publishes without the mutex (help(): current_ to the target, then migration_
            // to null, release), so reading current_ first could see t before that publication
            // and migration_ null after it, and start a second migration from the old table:
            // its target never becomes current (the CAS from a source that is no longer current
            // fails), migration_ is never cleared, and every insert helps it and retries forever
            // (tests/regressions/growing_second_migration_livelock_stress_test.cpp). Null read with
            // acquire synchronises with that release, so the load of current_ after it sees the
            // target.
            if (migration_.load(std::memory_order_acquire) != nullptr ||
                current_.load(std::memory_order_acquire) != t)
                return;  // someone else is growing it, or grew it
            qf::geometry const g = t->g.grown();
            size_t const total = std::max<size_t>(
                g.canonical_slots() + overflow_slots_for(g.canonical_slots()), 2 * t->total_slots);
            tables_.push_back(std::make_unique<locally_locked::table>(g, total, count_batch(g)));
            auto mig = std::make_unique<locally_locked::migration>();
            mig->source = t;
            mig->target = tables_.back().get();
            mig->block_groups = 1024;
            mig->blocks = (t->slots.group_count() + mig->block_groups - 1) / mig->block_groups;
            m = mig.get();
            migrations_.push_back(std::move(mig));
            // seq_cst: the store side of the handshake with remove().
            migration_.store(m, std::memory_order_seq_cst);
        }
        while (t->removers.load(std::memory_order_seq_cst) != 0) locally_locked::pause();
        m->ready.store(true, std::memory_order_release);
        help(*m);
    }

    void help(locally_locked::migration& m) {
        while (!m.ready.load(std::memory_order_acquire)) {
            if (current_.load(std::memory_order_acquire) != m.source) return;
            locally_locked::pause();
        }
        locally_locked::table& src = *m.source;
        // Phase 1: migration-lock every empty slot, block by block. relaxed claim: the counter
        // only hands out block numbers; done1 (acq_rel) orders the work.
        for (size_t b; (b = m.claim1.fetch_add(1, std::memory_order_relaxed)) < m.blocks;) {
            locally_locked::lock_block(src, b * m.block_groups,
                                       std::min(src.slots.group_count(), (b + 1) * m.block_groups));
            m.done1.fetch_add(1, std::memory_order_acq_rel);
        }
        while (m.done1.load(std::memory_order_acquire) < m.blocks) locally_locked::pause();
        // Phase 2: the source is frozen (only read locks come and go); copy superclusters.
        size_t const spg = src.slots.slots_per_group();
        for (size_t b; (b = m.claim2.fetch_add(1, std::memory_order_relaxed)) < m.blocks;) {
            locally_locked::copy_block(src, *m.target, b * m.block_groups * spg,
                                       std::min(src.total_slots, (b + 1) * m.block_groups * spg));
            m.done2.fetch_add(1, std::memory_order_acq_rel);
        }
        while (m.done2.load(std::memory_order_acquire) < m.blocks) locally_locked::pause();
        // Publish: acq_rel on done2 made every helper's target writes visible here; the release
        // store of current_ hands them to every thread that loads the new table.
        locally_locked::table* expected = m.source;
        if (current_.compare_exchange_strong(expected, m.target, std::memory_order_acq_rel))
            migration_.store(nullptr, std::memory_order_release);
    }

    // Every insert loads current_ and (growing on) migration_: they share a line that is written
    // only when a migration starts and ends. The count is sharded, the mutex taken only to start a
    // migration; neither shares the pointers' line.
    growing_policy policy_;
    alignas(no_sharing_bytes) std::atomic<locally_locked::table*> current_{nullptr};
    std::atomic<locally_locked::migration*> migration_{nullptr};
    alignas(no_sharing_bytes) sharded_count size_;
    std::mutex grow_mutex_;
    std::vector<std::unique_ptr<locally_locked::table>> tables_;  // every table ever used (see top)
    size_t released_tables_ = 0;  // tables freed by release_retired_tables() (growths())
    std::vector<std::unique_ptr<locally_locked::migration>> migrations_;
};

static_assert(amq_filter<locally_locked_filter>);

}  // namespace qmer::qf
