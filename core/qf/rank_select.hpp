#pragma once
// The rank-and-select query layout of a quotient filter table: what a finished level of the
// default filter is stored as in the index file and queried as, straight from the mapped file
// (DESIGN.md, "Index file" and "Performance rules"). The design is that of the rank-and-select
// quotient filter (Pandey, Bender, Johnson, Patro, "A General-Purpose Counting Filter: Making Every
// Bit Count", SIGMOD 2017, section 3), with the fingerprint mapping of core/qf/fingerprint.hpp.
//
// Why a second layout: the concurrent filters (core/qf/locally_locked.hpp, seed 001's Algorithm 1)
// mark each slot with occupied/continuation/shifted bits, so a query must walk back to its cluster
// start to learn which run is its quotient's, and that walk grows with the fill (at 95% fill,
// clusters are hundreds of slots long). Here each block of 64 slots carries an offset, so a query
// finds its run from its own block: one rank and one select, whatever the fill. A table nobody
// writes any more (a level of a built index) needs none of the concurrent layout's lock states,
// so it is stored in this form, 64 slots at r + 3 bits each, every bit used (r + 3 bits per slot
// against floor(64 / (r + 3)) slots per 64-bit word in the concurrent layout).
//
// Slot positions are the same as in the sequential layout (core/qf/sequential.hpp): fingerprints
// in increasing order, each at the first free slot at or after its quotient, m canonical slots
// followed by the overflow slots, no wrap-around. Block b (slots 64b .. 64b + 63) is 3 + r words:
//   word 0   offset: E_b - 64b, or 0 when E_b <= 64b, where E_b is the first slot after the runs of
//            every quotient below 64b (the slots before E_b belong to earlier blocks' quotients)
//   word 1   occupieds: bit j set when quotient 64b + j has a run
//   word 2   runends: bit j set when slot 64b + j holds the last fingerprint of a run
//   words 3.. the 64 remainders, r bits each, bit-packed from the low end (slot j at bit j * r)
//
// Lookup of fingerprint (q, x), q in block b: q must be occupied; with d = the occupied quotients
// of block b up to q, the run of q ends at the d-th runend at or after E_b (runs are stored in
// quotient order, and those of quotients below 64b end before E_b) and begins after the
// (d - 1)-th, or at max(q, E_b) when d = 1 (a run never begins before its quotient). Two loads
// of block b's header and, unless the run spills into the next block, one line of remainders.
//
// Damaged or crafted words never hang or crash a lookup: every scan is bounded by
// max_scan_blocks (a run ends at most that many blocks after its quotient's block; freeze()
// refuses a table where one does not, which uniform fingerprints at any fill below 1 never come
// near) and by the table's end; a bad word can only give a wrong answer, which the index file's
// checksum catches.
//
// Thread safety: a rank_select_table is an immutable view; any number of threads may query it.

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/filter/prefetch.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/locally_locked.hpp"
#include "core/qf/sequential.hpp"

namespace qmer::qf {

namespace rank_select {

inline constexpr unsigned block_slots = 64;
inline constexpr unsigned header_words = 3;  // offset, occupieds, runends
// A run ends at most this many blocks after its quotient's block (see top): 2^18 slots.
inline constexpr uint64_t max_scan_blocks = 4096;
inline constexpr uint64_t layout_tag = 0x31534b4c4e415251ULL;  // "QRANKLS1" little endian

// What a table's words describe: m canonical slots, total slots (with the overflow area) and r
// remainder bits.
struct shape {
    uint64_t canonical_slots = 0;
    uint64_t total_slots = 0;
    unsigned remainder_bits = 0;

    constexpr size_t blocks() const noexcept {
        return static_cast<size_t>((total_slots + block_slots - 1) / block_slots);
    }
    constexpr size_t block_words() const noexcept { return header_words + remainder_bits; }
    constexpr size_t words() const noexcept { return blocks() * block_words(); }

