#pragma once
// A read-only view of a table in the rank-select layout (block_format.hpp describes the words):
// what `qmer query` answers a default index's level from, straight from the file's bytes. It
// depends on nothing of the concurrent filters, so a query compiles none of them.
//
// Thread safety: a rank_select_table is an immutable view; any number of threads may query it.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/filter/prefetch.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/block_format.hpp"
#include "core/qf/stored/select.hpp"

namespace qmer::qf {

template <typename Select>
class rank_select_group_lookup;

// A read-only view of a table in the rank-select layout (block_format.hpp). The words must outlive
// it, and start on a 64-byte boundary for a lookup to read one line (a loaded index's sections do).
class rank_select_table {
  public:
    rank_select_table() = default;
    // Throws std::invalid_argument when the shape is impossible or the words do not match it.
    //
    // value_bits > 0: every slot's stored remainder (s.remainder_bits wide) is the fingerprint's
    // remainder (s.remainder_bits - value_bits bits) followed by a value of value_bits bits (a
    // many-reference index's class id, core/qf/stored/classes.hpp), as the counting quotient
    // filter keeps a counter beside its remainders (Pandey et al., SIGMOD 2017, section 4): the
    // layout and its writer are those of a table of the wider remainders, and sorted fingerprints
    // (fp << value_bits | value) stay sorted by fingerprint. A fingerprint is stored once, with
    // one value. Lookups compare the remainder's part and hand out the value (find); they take
    // the general routine, as the fast path's lane test compares whole slots.
    rank_select_table(rank_select::shape s, std::span<uint64_t const> words, uint64_t elements,
                      unsigned value_bits = 0)
        : shape_(s), words_(words), elements_(elements), value_bits_(value_bits) {
        s.validate();
        if (words.size() != s.words())
            throw std::invalid_argument("rank-select table: word count does not match the shape");
        if (elements > s.total_slots)
            throw std::invalid_argument("rank-select table: more elements than slots");
        if (value_bits >= s.remainder_bits || value_bits > max_value_bits)
            throw std::invalid_argument("rank-select table: bad value bit count");
        geometry_ = geometry::with_slots(s.canonical_slots, s.remainder_bits - value_bits);
        space_ = geometry_.fingerprint_space();
        remainder_mask_ = geometry_.remainder_mask();
        fields_ = {s.block_slots(), s.remainder_bits};
        lanes_ = rank_select::remainder_lanes(s.remainder_bits);
        blocks_ = s.blocks();
        // ceil(2^64 / s): q * magic >> 64 == q / s for every q < 2^41 (the error, below
        // q / 2^64, stays under the 1 / s gap to the next integer).
        block_magic_ = ~uint64_t{0} / fields_.s + 1;
        occupieds_ = rank_select::byte_field(fields_.occupieds(), fields_.s);
        runends_ = rank_select::byte_field(fields_.runends(), fields_.s);
        // The fast path reads its fields with byte loads (rank_select::byte_field). The occupied
        // bits start on a byte (bit offset_bits) and fit in every shape; the run ends do in every
        // shape but s = 62 (r = 6), whose lookups then all take the general path.
        static_assert(rank_select::offset_bits % 8 == 0);
        // run_holds loads the 8 bytes before the end of a run's last byte: the first slot's
        // remainder ends at bit 57 or later in every shape.
        bool const fits = rank_select::byte_loads &&
                          rank_select::byte_field::fits(fields_.runends(), fields_.s) &&
                          fields_.remainder(0) + s.remainder_bits > 56;
        fast_blocks_ = fits ? blocks_ : 0;
        fast_lanes_ = std::min(lanes_.count, rank_select::in_load_bits / s.remainder_bits);
    }

    // The most value bits a slot carries beside its remainder.
    static constexpr unsigned max_value_bits = 24;
    // What find() answers for a fingerprint the table does not hold.
    static constexpr uint64_t absent = ~uint64_t{0};

