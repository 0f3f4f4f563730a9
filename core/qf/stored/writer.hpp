#pragma once
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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/block_format.hpp"

namespace qmer::qf {

// Writes the rank-select layout from fingerprints in increasing order, in one pass: the one writer
// of the layout, for a built level saved from its concurrent table (write_rank_select,
// core/qf/concurrent/freeze_thaw.hpp) and for qmer index's sorted build, which writes its first
// level straight from its sorted fingerprints and never builds the concurrent table. Placement is
// the sequential layout's (core/qf/three_bit_layout.hpp, sorted_placement): each fingerprint at the
// first free slot at or after its quotient. Finished blocks are handed to emit(std::span<uint64_t
// const>) in order, a chunk at a time, so the writer holds a few chunks, not the table.
//
// Two steps, so that no fingerprint waits on what the one before it wrote. The placement loop
// stores a fingerprint's fields whole, each in its own array with one entry per slot over a window
// of blocks (its remainder at its slot, 0xff at its quotient's occupied byte, and at the last slot
// placed whether the previous run ended there): plain stores to distinct places. ORing each bit
// into the block's words instead made each fingerprint's read-modify-writes wait on the stores
// the previous one made to the same words (five remainders share a word at r = 11), which held
// the loop at three times the cost of placement alone (bench/qf/WRITER.md). Blocks below the
// current quotient's are final (later fingerprints write at or after their quotient, and every
// run of an earlier quotient has ended); when a slot falls past the window they are packed into the
// layout's lines, each word assembled in a register, and their offsets found from the run ends.
class rank_select_writer {
  public:
    // s: the table's shape (validated; throws std::invalid_argument); at most max_elements
    // fingerprints go in (a level that must stop where its filter would push the next one).
    explicit rank_select_writer(rank_select::shape s, uint64_t max_elements = ~uint64_t{0})
        : shape_(s), at_{s.block_slots(), s.remainder_bits}, max_elements_(max_elements) {
        s.validate();
        remainder_mask_ = (uint64_t{1} << s.remainder_bits) - 1;
        block_magic_ = ~uint64_t{0} / at_.s + 1;  // as rank_select_table::block_of
        plan_words();
        pack_remainders_ = fixed_packer(s.remainder_bits);
        resize_window(initial_window_blocks);
        out_.resize(flush_blocks * rank_select::block_words);
    }