    // r in 1..61 (a fingerprint of at most 63 bits with q >= 1), canonical slots below 2^40 and no
    // more than the total, which holds at most 2^41 slots. Throws std::invalid_argument.
    void validate() const {
        if (remainder_bits < 1 || remainder_bits > 61)
            throw std::invalid_argument("rank-select table: remainder bits must be in 1..61");
        if (canonical_slots < 1 || canonical_slots > (uint64_t{1} << 40))
            throw std::invalid_argument("rank-select table: bad canonical slot count");
        if (total_slots < canonical_slots || total_slots > (uint64_t{1} << 41))
            throw std::invalid_argument("rank-select table: bad total slot count");
    }
};

// The remainder of slot j in the remainder words of a block (r bits at bit j * r).
inline uint64_t remainder_at(uint64_t const* area, unsigned j, unsigned r) noexcept {
    unsigned const bit = j * r;
    unsigned const w = bit / 64, shift = bit % 64;
    uint64_t v = area[w] >> shift;
    if (shift + r > 64) v |= area[w + 1] << (64 - shift);
    return r == 64 ? v : v & ((uint64_t{1} << r) - 1);
}
inline void put_remainder(uint64_t* area, unsigned j, unsigned r, uint64_t value) noexcept {
    unsigned const bit = j * r;
    unsigned const w = bit / 64, shift = bit % 64;
    area[w] |= value << shift;
    if (shift + r > 64) area[w + 1] |= value >> (64 - shift);
}

// select_bit(x, n): the position of the n-th set bit of x (n >= 1, x has at least n set bits),
// in constant time without BMI2's pdep (x86-64-v2 has none): the bytes' popcounts summed into
// running totals by one multiplication pick the byte, a table the bit within it (Vigna, "Broadword
// Implementation of Rank/Select Queries", WEA 2008, section 5). A bit-at-a-time loop cost up to 64
// dependent steps, more than the cache miss the lookup waits for.
namespace detail {
struct select_in_byte_table {
    uint8_t at[8][256]{};
    constexpr select_in_byte_table() {
        for (unsigned b = 0; b < 256; ++b) {
            unsigned rank = 0;
            for (unsigned bit = 0; bit < 8; ++bit)
                if ((b >> bit) & 1) at[rank++][b] = static_cast<uint8_t>(bit);
        }
    }
};
inline constexpr select_in_byte_table select_in_byte{};
}  // namespace detail

inline unsigned select_bit(uint64_t x, unsigned n) noexcept {
    constexpr uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t s = x - ((x >> 1) & 0x5555555555555555ULL);
    s = (s & 0x3333333333333333ULL) + ((s >> 2) & 0x3333333333333333ULL);
    s = (s + (s >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    uint64_t const running = s * ones;  // byte i: set bits in bytes 0..i (at most 64: no carry)
    uint64_t const k = n - 1;           // 0-based rank
    // Byte i's high bit is set where running_i <= k: those bytes lie wholly before the bit.
    uint64_t const before = ((k * ones) | highs) - running;
    auto const byte = static_cast<unsigned>(std::popcount(before & highs));
    unsigned const place = byte * 8;
    unsigned const rank_before = place == 0 ? 0 : static_cast<unsigned>((running >> (place - 8)) & 0xff);
    return place + detail::select_in_byte.at[k - rank_before][(x >> place) & 0xff];
}

}  // namespace rank_select

// A read-only view of a table in the rank-select layout (see top). The words must outlive it.
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
        block_words_ = s.block_words();
        blocks_ = s.blocks();
    }

    rank_select::shape const& shape() const noexcept { return shape_; }
    qf::geometry const& geometry() const noexcept { return geometry_; }
    std::span<uint64_t const> words() const noexcept { return words_; }
    size_t size() const noexcept { return elements_; }
    size_t capacity() const noexcept { return static_cast<size_t>(shape_.canonical_slots); }
    size_t memory_bytes() const noexcept { return words_.size_bytes(); }
    // n stored fingerprints out of M = m 2^r (seed 001, section 2).
    double false_positive_rate() const noexcept {
        return -std::expm1(static_cast<double>(elements_) *
                           std::log1p(-1.0 / static_cast<double>(geometry_.fingerprint_space())));
    }

