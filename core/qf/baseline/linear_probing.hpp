#pragma once
// The lock-free linear probing quotient filter (Maier, Sanders, Williger, SEA 2020, sections 2.1
// and 3.1): a hybrid of a linear probing hash table and a quotient filter. No status bits and no
// reordering: the slot that would hold the 3 status bits of a 3-bit quotient filter holds 3 more
// remainder bits instead, so with (q, r) the slots are r + 3 bits wide (the same width as
// qmer::qf 3-bit filters of the same r) and store a non-zero remainder of r + 3 bits.
//
// Fingerprint: the top q + r + 3 bits of the 64-bit hash; quotient = top q bits, stored remainder =
// the next r + 3 bits. A stored remainder of 0 would read as an empty slot, so a zero remainder is
// replaced by the LOW r + 3 bits of the hash (a second, independent hash function, the paper's
// "rehashing"), and by 1 if those are zero too. Remainders are then close to uniform on
// 1 .. 2^(r+3) - 1, which is what Corollary 1 assumes.
//
// Layout: 2^q canonical slots followed by a small overflow area (the paper's approach: no
// wrap-around), so an element whose probe runs past slot 2^q - 1 continues into the overflow area.
//
// Operations:
//   insert(h)   scans from the canonical slot to the first empty slot. Meeting an equal remainder
//   on
//               the way answers already_present (a query for h would already answer true, so
//               storing it again would only cost space). Otherwise it writes the remainder into the
//               first empty slot with ONE compare-and-swap of that slot's 64-bit group.
//   contains(h) compares h's remainder with every remainder from the canonical slot up to the next
//               empty slot (remainders of other quotients included: that is where false positives
//               come from, Corollary 1).
//   There is NO remove: an element's slot cannot be cleared without breaking the probe sequences of
//   the elements stored after it, and without status bits nothing tells which elements those are.
//   For the same reason it cannot grow by bounded growing (quotients are not recoverable).
//
// Concurrency: insert and contains are safe from any number of threads at once, and lock-free
// (section 3.1): a failed CAS means another insert changed the same group, i.e. made progress. A
// slot never changes once written, so a reader that saw it filled can rely on it forever, and a
// query finds every remainder inserted before it started because those lie between its canonical
// slot and the next empty slot, neither of which can move.
//
// `full`: the insert's probe reached the end of the overflow area. With the overflow area below
// that happens only near 100% fill; capacity() is the number of canonical slots, 2^q.
//
// false_positive_rate(): the expected rate at the current fill from Knuth's unsuccessful-search
// cost (the number of remainders compared) times 1 / (2^(r+3) - 1); see corollary1_fpr() for the
// paper's bound, which counts the final empty probe as a comparison too.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/bounds.hpp"
#include "core/filter/filter.hpp"
#include "core/filter/sharded_count.hpp"
#include "core/qf/slot_storage.hpp"

namespace qmer::qf {

namespace detail {

// A remainder that is never zero (the linear probing and 2-status-bit filters use 0 as "empty"):
// `top` is the remainder taken from the fingerprint bits; when it is 0, use the low `bits` bits of
// the hash instead, and 1 when those are 0 as well.
inline uint64_t nonzero_remainder(uint64_t top, uint64_t h, unsigned bits) noexcept {
    if (top != 0) return top;
    uint64_t const low = h & ((uint64_t{1} << bits) - 1);
    return low != 0 ? low : 1;
}

// Knuth (TAOCP vol. 3, 6.4): an unsuccessful search in a linear probing table at load `fill` probes
// (1 + 1/(1-fill)^2) / 2 slots on average, the last of them empty.
inline double linear_probing_unsuccessful_probes(double fill) noexcept {
    if (fill >= 1.0) return INFINITY;
    double const d = 1.0 - fill;
    return 0.5 * (1.0 + 1.0 / (d * d));
}

// s / d without a divide instruction, for scans that index slot by slot: with
// M = floor((2^64 - 1) / d) + 1, floor(s / d) is the high 64 bits of M * s, exact for s < 2^32
// (Lemire, Kaser, Kurz 2019); larger s, and d = 1, divide.
class group_divider {
  public:
    group_divider() = default;
    explicit group_divider(unsigned d) : d_(d), magic_(~uint64_t{0} / d + 1) {}
    size_t operator()(size_t s) const noexcept {
        __extension__ using u128 = unsigned __int128;
        if ((s >> 32) != 0 || d_ == 1) return s / d_;
        return static_cast<size_t>((static_cast<u128>(magic_) * s) >> 64);
    }