    rank_select::shape const& shape() const noexcept { return shape_; }
    unsigned value_bits() const noexcept { return value_bits_; }
    qf::geometry const& geometry() const noexcept { return geometry_; }
    std::span<uint64_t const> words() const noexcept { return words_; }
    size_t size() const noexcept { return elements_; }
    size_t capacity() const noexcept { return static_cast<size_t>(shape_.canonical_slots); }
    size_t memory_bytes() const noexcept { return words_.size_bytes(); }
    // n stored fingerprints out of M = m 2^r (Maier, Sanders, Williger, SEA 2020, section 2).
    double false_positive_rate() const noexcept {
        return -std::expm1(static_cast<double>(elements_) *
                           std::log1p(-1.0 / static_cast<double>(geometry_.fingerprint_space())));
    }

    // The lines a lookup of h reads: its canonical slot's block, and the next one, where a full
    // table's offsets and runs often lead (the next line is asked for at once rather than after
    // the first has arrived and shown that it is needed).
    [[gnu::always_inline]] void prefetch(uint64_t h) const noexcept { prefetch_blocks<2>(h); }
    // The same for a hash of minimizer-local hashing (core/kmer/sequence_hashing.hpp): windows
    // pile their runs up, so E_b, where the lookup reads its run ends, lies past block b in about
    // half the lookups at the default fill, one to three blocks past it in most of those
    // (bench/qf/LOOKUP_FILL.md, "How far E_b lies"); four blocks from b cover it in most
    // lookups. Consecutive k-mers of a read share these lines, so the deeper prefetch costs
    // little more than its instructions; for uniform hashes it would double every lookup's
    // fetches. Reading the offset first and prefetching from E_b (a pass over a group before its
    // lookups) is slower: the offset's line has not arrived yet for the group's last k-mers
    // (bench/qf/LOOKUP_FILL.md).
    [[gnu::always_inline]] void prefetch_local(uint64_t h) const noexcept { prefetch_blocks<4>(h); }

    template <typename Select = rank_select::broadword_select>
    [[gnu::always_inline]] bool contains(uint64_t h) const noexcept {
        if (value_bits_ != 0) [[unlikely]]
            return find(h) != absent;
        uint64_t const fp = fingerprint(h);
        return contains_fingerprint<Select>(fp >> geometry_.remainder_bits, fp & remainder_mask_);
    }

    // The value stored beside h's fingerprint (a table with value bits), or `absent`: one
    // lookup, whatever the value means. The run is found as contains() finds it (block_run_ends
    // and one select), then its slots are compared one by one on their remainder part; anything
    // else takes find_fingerprint (the general walk on every lookup was the largest share of a
    // many-reference query's time).
    uint64_t find(uint64_t h) const noexcept {
        uint64_t const fp = fingerprint(h);
        uint64_t const q = fp >> geometry_.remainder_bits, x = fp & remainder_mask_;
        size_t const b = block_of(q);
        auto const j = static_cast<unsigned>(q - b * fields_.s);
        uint64_t const occupieds = occupied_bits(block(b));
        if (!((occupieds >> j) & 1)) return absent;
        block_run_ends const v = run_ends_of(b);
        auto const d = static_cast<unsigned>(std::popcount(occupieds << (63 - j)));
        if (d >= v.count) [[unlikely]]
            return find_fingerprint(q, x);
        unsigned const hi = rank_select::broadword_select::select(v.ends, d + 1);
        auto const lo =
            static_cast<unsigned>(__builtin_clzll(v.ends & ((uint64_t{1} << hi) - 1))) ^ 63;
        uint64_t const end = v.first + hi - 1;
        uint64_t const start = std::max(q, v.first + lo);
        if (start > end) return absent;  // only in damaged words
        return value_in_run(start, end, x);
    }

