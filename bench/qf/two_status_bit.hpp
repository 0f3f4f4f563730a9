#pragma once
// The 2-status-bit quotient filter (Maier, Sanders, Williger, SEA 2020, section 2.1), SEQUENTIAL:
// not safe to call from two threads at once, not even insert with contains (section 3.2 shows why
// its concurrent form is impractical: a read lock must CAS two neighbouring slots that may sit in
// different words). It breaks ARCHITECTURE.md's "safe from any number of threads" rule on purpose
// and is not offered to app/; it lives in bench/ to be measured beside the 3-bit filter
// (bench/qf/qf_bench.cpp) and is tested by tests/bench/qf/two_status_bit_test.cpp.
//
// Remainders are never zero, so an empty slot is told apart by its remainder alone and the
// "shifted" status bit of Table 1 is dropped. A slot is r + 2 bits: the remainder in the high r
// bits, then
//   bit 0 occupied      (position: some element has this slot as its canonical slot)
//   bit 1 continuation  (element: it belongs to the same run as the slot before it)
// Without the shifted bit a cluster start inside a supercluster cannot be recognised from the
// left, so operations walk from the SUPERCLUSTER start (the first filled slot after an empty one),
// which is always an element in its canonical slot; runs are then counted exactly as from a cluster
// start. Cost: longer walks at high fill (superclusters are longer than clusters).
//
// Fingerprint: top q + r bits of the hash; a zero r-bit remainder is replaced by the low r bits of
// the hash, and by 1 if those are zero too, so remainders are ~uniform on 1 .. 2^r - 1 and the
// false-positive rate is ~ fill / (2^r - 1) instead of fill / 2^r (section 2.1).
//
// Space: 1 bit per slot less than the 3-bit filter, (r+2)/(r+3) of its bits (r = 13: 15 vs 16
// bits). In 64-bit groups the saving is real only when one more slot fits per word:
// floor(64/(r+2)) > floor(64/(r+3)), e.g. r = 10 (5 slots of 12 bits vs 4 of 13 per word: 20% less
// memory) or r = 14 (4 vs 3: 25% less); at r = 13 both pack 4 slots per word and the saving is
// nothing (bits_per_slot() says what the packing gives).
//
// Layout: 2^q canonical slots plus a 256-slot overflow area, no wrap-around. `full`: a shift would
// pass the end of the overflow area. No remove (not simple without the shifted bit: an element
// moving left cannot tell whether it reached its canonical slot without recounting the
// supercluster).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/filter/filter.hpp"
#include "core/qf/baseline/linear_probing.hpp"  // detail::nonzero_remainder, detail::group_divider
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"

namespace qmer::qf {

class two_status_bit {
  public:
    static constexpr size_t overflow_slots = 256;
    static constexpr uint64_t occupied = 1;
    static constexpr uint64_t continuation = 2;

    two_status_bit(unsigned quotient_bits, unsigned remainder_bits)
        : geo_{quotient_bits, remainder_bits} {
        geo_.validate();
        if (remainder_bits < 2 || remainder_bits + 2 > 64)
            throw std::invalid_argument("two_status_bit: remainder bits must be in 2..62");
        slots_ = grouped_slots((size_t{1} << quotient_bits) + overflow_slots, remainder_bits + 2);
        total_ = slots_.slot_count();
        spg_ = slots_.slots_per_group();
        group_of_ = detail::group_divider(spg_);
    }

    insert_result insert(uint64_t h) noexcept {
        size_t const c = geo_.quotient(h);
        uint64_t const rem = remainder(h);
        uint64_t const at_c = load(c);
        if (at_c == 0) {
            store(c, (rem << 2) | occupied);
            ++count_;
            return insert_result::inserted;
        }
        bool const has_run = (at_c & occupied) != 0;
        size_t const s = run_start(supercluster_start(c), c, has_run);
        size_t ins = s;
        bool at_head = true;
        if (has_run) {
            for (;;) {
                uint64_t const r = load(ins) >> 2;
                if (r == rem) return insert_result::already_present;
                if (r > rem) break;
                at_head = false;
                if (++ins >= total_) return insert_result::full;
                if ((load(ins) & continuation) == 0) break;
            }
        }
        size_t e = ins;
        for (;; ++e) {
            if (e >= total_) return insert_result::full;
            if (load(e) == 0) break;
        }
        for (size_t p = e; p > ins; --p) {
            uint64_t moved = load(p - 1) & ~occupied;
            if (p - 1 == ins && has_run && at_head) moved |= continuation;
            store(p, moved | (load(p) & occupied));
        }
        uint64_t element = rem << 2;
        if (has_run && !at_head) element |= continuation;
        store(ins, element | (load(ins) & occupied));
        if (!has_run) store(c, load(c) | occupied);
        ++count_;
        return insert_result::inserted;
    }

