#pragma once
// The 3-bit quotient filter layout of Maier, Sanders, Williger ("Concurrent Expandable AMQs on the
// Basis of Quotient Filters", SEA 2020, section 2 and Table 1), shared by every quotient filter
// here that stores whole slots (the sequential, externally locked and locally locked filters, and
// the expandable filter's levels while they are built): what a slot's status bits mean, the sorted
// placement rule, the overflow area, and reading the table a group of slots at a time, with the
// one routine that finds a run (scan::run_start_in_cluster).
//
// A slot holds (remainder << 3) | status, the status bits, from high to low, occupied (the
// canonical run of this position is non-empty), continuation (the element here belongs to the same
// run as the previous slot) and shifted (the element is not in its canonical slot). Table 1: 000
// empty, 100 cluster start, *01 run start, *11 continuation; *10 never holds an element (the
// locally locked filter uses 010 and 110 as locks, section 3.2).

#include <cstddef>
#include <cstdint>

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

// The sorted layout of a quotient filter (section 2), built from scratch: elements in increasing
// (quotient, remainder) order, each at the first free slot at or after its quotient, into slots
// that start cleared. The one placement rule for every writer that lays out whole runs at once: the
// sequential filter's remove, the locally locked filter's remove, its bulk append and a migration's
// copy (core/qf/concurrent/locally_locked/). put(slot, bits) ORs status and remainder bits into a
// slot.
struct sorted_placement {
    size_t next = 0;                 // the first free slot
    uint64_t last_q = ~uint64_t{0};  // the previous element's quotient

    // Where the element of quotient q goes.
    size_t position(uint64_t q) const noexcept { return q > next ? q : next; }

    // Places (q, r) at position(q): q's occupied bit (once per quotient), the remainder, and the
    // shifted and continuation bits. Returns the slot.
    template <typename Put>
    size_t place(uint64_t q, uint64_t r, Put&& put) {
        size_t const pos = position(q);
        if (q != last_q) put(q, status::occupied);
        put(pos,
            (r << 3) | (pos != q ? status::shifted : 0) | (q == last_q ? status::continuation : 0));
        last_q = q;
        next = pos + 1;
        return pos;
    }
};

// Scanning whole groups (shared with core/qf/concurrent/locally_locked.hpp). A slot is read out of
// a group value already in a register instead of with one atomic load (and one division) per slot,
// and the status bits of every slot of a group are tested at once: shifting a group right by 0, 1
// or 2 and masking with `lane0` (bit 0 of every slot) lines up the shifted, continuation or
// occupied bits of all its slots on bit 0 of each slot. The predicates below hold in the sequential
// layout and see through the locally locked filter's locks (010 read lock = a locked cluster start,
// 110 write lock = a locked empty slot), because no lock has its shifted bit set:
//   shifted element       S                 (s = 1 only on elements)
//   continuation          C & S             (a lock's c bit is not a continuation)
//   stop of a left scan   ~S                (cluster start, read lock, empty, write lock)
//   hole                  ~S & ~(O ^ C)     (000 empty or 110 write lock)
//   occupied, when S      O
//   not a continuation    ~(C & S)          (what "do ++p; while (continuation(p))" stops at)
namespace scan {

// Per-table constants: lane masks and division-free slot <-> (group, lane) arithmetic (a 64-bit
// division costs ~40 cycles, and a scan would pay one per slot it reads).
class layout {
  public:
    layout() = default;
    explicit layout(grouped_slots const& s)
        : bits_(s.slot_bits()),
          spg_(s.slots_per_group()),
          groups_(s.group_count()),
          // 65536 / bits + 1: bit * lane_magic_ >> 16 == bit / bits for every bit < 64 (the
          // rounding error, < 64 / 65536, stays below the 1 / bits gap to the next integer).
          lane_magic_(65536u / s.slot_bits() + 1) {
        for (unsigned k = 0; k < spg_; ++k) lane0_ |= uint64_t{1} << (k * bits_);
        divider_ = s.divider();
        size_t const used = s.slot_count() - (groups_ == 0 ? 0 : (groups_ - 1) * spg_);
        last_lanes_ = lane0_ & low_bits(static_cast<unsigned>(used) * bits_);
        top_lane_shift_ = (spg_ - 1) * bits_;
        sum_mask_ = low_bits(bits_ < 8 ? bits_ : 8);
    }

    unsigned slot_bits() const noexcept { return bits_; }
    unsigned slots_per_group() const noexcept { return spg_; }
    size_t group_count() const noexcept { return groups_; }
    uint64_t lane0() const noexcept { return lane0_; }

    size_t group_of(size_t slot) const noexcept { return divider_.group_of(slot); }
    size_t first_slot(size_t g) const noexcept { return g * spg_; }
    // The lane whose slot begins at `bit` (a multiple of slot_bits found with a bit scan).
    unsigned lane_at_bit(unsigned bit) const noexcept { return (bit * lane_magic_) >> 16; }
    uint64_t slot(uint64_t gv, unsigned lane) const noexcept {
        return grouped_slots::slot_in(gv, lane, bits_);
    }