    // How many of `hashes` the table contains: contains() over a group (the default query's
    // lookups), through a rank_select_group_lookup: a copy of this view in the caller's frame,
    // and the run ends of the blocks the group has looked up, decoded once per block.
    template <typename Select = rank_select::broadword_select>
    uint64_t count_contained(std::span<uint64_t const> hashes) const noexcept {
        if (value_bits_ != 0) [[unlikely]] {  // the group lookup compares whole slots
            uint64_t hits = 0;
            for (uint64_t const h : hashes) hits += find(h) != absent;
            return hits;
        }
#if defined(__x86_64__)
        if constexpr (std::is_same_v<Select, rank_select::pdep_select>)
            return count_contained_bmi2(hashes);
        else
#endif
            return count_group<Select>(hashes);
    }

    // The lookup of (q, x) as nearly every one goes: block_run_ends, one select for the run's end
    // and the run end before it, and the run's remainders compared a word at a time (two where
    // the run crosses into the next block). Anything else (the d-th run end past the 63 slots
    // from E_b, a run longer than a byte load's lanes, E_b in the last block, a shape whose run
    // ends do not fit a byte load, damaged words) goes to contains_fingerprint_general, which
    // answers every case; the two agree on every table (tests/core/qf/stored/rank_select_test.cpp).
    // Why not one routine: the query is bound by the instructions a lookup retires, not by its
    // misses (the table's lines are prefetched), and the general loop's per-block steps, its
    // division for offsets past the block (half the lookups at 93% fill under minimizer-local
    // hashing, where windows pile runs up) and its branch on whether a run end precedes the
    // selected one in the same word are what this path leaves out (bench/qf/LOOKUP_FILL.md has
    // the instruction counts).
    template <typename Select = rank_select::broadword_select>
    [[gnu::always_inline]] bool contains_fingerprint(uint64_t q, uint64_t x) const noexcept {
        if (value_bits_ != 0) [[unlikely]]
            return find_fingerprint(q, x) != absent;
        size_t const b = block_of(q);
        auto const j = static_cast<unsigned>(q - b * fields_.s);
        uint64_t const occupieds = occupied_bits(block(b));
        if (!((occupieds >> j) & 1)) return false;
        return contains_in<Select>(run_ends_of(b), occupieds, j, q, x);
    }

    // Every lookup, the way the layout is defined (block_format.hpp): walks the run-end bits block
    // by block from E_b and the run's remainders one by one, bounded by max_scan_blocks and the
    // table's end. contains_fingerprint's fallback, and its reference in the tests.
    [[gnu::noinline]] bool contains_fingerprint_general(uint64_t q, uint64_t x) const noexcept {
        if (value_bits_ != 0) return find_fingerprint(q, x) != absent;
        uint64_t start, end;
        if (!run_bounds(q, start, end)) return false;
        unsigned const s = fields_.s;
        size_t rb = block_of(start);
        auto k = static_cast<unsigned>(start - rb * s);
        uint64_t const* rblk = block(rb);
        // Most runs are a few slots inside one block: their remainders lie side by side in one
        // 64-bit span, compared with x all at once (SWAR). A loop that stops at the run's end
        // or at the first remainder >= x mispredicts its exit on nearly every lookup.
        if (uint64_t const n = end - start + 1; n <= lanes_.count && k + n <= s)
            return lanes_.any_equal(rank_select::get_bits(rblk, fields_.remainder(k), 64), x,
                                    static_cast<unsigned>(n));
        // Longer runs, or runs that cross into the next block: the run is sorted, so stop at
        // the first remainder >= x.
        for (uint64_t p = start;; ++p) {
            uint64_t const v = rank_select::get_bits(rblk, fields_.remainder(k), fields_.r);
            if (v >= x) return v == x;
            if (p == end) return false;
            if (++k == s) {
                k = 0;
                rblk = block(++rb);  // rb <= end's block: inside the words
            }
        }
    }

