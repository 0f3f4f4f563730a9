#pragma once
// A read-only view of a table in the rank-select layout (block_format.hpp describes the words):
// what `qmer query` answers a default index's level from, straight from the file's bytes. It
// depends on nothing of the concurrent filters, so a query compiles none of them.
//
// Thread safety: a rank_select_table is an immutable view; any number of threads may query it.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/filter/prefetch.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/block_format.hpp"
#include "core/qf/stored/select.hpp"

namespace qmer::qf {

// A read-only view of a table in the rank-select layout (block_format.hpp). The words must outlive
// it, and start on a 64-byte boundary for a lookup to read one line (a loaded index's sections do).
class rank_select_table {
  public:
    rank_select_table() = default;
    // Throws std::invalid_argument when the shape is impossible or the words do not match it.
    rank_select_table(rank_select::shape s, std::span<uint64_t const> words, uint64_t elements)
        : shape_(s), words_(words), elements_(elements) {
        s.validate();
        if (words.size() != s.words())
            throw std::invalid_argument("rank-select table: word count does not match the shape");
        if (elements > s.total_slots)
            throw std::invalid_argument("rank-select table: more elements than slots");
        geometry_ = geometry::with_slots(s.canonical_slots, s.remainder_bits);
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
        bool const fits =
            rank_select::byte_loads && rank_select::byte_field::fits(fields_.runends(), fields_.s);
        fast_blocks_ = fits ? blocks_ : 0;
        fast_lanes_ = std::min(lanes_.count, rank_select::in_load_bits / s.remainder_bits);
    }

    rank_select::shape const& shape() const noexcept { return shape_; }
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
        uint64_t const fp = fingerprint(h);
        return contains_fingerprint<Select>(fp >> geometry_.remainder_bits, fp & remainder_mask_);
    }

    // How many of `hashes` the table contains: contains() over a group, on a copy of this view
    // held in the caller's frame, so that the fields every lookup reads (the block magic, the
    // field places, the lane masks) stay in registers across the group; read through `this`,
    // they are reloaded for every lookup, since the caller's stores might alias them. That
    // needs contains() and contains_fingerprint() inlined into the loop (forced: GCC 12 keeps
    // them out of line here, and the copy then buys nothing), and the general routine out of
    // it (rare, and large). -4.5% of a default query's instructions (bench/qf/LOOKUP_FILL.md).
    template <typename Select = rank_select::broadword_select>
    uint64_t count_contained(std::span<uint64_t const> hashes) const noexcept {
        rank_select_table const view = *this;
        uint64_t hits = 0;
        for (uint64_t const h : hashes) hits += view.contains<Select>(h);
        return hits;
    }

    // The lookup of (q, x) as nearly every one goes: the run ends from E_b on, read from E_b's
    // block and the next as one 64-bit word, one select for the run's end, the highest run end
    // below it for the one before, and the run's remainders compared a word at a time (two where
    // the run crosses into the next block). Anything else (the d-th run end more than 64 slots
    // past E_b or beyond the second block, a run longer than a byte load's lanes, E_b in the
    // last block, a shape whose run ends do not fit a byte load, damaged words) goes to
    // contains_fingerprint_general, which answers every case; the two agree on every table
    // (tests/core/qf/stored/rank_select_test.cpp). Why not one routine: the query is bound by the
    // instructions a lookup retires, not by its misses (the table's lines are prefetched), and the
    // general loop's per-block steps, its division for offsets past the block (half the lookups at
    // 93% fill under minimizer-local hashing, where windows pile runs up) and its branch on whether
    // a run end precedes the selected one in the same word are what this path leaves out
    // (bench/qf/LOOKUP_FILL.md has the instruction counts).
    template <typename Select = rank_select::broadword_select>
    [[gnu::always_inline]] bool contains_fingerprint(uint64_t q, uint64_t x) const noexcept {
        uint64_t const s = fields_.s;
        size_t const b = block_of(q);
        auto const j = static_cast<unsigned>(q - b * s);
        uint64_t const* blk = block(b);
        uint64_t const occupieds = occupieds_.get(blk);
        if (!((occupieds >> j) & 1)) return false;
        // d >= 1: the occupied quotients of this block up to and including q.
        auto const d = static_cast<unsigned>(std::popcount(occupieds << (63 - j)));
        uint64_t const first = b * s + (blk[0] & rank_select::max_offset);  // E_b
        // E_b's block by a multiplication, not a division, and without a branch on whether the
        // offset leaves block b (a coin toss at high fill).
        size_t const eb = block_of(first);
        // fast_blocks_ is 0 where the fields do not fit byte loads.
        if (eb + 1 >= fast_blocks_) [[unlikely]]
            return contains_fingerprint_general(q, x);
        auto const from = static_cast<unsigned>(first - eb * s);  // 0 .. s - 1
        // Bit i: slot E_b + i ends a run, for the slots of blocks eb and eb + 1 that fit.
        uint64_t const ends = (runends_.get(block(eb)) >> from) |
                              ((runends_.get(block(eb + 1)) << 1) << (s - from - 1));
        if (static_cast<unsigned>(std::popcount(ends)) < d) [[unlikely]]
            return contains_fingerprint_general(q, x);
        unsigned const bit = Select::select(ends, d);
        uint64_t const end = first + bit;
        // The run begins after the previous run end (the highest one below `bit`: it exists when
        // d >= 2; `| 1` only keeps the count of leading zeros defined), and never before q.
        uint64_t const below = (ends & ((uint64_t{1} << bit) - 1)) | 1;
        uint64_t const after =
            d == 1 ? first : first + 64 - static_cast<unsigned>(__builtin_clzll(below));
        uint64_t const start = std::max(q, after);
        size_t const rb = block_of(start);
        auto const k = static_cast<unsigned>(start - rb * s);
        // n - 1 (huge when a damaged table gives start > end): the run fits one word of lanes,
        // inside block rb, or split between it and the next block.
        uint64_t const n_minus_1 = end - start;
        if (n_minus_1 < fast_lanes_) [[likely]] {
            uint64_t const here = rank_select::load_at_bit(block(rb), fields_.remainder(k));
            if (k + n_minus_1 < s) [[likely]]
                return lanes_.any_equal(here, x, static_cast<unsigned>(n_minus_1 + 1));
            // end <= the last slot of block eb + 1, so block rb + 1 exists.
            auto const in_this = static_cast<unsigned>(s - k);
            return lanes_.any_equal(here, x, in_this) ||
                   lanes_.any_equal(rank_select::load_at_bit(block(rb + 1), fields_.remainder(0)),
                                    x, static_cast<unsigned>(n_minus_1 + 1 - in_this));
        }
        return contains_fingerprint_general(q, x);
    }