    // Lane masks (bit 0 of the chosen lanes): lanes of group g that are real slots; lanes at or
    // below k; lanes at or above k.
    uint64_t real(size_t g) const noexcept { return g + 1 == groups_ ? last_lanes_ : lane0_; }
    uint64_t upto(unsigned k) const noexcept { return lane0_ & low_bits((k + 1) * bits_); }
    uint64_t from(unsigned k) const noexcept { return lane0_ & ~low_bits(k * bits_); }

    // How many lanes a lane mask holds. Not __builtin_popcountll: without -mpopcnt (the default
    // x86-64 target) that is a library call. Multiplying by lane0 adds every lane's bit into the
    // top lane; the partial sums below it stay < spg < 2^bits, so nothing carries between lanes,
    // and the top sum fits unless bits = 4 and all 16 lanes are set (the first test).
    unsigned count(uint64_t lanes) const noexcept {
        if (lanes == lane0_) return spg_;
        return static_cast<unsigned>(((lanes * lane0_) >> top_lane_shift_) & sum_mask_);
    }

    uint64_t shifted(uint64_t gv) const noexcept { return gv & lane0_; }
    uint64_t cont_bit(uint64_t gv) const noexcept { return (gv >> 1) & lane0_; }
    uint64_t occ_bit(uint64_t gv) const noexcept { return (gv >> 2) & lane0_; }
    uint64_t continuation(uint64_t gv) const noexcept { return cont_bit(gv) & gv & lane0_; }
    uint64_t not_continuation(uint64_t gv) const noexcept { return ~continuation(gv) & lane0_; }
    uint64_t stops(uint64_t gv) const noexcept { return ~gv & lane0_; }
    uint64_t holes(uint64_t gv) const noexcept {
        return ~gv & ~(occ_bit(gv) ^ cont_bit(gv)) & lane0_;
    }

  private:
    static uint64_t low_bits(unsigned n) noexcept {
        return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    }

    unsigned bits_ = 0, spg_ = 0;
    size_t groups_ = 0;
    uint32_t lane_magic_ = 0;
    uint64_t lane0_ = 0, last_lanes_ = 0, sum_mask_ = 0;
    unsigned top_lane_shift_ = 0;
    group_divider divider_;
};

// The lowest set bit of x after dropping the n - 1 lowest ones (x has at least n set bits).
inline unsigned nth_bit(uint64_t x, unsigned n) noexcept {
    while (--n != 0) x &= x - 1;
    return static_cast<unsigned>(__builtin_ctzll(x));
}

// Reads slots through a one-group cache: a group is loaded (acquire) again only when the slot
// asked for lies in another group. For regions that cannot change while they are read (a
// sequential filter, a cluster held under its locks, a frozen migration source): one load per
// group is then equivalent to one per slot.
class cached_reader {
  public:
    cached_reader(grouped_slots const& s, layout const& l) noexcept : s_(s), l_(l) {}
    uint64_t operator()(size_t slot) noexcept {
        size_t const g = l_.group_of(slot);
        if (g != g_) {
            g_ = g;
            gv_ = s_.load_group(g);
        }
        return l_.slot(gv_, static_cast<unsigned>(slot - l_.first_slot(g)));
    }