    // Calls f(fingerprint) for every stored fingerprint in increasing order. Throws
    // std::invalid_argument if the words do not describe a table in this layout (an element
    // outside any run, a run without its quotient, a run out of order or past the bound).
    //
    // Runs are read a run at a time, not a slot at a time: the d-th occupied quotient's run ends
    // at the d-th run end and starts at the later of its quotient and the slot after the previous
    // run's end (block_format.hpp), so the occupied and run-end bits are walked side by side, a set
    // bit at a time, and only the slots inside runs are visited.
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        bool ends_left = false;
        uint64_t const seen = for_each_fingerprint_in(0, blocks_, f, &ends_left);
        if (ends_left) throw invalid("run end outside any run");
        if (seen != elements_) throw invalid("element count does not match");
    }

    // The same for the fingerprints whose quotients lie in blocks [first, last) (a part of the
    // table that one thread decodes while others decode the next: the sorted append's merge into
    // a level, app/index/merge_append.cpp); returns how many it saw. The runs of quotients below
    // the first block end before E_first, the first slot the block's offset names
    // (block_format.hpp), so the walk starts there, knowing nothing of the blocks before. Over
    // every part, the counts add up to size() in an intact table; `ends_left`, if given, is set
    // when run ends remain past the last run (an error where `last` is the table's end).
    template <typename F>
    uint64_t for_each_fingerprint_in(size_t first, size_t last, F&& f,
                                     bool* ends_left = nullptr) const {
        unsigned const s = fields_.s;
        last = std::min(last, blocks_);
        if (first >= last) return 0;
        // The set bits of one field (occupieds or runends) from block b's bit j on, in slot order.
        struct set_bits {
            rank_select_table const& t;
            unsigned field;
            size_t b;
            uint64_t word;
            set_bits(rank_select_table const& table, unsigned f, size_t block, unsigned from)
                : t(table), field(f), b(block) {
                word = rank_select::get_bits(t.block(b), field, t.fields_.s);
                word &= from >= 64 ? 0 : ~uint64_t{0} << from;  // from may be 64: none left
            }
            // The next set bit's slot, or false at the end of the table.
            bool next(uint64_t& slot) {
                while (word == 0) {
                    if (++b >= t.blocks_) return false;
                    word = rank_select::get_bits(t.block(b), field, t.fields_.s);
                }
                slot = b * uint64_t{t.fields_.s} + static_cast<unsigned>(std::countr_zero(word));
                word &= word - 1;
                return true;
            }
        };
        // E_first: offset 0 says the runs before the block end at or before its first slot.
        uint64_t const block_start = first * uint64_t{s};
        uint64_t next_free =
            block_start + rank_select::get_bits(block(first), 0, rank_select::offset_bits);
        if (next_free > shape_.total_slots) throw invalid("offset past the last slot");
        // Runs before the block may fill every slot to the end: then no run ends from here on.
        size_t const end_block = std::min(block_of(next_free), blocks_ - 1);
        set_bits occupied{*this, fields_.occupieds(), first, 0};
        set_bits run_end{*this, fields_.runends(), end_block,
                         static_cast<unsigned>(next_free - end_block * s)};
        uint64_t const stop = last * uint64_t{s};
        uint64_t seen = 0, last_fp = 0, q = 0, end = 0;
        bool any = false, have_end = next_free < shape_.total_slots && run_end.next(end);
        while (occupied.next(q) && q < stop) {
            if (q >= shape_.canonical_slots) throw invalid("occupied overflow slot");
            uint64_t const start = std::max(q, next_free);
            // Run ends before this run's start belong to no quotient.
            if (!have_end) throw invalid("a run never ends");
            if (end < start) throw invalid("run end outside any run");
            if (end >= shape_.total_slots) throw invalid("run past the last slot");
            if (block_of(end) - block_of(q) > rank_select::max_scan_blocks)
                throw invalid("run too far from its slot");
            size_t b = block_of(start);
            auto j = static_cast<unsigned>(start - b * s);
            uint64_t const* blk = block(b);
            // The stored remainders' width: with value bits, each fingerprint comes with its
            // value below it, as the writer took them.
            uint64_t const high = q << fields_.r;
            for (uint64_t slot = start;; ++slot) {
                uint64_t const fp =
                    high | rank_select::get_bits(blk, fields_.remainder(j), fields_.r);
                if (any && fp <= last_fp) throw invalid("fingerprints out of order");
                any = true;
                last_fp = fp;
                ++seen;
                f(fp);
                if (slot == end) break;
                if (++j == s) {
                    j = 0;
                    blk = block(++b);  // b <= end's block: inside the words
                }
            }
            next_free = end + 1;
            have_end = run_end.next(end);
        }
        if (ends_left != nullptr) *ends_left = have_end;
        return seen;
    }