    // The cache lines a lookup of h reads first: its block's header and the line holding its
    // canonical slot's remainder (usually where its run is).
    void prefetch(uint64_t h) const noexcept {
        uint64_t const q = fingerprint(h) >> geometry_.remainder_bits;
        uint64_t const* blk = block(q / rank_select::block_slots);
        prefetch_for_read(blk);
        unsigned const bit = static_cast<unsigned>(q % rank_select::block_slots) *
                             geometry_.remainder_bits;
        prefetch_for_read(blk + rank_select::header_words + bit / 64);
    }

    bool contains(uint64_t h) const noexcept {
        uint64_t const fp = fingerprint(h);
        return contains_fingerprint(fp >> geometry_.remainder_bits, fp & remainder_mask_);
    }

    bool contains_fingerprint(uint64_t q, uint64_t x) const noexcept {
        size_t const b = static_cast<size_t>(q / rank_select::block_slots);
        unsigned const j = static_cast<unsigned>(q % rank_select::block_slots);
        uint64_t const* blk = block(b);
        uint64_t const occupieds = blk[1];
        if (!((occupieds >> j) & 1)) return false;
        // d >= 1: the occupied quotients of this block up to and including q.
        auto const d = static_cast<unsigned>(std::popcount(occupieds & (~uint64_t{0} >> (63 - j))));
        uint64_t const offset = blk[0];
        if (offset > rank_select::max_scan_blocks * rank_select::block_slots) return false;
        uint64_t const first = b * uint64_t{rank_select::block_slots} + offset;  // E_b
        // Select the d-th runend at or after E_b, remembering the one before it.
        size_t x_blk = static_cast<size_t>(first / rank_select::block_slots);
        if (x_blk >= blocks_) return false;
        uint64_t bits = block(x_blk)[2] & (~uint64_t{0} << (first % rank_select::block_slots));
        unsigned remaining = d;
        uint64_t previous_end = 0;  // valid when d >= 2
        uint64_t end;
        for (size_t steps = 0;;) {
            auto const c = static_cast<unsigned>(std::popcount(bits));
            if (c >= remaining) {
                uint64_t const base = x_blk * uint64_t{rank_select::block_slots};
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
                previous_end = x_blk * uint64_t{rank_select::block_slots} + 63 -
                               static_cast<unsigned>(std::countl_zero(bits));
            remaining -= c;
            if (++x_blk >= blocks_ || ++steps > rank_select::max_scan_blocks) return false;
            bits = block(x_blk)[2];
        }
        uint64_t start = d == 1 ? std::max(q, first) : std::max(q, previous_end + 1);
        // The run is sorted: stop at the first remainder >= x.
        unsigned const r = geometry_.remainder_bits;
        for (; start <= end; ++start) {
            uint64_t const* area = block(static_cast<size_t>(start / rank_select::block_slots)) +
                                   rank_select::header_words;
            uint64_t const v = rank_select::remainder_at(
                area, static_cast<unsigned>(start % rank_select::block_slots), r);
            if (v >= x) return v == x;
        }
        return false;
    }

    // Calls f(fingerprint) for every stored fingerprint in increasing order. Throws
    // std::invalid_argument if the words do not describe a table in this layout (an element
    // outside any run, a run without its quotient, a run out of order or past the bound).
    template <typename F>
    void for_each_fingerprint(F&& f) const {
        std::deque<uint64_t> open;  // occupied quotients whose run has not ended, in order
        unsigned const r = geometry_.remainder_bits;
        uint64_t last_fp = 0;
        bool any = false;
        uint64_t seen = 0;
        for (size_t b = 0; b < blocks_; ++b) {
            uint64_t const* blk = block(b);
            for (unsigned j = 0; j < rank_select::block_slots; ++j) {
                uint64_t const i = b * uint64_t{rank_select::block_slots} + j;
                bool const occupied = (blk[1] >> j) & 1, runend = (blk[2] >> j) & 1;
                if (occupied) {
                    if (i >= shape_.canonical_slots)
                        throw std::invalid_argument("rank-select table: occupied overflow slot");
                    open.push_back(i);
                }
                if (open.empty()) {
                    if (runend)
                        throw std::invalid_argument("rank-select table: run end outside any run");
                    continue;
                }
                if (i >= shape_.total_slots)
                    throw std::invalid_argument("rank-select table: run past the last slot");
                uint64_t const q = open.front();
                uint64_t const fp = geometry_.fingerprint_of(
                    q, rank_select::remainder_at(blk + rank_select::header_words, j, r));
                if (any && fp <= last_fp)
                    throw std::invalid_argument("rank-select table: fingerprints out of order");
                if (b - q / rank_select::block_slots > rank_select::max_scan_blocks)
                    throw std::invalid_argument("rank-select table: run too far from its slot");
                any = true;
                last_fp = fp;
                ++seen;
                f(fp);
                if (runend) open.pop_front();
            }
        }
        if (!open.empty()) throw std::invalid_argument("rank-select table: a run never ends");
        if (seen != elements_)
            throw std::invalid_argument("rank-select table: element count does not match");
    }

  private:
    uint64_t const* block(size_t b) const noexcept { return words_.data() + b * block_words_; }
    // geometry_.fingerprint(h) with M precomputed (it is on every lookup's path twice).
    uint64_t fingerprint(uint64_t h) const noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<uint64_t>((static_cast<u128>(h) * space_) >> 64);
    }

