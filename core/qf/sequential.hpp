#pragma once
// The sequential quotient filter with 3 status bits (seed 001, section 2 and Table 1): the
// reference every other quotient filter is tested against, written for obviousness rather than
// speed.
//
// NOT thread-safe: no two calls may overlap unless all of them are const.
//
// Layout (shared by core/qf/locally_locked.hpp): a slot holds (remainder << 3) | status, where the
// status bits are, from high to low, occupied (the canonical run of this position is non-empty),
// continuation (the element here belongs to the same run as the previous slot) and shifted (the
// element is not in its canonical slot). Table 1: 000 empty, 100 cluster start, *01 run start,
// *11 continuation; *10 never occurs here (the concurrent filter uses 010/110 as locks). Runs are
// kept sorted by remainder, so the table stores fingerprints in increasing order and
// for_each_fingerprint visits them sorted.
//
// No wrap-around: an overflow area of overflow_slots(q) slots follows the 2^q canonical slots, so a
// run of the last canonical slots can spill into it. `full` means the supercluster reached the end
// of that area (an insert found no empty slot to its right); it does not happen below ~95% fill.
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

namespace qmer::qf {

// Status bits of a slot (occupied, continuation, shifted), and the two combinations that cannot
// occur naturally, which the locally locked filter uses as locks (section 3.2).
namespace status {
inline constexpr uint64_t occupied = 4;
inline constexpr uint64_t continuation = 2;
inline constexpr uint64_t shifted = 1;
inline constexpr uint64_t mask = 7;
inline constexpr uint64_t empty = 0;
inline constexpr uint64_t cluster_start = occupied;
inline constexpr uint64_t read_lock = continuation;              // 010: a locked cluster start
inline constexpr uint64_t write_lock = occupied | continuation;  // 110: a locked empty slot
}  // namespace status

// Slots after the 2^q canonical ones, so runs of the last canonical slots need no wrap-around:
// 1/64 of the table plus 64 (1.6% memory at large q).
inline constexpr size_t overflow_slots(unsigned quotient_bits) {
    return (size_t{1} << quotient_bits) / 64 + 64;
}

class sequential_filter {
  public:
    sequential_filter(unsigned quotient_bits, unsigned remainder_bits)
        : geometry_(checked({quotient_bits, remainder_bits})),
          total_slots_(geometry_.canonical_slots() + overflow_slots(quotient_bits)),
          slots_(total_slots_, remainder_bits + 3) {}

    qf::geometry const& geometry() const noexcept { return geometry_; }
    size_t size() const noexcept { return size_; }
    size_t capacity() const noexcept { return static_cast<size_t>(geometry_.canonical_slots()); }
    size_t total_slots() const noexcept { return total_slots_; }
    size_t memory_bytes() const noexcept { return slots_.memory_bytes() + sizeof(*this); }
    double false_positive_rate() const noexcept {
        return -std::expm1(
            static_cast<double>(size_) *
            std::log1p(-std::ldexp(1.0, -static_cast<int>(geometry_.fingerprint_bits()))));
    }

    bool contains(uint64_t h) const noexcept {
        uint64_t const q = geometry_.quotient(h);
        uint64_t const r = geometry_.remainder(h);
        if (!occupied(q)) return false;
        for (size_t i = run_start(q);; ++i) {
            if (remainder(i) == r) return true;
            if (remainder(i) > r) return false;  // runs are sorted
            if (i + 1 >= total_slots_ || !continuation(i + 1)) return false;
        }
    }

    insert_result insert(uint64_t h) {
        uint64_t const q = geometry_.quotient(h);
        uint64_t const r = geometry_.remainder(h);
        if (empty(q)) {
            slots_.set_unsynchronized(q, (r << 3) | status::cluster_start);
            ++size_;
            return insert_result::inserted;
        }
        bool const had_run = occupied(q);
        set_occupied(q, true);  // run_start(q) then finds where run q is or would begin
        size_t const s = run_start(q);
        size_t p = s;  // the insertion point: first element of the run with a larger remainder
        if (had_run) {
            for (;;) {
                if (remainder(p) == r) return insert_result::already_present;
                if (remainder(p) > r) break;
                ++p;
                if (p >= total_slots_ || !continuation(p)) break;
            }
        }
        size_t e = p;  // the first empty slot at or after p: the shift ends there
        while (e < total_slots_ && !empty(e)) ++e;
        if (e >= total_slots_) {
            if (!had_run) set_occupied(q, false);
            return insert_result::full;
        }
        // The new element: a run start if it opens a run or goes before the run's first element.
        uint64_t element = (r << 3) | (p != q ? status::shifted : 0) |
                           (had_run && p != s ? status::continuation : 0);
        // If it displaced the old run start, that element now continues the run.
        bool const displaced_run_start = had_run && p == s;
        for (size_t i = p; i <= e; ++i) {
            uint64_t const old = slots_.get(i);
            uint64_t old_element = old & ~status::occupied;
            if (i == p && displaced_run_start) old_element |= status::continuation;
            slots_.set_unsynchronized(i, element | (old & status::occupied));
            element = old_element | status::shifted;  // everything moved right is shifted
        }
        ++size_;
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
        --size_;
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

  private:
    static qf::geometry checked(qf::geometry g) {
        g.validate();
        if (g.remainder_bits + 3 > 64)
            throw std::invalid_argument("quotient filter: remainder bits + 3 must fit 64");
        return g;
    }

    uint64_t stat(size_t i) const noexcept { return slots_.get(i) & status::mask; }
    uint64_t remainder(size_t i) const noexcept { return slots_.get(i) >> 3; }
    bool empty(size_t i) const noexcept { return stat(i) == status::empty; }
    bool occupied(size_t i) const noexcept { return stat(i) & status::occupied; }
    bool continuation(size_t i) const noexcept { return stat(i) & status::continuation; }
    bool shifted(size_t i) const noexcept { return stat(i) & status::shifted; }
    void set_occupied(size_t i, bool on) noexcept {
        uint64_t const v = slots_.get(i);
        slots_.set_unsynchronized(i, on ? v | status::occupied : v & ~status::occupied);
    }

    // Where run q begins (occupied(q) must be set): walk left to the cluster start, then step over
    // one run per occupied canonical slot before q (section 2).
    size_t run_start(uint64_t q) const noexcept {
        size_t b = q;
        while (shifted(b)) --b;
        size_t s = b;
        while (b != q) {
            do ++s;
            while (continuation(s));
            do ++b;
            while (!occupied(b));
        }
        return s;
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
        size_t next = 0;
        uint64_t prev_q = ~uint64_t{0};
        for (auto [q, r] : entries) {
            size_t const pos = std::max<size_t>(q, next);
            set_occupied(q, true);
            uint64_t const v = slots_.get(pos) & status::occupied;
            slots_.set_unsynchronized(pos, v | (r << 3) | (pos != q ? status::shifted : 0) |
                                               (q == prev_q ? status::continuation : 0));
            prev_q = q;
            next = pos + 1;
        }
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
    size_t size_ = 0;
};

static_assert(amq_filter<sequential_filter>);

}  // namespace qmer::qf