  private:
    template <typename Select>
    friend class rank_select_group_lookup;

    // The slots [start, end] of quotient q's run: false when q has none (or the words are
    // damaged). The general routine's walk (contains_fingerprint_general).
    bool run_bounds(uint64_t q, uint64_t& start, uint64_t& end) const noexcept {
        unsigned const s = fields_.s;
        size_t const b = block_of(q);
        auto const j = static_cast<unsigned>(q - b * s);
        uint64_t const* blk = block(b);
        uint64_t const occupieds = rank_select::get_bits(blk, fields_.occupieds(), s);
        if (!((occupieds >> j) & 1)) return false;
        // d >= 1: the occupied quotients of this block up to and including q.
        auto const d = static_cast<unsigned>(std::popcount(occupieds & (~uint64_t{0} >> (63 - j))));
        uint64_t const offset = blk[0] & rank_select::max_offset;
        uint64_t const first = b * uint64_t{s} + offset;  // E_b
        // Select the d-th runend at or after E_b, remembering the one before it.
        // The offset may point past block b; usually it does not, and a division costs more
        // than the rest of the lookup's arithmetic.
        size_t x_blk = b;
        auto from = static_cast<unsigned>(offset);
        if (offset >= s) {
            x_blk += static_cast<size_t>(offset / s);
            from = static_cast<unsigned>(offset % s);
            if (x_blk >= blocks_) return false;
        }
        uint64_t bits =
            rank_select::get_bits(block(x_blk), fields_.runends(), s) & (~uint64_t{0} << from);
        unsigned remaining = d;
        uint64_t previous_end = 0;  // valid when d >= 2
        for (size_t steps = 0;;) {
            auto const c = static_cast<unsigned>(std::popcount(bits));
            if (c >= remaining) {
                uint64_t const base = x_blk * uint64_t{s};
                unsigned const bit = rank_select::select_bit(bits, remaining);
                end = base + bit;
                // The runend before it: the highest one below it in this word, if any (one
                // count of leading zeros instead of a second select); else the one tracked from
                // the words passed.
                if (uint64_t const below = bits & ((uint64_t{1} << bit) - 1); below != 0)
                    previous_end = base + 63 - static_cast<unsigned>(std::countl_zero(below));
                break;
            }
            if (c != 0)
                previous_end =
                    x_blk * uint64_t{s} + 63 - static_cast<unsigned>(std::countl_zero(bits));
            remaining -= c;
            if (++x_blk >= blocks_ || ++steps > rank_select::max_scan_blocks) return false;
            bits = rank_select::get_bits(block(x_blk), fields_.runends(), s);
        }
        start = d == 1 ? std::max(q, first) : std::max(q, previous_end + 1);
        return start <= end;  // start > end only in damaged words
    }

    // The value beside fingerprint (q, x) in a table with value bits, or `absent`: its run
    // found by the general walk (run_bounds).
    [[gnu::noinline]] uint64_t find_fingerprint(uint64_t q, uint64_t x) const noexcept {
        uint64_t start, end;
        if (!run_bounds(q, start, end)) return absent;
        return value_in_run(start, end, x);
    }

