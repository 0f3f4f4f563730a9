#pragma once
// The sequential quotient filter with 3 status bits (Maier, Sanders, Williger,
// "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 2 and Table 1):
// the reference every other quotient filter is tested against, written for obviousness rather than
// speed.
//
// NOT thread-safe: no two calls may overlap unless all of them are const.
//
// The layout (core/qf/three_bit_layout.hpp): (remainder << 3) | occupied, continuation, shifted.
// Runs are kept sorted by remainder, so the table stores fingerprints in increasing order and
// for_each_fingerprint visits them sorted.
//
// No wrap-around: an overflow area follows the 2^q canonical slots (overflow_slots(q) for this
// filter), so a run of the last canonical slots can spill into it. `full` means the supercluster
// reached the end of that area (an insert found no empty slot to its right); it does not happen
// below ~95% fill.
//
// FPR: a query for an absent key is true iff some stored fingerprint equals its q + r bit
// fingerprint: 1 - (1 - 2^-(q+r))^n, about n / 2^(q+r) (section 2).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/filter/filter.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf {

// The table and the algorithm of section 2 for one thread at a time: 2^q canonical slots and
// `overflow` more. The sequential filter below is this table plus an element count; the externally
// locked filter runs the same insert and lookup on the part of the table its stripe locks hold
// (core/qf/baseline/external_locks.hpp), so the algorithm has one home. Every read and write is an
// atomic access of a whole group (grouped_slots), so threads that take turns at a table under a
// mutex (which orders their accesses) never race on it.
class sequential_table {
  public:
    sequential_table(unsigned quotient_bits, unsigned remainder_bits, size_t overflow)
        : geometry_(checked({quotient_bits, remainder_bits})),
          total_slots_(geometry_.canonical_slots() + overflow),
          slots_(total_slots_, remainder_bits + 3),
          layout_(slots_) {}

    qf::geometry const& geometry() const noexcept { return geometry_; }
    size_t total_slots() const noexcept { return total_slots_; }
    scan::layout const& layout() const noexcept { return layout_; }

    bool contains(uint64_t h) const noexcept {
        uint64_t const q = geometry_.quotient(h);
        uint64_t const r = geometry_.remainder(h);
        if (!occupied(q)) return false;
        // Runs are sorted: stop at the first remainder >= r.
        return scan::run_contains(slots_, layout_, total_slots_, run_start(q), r);
    }

    insert_result insert(uint64_t h) {
        uint64_t const q = geometry_.quotient(h);
        uint64_t const r = geometry_.remainder(h);
        if (empty(q)) {
            slots_.set_unsynchronized(q, (r << 3) | status::cluster_start);
            return insert_result::inserted;
        }
        bool const had_run = occupied(q);
        set_occupied(q, true);  // run_start(q) then finds where run q is or would begin
        size_t const s = run_start(q);
        size_t p = s;  // the insertion point: first element of the run with a larger remainder
        if (had_run) {
            scan::cached_reader read(slots_, layout_);
            for (;;) {
                uint64_t const x = read(p) >> 3;
                if (x == r) return insert_result::already_present;
                if (x > r) break;
                ++p;
                if (p >= total_slots_ || !(read(p) & status::continuation)) break;
            }
        }
        // The first empty slot at or after p: the shift ends there.
        uint64_t unused = 0;
        size_t const e = scan::first_hole_at_or_after(slots_, layout_, p, unused);
        if (e == scan::npos) {
            if (!had_run) set_occupied(q, false);
            return insert_result::full;
        }
        // The new element: a run start if it opens a run or goes before the run's first element.
        uint64_t element = (r << 3) | (p != q ? status::shifted : 0) |
                           (had_run && p != s ? status::continuation : 0);
        // If it displaced the old run start, that element now continues the run.
        bool const displaced_run_start = had_run && p == s;
        // Shift [p, e] right by one slot, a group at a time: each group is read and stored once
        // (release, as set_unsynchronized does, for readers that only ever see whole groups).
        auto words = slots_.groups();
        unsigned const bits = layout_.slot_bits(), spg = layout_.slots_per_group();
        size_t g = layout_.group_of(p);
        unsigned k = static_cast<unsigned>(p - layout_.first_slot(g));
        uint64_t gv = words[g].load(std::memory_order_relaxed);
        for (size_t i = p;; ++i) {
            uint64_t const old = layout_.slot(gv, k);
            uint64_t old_element = old & ~status::occupied;
            if (i == p && displaced_run_start) old_element |= status::continuation;
            gv = grouped_slots::with_slot(gv, k, bits, element | (old & status::occupied));
            element = old_element | status::shifted;  // everything moved right is shifted
            if (i == e) break;
            if (++k == spg) {
                words[g].store(gv, std::memory_order_release);
                gv = words[++g].load(std::memory_order_relaxed);
                k = 0;
            }
        }
        words[g].store(gv, std::memory_order_release);
        return insert_result::inserted;
    }

    // Removes one copy of h's fingerprint; false if it was not stored. Rebuilds the cluster of h's
    // canonical slot from its sorted fingerprints (the simplest obviously correct delete).
    bool remove(uint64_t h) {
        uint64_t const q = geometry_.quotient(h);
        uint64_t const r = geometry_.remainder(h);
        if (!occupied(q)) return false;
        size_t c = q;
        while (shifted(c)) --c;
        auto entries = decode_cluster(c);
        auto const it = std::find(entries.begin(), entries.end(), std::pair{q, r});
        if (it == entries.end()) return false;
        size_t const end = c + entries.size();
        entries.erase(it);
        for (size_t i = c; i < end; ++i) slots_.set_unsynchronized(i, 0);
        place_sorted(entries);
        return true;
    }

