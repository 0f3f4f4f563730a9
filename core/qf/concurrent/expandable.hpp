#pragma once
// The fully expandable quotient filter (Maier, Sanders, Williger,
// "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 4): qmer's
// default filter. It needs no size up front and keeps its false-positive rate under the bound p
// however many elements arrive.
//
// Structure: a stack of levels, each a locally locked quotient filter
// (core/qf/concurrent/locally_locked.hpp) with bounded growing. Level i has a final size of m0 2^i
// canonical slots (2^(Q0 - 1) < m0 <= 2^Q0) and R0 + i remainder bits, so its fingerprints number
// m0 2^(R0 + 2i): 4x the level below's, twice the slots. A level starts at 1/8 of its final size
// (Q0 + i - 3 quotient bits, R0 + i + 3 remainder bits) and reaches it by 3 doublings of bounded
// growing (the fingerprint never changes), which keeps the whole structure at least ~2/3 delta_grow
// full. Only the newest level (the top) takes ordinary inserts; when the top is at its final size
// and holds delta_grow * m0 2^i elements, a new level is pushed. Level 0's final size m0 is the
// expected element count (2^16 when unknown) over delta_grow, rounded up to a multiple of 64 and
// never below 2^10: not the next power of two as in the paper, which leaves level 0 as little as
// 45% full when the count lands just past one (the mapping of core/qf/fingerprint.hpp takes any
// slot count).
//
// Theorem 2 (the bound): a false positive needs a fingerprint match on some level, so p+ <= sum_i
// n_i / (m0 2^i 2^(R0 + i)) = sum_i f_i 2^-(R0 + i), where f_i = n_i / (m0 2^i) is the most level i
// can hold relative to its canonical slots: delta_grow + 1/32 without cascading inserts (the 1/32
// covers inserts that raced with the push of the next level: at most one per thread in flight) and
// total_slots / 2^Q_i with them (cascading fills lower levels up to every slot). R0 is the
// smallest remainder for which that geometric sum, over every level that can ever exist, is <= p.
//
// Cascading inserts (section 4, a constructor option): an insert walks the lower levels from the
// bottom and stores h, with one CAS (try_insert_into_empty_canonical), in the first level whose
// canonical slot for h is empty; only if none is, it goes to the top. Early rejection: with
// cascading, a query walks the levels from the bottom and answers false at the first lower level
// whose canonical slot for h holds no element. Sound because (1) an insert passes a lower level
// only after seeing an element in h's canonical slot there (a slot that is write locked by a late
// writer is waited out, not passed: such a lock can be released back to empty), (2) a lower level
// never grows again (it reached its final size before the next level was pushed), so its table
// and h's canonical slot there are fixed, and (3) a slot that holds an element always will (no
// removes; shifts only move elements right into empty slots). So an empty canonical slot on lower
// level j means h was not stored on j or above; the levels below j were checked already. Without
// cascading a query checks every level, newest first (it holds about half the elements).
// Both modes check the lower levels for h before inserting, so inserting a stored h answers
// already_present. Two threads inserting the same new h while a level is being pushed may both
// store it (on adjacent levels); both answer inserted and size() counts both. Harmless: an extra
// fingerprint, accounted for by the 1/32 above.
//
// Concurrency: insert, contains and prefetch are safe from any number of threads at once. After
// insert(h) returns, every contains(h) that starts later returns true: the level count is
// published with release after the level it counts is built, and loaded with acquire by every
// operation, so a later query sees at least the levels the insert saw. arrays(), level_stats(),
// memory_bytes(), release_retired_tables() and freeze() need a quiescent filter.
//
// `full`: only when a new level would exceed 64-bit fingerprints or 2^40 slots (far beyond any
// machine's memory); otherwise insert never answers full.
//
// Sealed levels (section 4 queries lower levels without locks): a level below the top takes no
// new ordinary insert, but inserts that loaded the old level count may still be running on it. Each
// ordinary insert announces itself in writers_ (seq_cst; striped by thread), then re-reads the
// level count (seq_cst) and backs off to the new top if the level was pushed over; the pusher
// stores the count (seq_cst) and then reads writers_. Dekker's pattern: an insert either sees the
// new count or is seen by whoever checks writers_ after the push. A level j is sealed (sealed_[j],
// release) by a thread that reads, in this order, a level count above j + 1 and writers_[j] == 0:
// the pusher after its push, and every insert leaving level j. Reading the count first matters: an
// insert that announces itself after that writers_ read comes later in the seq_cst order than the
// count read, so it sees the new count and backs off without touching the level. The last real
// writer to leave either is seen by the pusher's read, or leaves after it and then sees the new
// count and seals. The writers_ read that saw 0 read the last writer's decrement (a release
// sequence of RMWs), so every write to the level happens-before the seal, and a query that loads
// sealed_[j] (acquire) reads the level with contains_final(): plain loads, no read-lock CAS. With
// cascading inserts no level is sealed (try_insert_into_empty_canonical writes lower levels).
// freeze() seals every level, the top included, in both modes, for a filter that only answers
// queries.
//
// Sized levels: a level written whole (qmer index --append's sorted merge, app/index/run.cpp) may
// have more canonical slots than its final size, as many as its elements need at the build's
// fill, with the remainder bits of its place in the stack (R0 + i). Theorem 2 is untouched: a
// level's false-positive share is its fill times 2^-(R0 + i), whatever its slot count, and its
// fill stays under delta_grow + 1/32 like any level's. What it buys: an append 64x the index
// writes one level instead of six, and a query of an absent k-mer looks in two levels instead of
// seven, the second with 2^-(R0 + 1) remainders (the bits per k-mer of a one-level index) instead
// of up to 2^-(R0 + 6). A sized level never grows; the top one takes inserts up to delta_grow of
// its slots, and then the next level is pushed at its ordinary size.
//
// Early top levels: a top level written whole by the sorted merge may start up to
// max_early_doublings short of its final size (at least min_early_slots slots), with the final
// size's fingerprints as a pushed level's 1/8 start has them (R0 + i + early remainder bits): an
// append of a few k-mers onto a large index takes a level the size they need, where the smallest
// ordinary size of level 1 (a quarter of level 0) made 5 Mbp onto a 2.4 Gbp index a 1.4 GB level.
// Such a level grows as any top level does (bounded growing keeps its fingerprints; the merge
// rewrites it at any larger early size), and its false-positive share is below its place's
// (more remainder bits). Formats before 9 refuse it (their loader allowed 1/8 at most).
//
// Memory: memory_bytes() includes the tables a level left behind when it doubled (the locally
// locked filter keeps them until destruction, since a query may still read them): about 7/8 of a
// level's final table. live_memory_bytes() counts the current tables only.
// release_retired_tables() frees them at a quiescent point (before writing the index).
//
// Lookup views: every insert first looks for h on each lower level, and a locally locked table's
// lookup walks back to the start of h's cluster, a walk that grows with the fill and, under
// minimizer-local hashing (core/kmer/sequence_hashing.hpp), with the crowding of its windows: an
// append to a grown minimizer-local index would spend most of its time there
// (bench/MEASUREMENTS.md). A level never changes once sealed, so the thread that seals it writes it
// once more in the rank-select layout (core/qf/stored/block_format.hpp: per-block offsets, a lookup
// that reads one or two lines), and lookups of that level use the copy from then on: it is
// published with release after it is complete, and a lookup that loads it with acquire reads a
// finished table; until then lookups read the level itself, which holds the same fingerprints. The
// copy costs about the level's own memory (counted in memory_bytes()), and release_retired_tables()
// frees it.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/filter/filter.hpp"
#include "core/filter/sharded_count.hpp"
#include "core/qf/concurrent/freeze_thaw.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/level_windows.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf {

struct expandable_options {
    uint64_t expected_elements = 0;               // 0: unknown (default_expected_elements)
    double max_false_positive_rate = 1.0 / 1024;  // p: the bound Theorem 2 keeps
    double grow_at = 0.9;                         // delta_grow of every level
    // Cascading inserts + early rejection of queries. Off by default: slower inserts and successful
    // queries on uniform hashes, for the same memory and FPR (bench/MEASUREMENTS.md).
    bool cascading = false;
    // expected_elements is a measured estimate (qmer index counts the references' distinct
    // k-mers first), not a guess: level 0 then starts at its final size instead of 1/8 of it, so
    // it never migrates. Only level 0: later levels hold what the estimate missed.
    bool first_level_at_final_size = false;
    // With first_level_at_final_size: level 0 gets expected / first_level_fill slots, so it ends
    // about this full (it still takes inserts up to grow_at before a level is pushed). Fuller is
    // smaller and slower for absent k-mers (bench/MEASUREMENTS.md).
    double first_level_fill = 0.85;
};

// One level, for `qmer info` and the tests.
struct expandable_level_stats {
    unsigned quotient_bits = 0, remainder_bits = 0;  // current geometry
    unsigned final_quotient_bits = 0;                // the level stops growing at 2^this slots
    unsigned growths = 0;                            // doublings done in this process (0..3)
    size_t size = 0;                                 // elements stored
    size_t capacity = 0;                             // canonical slots of the current table
    size_t total_slots = 0;                          // with the overflow area
    size_t live_bytes = 0;                           // the current table
    size_t memory_bytes = 0;                         // with the tables it left behind
    double false_positive_rate = 0;                  // 1 - (1 - 2^-(q+r))^size
};

class expandable_filter {
  public:
    static constexpr unsigned level_growths = 3;  // each level starts at 1/8 of its final size
    // A top level written whole by the sorted merge: at most this many doublings short of its
    // final size, and at least this many canonical slots (see "Early top levels" at the top).
    static constexpr unsigned max_early_doublings = 16;
    static constexpr uint64_t min_early_slots = 1024;
    static constexpr uint64_t default_expected_elements = uint64_t{1} << 16;
    static constexpr unsigned min_final_quotient_bits = 10;
    static constexpr unsigned max_levels = 40;
    static constexpr uint64_t persistence_tag = 0x3151584550584551ULL;  // "QEXPEXQ1" little end.

    explicit expandable_filter(expandable_options options = {}) : options_(options) {
        validate_options(options_);
        plan(options_, q0_, r0_, m0_);
        push_level(0);
    }
    expandable_filter(uint64_t expected_elements, double max_false_positive_rate,
                      bool cascading = expandable_options{}.cascading)
        : expandable_filter(expandable_options{expected_elements, max_false_positive_rate,
                                               expandable_options{}.grow_at, cascading}) {}