    rank_select::shape shape_{};
    qf::geometry geometry_{};
    uint64_t space_ = 0, remainder_mask_ = 0;
    std::span<uint64_t const> words_;
    uint64_t elements_ = 0;
    size_t block_words_ = 0, blocks_ = 0;
};

// Writes a table of the sequential 3-status-bit layout (core/qf/sequential.hpp; read and write
// locks read as the cluster start or empty slot they stand for) in the rank-select layout, in one
// pass, handing finished words to emit(std::span<uint64_t const>) in order, a chunk at a time.
// next_slot() returns the value (remainder << 3 | status) of slot 0, 1, 2, ... in turn; it is
// called exactly total_slots times. Returns the
// number of fingerprints written. Throws std::invalid_argument if the slots are not a consistent
// table or a run ends more than max_scan_blocks past its quotient's block.
template <typename SlotAt, typename Emit>
uint64_t write_rank_select(rank_select::shape const& s, SlotAt&& next_slot, Emit&& emit) {
    s.validate();
    size_t const bw = s.block_words(), blocks = s.blocks();
    unsigned const r = s.remainder_bits;
    // Blocks from `first_kept` on, not yet emitted: a block waits until its offset is known.
    std::vector<uint64_t> kept;
    size_t first_kept = 0;
    std::deque<uint64_t> open;                              // quotients whose run is open
    std::deque<std::pair<size_t, uint64_t>> waiting;        // (block, quotient its E_b ends)
    constexpr size_t flush_blocks = 8192;
    auto flush = [&](size_t upto) {  // emits blocks [first_kept, upto)
        if (upto <= first_kept) return;
        size_t const n = (upto - first_kept) * bw;
        emit(std::span<uint64_t const>(kept.data(), n));
        kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(n));
        first_kept = upto;
    };
    auto bad = [](char const* why) {
        return std::invalid_argument(std::string("quotient table: ") + why);
    };
    uint64_t elements = 0;
    uint64_t next = s.total_slots > 0 ? ll::normalized(next_slot()) : 0;
    for (uint64_t i = 0; i < uint64_t{blocks} * rank_select::block_slots; ++i) {
        size_t const b = static_cast<size_t>(i / rank_select::block_slots);
        unsigned const j = static_cast<unsigned>(i % rank_select::block_slots);
        if (j == 0) {
            if (b - first_kept >= flush_blocks)
                flush(waiting.empty() ? b : std::min(b, waiting.front().first));
            kept.resize(kept.size() + bw, 0);
            if (!open.empty()) waiting.emplace_back(b, open.back());
        }
        uint64_t* blk = kept.data() + (b - first_kept) * bw;
        uint64_t const v = next;
        next = i + 1 < s.total_slots ? ll::normalized(next_slot()) : 0;
        if (i >= s.total_slots) continue;
        if (v & status::occupied) {
            if (i >= s.canonical_slots) throw bad("occupied bit on an overflow slot");
            blk[1] |= uint64_t{1} << j;
            open.push_back(i);
        }
        if ((v & status::mask) == status::empty) {
            if (!open.empty()) throw bad("an empty slot inside a run");
            continue;
        }
        if (open.empty()) throw bad("an element outside any run");
        rank_select::put_remainder(blk + rank_select::header_words, j, r, v >> 3);
        ++elements;
        bool const run_ends =
            (next & status::mask) == status::empty || !(next & status::continuation);
        if (!run_ends) continue;
        blk[2] |= uint64_t{1} << j;
        uint64_t const q = open.front();
        open.pop_front();
        if (b - q / rank_select::block_slots > rank_select::max_scan_blocks)
            throw bad("a run ends too far from its canonical slot for the rank-select layout");
        while (!waiting.empty() && waiting.front().second == q) {
            size_t const wb = waiting.front().first;
            kept[(wb - first_kept) * bw] = i + 1 - wb * uint64_t{rank_select::block_slots};
            waiting.pop_front();
        }
    }
    if (!open.empty() || !waiting.empty()) throw bad("a run never ends");
    flush(blocks);
    return elements;
}