    // Places fingerprints in increasing order (one equal to the previous is skipped, as
    // append_sorted does), emitting finished blocks. Stops before one that would land past the
    // last slot or exceed max_elements and returns how many it consumed; the rest is the caller's.
    // Throws std::invalid_argument on a fingerprint below the previous one or outside the table,
    // or a run that ends farther than the layout allows.
    //
    // The loop keeps its state in registers and has no data-dependent branch but the window's
    // end: whether a quotient is new is a coin toss at any fill, so a run end that does not apply
    // is stored as 0 rather than branched around. Nor does it count elements (a counter carried
    // through memory when registers run short is a store-to-load wait a fingerprint): it ends
    // where max_elements would be reached, moved on by each duplicate it skips. The sorted build's
    // last phase waits for this loop.
    template <typename Emit>
    size_t append(std::span<uint64_t const> fingerprints, Emit&& emit) {
        unsigned const r = at_.r;
        uint64_t const canonical = shape_.canonical_slots, total = shape_.total_slots;
        uint64_t const mask = remainder_mask_;
        uint64_t const n0 = elements_, room = max_elements_ - n0;
        size_t const size = fingerprints.size();
        size_t end = room < size ? static_cast<size_t>(room) : size, skipped = 0;
        uint64_t next = next_, last_fp = last_fp_;
        window w = view();
        // Fingerprint fp (quotient q) at slot pos; placed: whether a run was placed before it.
        auto place = [&](uint64_t fp, uint64_t q, uint64_t pos, uint64_t placed) {
            // A new quotient ends the previous one's run at the last slot placed. Each slot is
            // the last placed once, so this is its run-end byte's only store (slot 0 before the
            // first fingerprint, with 0).
            uint64_t const new_quotient = ((fp ^ last_fp) >> r != 0) | (1 - placed);
            w.ends[next - placed - w.first_slot] =
                static_cast<uint8_t>(0 - (new_quotient & placed));
            if (pos - w.first_slot >= w.slots) [[unlikely]] {
                slide(block_of(q), pos, emit);
                w = view();
            }
            w.occupied[q - w.first_slot] = 0xff;
            w.remainders[pos - w.first_slot] = fp & mask;
            next = pos + 1;
            last_fp = fp;
        };
        size_t i = 0;
        if (fresh_ && end != 0) {
            // The first fingerprint since the start or a resume: no run before it to end.
            uint64_t const fp = fingerprints[0], q = fp >> r;
            if (n0 != 0 && fp <= last_fp)
                throw bad("fingerprints out of order for the rank-select layout");
            if (q >= canonical) throw bad("a quotient past the canonical slots");
            uint64_t const pos = std::max(q, next);
            if (pos >= total) return 0;
            place(fp, q, pos, 0);
            fresh_ = false;
            i = 1;
        }
        for (; i < end; ++i) {
            uint64_t const fp = fingerprints[i];
            if (fp <= last_fp) [[unlikely]] {
                if (fp != last_fp)
                    throw bad("fingerprints out of order for the rank-select layout");
                ++skipped;
                if (room < size)
                    end = static_cast<size_t>(std::min<uint64_t>(size, room + skipped));
                continue;
            }
            uint64_t const q = fp >> r;
            if (q >= canonical) [[unlikely]]
                throw bad("a quotient past the canonical slots");
            uint64_t const pos = std::max(q, next);
            if (pos >= total) [[unlikely]]
                break;
            place(fp, q, pos, 1);
        }
        // Stopped at max_elements: duplicates of the last one are still taken.
        if (i == end && n0 + i - skipped != 0)
            for (; i < size && fingerprints[i] == last_fp; ++i) ++skipped;
        next_ = next;
        last_fp_ = last_fp;
        elements_ = n0 + i - skipped;
        return i;
    }

    // Ends the last run and emits every block not yet emitted. Returns the number of
    // fingerprints written.
    template <typename Emit>
    uint64_t finish(Emit&& emit) {
        end_segment(shape_.blocks(), emit);
        return elements_;
    }

    // Segments (a level written by several writers at once, split_level_writer.hpp). A clean cut
    // is a block boundary below which every run has ended: every fingerprint of a quotient below
    // the cut sits below it. Blocks on either side of a clean cut depend on nothing across it (no
    // run spills over, so the next block's offset is 0), so the words of [a, b) between two clean
    // cuts can be written by their own writer from their own fingerprints.
    //
    // Ends the last run and emits every block below `block`, which must be a clean cut at or
    // after every slot used (throws std::logic_error where a run would be left open).
    template <typename Emit>
    void end_segment(size_t block, Emit&& emit) {
        if (!fresh_) ends_[next_ - 1 - window_first_ * at_.s] = 0xff;
        if (next_ > block * at_.s)
            throw std::logic_error("rank_select_writer: a segment ends early");
        slide(block, 0, emit);
        flush(emit);
    }
    // After end_segment(a): the words of [a, block) were emitted by the caller, and hold `added`
    // fingerprints, the last `last_fp`; this writer goes on at `block`, a clean cut.
    void resume_at(size_t block, uint64_t last_fp, uint64_t added) {
        window_first_ = block;
        next_ = block * at_.s;
        last_fp_ = last_fp;
        elements_ += added;
        fresh_ = true;
    }
    // The state of a new writer whose first slot is block `block`'s (a clean cut): the writer of
    // one segment, reused from segment to segment.
    void restart_at(size_t block) {
        std::fill(remainders_.begin(), remainders_.end(), 0);
        std::fill(occupied_.begin(), occupied_.end(), 0);
        std::fill(ends_.begin(), ends_.end(), 0);
        window_first_ = block;
        next_ = block * at_.s;
        last_fp_ = 0;
        elements_ = 0;
        open_runs_ = 0;
        previous_occupied_ = false;
        out_blocks_ = 0;
        fresh_ = true;
    }