    expandable_filter(expandable_filter const&) = delete;
    expandable_filter& operator=(expandable_filter const&) = delete;

    // How each level reads a hash (core/qf/stored/level_windows.hpp): level j stores and looks up
    // level_map(j).apply(h), the map of its final size. The identity unless set; set it before
    // the filter's first insert or query, from the hash scheme of the index (a loaded filter:
    // the one it was built with), on a filter no other thread uses.
    void set_level_windows(level_windows windows) noexcept {
        unsigned const n = levels();
        for (unsigned j = 0; j < max_levels; ++j)
            maps_[j] = windows.of(final_slots(m0_, j, j < n ? levels_[j]->capacity() : 0));
    }
    level_window_map const& level_map(unsigned j) const { return maps_.at(j); }
    // The canonical slots of level j at its final size, whose table now has `capacity` (0: not
    // made yet): m0 2^j, or more for a sized level (see top), which never grows.
    static uint64_t final_slots(uint64_t m0, unsigned j, uint64_t capacity) noexcept {
        return std::max<uint64_t>(m0 << j, capacity);
    }

    insert_result insert(uint64_t h) {
        if (frozen_)
            throw std::logic_error(
                "expandable filter: insert after freeze() (a query-only filter)");
        for (;;) {
            // acquire: pairs with the release store in push_level(); levels_[0..n) are built.
            unsigned const n = level_count_.load(std::memory_order_acquire);
            for (unsigned j = 0; j + 1 < n; ++j) {
                locally_locked_filter& lower = *levels_[j];
                if (options_.cascading) {
                    uint64_t const hj = maps_[j].apply(h);
                    for (;;) {
                        if (lower.try_insert_into_empty_canonical(hj))
                            return insert_result::inserted;
                        // Not empty (000). If it holds an element it always will: pass the level.
                        // Otherwise it is a write lock of a late ordinary insert into this level
                        // (one that raced with the push): wait, since that lock may be released
                        // back to empty, and passing it would make early rejection unsound.
                        if (!lower.canonical_slot_empty(hj)) break;
                        std::this_thread::yield();
                    }
                }
                if (level_contains(j, h)) return insert_result::already_present;
            }
            locally_locked_filter& top = *levels_[n - 1];
            // Announce, then check the level is still the top (see "Sealed levels" at the top).
            auto& announced = writers_[writer_stripe()].level[n - 1];
            announced.fetch_add(1, std::memory_order_seq_cst);
            if (level_count_.load(std::memory_order_seq_cst) != n) {
                leave(announced, n - 1);
                continue;  // pushed over: check the old top as a lower level, insert on the new
            }
            auto const [result, published] = top.insert_counting(maps_[n - 1].apply(h));
            leave(announced, n - 1);
            switch (result) {
                case insert_result::inserted:
                    // The fill is looked at only when this insert published its thread's batch
                    // of the level's count (never a shared read-modify-write per insert); the
                    // published count lags by at most 1/256 of the level (count_batch). At its
                    // final size (or sized, larger): the capacity is its final slots.
                    if (published != 0 && top.geometry().quotient_bits >= q0_ + n - 1 &&
                        static_cast<double>(published) >=
                            options_.grow_at * static_cast<double>(top.capacity()))
                        push_level(n);
                    return insert_result::inserted;
                case insert_result::already_present:
                    return insert_result::already_present;
                case insert_result::full:
                    // The top at its final size ran out of overflow slots before the push (only
                    // with delta_grow near 1 or many racing inserts): push, retry on the new top.
                    if (!push_level(n)) return insert_result::full;
                    break;
            }
        }
    }

    // Bulk loading of level 0 (locally_locked_filter::append_sorted): only on a filter that no
    // other thread uses yet, whose only level is level 0 at its final size (a counted first
    // level), before any insert. Fingerprints are level 0's (first_level_final_geometry()). Stops
    // where an insert would push level 1 (delta_grow full); the caller must insert what is left
    // from its hashes: a level-0 fingerprint is no hash, and level 1 takes other bits of it.
    size_t append_sorted(std::span<uint64_t const> fingerprints,
                         locally_locked_filter::sorted_append_state& state) {
        if (frozen_ || levels() != 1 ||
            levels_[0]->geometry().quotient_bits != first_level_final_geometry().quotient_bits)
            throw std::logic_error(
                "expandable filter: append_sorted needs level 0 alone, at its final size");
        size_t const room = first_level_room(options_, m0_);
        size_t const held = levels_[0]->size();
        return levels_[0]->append_sorted(fingerprints, state, room > held ? room - held : 0);
    }

    bool contains(uint64_t h) const noexcept {
        unsigned const n = level_count_.load(std::memory_order_acquire);
        if (options_.cascading) {
            for (unsigned j = 0; j + 1 < n; ++j) {
                locally_locked_filter const& lower = *levels_[j];
                if (lower.canonical_slot_empty(maps_[j].apply(h)))
                    return false;                       // early rejection (see top)
                if (level_contains(j, h)) return true;  // sealed only after freeze()
            }
            return level_contains(n - 1, h);
        }
        for (unsigned j = n; j-- > 0;)
            if (level_contains(j, h)) return true;
        return false;
    }