    bool contains(uint64_t h) const noexcept {
        size_t const c = geo_.quotient(h);
        uint64_t const rem = remainder(h);
        if ((load(c) & occupied) == 0) return false;
        size_t p = run_start(supercluster_start(c), c, true);
        for (;;) {
            uint64_t const r = load(p) >> 2;
            if (r == rem) return true;
            if (r > rem) return false;
            if (++p >= total_) return false;
            if ((load(p) & continuation) == 0) return false;
        }
    }

    void prefetch(uint64_t h) const noexcept { slots_.prefetch(geo_.quotient(h)); }

    size_t size() const noexcept { return count_; }
    size_t capacity() const noexcept { return size_t{1} << geo_.quotient_bits; }
    size_t memory_bytes() const noexcept { return slots_.memory_bytes() + sizeof(*this); }
    // 1 - (1 - 1/(2^q (2^r - 1)))^n: a stored element matches an absent key's quotient and its
    // non-zero remainder (section 2.1: ~ fill / (2^r - 1)).
    static double expected_fpr(unsigned q, unsigned r, size_t n) noexcept {
        double const p = 1.0 / (std::ldexp(1.0, static_cast<int>(q)) *
                                (std::ldexp(1.0, static_cast<int>(r)) - 1.0));
        return -std::expm1(static_cast<double>(n) * std::log1p(-p));
    }
    double false_positive_rate() const noexcept {
        return expected_fpr(geo_.quotient_bits, geo_.remainder_bits, count_);
    }
    // Memory per slot once packed into 64-bit words: 64 / floor(64 / (r + 2)).
    static double bits_per_slot(unsigned r) noexcept { return 64.0 / (64 / (r + 2)); }

    unsigned quotient_bits() const noexcept { return geo_.quotient_bits; }
    unsigned remainder_bits() const noexcept { return geo_.remainder_bits; }
    grouped_slots const& slots() const noexcept { return slots_; }
    uint64_t remainder(uint64_t h) const noexcept {
        return detail::nonzero_remainder(geo_.remainder(h), h, geo_.remainder_bits);
    }

  private:
    // The first filled slot of the run of filled slots holding c (c is filled): its left
    // neighbour is empty or it is slot 0, so its element sits in its canonical slot.
    size_t supercluster_start(size_t c) const noexcept {
        size_t b = c;
        while (b > 0 && load(b - 1) != 0) --b;
        return b;
    }

    // From a supercluster start b (an occupied slot holding its own run's head), the slot where
    // c's run starts (has_run) or where a new run for c belongs: skip one run per occupied
    // quotient before c.
    size_t run_start(size_t b, size_t c, bool has_run) const noexcept {
        size_t s = b;
        for (;;) {
            if (b == c) return s;
            do ++s;
            while (s < total_ && (load(s) & continuation));
            do ++b;
            while (b < c && !(load(b) & occupied));
            if (b == c && !has_run) return s;
        }
    }

    uint64_t load(size_t s) const noexcept {
        size_t const g = group_of_(s);
        return grouped_slots::slot_in(slots_.load_group(g, std::memory_order_relaxed),
                                      static_cast<unsigned>(s - g * spg_), geo_.remainder_bits + 2);
    }
    void store(size_t s, uint64_t v) noexcept { slots_.set_unsynchronized(s, v); }

    geometry geo_;
    grouped_slots slots_;
    size_t total_ = 0;
    unsigned spg_ = 0;
    detail::group_divider group_of_;
    size_t count_ = 0;
};

static_assert(amq_filter<two_status_bit>);

}  // namespace qmer::qf