  private:
    grouped_slots const& s_;
    layout const& l_;
    size_t g_ = ~size_t{0};
    uint64_t gv_ = 0;
};

// The nearest slot at or left of `pos` whose shifted bit is clear (a cluster start, a read lock,
// an empty slot or a write lock), with the group value it was read from; npos when every slot
// down to 0 is shifted (a table changing under the scan). One acquire load per group.
inline constexpr size_t npos = ~size_t{0};
inline size_t last_stop_at_or_before(grouped_slots const& s, layout const& l, size_t pos,
                                     uint64_t& gv) noexcept {
    size_t g = l.group_of(pos);
    uint64_t lanes = l.upto(static_cast<unsigned>(pos - l.first_slot(g)));
    for (;;) {
        gv = s.load_group(g);
        if (uint64_t const hit = l.stops(gv) & lanes; hit != 0)
            return l.first_slot(g) +
                   l.lane_at_bit(63u - static_cast<unsigned>(__builtin_clzll(hit)));
        if (g == 0) return npos;
        --g;
        lanes = l.lane0();
    }
}

// The first hole (empty or write-locked slot) at or right of `pos`, with its group value; npos if
// none before the end of the table.
inline size_t first_hole_at_or_after(grouped_slots const& s, layout const& l, size_t pos,
                                     uint64_t& gv) noexcept {
    size_t g = l.group_of(pos);
    if (g >= l.group_count()) return npos;
    uint64_t lanes = l.from(static_cast<unsigned>(pos - l.first_slot(g)));
    for (;;) {
        gv = s.load_group(g);
        if (uint64_t const hit = l.holes(gv) & lanes & l.real(g); hit != 0)
            return l.first_slot(g) + l.lane_at_bit(static_cast<unsigned>(__builtin_ctzll(hit)));
        if (++g == l.group_count()) return npos;
        lanes = l.lane0();
    }
}

// What the slots (c, q] say about q's place in c's cluster, from one load per group.
struct span_summary {
    bool all_shifted = true;   // every slot in (c, q] holds a shifted element (is in c's cluster)
    unsigned occupied = 0;     // occupied slots in (c, q]: runs from c's to q's, when all shifted
    unsigned run_starts = 0;   // slots in (c, q) that are not continuations
    uint64_t start_value = 0;  // slot c as read
    uint64_t q_value = 0;      // slot q as read
};
inline span_summary summarize(grouped_slots const& s, layout const& l, size_t c,
                              size_t q) noexcept {
    span_summary out;
    size_t const gc = l.group_of(c), gq = l.group_of(q);
    unsigned const kc = static_cast<unsigned>(c - l.first_slot(gc));
    unsigned const kq = static_cast<unsigned>(q - l.first_slot(gq));
    for (size_t g = gc; g <= gq; ++g) {
        uint64_t const gv = s.load_group(g);
        if (g == gc) out.start_value = l.slot(gv, kc);
        if (g == gq) out.q_value = l.slot(gv, kq);
        uint64_t lanes = l.lane0();  // (c, q] restricted to this group
        if (g == gc) lanes &= ~l.upto(kc);
        if (g == gq) lanes &= l.upto(kq);
        if ((l.shifted(gv) & lanes) != lanes) out.all_shifted = false;
        out.occupied += l.count(l.occ_bit(gv) & lanes);
        uint64_t const before_q = g == gq ? lanes & ~l.from(kq) : lanes;
        out.run_starts += l.count(l.not_continuation(gv) & before_q);
    }
    return out;
}

// The n-th (n >= 1) slot after `from` that is not a continuation: with n = the number of runs to
// step over, where "do ++p; while (continuation(p))" ends after n rounds (section 2, Block H).
// One load per group; npos if the table ends first (it cannot in a consistent table). n = 0
// gives `from`.
inline size_t nth_run_start_after(grouped_slots const& s, layout const& l, size_t from,
                                  unsigned n) noexcept {
    if (n == 0) return from;
    size_t g = l.group_of(from + 1);
    uint64_t lanes = l.from(static_cast<unsigned>(from + 1 - l.first_slot(g)));
    for (;; ++g, lanes = l.lane0()) {
        if (g >= l.group_count()) return npos;
        uint64_t const hit = l.not_continuation(s.load_group(g)) & lanes;
        unsigned const count = l.count(hit);
        if (count >= n) return l.first_slot(g) + l.lane_at_bit(nth_bit(hit, n));
        n -= count;
    }
}

// Block H, the one run-finding step of every quotient filter here with these status bits: where
// the run of quotient q begins, its cluster starting at c <= q, after stepping over `runs` runs
// from c (the occupied quotients in (c, q], from summarize(); one more where an insert makes q's
// run), `run_starts` being the run starts in (c, q). Runs begin at or after their quotient, so
// when more runs are stepped over than start before q, the others start from q on: only those are
// selected. q == c gives c when runs is 0 (callers step over nothing then).
inline size_t run_start_in_cluster(grouped_slots const& s, layout const& l, size_t c, size_t q,
                                   unsigned runs, unsigned run_starts) noexcept {
    return runs > run_starts ? nth_run_start_after(s, l, q - 1, runs - run_starts)
                             : nth_run_start_after(s, l, c, runs);
}

// Block I: searches the sorted run starting at p for remainder r; true if found. Reads each
// group once.
inline bool run_contains(grouped_slots const& s, layout const& l, size_t total_slots, size_t p,
                         uint64_t r) noexcept {
    size_t g = l.group_of(p);
    unsigned k = static_cast<unsigned>(p - l.first_slot(g));
    unsigned const spg = l.slots_per_group();
    uint64_t gv = s.load_group(g);
    for (;;) {
        uint64_t const x = l.slot(gv, k) >> 3;
        if (x >= r) return x == r;
        if (++p >= total_slots) return false;
        if (++k == spg) {
            k = 0;
            gv = s.load_group(++g);
        }
        if (((l.continuation(gv) >> (k * l.slot_bits())) & 1) == 0) return false;
    }
}

}  // namespace scan

// Slots after the m canonical ones, so runs of the last canonical slots need no wrap-around:
// 1/64 of the table plus 64 (1.6% memory at large m).
inline constexpr size_t overflow_slots_for(uint64_t canonical_slots) {
    return static_cast<size_t>(canonical_slots / 64 + 64);
}
inline constexpr size_t overflow_slots(unsigned quotient_bits) {
    return overflow_slots_for(uint64_t{1} << quotient_bits);
}

}  // namespace qmer::qf