    // Batched lookups: prefetches h's canonical group on every level (a query for an absent key
    // reads all of them; they are independent loads, so the memory system overlaps them).
    void prefetch(uint64_t h) const noexcept {
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) levels_[j]->prefetch(maps_[j].apply(h));
    }

    size_t size() const noexcept {
        size_t total = 0;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) total += levels_[j]->size();
        return total;
    }
    // Canonical slots of the current tables of all levels.
    size_t capacity() const noexcept {
        size_t total = 0;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) total += levels_[j]->capacity();
        return total;
    }
    size_t memory_bytes() const noexcept {
        size_t total = sizeof(*this);
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) total += levels_[j]->memory_bytes() + view_bytes(j);
        return total;
    }
    // Quiescent only (no insert or query in flight): frees every level's tables left behind by
    // bounded growing (locally_locked_filter::release_retired_tables) and the sealed levels'
    // lookup views (see top). Returns the bytes freed.
    size_t release_retired_tables() {
        size_t freed = 0;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) {
            freed += levels_[j]->release_retired_tables() + view_bytes(j);
            views_[j].store(nullptr, std::memory_order_relaxed);
            view_owners_[j].reset();
        }
        return freed;
    }
    // Levels whose lookups read a lookup view now (see top).
    unsigned viewed_levels() const noexcept {
        unsigned count = 0;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j)
            count += views_[j].load(std::memory_order_acquire) != nullptr;
        return count;
    }
    // Quiescent only, for a filter that answers queries only from now on (qmer query, after
    // loading the index): seals every level, the top included and in both modes, so no query
    // takes a read lock. insert() afterwards throws std::logic_error: it would write a level that
    // lock-free queries read. The threads that query afterwards must be started (or handed the
    // filter) after this call, which orders it before them.
    void freeze() {
        frozen_ = true;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) sealed_[j].store(true, std::memory_order_release);
    }
    bool frozen() const noexcept { return frozen_; }

    // Levels whose queries take the lock-free path now (sealed, see top).
    unsigned sealed_levels() const noexcept {
        unsigned count = 0;
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) count += sealed_[j].load(std::memory_order_acquire);
        return count;
    }
    size_t live_memory_bytes() const noexcept {
        size_t total = sizeof(*this);
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j)
            total += levels_[j]->groups().size() * sizeof(uint64_t) + view_bytes(j);
        return total;
    }
    // What the stored fingerprints imply: 1 - prod_i (1 - p_i), p_i = 1 - (1 - 2^-k_i)^n_i. An
    // upper bound with cascading inserts, whose early rejection stops some queries sooner.
    double false_positive_rate() const noexcept {
        double log_miss = 0;  // log of the probability that no level matches
        unsigned const n = level_count_.load(std::memory_order_acquire);
        for (unsigned j = 0; j < n; ++j) {
            auto const g = levels_[j]->geometry();
            log_miss += static_cast<double>(levels_[j]->size()) *
                        std::log1p(-1.0 / static_cast<double>(g.fingerprint_space()));
        }
        return -std::expm1(log_miss);
    }
    // The bound the filter keeps (p), and Theorem 2's sum for the chosen geometry (<= p).
    double false_positive_bound() const noexcept { return options_.max_false_positive_rate; }
    double theorem2_sum() const noexcept { return theorem2_sum(options_, q0_, r0_, m0_); }

    expandable_options const& options() const noexcept { return options_; }
    bool cascading() const noexcept { return options_.cascading; }
    unsigned levels() const noexcept { return level_count_.load(std::memory_order_acquire); }
    // Level 0's final geometry; level i's has 2^i times its slots and R0 + i remainder bits.
    geometry first_level_final_geometry() const noexcept { return final_geometry(0); }

    // Level 0 of a filter made with `o` (first_level_at_final_size), before the filter is made:
    // qmer index's sorted build plans its memory from it and writes the level straight in the
    // rank-select layout (core/qf/stored/writer.hpp), without the concurrent table.
    struct first_level_plan {
        geometry g;                          // its final geometry
        size_t total_slots = 0;              // with the overflow area, as its table has them
        size_t room = 0;                     // the elements it takes before level 1 is pushed
        std::vector<uint64_t> stack_params;  // arrays()[0].params of the filter holding it alone
    };
    static first_level_plan plan_first_level(expandable_options const& o) {
        validate_options(o);
        if (!o.first_level_at_final_size)
            throw std::invalid_argument("expandable filter: no first level at its final size");
        unsigned q0 = 0, r0 = 0;
        uint64_t m0 = 0;
        plan(o, q0, r0, m0);
        geometry const g = final_geometry(m0, r0, 0);
        return {g, g.canonical_slots() + overflow_slots_for(g.canonical_slots()),
                first_level_room(o, m0), stack_params(o, 1, q0, r0, m0)};
    }
    // Level i of a stack whose level 0 has m0 canonical slots and r0 remainder bits at its final
    // size, `early` doublings before its own final size (0..max_early(m0, r0, i); a pushed level
    // starts at level_growths, a top level the sorted merge writes may start earlier, see "Early
    // top levels" at the top): its geometry (the final one's fingerprints) and its table's total
    // slots, as the filter makes them; nothing when level i cannot exist. For writers of whole
    // levels (qmer index --append's sorted merge), whose files must load as the filter's own.
    struct level_table {
        geometry g;
        size_t total_slots = 0;
    };
    static std::optional<level_table> plan_level(uint64_t m0, unsigned r0, unsigned i,
                                                 unsigned early) {
        unsigned const q0 = geometry::with_slots(m0, 1).quotient_bits;
        if (i >= max_levels || !level_possible(q0, r0, i) || early > max_early(m0, r0, i))
            return std::nullopt;
        geometry const final_g = final_geometry(m0, r0, i);
        return level_table{final_g.shrunk(early), total_slots_before_final(final_g, early)};
    }
    // The most doublings a top level may be short of its final size (level i of a stack with
    // level 0's m0 and r0): at least level_growths; for a level the merge writes, as many as keep
    // its slots a whole number (m0 2^i / 2^early), at least min_early_slots of them, and its
    // remainders within a start slot of the concurrent layout, up to max_early_doublings.
    static unsigned max_early(uint64_t m0, unsigned r0, unsigned i) noexcept {
        uint64_t const final_slots = m0 << i;
        unsigned most = level_growths;
        while (most < max_early_doublings &&
               (final_slots >> (most + 1)) << (most + 1) == final_slots &&
               (final_slots >> (most + 1)) >= min_early_slots &&
               r0 + i + most + 1 + level_growths <= max_remainder_bits)
            ++most;
        return most;
    }
    // Level i sized for `elements` at `fill` (see "Sized levels" at the top): its final size if
    // they fit it, else the fewest canonical slots, a multiple of 64, that hold them at that fill,
    // with R0 + i remainder bits; nothing when such a level cannot exist.
    static std::optional<level_table> plan_sized_level(uint64_t m0, unsigned r0, unsigned i,
                                                       uint64_t elements, double fill) {
        auto const standard = plan_level(m0, r0, i, 0);
        if (!standard) return std::nullopt;
        constexpr uint64_t unit = 64;
        double const wanted = std::ceil(static_cast<double>(elements) / fill);
        if (wanted <= static_cast<double>(standard->g.canonical_slots())) return standard;
        if (wanted > std::ldexp(1.0, max_quotient_bits)) return std::nullopt;
        uint64_t const m = (static_cast<uint64_t>(wanted) + unit - 1) / unit * unit;
        geometry const g = geometry::with_slots(m, r0 + i);
        if (g.quotient_bits > max_quotient_bits || g.fingerprint_bits() > max_fingerprint_bits)
            return std::nullopt;
        return level_table{g, m + overflow_slots_for(m)};
    }

    locally_locked_filter const& level(unsigned i) const {
        if (i >= levels()) throw std::out_of_range("expandable filter: no such level");
        return *levels_[i];
    }

    std::vector<expandable_level_stats> level_stats() const {
        std::vector<expandable_level_stats> out;
        unsigned const n = levels();
        for (unsigned j = 0; j < n; ++j) {
            locally_locked_filter const& l = *levels_[j];
            expandable_level_stats s;
            auto const g = l.geometry();
            s.quotient_bits = g.quotient_bits;
            s.remainder_bits = g.remainder_bits;
            s.final_quotient_bits = q0_ + j;
            s.growths = static_cast<unsigned>(l.growths());
            s.size = l.size();
            s.capacity = l.capacity();
            s.total_slots = l.total_slots();
            s.live_bytes = l.groups().size() * sizeof(uint64_t);
            s.memory_bytes = l.memory_bytes();
            s.false_positive_rate = l.false_positive_rate();
            out.push_back(s);
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Persistence (core/filter/filter.hpp, persistent_filter). Array 0 describes the stack:
    //   params {tag, expected, bits of p, bits of delta_grow, cascading, levels, Q0, R0, m0}, no
    //   words (files before m0 have 8 params and m0 = 2^Q0).
    // Array 1 + i is level i: params {q, r, total slots, size, canonical slots}, words = its
    // current table (4 params before non-power-of-two levels: 2^q canonical slots). Read back, the
    // top level keeps growing at the same fill, to the same sizes, and new levels get the same
    // geometry: appending gives what a single run would have built.
    std::vector<filter_array> arrays() const {
        unsigned const n = levels();
        std::vector<filter_array> out;
        out.push_back({stack_params(options_, n, q0_, r0_, m0_), {}});
        for (unsigned j = 0; j < n; ++j) {
            locally_locked_filter const& l = *levels_[j];
            auto const g = l.geometry();
            out.push_back({{g.quotient_bits, g.remainder_bits, l.total_slots(), l.size(),
                            g.canonical_slots()},
                           atomic_words(l.groups())});
        }
        return out;
    }

    static std::unique_ptr<expandable_filter> from_arrays(std::span<filter_array const> arrays) {
        auto fail = [](std::string const& what) {
            throw std::invalid_argument("expandable filter: " + what);
        };
        if (arrays.empty() || (arrays[0].params.size() != 8 && arrays[0].params.size() != 9) ||
            arrays[0].params[0] != persistence_tag)
            fail("the first array is not an expandable filter header");
        auto const& p = arrays[0].params;
        expandable_options o;
        o.expected_elements = p[1];
        o.max_false_positive_rate = std::bit_cast<double>(p[2]);
        o.grow_at = std::bit_cast<double>(p[3]);
        if (p[4] > 1) fail("bad cascading flag");
        o.cascading = p[4] == 1;
        validate_options(o);
        if (p[5] < 1 || p[5] > max_levels || arrays.size() != p[5] + 1)
            fail("level count does not match the arrays");
        // p[7] bounded on its own first: a sum near 2^64 would wrap below the bound.
        if (p[6] < min_final_quotient_bits || p[6] > max_quotient_bits || p[7] < 1 ||
            p[7] > max_fingerprint_bits || p[6] + p[7] > max_fingerprint_bits)
            fail("bad first level geometry");
        uint64_t const m0 = p.size() == 9 ? p[8] : uint64_t{1} << p[6];
        if (geometry::with_slots(m0, 1).quotient_bits != p[6] || m0 % (1u << level_growths) != 0)
            fail("bad first level slot count");
        unsigned const n = static_cast<unsigned>(p[5]);
        std::unique_ptr<expandable_filter> f(
            new expandable_filter(o, static_cast<unsigned>(p[6]), static_cast<unsigned>(p[7]), m0));
        if (f->theorem2_sum() > o.max_false_positive_rate)
            fail("the first level's remainder bits do not keep the bound");
        for (unsigned j = 0; j < n; ++j) {
            auto const& a = arrays[1 + j];
            if (a.params.size() != 4 && a.params.size() != 5)
                fail("level " + std::to_string(j) + ": bad parameters");
            auto const& lp = a.params;
            geometry const final_g = f->final_geometry(j);
            if (!f->level_possible(j)) fail("level " + std::to_string(j) + " cannot exist");
            // The level is at its final size, or (the top only) on its way there, or sized
            // (larger than its final size, its remainder bits those of its place: see top).
            bool const sized =
                lp.size() == 5 && lp[1] == final_g.remainder_bits &&
                lp[4] > final_g.canonical_slots() && lp[0] <= max_quotient_bits &&
                lp[0] + lp[1] <= max_fingerprint_bits &&
                geometry::with_slots(lp[4], final_g.remainder_bits).quotient_bits == lp[0];
            bool const shape_ok =
                lp[0] + lp[1] == final_g.fingerprint_bits() && lp[0] <= final_g.quotient_bits &&
                lp[0] + f->max_early(f->m0_, f->r0_, j) >= final_g.quotient_bits &&
                (j + 1 == n || lp[0] == final_g.quotient_bits);
            if (!shape_ok && !sized)
                fail("level " + std::to_string(j) + ": geometry does not fit the stack");
            geometry const g =
                sized ? geometry::with_slots(lp[4], final_g.remainder_bits)
                      : final_g.shrunk(final_g.quotient_bits - static_cast<unsigned>(lp[0]));
            if (lp.size() == 5 && lp[4] != g.canonical_slots())
                fail("level " + std::to_string(j) + ": slot count does not fit the stack");
            if (lp[3] > lp[2]) fail("level " + std::to_string(j) + ": more elements than slots");
            f->levels_[j] = std::make_unique<locally_locked_filter>(g, lp[2], a.words, lp[3],
                                                                    f->level_policy(j));
        }
        // Single-threaded here; release for form (nothing races with construction).
        f->level_count_.store(n, std::memory_order_release);
        // No insert is in flight: every level below the top is final now.
        for (unsigned j = 0; j + 1 < n; ++j) f->try_seal(j);
        return f;
    }

  private:
    // For from_arrays: the stack's parameters without any level yet.
    expandable_filter(expandable_options options, unsigned q0, unsigned r0, uint64_t m0)
        : options_(options), q0_(q0), r0_(r0), m0_(m0) {}

    static void validate_options(expandable_options const& o) {
        if (!(o.max_false_positive_rate > 0 && o.max_false_positive_rate < 1))
            throw std::invalid_argument("expandable filter: the FPR bound must be in (0, 1)");
        if (!(o.grow_at >= min_grow_at && o.grow_at <= max_grow_at))
            throw std::invalid_argument("expandable filter: delta_grow must be in [" +
                                        bound_text(min_grow_at) + ", " + bound_text(max_grow_at) +
                                        "]");
        if (!(o.first_level_fill >= min_fill && o.first_level_fill <= o.grow_at))
            throw std::invalid_argument("expandable filter: the first level's fill must be in [" +
                                        bound_text(min_fill) + ", delta_grow]");
    }

    // f_i of Theorem 2 (see top): the most elements level i can hold per canonical slot.
    static double level_fill_bound(expandable_options const& o, geometry final_g) {
        if (!o.cascading) return o.grow_at + 1.0 / 32;
        return static_cast<double>(final_total_slots(final_g)) /
               static_cast<double>(final_g.canonical_slots());
    }

    // A level's slots `early` doublings before its final size: it starts with m/8 +
    // overflow_slots_for(m/8) and each doubling takes max(m' + overflow_slots_for(m'), twice the
    // previous), as locally_locked does.
    static size_t total_slots_before_final(geometry final_g, unsigned early) {
        if (early > level_growths) {  // written at that size (an early top level), not grown
            geometry const g = final_g.shrunk(early);
            return g.canonical_slots() + overflow_slots_for(g.canonical_slots());
        }
        geometry g = final_g.shrunk(level_growths);
        size_t total = g.canonical_slots() + overflow_slots_for(g.canonical_slots());
        for (unsigned step = early; step < level_growths; ++step) {
            g = g.grown();
            total = std::max<size_t>(g.canonical_slots() + overflow_slots_for(g.canonical_slots()),
                                     2 * total);
        }
        return total;
    }
    static size_t final_total_slots(geometry final_g) {
        return total_slots_before_final(final_g, 0);
    }

    static bool level_possible(unsigned q0, unsigned r0, unsigned i) noexcept {
        // Final quotient within 2^40 slots, fingerprint within 63 bits, start slots of r + 3 + 3
        // bits within a 64-bit group.
        return q0 + i <= max_quotient_bits && q0 + r0 + 2 * i <= max_fingerprint_bits &&
               r0 + i + level_growths <= max_remainder_bits;
    }
    bool level_possible(unsigned i) const { return level_possible(q0_, r0_, i); }

    // sum over every level that can exist of f_i 2^-(R0 + i).
    static double theorem2_sum(expandable_options const& o, unsigned q0, unsigned r0, uint64_t m0) {
        double sum = 0;
        for (unsigned i = 0; i < max_levels && level_possible(q0, r0, i); ++i)
            sum += level_fill_bound(o, final_geometry(m0, r0, i)) *
                   std::ldexp(1.0, -static_cast<int>(r0 + i));
        return sum;
    }

    // m0: the fewest canonical slots, a multiple of 64 (so every start size m0 2^i / 8 is a whole
    // number) and of 2^(its bit width - 12) (early top levels), and at least 2^10, with delta_grow
    // * m0 > expected (section 4 takes the next power of two instead); first_level_fill instead of
    // delta_grow for a counted first level. R0: the fewest remainder bits whose Theorem 2 sum is <=
    // p.
    static void plan(expandable_options const& o, unsigned& q0, unsigned& r0, uint64_t& m0) {
        double const expected = static_cast<double>(
            o.expected_elements == 0 ? default_expected_elements : o.expected_elements);
        double const fill = o.first_level_at_final_size ? o.first_level_fill : o.grow_at;
        if (expected / fill > std::ldexp(1.0, max_planned_quotient_bits))
            throw std::invalid_argument("expandable filter: expected count too large");
        // A multiple of 64, and of more powers of two as it grows: its 12 top bits kept (at most
        // 1/2048 of its slots more), so that a level written early (max_early) can be as small as
        // an append onto a large index needs.
        auto const wanted = static_cast<uint64_t>(expected / fill);
        uint64_t const unit = uint64_t{1}
                              << std::max(6, static_cast<int>(std::bit_width(wanted)) - 12);
        m0 = std::max<uint64_t>(uint64_t{1} << min_final_quotient_bits, (wanted / unit + 1) * unit);
        q0 = geometry::with_slots(m0, 1).quotient_bits;
        for (r0 = 1; q0 + r0 <= max_fingerprint_bits; ++r0)
            if (theorem2_sum(o, q0, r0, m0) <= o.max_false_positive_rate) return;
        throw std::invalid_argument("expandable filter: the FPR bound needs more than " +
                                    std::to_string(max_fingerprint_bits) + " bits");
    }

    static std::vector<uint64_t> stack_params(expandable_options const& o, unsigned levels,
                                              unsigned q0, unsigned r0, uint64_t m0) {
        return {persistence_tag,
                o.expected_elements,
                std::bit_cast<uint64_t>(o.max_false_positive_rate),
                std::bit_cast<uint64_t>(o.grow_at),
                o.cascading ? 1u : 0u,
                levels,
                q0,
                r0,
                m0};
    }

    // What level 0 takes by append_sorted: delta_grow of its m0 slots.
    static size_t first_level_room(expandable_options const& o, uint64_t m0) noexcept {
        return static_cast<size_t>(o.grow_at * static_cast<double>(m0));
    }

    // Level i at its final size: m0 2^i canonical slots, R0 + i remainder bits.
    static geometry final_geometry(uint64_t m0, unsigned r0, unsigned i) noexcept {
        return geometry::with_slots(m0 << i, r0 + i);
    }
    geometry final_geometry(unsigned i) const noexcept { return final_geometry(m0_, r0_, i); }

    growing_policy level_policy(unsigned i) const {
        return growing_policy{true, options_.grow_at, q0_ + i};
    }

    // Pushes level n if the stack still has n levels (another thread may have done it). False if
    // level n cannot exist.
    bool push_level(unsigned n) {
        std::lock_guard lock(push_mutex_);
        if (level_count_.load(std::memory_order_relaxed) != n) return true;
        if (n >= max_levels || !level_possible(n)) return false;
        geometry const g = final_geometry(n);
        unsigned const growths = n == 0 && options_.first_level_at_final_size ? 0 : level_growths;
        levels_[n] = std::make_unique<locally_locked_filter>(g.shrunk(growths), level_policy(n));
        // seq_cst: the release that publishes the built level, and the store side of the
        // writers_ handshake (see "Sealed levels" at the top).
        level_count_.store(n + 1, std::memory_order_seq_cst);
        if (n > 0) try_seal(n - 1);
        return true;
    }

    // h as the caller has it: level j's map is applied here.
    bool level_contains(unsigned j, uint64_t h_in) const noexcept {
        uint64_t const h = maps_[j].apply(h_in);
        // acquire: pairs with the release in build_view(); the view's words are all written.
        if (lookup_view const* v = views_[j].load(std::memory_order_acquire))
            return v->table.contains(h);
        // acquire: pairs with the release in try_seal(); every write to level j happened before.
        return sealed_[j].load(std::memory_order_acquire) ? levels_[j]->contains_final(h)
                                                          : levels_[j]->contains(h);
    }

    // An ordinary insert leaves level j (from the stripe it announced on): seal j if it is no
    // longer the top and was the last one.
    void leave(std::atomic<unsigned>& announced, unsigned j) {
        announced.fetch_sub(1, std::memory_order_seq_cst);
        try_seal(j);
    }

    // The calling thread's announcement stripe: its id, mixed (thread ids are aligned addresses,
    // whose low bits are all alike), so concurrent inserters mostly land on different stripes.
    // The thread's own stripe (core/filter/sharded_count.hpp: threads started together never
    // share one, up to writer_stripes of them), so an insert's announcement writes a line no other
    // inserting thread writes.
    static unsigned writer_stripe() noexcept { return this_thread_shard(writer_stripes); }

    // Seals level j when a level count above j + 1 and then no writer on j are seen, in that order
    // (both seq_cst; why the order matters: see top). Idempotent; several threads may store true.
    void try_seal(unsigned j) {
        if (options_.cascading) return;
        if (sealed_[j].load(std::memory_order_relaxed)) return;  // only a shortcut
        if (level_count_.load(std::memory_order_seq_cst) <= j + 1) return;
        // Summing the stripes one by one is as good as one counter: an insert that announces on a
        // stripe after its read here is later in the seq_cst order than the count read above, so
        // it sees the new count and backs off; every read of 0 reads the last leaver's decrement.
        for (auto const& stripe : writers_)
            if (stripe.level[j].load(std::memory_order_seq_cst) != 0) return;
        // release: hands the level's final contents to queries that load true with acquire.
        // The one thread whose exchange sets it (acquire: the level's writes happened before)
        // writes the level's lookup view; a filter that only answers queries has none.
        if (!sealed_[j].exchange(true, std::memory_order_acq_rel) && !frozen_) build_view(j);
    }

    // A sealed level in the rank-select layout, for its lookups (see top).
    struct lookup_view {
        std::vector<uint64_t> storage;  // the words, from the first 64-byte boundary in it
        rank_select_table table;
    };
    void build_view(unsigned j) {
        locally_locked_filter const& level = *levels_[j];
        rank_select::shape const shape = rank_select_shape_of(level);
        auto v = std::make_unique<lookup_view>();
        // The view only makes lookups faster: without memory for it the level answers as before
        // (the insert that sealed it must not fail for it).
        try {
            v->storage.resize(shape.words() + rank_select::block_words - 1);
        } catch (std::bad_alloc const&) {
            return;
        }
        // A block is one cache line only from a 64-byte boundary (rank_select_table's contract).
        auto const address = reinterpret_cast<uintptr_t>(v->storage.data());
        size_t const skip = ((64 - address % 64) % 64) / sizeof(uint64_t);
        uint64_t* out = v->storage.data() + skip;
        uint64_t const elements = write_rank_select(level, [&](std::span<uint64_t const> words) {
            out = std::copy(words.begin(), words.end(), out);
        });
        v->table = rank_select_table(
            shape, std::span<uint64_t const>(v->storage.data() + skip, shape.words()), elements);
        view_owners_[j] = std::move(v);
        // release: the words and the table are complete before any lookup can load the view.
        views_[j].store(view_owners_[j].get(), std::memory_order_release);
    }
    size_t view_bytes(unsigned j) const noexcept {
        return view_owners_[j] ? view_owners_[j]->storage.size() * sizeof(uint64_t) : 0;
    }

    expandable_options options_;
    std::array<level_window_map, max_levels> maps_{};  // by level; set_level_windows
    unsigned q0_ = 0, r0_ = 0;  // level 0's final geometry: 2^(q0 - 1) < m0 <= 2^q0 slots
    uint64_t m0_ = 0;
    std::array<std::unique_ptr<locally_locked_filter>, max_levels> levels_;
    // Read by every operation, written only by a push: a line of its own, so the announcements
    // below never invalidate it.
    alignas(no_sharing_bytes) std::atomic<unsigned> level_count_{0};
    std::mutex push_mutex_;
    // Ordinary inserts in flight per level (see top), striped by thread: with one shared counter,
    // the two RMWs every insert makes moved one cache line between the inserting cores.
    static constexpr unsigned writer_stripes = sharded_count::shards;
    struct alignas(no_sharing_bytes) writer_counts {
        std::array<std::atomic<unsigned>, max_levels> level{};
    };
    std::array<writer_counts, writer_stripes> writers_{};
    std::array<std::atomic<bool>, max_levels> sealed_{};
    // Written once per level by the thread that seals it (build_view), freed at a quiescent point.
    std::array<std::unique_ptr<lookup_view>, max_levels> view_owners_;
    std::array<std::atomic<lookup_view const*>, max_levels> views_{};
    bool frozen_ = false;  // set by freeze() at a quiescent point, read by insert()
};

static_assert(amq_filter<expandable_filter>);
static_assert(persistent_filter<expandable_filter>);

}  // namespace qmer::qf