  private:
    unsigned d_ = 1;
    uint64_t magic_ = 0;
};

}  // namespace detail

class linear_probing {
  public:
    // Slots past the last canonical one. An element lands there only if its probe crosses the end
    // of the table; the number of such elements behaves like the queue of an M/D/1 system at load
    // = fill, whose mean is ~10 at 95% fill and whose tail decays ~e^(-0.1 n), so 256 slots are
    // exhausted only near 100% fill.
    static constexpr size_t overflow_slots = 256;

    linear_probing(unsigned quotient_bits, unsigned remainder_bits)
        : q_(quotient_bits), r_(remainder_bits), slot_bits_(remainder_bits + 3) {
        if (quotient_bits < 1 || quotient_bits > max_quotient_bits)
            throw std::invalid_argument("linear_probing: quotient bits must be in 1.." +
                                        std::to_string(max_quotient_bits));
        if (remainder_bits < 1 || quotient_bits + remainder_bits + 3 > 64)
            throw std::invalid_argument(
                "linear_probing: need remainder bits >= 1 and quotient + remainder + 3 <= 64");
        slots_ = grouped_slots((size_t{1} << q_) + overflow_slots, slot_bits_);
        spg_ = slots_.slots_per_group();
    }

    insert_result insert(uint64_t h) noexcept {
        size_t const c = quotient(h);
        uint64_t const rem = remainder(h);
        size_t g = slots_.group_of(c);
        unsigned i = slots_.index_in_group(c);
        size_t const groups = slots_.group_count();
        size_t const total = slots_.slot_count();
        for (; g < groups; ++g, i = 0) {
            uint64_t word = slots_.load_group(g);
            for (;;) {
                // Slots before i in this group were seen filled with other remainders; filled
                // slots never change, so after a failed CAS the scan resumes at i.
                for (; i < spg_ && g * spg_ + i < total; ++i) {
                    uint64_t const s = grouped_slots::slot_in(word, i, slot_bits_);
                    if (s == rem) return insert_result::already_present;
                    if (s == 0) break;
                }
                if (i == spg_ || g * spg_ + i >= total) break;  // group exhausted: next group
                uint64_t const desired = grouped_slots::with_slot(word, i, slot_bits_, rem);
                // acq_rel on success (publishes the remainder to acquiring readers); on failure
                // `word` is reloaded with acquire and the scan continues from slot i.
                if (slots_.cas_group(g, word, desired)) {
                    count_.count_one();
                    return insert_result::inserted;
                }
            }
        }
        return insert_result::full;
    }

    bool contains(uint64_t h) const noexcept {
        size_t const c = quotient(h);
        uint64_t const rem = remainder(h);
        size_t g = slots_.group_of(c);
        unsigned i = slots_.index_in_group(c);
        size_t const groups = slots_.group_count();
        size_t const total = slots_.slot_count();
        for (; g < groups; ++g, i = 0) {
            // acquire: pairs with the inserting CAS, so a query that observes the slot filled
            // observes it with its final remainder (slots are written once).
            uint64_t const word = slots_.load_group(g);
            for (; i < spg_; ++i) {
                if (g * spg_ + i >= total) return false;
                uint64_t const s = grouped_slots::slot_in(word, i, slot_bits_);
                if (s == rem) return true;
                if (s == 0) return false;
            }
        }
        return false;
    }

    // Brings the canonical slot's group towards the cache ahead of a later insert/contains.
    void prefetch(uint64_t h) const noexcept { slots_.prefetch(quotient(h)); }

    size_t size() const noexcept { return count_.load(); }
    // Canonical slots; the overflow area is extra (its memory is counted in memory_bytes()).
    size_t capacity() const noexcept { return size_t{1} << q_; }
    size_t memory_bytes() const noexcept { return slots_.memory_bytes() + sizeof(*this); }
    unsigned quotient_bits() const noexcept { return q_; }
    unsigned remainder_bits() const noexcept { return r_; }
    // Bits actually stored per remainder (r + 3) and per slot (the same: no status bits).
    unsigned stored_remainder_bits() const noexcept { return slot_bits_; }
    unsigned slot_bits() const noexcept { return slot_bits_; }
    grouped_slots const& slots() const noexcept { return slots_; }