    // Calls f(fingerprint) for every stored fingerprint in increasing order (quotient, then
    // remainder); a fingerprint inserted twice is stored once.
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        for_each_entry([&](uint64_t q, uint64_t r) { f(geometry_.fingerprint_of(q, r)); });
    }

    // The raw slot words, for comparisons and the index file.
    grouped_slots const& slots() const noexcept { return slots_; }
    grouped_slots& slots() noexcept { return slots_; }

  private:
    static qf::geometry checked(qf::geometry g) {
        g.validate();
        if (g.remainder_bits + 3 > 64)
            throw std::invalid_argument("quotient filter: remainder bits + 3 must fit 64");
        return g;
    }

    // One slot, with the division-free group arithmetic of the layout.
    uint64_t slot(size_t i) const noexcept {
        size_t const g = layout_.group_of(i);
        return layout_.slot(slots_.load_group(g), static_cast<unsigned>(i - layout_.first_slot(g)));
    }
    uint64_t stat(size_t i) const noexcept { return slot(i) & status::mask; }
    uint64_t remainder(size_t i) const noexcept { return slot(i) >> 3; }
    bool empty(size_t i) const noexcept { return stat(i) == status::empty; }
    bool occupied(size_t i) const noexcept { return stat(i) & status::occupied; }
    bool continuation(size_t i) const noexcept { return stat(i) & status::continuation; }
    bool shifted(size_t i) const noexcept { return stat(i) & status::shifted; }
    void set_occupied(size_t i, bool on) noexcept {
        uint64_t const v = slots_.get(i);
        slots_.set_unsynchronized(i, on ? v | status::occupied : v & ~status::occupied);
    }

    // Where run q begins (occupied(q) must be set): walk left to the cluster start c, then step
    // over one run per occupied canonical slot in (c, q] (section 2). Whole groups at a time: the
    // cluster start is the last unshifted slot at or before q, the runs to step over are a
    // popcount, and since run q begins at or after q, only the run starts from q on are selected.
    size_t run_start(uint64_t q) const noexcept {
        uint64_t unused = 0;
        size_t const c = scan::last_stop_at_or_before(slots_, layout_, q, unused);
        if (c == q) return q;
        scan::span_summary const sum = scan::summarize(slots_, layout_, c, q);
        return scan::run_start_in_cluster(slots_, layout_, c, q, sum.occupied, sum.run_starts);
    }

    // (quotient, remainder) of every element of the cluster starting at c, in table order.
    std::vector<std::pair<uint64_t, uint64_t>> decode_cluster(size_t c) const {
        std::vector<std::pair<uint64_t, uint64_t>> out;
        uint64_t quot = c;
        for (size_t i = c; i < total_slots_ && !empty(i) && (i == c || shifted(i)); ++i) {
            if (i != c && !continuation(i)) {
                do ++quot;
                while (!occupied(quot));
            }
            out.emplace_back(quot, remainder(i));
        }
        return out;
    }

    // Writes sorted (quotient, remainder) entries into cleared slots: each goes to the first free
    // position at or after its quotient. Used by remove(); the entries fit where they were.
    void place_sorted(std::vector<std::pair<uint64_t, uint64_t>> const& entries) {
        sorted_placement placement;
        for (auto [q, r] : entries)
            placement.place(q, r, [&](size_t slot, uint64_t bits) {
                slots_.set_unsynchronized(slot, slots_.get(slot) | bits);
            });
    }

    template <typename F>
    void for_each_entry(F&& f) const {
        uint64_t quot = 0;
        for (size_t i = 0; i < total_slots_; ++i) {
            if (empty(i)) continue;
            if (!shifted(i)) {
                quot = i;  // a cluster start is in its canonical slot
            } else if (!continuation(i)) {
                do ++quot;
                while (!occupied(quot));
            }
            f(quot, remainder(i));
        }
    }

    qf::geometry geometry_;
    size_t total_slots_;
    grouped_slots slots_;
    scan::layout layout_;
};

// The sequential filter: the table with the overflow area of overflow_slots(q), and its count.
class sequential_filter {
  public:
    sequential_filter(unsigned quotient_bits, unsigned remainder_bits)
        : table_(quotient_bits, remainder_bits, overflow_slots(quotient_bits)) {}

    qf::geometry const& geometry() const noexcept { return table_.geometry(); }
    size_t size() const noexcept { return size_; }
    size_t capacity() const noexcept { return static_cast<size_t>(geometry().canonical_slots()); }
    size_t total_slots() const noexcept { return table_.total_slots(); }
    size_t memory_bytes() const noexcept { return table_.slots().memory_bytes() + sizeof(*this); }
    double false_positive_rate() const noexcept {
        return -std::expm1(
            static_cast<double>(size_) *
            std::log1p(-std::ldexp(1.0, -static_cast<int>(geometry().fingerprint_bits()))));
    }

    bool contains(uint64_t h) const noexcept { return table_.contains(h); }
    insert_result insert(uint64_t h) {
        insert_result const res = table_.insert(h);
        if (res == insert_result::inserted) ++size_;
        return res;
    }
    // Removes one copy of h's fingerprint; false if it was not stored.
    bool remove(uint64_t h) {
        if (!table_.remove(h)) return false;
        --size_;
        return true;
    }
    // Calls f(fingerprint) for every stored fingerprint in increasing order (quotient, then
    // remainder); a fingerprint inserted twice is stored once.
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        table_.for_each_fingerprint(std::forward<F>(f));
    }
    // The raw slot words, for comparisons and the index file.
    grouped_slots const& slots() const noexcept { return table_.slots(); }

  private:
    sequential_table table_;
    size_t size_ = 0;
};

static_assert(amq_filter<sequential_filter>);

}  // namespace qmer::qf