    // Every lookup, the way the layout is defined (block_format.hpp): walks the run-end bits block
    // by block from E_b and the run's remainders one by one, bounded by max_scan_blocks and the
    // table's end. contains_fingerprint's fallback, and its reference in the tests.
    [[gnu::noinline]] bool contains_fingerprint_general(uint64_t q, uint64_t x) const noexcept {
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
        uint64_t end;
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
        uint64_t const start = d == 1 ? std::max(q, first) : std::max(q, previous_end + 1);
        if (start > end) return false;  // only in damaged words
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
        unsigned const s = fields_.s;
        auto bad = [](char const* why) {
            return std::invalid_argument(std::string("rank-select table: ") + why);
        };
        // The set bits of one field (occupieds or runends) of every block, in slot order.
        struct set_bits {
            rank_select_table const& t;
            unsigned field;
            size_t b = 0;
            uint64_t word = 0;
            bool loaded = false;
            // The next set bit's slot, or false at the end of the table.
            bool next(uint64_t& slot) {
                unsigned const s = t.fields_.s;
                if (!loaded) {
                    word = rank_select::get_bits(t.block(0), field, s);
                    loaded = true;
                }
                while (word == 0) {
                    if (++b >= t.blocks_) return false;
                    word = rank_select::get_bits(t.block(b), field, s);
                }
                slot = b * uint64_t{s} + static_cast<unsigned>(std::countr_zero(word));
                word &= word - 1;
                return true;
            }
        };
        set_bits occupied{*this, fields_.occupieds()}, run_end{*this, fields_.runends()};
        uint64_t seen = 0, last_fp = 0, q = 0, end = 0;
        bool any = false, have_end = run_end.next(end);
        uint64_t next_free = 0;  // the slot after the previous run's end
        while (occupied.next(q)) {
            if (q >= shape_.canonical_slots) throw bad("occupied overflow slot");
            uint64_t const start = std::max(q, next_free);
            // Run ends before this run's start belong to no quotient.
            if (!have_end) throw bad("a run never ends");
            if (end < start) throw bad("run end outside any run");
            if (end >= shape_.total_slots) throw bad("run past the last slot");
            if (block_of(end) - block_of(q) > rank_select::max_scan_blocks)
                throw bad("run too far from its slot");
            size_t b = block_of(start);
            auto j = static_cast<unsigned>(start - b * s);
            uint64_t const* blk = block(b);
            uint64_t const high = q << geometry_.remainder_bits;
            for (uint64_t slot = start;; ++slot) {
                uint64_t const fp =
                    high | rank_select::get_bits(blk, fields_.remainder(j), fields_.r);
                if (any && fp <= last_fp) throw bad("fingerprints out of order");
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
        if (have_end) throw bad("run end outside any run");
        if (seen != elements_) throw bad("element count does not match");
    }

  private:
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
    size_t blocks_ = 0;
};

}  // namespace qmer::qf