    // The value beside remainder x in the run of slots [start, end]: the slots in order, each
    // remainder's upper part compared with x (the run is sorted by it).
    uint64_t value_in_run(uint64_t start, uint64_t end, uint64_t x) const noexcept {
        unsigned const s = fields_.s, c = value_bits_;
        size_t rb = block_of(start);
        auto k = static_cast<unsigned>(start - rb * s);
        uint64_t const* rblk = block(rb);
        for (uint64_t p = start;; ++p) {
            uint64_t const v = rank_select::get_bits(rblk, fields_.remainder(k), fields_.r);
            if ((v >> c) >= x) return (v >> c) == x ? v & ((uint64_t{1} << c) - 1) : absent;
            if (p == end) return absent;
            if (++k == s) {
                k = 0;
                rblk = block(++rb);  // rb <= end's block: inside the words
            }
        }
    }

    static std::invalid_argument invalid(char const* why) {
        return std::invalid_argument(std::string("rank-select table: ") + why);
    }

    // What the lookups of block b's quotients share beyond the block's occupied bits: E_b and
    // the run ends from E_b on, read from E_b's block and the next.
    struct block_run_ends {
        size_t b = ~size_t{0};  // none yet (no block has this number)
        uint64_t first = 0;     // E_b
        // Bit i + 1 set when slot E_b + i ends a run, for the first 63 slots from E_b that E_b's
        // block and the next hold, and bit 0 set: the run of block b's d-th occupied quotient
        // ends at the slot of the (d + 1)-th set bit and begins after the d-th's (for d = 1, the
        // bit 0 put there, which stands for slot E_b - 1), with no branch on d = 1.
        uint64_t ends = 1;
        // The set bits of `ends`, or 0 where the fast path does not answer (E_b in the last
        // block, a shape whose run ends do not fit a byte load): its lookups with d + 1 set bits
        // or more take the general routine.
        unsigned count = 0;
    };

    template <typename Select>
    [[gnu::always_inline]] uint64_t count_group(std::span<uint64_t const> hashes) const noexcept {
        rank_select_group_lookup<Select> lookup(*this);
        uint64_t hits = 0;
        for (uint64_t const h : hashes) hits += lookup.contains(h);
        return hits;
    }
#if defined(__x86_64__)
    // pdep_select runs only where the CPU has BMI2 (rank_select::pdep_is_fast), so its group
    // loop may use BMI2's other instructions too: shifts by a count in any register, where
    // x86-64-v2 moves each count to cl first (-2% of the lookups' instructions).
    [[gnu::target("bmi2"), gnu::noinline]] uint64_t count_contained_bmi2(
        std::span<uint64_t const> hashes) const noexcept {
        return count_group<rank_select::pdep_select>(hashes);
    }
#endif

    // Block b's run ends (block_run_ends), read from E_b's block and the next.
    [[gnu::always_inline]] block_run_ends run_ends_of(size_t b) const noexcept {
        uint64_t const s = fields_.s;
        block_run_ends v;
        v.b = b;
        v.first = b * s + (block(b)[0] & rank_select::max_offset);
        // E_b's block by a multiplication, not a division, and without a branch on whether the
        // offset leaves block b (a coin toss at high fill).
        size_t const eb = block_of(v.first);
        // fast_blocks_ is 0 where the fields do not fit byte loads.
        if (eb + 1 >= fast_blocks_) [[unlikely]]
            return v;
        auto const from = static_cast<unsigned>(v.first - eb * s);  // 0 .. s - 1
        v.ends = ((runends_.get(block(eb)) >> from) << 1) | 1 |
                 ((runends_.get(block(eb + 1)) << 2) << (s - from - 1));
        v.count = static_cast<unsigned>(std::popcount(v.ends));
        return v;
    }