    // Expected false-positive rate after `n` distinct inserts into 2^q slots: the number of
    // remainders an absent key is compared with (Knuth's probe count minus the final empty slot)
    // times the chance 1 / (2^(r+3) - 1) that one comparison matches.
    static double expected_fpr(unsigned q, unsigned r, size_t n) noexcept {
        double const fill = static_cast<double>(n) / std::ldexp(1.0, static_cast<int>(q));
        double const compared = detail::linear_probing_unsuccessful_probes(fill) - 1.0;
        return std::min(1.0, compared / (std::ldexp(1.0, static_cast<int>(r + 3)) - 1.0));
    }
    // Corollary 1 of the paper: (1 + 1/(1-fill)^2) / 2 * 1 / (2^(r+3) - 1), an upper bound that
    // also counts the final empty probe as a comparison (tight at high fill: 0.5% above
    // expected_fpr at 95%, 67% above at 50%).
    static double corollary1_fpr(unsigned r, double fill) noexcept {
        return std::min(1.0, detail::linear_probing_unsuccessful_probes(fill) /
                                 (std::ldexp(1.0, static_cast<int>(r + 3)) - 1.0));
    }
    double false_positive_rate() const noexcept { return expected_fpr(q_, r_, size()); }

    // The index file's view (core/filter/filter.hpp, persistent_filter): (q, r, size) and the
    // raw groups. Call when no insert runs.
    std::vector<filter_array> arrays() const {
        return {{{q_, r_, size()}, atomic_words(slots_.groups())}};
    }
    static std::unique_ptr<linear_probing> from_arrays(std::span<filter_array const> arrays) {
        if (arrays.size() != 1 || arrays[0].params.size() != 3)
            throw std::invalid_argument(
                "linear probing filter: expected one array of (q, r, size)");
        auto const& a = arrays[0];
        // The saved geometry is checked as 64-bit values and against the words before a table
        // is allocated: a q of 2^32 + 30 read as unsigned is 30, a table of 2^30 slots for a file
        // of a few words (found by fuzz/index_damage_fuzz, an out-of-memory).
        uint64_t const q = a.params[0], r = a.params[1];
        if (q < 1 || q > max_quotient_bits || r < 1 || q + r + 3 > 64)
            throw std::invalid_argument("linear probing filter: bad geometry");
        uint64_t const slots = (uint64_t{1} << q) + overflow_slots, per_group = 64 / (r + 3);
        if (a.words.size() != (slots + per_group - 1) / per_group)
            throw std::invalid_argument("linear probing filter: array size does not match q and r");
        auto f =
            std::make_unique<linear_probing>(static_cast<unsigned>(q), static_cast<unsigned>(r));
        auto groups = f->slots_.groups();
        for (size_t i = 0; i < groups.size(); ++i)
            groups[i].store(a.words[i], std::memory_order_relaxed);
        f->count_.reset(a.params[2]);
        return f;
    }

    // The exact expected false-positive rate of THIS table (not of a random one): the mean, over
    // all canonical slots, of the number of filled slots from it to the next empty slot, times
    // 1 / (2^(r+3) - 1). At high fill a single table's clustering varies a lot (at 95% fill on
    // 2^16 slots its mean probe length has a ~12% standard deviation), so tests compare measured
    // rates with this and compare Knuth's formula with the mean of this over tables. O(slots);
    // call it when no insert is running.
    double table_fpr() const noexcept {
        size_t const total = slots_.slot_count();
        size_t const m = capacity();
        double sum = 0;
        size_t run = 0;  // filled slots from s to the next empty slot
        for (size_t s = total; s-- > 0;) {
            run = slots_.get(s) != 0 ? run + 1 : 0;
            if (s < m) sum += static_cast<double>(run);
        }
        double const compared = sum / static_cast<double>(m);
        return std::min(1.0, compared / (std::ldexp(1.0, static_cast<int>(slot_bits_)) - 1.0));
    }

    size_t quotient(uint64_t h) const noexcept { return static_cast<size_t>(h >> (64 - q_)); }
    uint64_t remainder(uint64_t h) const noexcept {
        uint64_t const mask = (uint64_t{1} << slot_bits_) - 1;
        return detail::nonzero_remainder((h >> (64 - q_ - slot_bits_)) & mask, h, slot_bits_);
    }

  private:
    unsigned q_;
    unsigned r_;
    unsigned slot_bits_;
    unsigned spg_ = 0;
    grouped_slots slots_;
    alignas(no_sharing_bytes) sharded_count count_;  // the thread's own shard per insert
};

static_assert(amq_filter<linear_probing>);

}  // namespace qmer::qf