    uint64_t size() const noexcept { return elements_; }
    uint64_t max_elements() const noexcept { return max_elements_; }
    // The first slot no fingerprint placed so far is in.
    uint64_t next_slot() const noexcept { return next_; }
    rank_select::shape const& shape() const noexcept { return shape_; }

  private:
    static std::invalid_argument bad(char const* why) {
        return std::invalid_argument(std::string("quotient table: ") + why);
    }
    size_t block_of(uint64_t slot) const noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<size_t>((static_cast<u128>(slot) * block_magic_) >> 64);
    }

    // The fields of the window's slots, from first_slot (its first block's first), zero where
    // nothing was stored.
    struct window {
        uint64_t first_slot = 0, slots = 0;
        uint64_t* remainders = nullptr;
        uint8_t* occupied = nullptr;  // 0xff where the slot's quotient has a run
        uint8_t* ends = nullptr;      // 0xff where a run ends at the slot
    };
    window view() noexcept {
        return {window_first_ * at_.s, window_blocks_ * at_.s, remainders_.data(), occupied_.data(),
                ends_.data()};
    }

    // Packs the window's blocks below `upto` (every one when upto is past the window, then empty
    // blocks up to upto) and moves the window to start at `upto`'s block, large enough to hold
    // slot `pos` (ignored when below it). Every block below upto is final.
    template <typename Emit>
    void slide(size_t upto, uint64_t pos, Emit& emit) {
        unsigned const s = at_.s;
        size_t const packed = std::min(upto, window_first_ + window_blocks_) - window_first_;
        for (size_t b = 0; b < window_blocks_; ++b) {
            occupied_bits_[b] = byte_mask(occupied_.data() + b * s);
            end_bits_[b] = byte_mask(ends_.data() + b * s);
        }
        for (size_t b = 0; b < packed; ++b) {
            if (out_blocks_ == flush_blocks) flush(emit);
            pack(b, out_.data() + out_blocks_ * rank_select::block_words);
            ++out_blocks_;
        }
        if (upto > window_first_ + window_blocks_) {
            // Past the window nothing was stored, and every run ended inside it.
            if (open_runs_ != 0) throw std::logic_error("rank_select_writer: a run left open");
            for (size_t b = window_first_ + window_blocks_; b < upto; ++b) {
                if (out_blocks_ == flush_blocks) flush(emit);
                std::fill_n(out_.data() + out_blocks_ * rank_select::block_words,
                            rank_select::block_words, uint64_t{0});
                ++out_blocks_;
                previous_occupied_ = false;
            }
        }
        // The blocks at and after upto keep what was stored, at the window's start.
        size_t const kept = window_blocks_ - packed, kept_slots = kept * s, gone = packed * s;
        std::copy_n(remainders_.begin() + gone, kept_slots, remainders_.begin());
        std::copy_n(occupied_.begin() + gone, kept_slots, occupied_.begin());
        std::copy_n(ends_.begin() + gone, kept_slots, ends_.begin());
        std::fill(remainders_.begin() + kept_slots, remainders_.end(), 0);
        std::fill(occupied_.begin() + kept_slots, occupied_.end(), 0);
        std::fill(ends_.begin() + kept_slots, ends_.end(), 0);
        window_first_ = std::max(upto, window_first_);
        uint64_t const first_slot = window_first_ * s;
        if (pos >= first_slot && pos - first_slot >= window_blocks_ * s) {
            // A run longer than the window (upto is its quotient's block): refused where the
            // layout's lookups would not scan that far, else a larger window.
            if (block_of(pos) - upto > rank_select::max_scan_blocks) throw run_too_long();
            size_t blocks = window_blocks_;
            while (pos - first_slot >= blocks * s) blocks *= 2;
            resize_window(blocks);
        }
    }
    static std::invalid_argument run_too_long() {
        return bad("a run ends too far from its canonical slot for the rank-select layout");
    }