    // Whether one of the n remainders of slots k .. k + n - 1 of block blk (k + n <= s, n r <=
    // in_load_bits) is x: one unaligned load of the 8 bytes that end with the run's last bit's
    // byte (inside the block, as the run ends inside it, and holding the whole run), the run
    // shifted down to bit 0, and the lanes above it dropped by a shift of the lane test's
    // result. Loading from the run's first byte instead needs a clamp at the block's end (a
    // branch taken by the last few slots, often mispredicted) and a mask of n lanes.
    [[gnu::always_inline]] bool run_holds(uint64_t const* blk, unsigned k, unsigned n,
                                          uint64_t x) const noexcept {
        unsigned const from = fields_.remainder(k), bits = n * fields_.r;
        unsigned const end_byte = (from + bits + 7) / 8;  // 8 .. 64 (see the constructor)
        uint64_t word;
        std::memcpy(&word, reinterpret_cast<unsigned char const*>(blk) + (end_byte - 8),
                    sizeof word);
        word >>= from - 8 * (end_byte - 8);
        // remainder_lanes::any_equal's lane test, its lanes 0 .. n - 1 kept by the shift.
        uint64_t const diff = word ^ (x * lanes_.ones);
        uint64_t const nonzero = ((diff & lanes_.low) + lanes_.low) | diff;
        uint64_t const zero_lanes = ~(nonzero | lanes_.low) & lanes_.high;
        return (zero_lanes << (64 - bits)) != 0;
    }

    // A block's occupied bits from bit 0, with whatever follows them above bit s - 1: the lookups
    // read bit j < s and the bits below it only.
    [[gnu::always_inline]] uint64_t occupied_bits(uint64_t const* blk) const noexcept {
        if constexpr (rank_select::byte_loads) {
            static_assert(rank_select::offset_bits % 8 == 0);
            uint64_t word;
            std::memcpy(&word,
                        reinterpret_cast<unsigned char const*>(blk) + rank_select::offset_bits / 8,
                        sizeof word);
            return word;
        } else {
            return occupieds_.get(blk);
        }
    }

    // contains_fingerprint's lookup of (q, x) once q's bit j of block v.b's occupied bits
    // (occupieds) is known to be set.
    template <typename Select>
    [[gnu::always_inline]] bool contains_in(block_run_ends const& v, uint64_t occupieds, unsigned j,
                                            uint64_t q, uint64_t x) const noexcept {
        uint64_t const s = fields_.s;
        // d >= 1: the occupied quotients of this block up to and including q.
        auto const d = static_cast<unsigned>(std::popcount(occupieds << (63 - j)));
        if (d >= v.count) [[unlikely]]
            return contains_fingerprint_general(q, x);
        // Slot first + hi - 1 ends q's run; the run begins after the run end before it (bit lo
        // of ends, the sentinel for d = 1), and never before q.
        unsigned const hi = Select::select(v.ends, d + 1);
        auto const lo =
            static_cast<unsigned>(__builtin_clzll(v.ends & ((uint64_t{1} << hi) - 1))) ^ 63;
        uint64_t const end = v.first + hi - 1;
        uint64_t const start = std::max(q, v.first + lo);
        size_t const rb = block_of(start);
        auto const k = static_cast<unsigned>(start - rb * s);
        // n - 1 (huge when a damaged table gives start > end): the run fits one word of lanes,
        // inside block rb, or split between it and the next block.
        uint64_t const n_minus_1 = end - start;
        if (n_minus_1 < fast_lanes_) [[likely]] {
            auto const n = static_cast<unsigned>(n_minus_1 + 1);
            uint64_t const* const blk = block(rb);
            if (k + n <= s) [[likely]]
                return run_holds(blk, k, n, x);
            // The run ends in E_b's block or the next, so a run split between blocks starts in
            // E_b's block and block rb + 1 exists.
            auto const in_this = static_cast<unsigned>(s - k);
            return run_holds(blk, k, in_this, x) ||
                   run_holds(blk + rank_select::block_words, 0, n - in_this, x);
        }
        return contains_fingerprint_general(q, x);
    }