// The same table in the sequential layout again, as sorted fingerprints: calls
// sink(std::span<uint64_t const>) with consecutive chunks of the fingerprints of t in increasing
// order (for locally_locked_filter::append_sorted, which rebuilds the concurrent table).
template <typename Sink>
void for_each_fingerprint_chunk(rank_select_table const& t, Sink&& sink) {
    constexpr size_t chunk = size_t{1} << 16;
    std::vector<uint64_t> fps;
    fps.reserve(chunk);
    t.for_each_fingerprint([&](uint64_t fp) {
        fps.push_back(fp);
        if (fps.size() == chunk) {
            sink(std::span<uint64_t const>(fps));
            fps.clear();
        }
    });
    if (!fps.empty()) sink(std::span<uint64_t const>(fps));
}

// A quiescent locally locked filter's current table in the rank-select layout (its shape, and
// its words through emit as in write_rank_select). The slot values are read a group at a time.
inline rank_select::shape rank_select_shape_of(locally_locked_filter const& f) {
    return {f.geometry().canonical_slots(), f.total_slots(), f.geometry().remainder_bits};
}
template <typename Emit>
uint64_t write_rank_select(locally_locked_filter const& f, Emit&& emit) {
    auto const groups = f.groups();
    unsigned const bits = f.geometry().remainder_bits + 3;
    unsigned const per_group = 64 / bits;
    uint64_t const mask = grouped_slots::slot_mask(bits);
    size_t g = 0;
    unsigned k = per_group;  // load group 0 at the first call
    uint64_t gv = 0;
    auto next_slot = [&]() -> uint64_t {
        if (k == per_group) {
            // Quiescent: nothing writes the table, relaxed is enough.
            gv = groups[g++].load(std::memory_order_relaxed);
            k = 0;
        }
        return (gv >> (bits * k++)) & mask;
    };
    return write_rank_select(rank_select_shape_of(f), next_slot, emit);
}

// The concurrent filter again from a rank-select table (an index opened to append to): an empty
// table of the same geometry and slot count, refilled by append_sorted in one pass. Throws
// std::invalid_argument if the words are not a consistent table of that shape.
inline std::unique_ptr<locally_locked_filter> thaw_rank_select(rank_select_table const& t,
                                                               growing_policy policy) {
    auto f = std::make_unique<locally_locked_filter>(t.geometry(),
                                                     static_cast<size_t>(t.shape().total_slots),
                                                     policy);
    locally_locked_filter::sorted_append_state st;
    for_each_fingerprint_chunk(t, [&](std::span<uint64_t const> fps) {
        size_t const took = f->append_sorted(fps, st);
        if (took != fps.size())
            throw std::invalid_argument("rank-select table: a run runs past the last slot");
    });
    if (f->size() != t.size())
        throw std::invalid_argument("rank-select table: element count does not match");
    return f;
}

}  // namespace qmer::qf