    void resize_window(size_t blocks) {
        size_t const slots = blocks * at_.s;
        window_blocks_ = blocks;
        remainders_.resize(slots, 0);
        // byte_mask reads a block's bytes 16 at a time, up to 64 from its first slot.
        occupied_.resize(slots + 64, 0);
        ends_.resize(slots + 64, 0);
        occupied_bits_.resize(blocks);
        end_bits_.resize(blocks);
    }

    // Bits j < s of the block's 0 / 0xff bytes from p.
    uint64_t byte_mask(uint8_t const* p) const noexcept {
        uint64_t bits = 0;
#if defined(__SSE2__)
        for (unsigned k = 0; k < 4; ++k) {
            __m128i const v = _mm_loadu_si128(reinterpret_cast<__m128i const*>(p + 16 * k));
            bits |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(v))} << (16 * k);
        }
#else
        for (unsigned j = 0; j < 64; ++j) bits |= uint64_t{p[j] >> 7} << j;
#endif
        return at_.s == 64 ? bits : bits & ((uint64_t{1} << at_.s) - 1);
    }

    // Where each word of a block takes its remainders from (worked out once per shape): the
    // slots [first, end) that begin in the word, the first at bit `shift`, and the one before
    // them when it begins in an earlier word and reaches into this one (straddles), by its bits
    // from `carry` on.
    struct word_plan {
        unsigned first = 0, end = 0, shift = 0;
        bool straddles = false;
        unsigned carry = 0;
    };
    void plan_words() {
        unsigned const s = at_.s, r = at_.r;
        for (unsigned k = 0; k < rank_select::block_words; ++k) {
            word_plan& p = plan_[k];
            unsigned const lo = 64 * k, hi = lo + 64;
            p.first = p.end = s;
            for (unsigned j = 0; j < s; ++j) {
                unsigned const bit = at_.remainder(j);
                if (bit >= hi) {
                    p.end = j;
                    break;
                }
                if (bit >= lo && p.first == s) {
                    p.first = j;
                    p.shift = bit - lo;
                }
                if (bit < lo && bit + r > lo) {
                    p.straddles = true;
                    p.carry = lo - bit;
                }
            }
        }
    }

    // Window block b as the layout's 8 words at `line`. Its offset: E_b is one past the end of
    // the open_runs_-th run ending at or after the block's first slot (the runs of quotients
    // below it that had not ended before it; runs are stored in quotient order).
    void pack(size_t b, uint64_t* line) {
        unsigned const s = at_.s, r = at_.r;
        uint64_t const occupieds = occupied_bits_[b], runends = end_bits_[b];
        uint64_t offset = 0;
        if (open_runs_ != 0) {
            uint64_t need = open_runs_;
            size_t c = b;
            for (;; ++c) {
                if (c == window_blocks_)
                    throw std::logic_error("rank_select_writer: a run end past the window");
                auto const here = static_cast<uint64_t>(std::popcount(end_bits_[c]));
                if (here >= need) break;
                need -= here;
            }
            uint64_t bits = end_bits_[c];
            for (; need > 1; --need) bits &= bits - 1;
            offset = (c - b) * s + static_cast<unsigned>(std::countr_zero(bits)) + 1;
            if (offset > rank_select::max_offset)
                throw bad("a block's offset exceeds the rank-select layout's 16 bits");
            // The last run of the block before ends here, past this block's first slot.
            if (previous_occupied_ && offset > rank_select::max_scan_blocks * s)
                throw run_too_long();
        }
        open_runs_ += static_cast<uint64_t>(std::popcount(occupieds)) -
                      static_cast<uint64_t>(std::popcount(runends));
        previous_occupied_ = occupieds != 0;
        // The offset, occupied and run-end fields: below bit 16 + 2 * 64, in the first 3 words.
        unsigned const ends_at = at_.runends(), ends_shift = ends_at % 64;
        uint64_t head[3] = {offset | occupieds << rank_select::offset_bits,
                            occupieds >> (64 - rank_select::offset_bits), 0};
        head[ends_at / 64] |= runends << ends_shift;
        head[ends_at / 64 + 1] |= (runends >> 1) >> (63 - ends_shift);
        uint64_t const* rem = remainders_.data() + b * s;
        if (pack_remainders_ != nullptr) {
            line[0] = head[0], line[1] = head[1], line[2] = head[2];
            std::fill_n(line + 3, rank_select::block_words - 3, uint64_t{0});
            pack_remainders_(rem, line);
            return;
        }
        for (unsigned k = 0; k < rank_select::block_words; ++k) {
            word_plan const& p = plan_[k];
            uint64_t word = k < 3 ? head[k] : 0;
            if (p.straddles) word |= rem[p.first - 1] >> p.carry;
            unsigned shift = p.shift;
            for (unsigned j = p.first; j < p.end; ++j, shift += r) word |= rem[j] << shift;
            line[k] = word;
        }
    }

    // The remainders ORed into a block's words for a remainder width known when compiling: every
    // slot's word and shift are constants, so the words stay in registers and nothing branches
    // (the loop over a shape's plan above spent most of the packing on its loop control). The
    // widths of the usual --fpr values (r = 11 at 0.001) have one; others take the loop.
    static constexpr unsigned fixed_widths_from = 6, fixed_widths_to = 16;
    using remainder_packer = void (*)(uint64_t const*, uint64_t*) noexcept;
    template <unsigned R>
    static void pack_fixed(uint64_t const* rem, uint64_t* line) noexcept {
        constexpr unsigned S = rank_select::slots_per_block(R);
        constexpr unsigned first = rank_select::offset_bits + 2 * S;
        uint64_t w[rank_select::block_words + 1] = {};
        auto place = [&]<unsigned Bit>(uint64_t v) {
            w[Bit / 64] |= v << (Bit % 64);
            if constexpr (Bit % 64 + R > 64) w[Bit / 64 + 1] |= v >> (64 - Bit % 64);
        };
        [&]<size_t... J>(std::index_sequence<J...>) {
            (place.template operator()<first + static_cast<unsigned>(J) * R>(rem[J]), ...);
        }
        (std::make_index_sequence<S>{});
        for (unsigned k = 0; k < rank_select::block_words; ++k) line[k] |= w[k];
    }
    static remainder_packer fixed_packer(unsigned r) noexcept {
        return [r]<unsigned... R>(std::integer_sequence<unsigned, R...>)->remainder_packer {
            remainder_packer chosen = nullptr;
            ((r == fixed_widths_from + R ? chosen = &pack_fixed<fixed_widths_from + R> : chosen),
             ...);
            return chosen;
        }
        (std::make_integer_sequence<unsigned, fixed_widths_to - fixed_widths_from + 1>{});
    }

    template <typename Emit>
    void flush(Emit& emit) {
        if (out_blocks_ == 0) return;
        emit(std::span<uint64_t const>(out_.data(), out_blocks_ * rank_select::block_words));
        out_blocks_ = 0;
    }

    static constexpr size_t flush_blocks = 8192;         // 512 KiB of finished blocks per emit
    static constexpr size_t initial_window_blocks = 64;  // ~25 KiB of slot fields at r = 11

    rank_select::shape shape_;
    rank_select::fields at_;
    uint64_t max_elements_;
    uint64_t remainder_mask_ = 0, block_magic_ = 0;
    word_plan plan_[rank_select::block_words]{};
    remainder_packer pack_remainders_ = nullptr;   // for a fixed width, else plan_'s loop
    size_t window_first_ = 0, window_blocks_ = 0;  // the window's blocks, from block window_first_
    std::vector<uint64_t> remainders_;
    std::vector<uint8_t> occupied_, ends_;
    std::vector<uint64_t> occupied_bits_, end_bits_;  // per window block, while packing
    uint64_t open_runs_ = 0;          // runs of quotients below the next block to pack, open there
    bool previous_occupied_ = false;  // whether the block packed last had an occupied quotient
    std::vector<uint64_t> out_;       // packed blocks not yet emitted
    size_t out_blocks_ = 0;
    uint64_t next_ = 0;  // the first free slot
    uint64_t last_fp_ = 0;
    uint64_t elements_ = 0;
    bool fresh_ = true;  // nothing placed since the start or the last resume_at
};

}  // namespace qmer::qf