    // Blocks b .. b + Blocks - 1 (those that exist), b the block of h's canonical slot.
    template <size_t Blocks>
    [[gnu::always_inline]] void prefetch_blocks(uint64_t h) const noexcept {
        size_t const b = block_of(fingerprint(h) >> geometry_.remainder_bits);
        prefetch_for_read(block(b));
        if (b + Blocks - 1 < blocks_) [[likely]] {
            for (size_t i = 1; i < Blocks; ++i) prefetch_for_read(block(b + i));
        } else {
            for (size_t i = b + 1; i < blocks_; ++i) prefetch_for_read(block(i));
        }
    }
    uint64_t const* block(size_t b) const noexcept {
        return words_.data() + b * rank_select::block_words;
    }
    size_t block_of(uint64_t slot) const noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<size_t>((static_cast<u128>(slot) * block_magic_) >> 64);
    }
    // geometry_.fingerprint(h) with M precomputed (it is on every lookup's path twice).
    uint64_t fingerprint(uint64_t h) const noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<uint64_t>((static_cast<u128>(h) * space_) >> 64);
    }

    rank_select::shape shape_{};
    qf::geometry geometry_{};
    uint64_t space_ = 0, remainder_mask_ = 0, block_magic_ = 0;
    rank_select::fields fields_{};
    rank_select::remainder_lanes lanes_{};
    // The fast path's: its occupied and run-end fields, where it answers (E_b's block + 1 below
    // fast_blocks_) and the longest run it compares (fast_lanes_ remainders in one byte load).
    rank_select::byte_field occupieds_{}, runends_{};
    size_t fast_blocks_ = 0;
    unsigned fast_lanes_ = 0;
    std::span<uint64_t const> words_;
    uint64_t elements_ = 0;
    unsigned value_bits_ = 0;
    size_t blocks_ = 0;
};

// contains() over a group of hashes, as rank_select_table::count_contained makes them: on a copy
// of the table's view in the caller's frame, so that the fields every lookup reads (the block
// magic, the field places, the lane masks) stay in registers across the group (read through a
// pointer, they are reloaded for every lookup, since the caller's stores might alias them), and
// with the run ends of the blocks looked up decoded once per block: under minimizer-local hashing
// the k-mers of a super-k-mer (~6.5 of them) fall in one window of 32-64 slots, two or three
// blocks, so most lookups find their block's run ends already decoded. They are kept by block
// number modulo ways (a window's two or three consecutive blocks take different places), and
// decoded only for a lookup whose quotient is occupied (an absent k-mer's, often not, needs none).
// contains() and the fast path are forced inline (GCC 12 keeps them out of line here otherwise,
// and the copy then buys nothing), the general routine kept out (rare, and large).
template <typename Select = rank_select::broadword_select>
class rank_select_group_lookup {
  public:
    // Two, four and eight ways retire about the same instructions (bench/qf/LOOKUP_FILL.md).
    static constexpr size_t ways = 4;
    explicit rank_select_group_lookup(rank_select_table const& t) noexcept : t_(t) {}

    [[gnu::always_inline]] bool contains(uint64_t h) noexcept {
        uint64_t const fp = t_.fingerprint(h);
        uint64_t const q = fp >> t_.geometry_.remainder_bits;
        size_t const b = t_.block_of(q);
        auto const j = static_cast<unsigned>(q - b * t_.fields_.s);
        uint64_t const occupieds = t_.occupied_bits(t_.block(b));
        if (!((occupieds >> j) & 1)) return false;
        auto& v = decoded_[b % ways];
        if (v.b != b) v = t_.run_ends_of(b);
        return t_.template contains_in<Select>(v, occupieds, j, q, fp & t_.remainder_mask_);
    }

  private:
    rank_select_table const t_;
    std::array<rank_select_table::block_run_ends, ways> decoded_{};
};

}  // namespace qmer::qf
