#pragma once
// The rank-and-select query layout of a quotient filter table: what a finished level of the
// default filter is stored as in the index file and queried as, straight from the file's bytes
// (ARCHITECTURE.md, "Index file" and "Performance rules"). The design is that of the
// rank-and-select quotient filter (Pandey, Bender, Johnson, Patro, "A General-Purpose Counting
// Filter: Making Every Bit Count", SIGMOD 2017, section 3), with the fingerprint mapping of
// core/qf/fingerprint.hpp, and with each block sized to one cache line.
//
// Why a second layout: the concurrent filters (core/qf/locally_locked.hpp, Algorithm 1 of Maier,
// Sanders, Williger, SEA 2020) mark each slot with occupied/continuation/shifted bits, so a query
// must walk back to its cluster start to learn which run is its quotient's, and that walk grows
// with the fill (at 95% fill, clusters are hundreds of slots long). Here each block carries an
// offset, so a query finds its run from its own block: one rank and one select, whatever the fill.
// A table nobody writes any more (a level of a built index) needs none of the concurrent layout's
// lock states, so it is stored in this form.
//
// Slot positions are the same as in the sequential layout (core/qf/layout.hpp): fingerprints
// in increasing order, each at the first free slot at or after its quotient, m canonical slots
// followed by the overflow slots, no wrap-around. Slots are grouped into blocks of
// s = min(64, floor(496 / (r + 2))) slots (38 at r = 11), and block b (slots sb .. sb + s - 1) is
// one 64-byte line, 8 words read as one 512-bit little-endian integer:
//   bits [0, 16)              offset: E_b - sb, or 0 when E_b <= sb, where E_b is the first slot
//                             after the runs of every quotient below sb (the slots before E_b
//                             belong to earlier blocks' quotients)
//   bits [16, 16 + s)         occupieds: bit j set when quotient sb + j has a run
//   bits [16 + s, 16 + 2s)    runends: bit j set when slot sb + j holds the last fingerprint of a
//   run bits [16 + 2s + j r, ...) the remainder of slot sb + j, r bits
// (r + 2) s + 16 <= 512 bits: 13.5 bits per slot at r = 11 (against 16 in the concurrent layout's
// 64-bit groups of 4 slots of 14 bits).
//
// Lookup of fingerprint (q, x), q in block b: q must be occupied; with d = the occupied quotients
// of block b up to q, the run of q ends at the d-th runend at or after E_b (runs are stored in
// quotient order, and those of quotients below sb end before E_b) and begins after the
// (d - 1)-th, or at max(q, E_b) when d = 1 (a run never begins before its quotient). A lookup
// reads the one line of block b unless the runs before its own spill it into the next block.
//
// Damaged or crafted words never hang or crash a lookup: every scan is bounded by
// max_scan_blocks (a run ends at most that many blocks after its quotient's block) and by the
// table's end, and every read stays inside the words; a bad word can only give a wrong answer,
// which the index file's checksum catches. The writer refuses a table whose offsets need more
// than 16 bits or whose runs end farther away, which uniform fingerprints at any fill below 1 never
// come near (at 95% fill, offsets are tens of slots).
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

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/filter/prefetch.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/layout.hpp"
#include "core/qf/locally_locked.hpp"

namespace qmer::qf {

namespace rank_select {

inline constexpr unsigned block_words = 8;  // one 64-byte cache line
inline constexpr unsigned offset_bits = 16;
inline constexpr uint64_t max_offset = (uint64_t{1} << offset_bits) - 1;
// A run ends at most this many blocks after its quotient's block (see top).
inline constexpr uint64_t max_scan_blocks = 4096;
inline constexpr uint64_t layout_tag = 0x32534b4c4e415251ULL;  // "QRANKLS2" little endian

// Slots per block for r remainder bits: as many as fit a line beside the offset, at most 64 (the
// occupied and runend fields are read as one 64-bit word each).
constexpr unsigned slots_per_block(unsigned r) noexcept {
    unsigned const fit = (block_words * 64 - offset_bits) / (r + 2);
    return fit < 64 ? fit : 64;
}

// What a table's words describe: m canonical slots, total slots (with the overflow area) and r
// remainder bits.
struct shape {
    uint64_t canonical_slots = 0;
    uint64_t total_slots = 0;
    unsigned remainder_bits = 0;

    constexpr unsigned block_slots() const noexcept { return slots_per_block(remainder_bits); }
    constexpr size_t blocks() const noexcept {
        return static_cast<size_t>((total_slots + block_slots() - 1) / block_slots());
    }
    constexpr size_t words() const noexcept { return blocks() * block_words; }

    // r in 1..61 (a fingerprint of at most 63 bits with q >= 1), canonical slots at most 2^40
    // and no more than the total, which holds at most 2^41 slots. Throws std::invalid_argument.
    void validate() const {
        if (remainder_bits < 1 || remainder_bits > max_remainder_bits)
            throw std::invalid_argument("rank-select table: remainder bits must be in 1.." +
                                        std::to_string(max_remainder_bits));
        if (canonical_slots < 1 || canonical_slots > (uint64_t{1} << max_quotient_bits))
            throw std::invalid_argument("rank-select table: bad canonical slot count");
        if (total_slots < canonical_slots || total_slots > (uint64_t{1} << 41))
            throw std::invalid_argument("rank-select table: bad total slot count");
    }
};

// Bit positions of a block's fields (see top).
struct fields {
    unsigned s = 0, r = 0;
    unsigned occupieds() const noexcept { return offset_bits; }
    unsigned runends() const noexcept { return offset_bits + s; }
    unsigned remainder(unsigned j) const noexcept { return offset_bits + 2 * s + j * r; }
};

// `len` (1..64) bits at bit `pos` of a block; the field lies inside the block's 512 bits.
// Branch-free: whether a field straddles two words is a coin toss per lookup (a remainder of 11
// bits at any slot), and a mispredicted branch costs more than reading the next word always. The
// next word is taken only inside the block (a field that does not straddle ignores it), and
// shifting it by (64 - shift) is done as two shifts so that shift = 0 is defined.
//
// field_at is that field's place (word, shift, mask), worked out once where a field is read in
// many blocks (byte_field below), which keeps get_bits' divisions and its test for a 64-bit field
// off every lookup's path.
struct field_at {
    unsigned word = 0, next = 0, shift = 0;
    uint64_t mask = 0;
    constexpr field_at() = default;
    constexpr field_at(unsigned pos, unsigned len) noexcept
        : word(pos / 64),
          next(pos / 64 + 1 < block_words ? pos / 64 + 1 : pos / 64),
          shift(pos % 64),
          mask(len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1) {}
    uint64_t get(uint64_t const* blk) const noexcept {
        return ((blk[word] >> shift) | ((blk[next] << 1) << (63 - shift))) & mask;
    }
};
inline uint64_t get_bits(uint64_t const* blk, unsigned pos, unsigned len) noexcept {
    return field_at(pos, len).get(blk);
}

// The lookup's fast path reads a field with one unaligned 8-byte load at the field's first byte,
// shifted by at most 7: half the instructions of field_at's two words, two shifts and an OR
// (the lookup reads four fields). Byte addressing is the block's bit order only on a
// little-endian machine (the block is a little-endian 512-bit integer, see top).
inline constexpr bool byte_loads = std::endian::native == std::endian::little;
// The bits from `pos` on, at least min(in_load_bits, 512 - pos) of them: the load never starts
// past the block's last 8 bytes, so it stays inside the block (no read past the table, no touch
// of a line that was not prefetched) and a field near the end is shifted further instead.
inline constexpr unsigned in_load_bits = 64 - 7;
inline uint64_t load_at_bit(uint64_t const* blk, unsigned pos) noexcept {
    unsigned const byte = std::min(pos / 8, block_words * 8 - 8);
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<unsigned char const*>(blk) + byte, sizeof word);
    return word >> (pos - 8 * byte);
}

// A field the table reads on every lookup (its occupied and run-end bits, at the same place in
// every block) with one byte load: only where fits() said yes (read up to byte + 8 <= 18 of the
// block, inside it). On a big-endian machine, field_at's way.
struct byte_field {
    field_at words{};
    unsigned byte = 0, shift = 0;
    constexpr byte_field() = default;
    constexpr byte_field(unsigned pos, unsigned len) noexcept
        : words(pos, len), byte(pos / 8), shift(pos % 8) {}
    static constexpr bool fits(unsigned pos, unsigned len) noexcept { return pos % 8 + len <= 64; }
    uint64_t get(uint64_t const* blk) const noexcept {
        if constexpr (byte_loads) {
            uint64_t word;
            std::memcpy(&word, reinterpret_cast<unsigned char const*>(blk) + byte, sizeof word);
            return (word >> shift) & words.mask;
        } else {
            return words.get(blk);
        }
    }
};
inline void or_bits(uint64_t* blk, unsigned pos, unsigned len, uint64_t value) noexcept {
    unsigned const w = pos / 64, shift = pos % 64;
    blk[w] |= value << shift;
    if (shift + len > 64) blk[w + 1] |= value >> (64 - shift);
}

// r-bit lanes of a 64-bit word, the remainders of consecutive slots as a block stores them:
// which of the first n equal a value, found without a branch per lane. Each lane's low r - 1 bits
// plus 2^(r-1) - 1 carry into the lane's top bit exactly when they are not all zero, and never out
// of the lane, so no lane disturbs another (the exact zero-lane test of Knuth, TAOCP 7.1.3,
// "bytewise" operations, taken to r-bit fields).
struct remainder_lanes {
    unsigned count = 0;  // floor(64 / r): the lanes a word holds
    unsigned r = 0;
    uint64_t ones = 0, low = 0, high = 0;

    explicit constexpr remainder_lanes(unsigned remainder_bits = 1) noexcept
        : count(64 / remainder_bits), r(remainder_bits) {
        for (unsigned i = 0; i < count; ++i) {
            ones |= uint64_t{1} << (i * r);
            low |= ((uint64_t{1} << (r - 1)) - 1) << (i * r);
            high |= (uint64_t{1} << (r - 1)) << (i * r);
        }
    }
    // Whether one of lanes 0 .. n - 1 of `word` (1 <= n <= count) equals x (x < 2^r).
    constexpr bool any_equal(uint64_t word, uint64_t x, unsigned n) const noexcept {
        uint64_t const diff = word ^ (x * ones);
        uint64_t const nonzero = ((diff & low) + low) | diff;
        uint64_t const zero_lanes = ~(nonzero | low) & high;
        return (zero_lanes & (~uint64_t{0} >> (64 - n * r))) != 0;
    }
};

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
    unsigned const rank_before =
        place == 0 ? 0 : static_cast<unsigned>((running >> (place - 8)) & 0xff);
    return place + detail::select_in_byte.at[k - rank_before][(x >> place) & 0xff];
}

// How a lookup selects (rank_select_table::contains<Select>): the broadword select_bit above, on
// every x86-64 CPU, or BMI2's pdep, which deposits 1 << (n - 1) at x's n-th set bit in one
// instruction (3 cycles where it is done in hardware). The lookup's cost is the instructions it
// retires, and select_bit is a third of them. Which one is chosen once per command
// (pdep_is_fast); both give the same positions (tests/core/qf/rank_select_test.cpp). pdep is
// written as inline assembly so that the rest of the program needs no BMI2 code generation: it
// runs only where pdep_is_fast() said yes.
struct broadword_select {
    static unsigned select(uint64_t x, unsigned n) noexcept { return select_bit(x, n); }
};
struct pdep_select {
    static unsigned select(uint64_t x, unsigned n) noexcept {
#if defined(__x86_64__)
        uint64_t bit;
        asm("pdep %2, %1, %0" : "=r"(bit) : "r"(uint64_t{1} << (n - 1)), "rm"(x));
        return static_cast<unsigned>(__builtin_ctzll(bit));  // n <= popcount(x): bit != 0
#else
        return select_bit(x, n);
#endif
    }
};

// Whether this CPU has pdep in hardware: BMI2, and not an AMD (or Hygon) CPU before family 19h
// (Zen 3), whose pdep is microcoded and takes up to hundreds of cycles depending on the mask.
inline bool pdep_is_fast() noexcept {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_BMI2)) return false;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
    bool const amd = (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) ||  // AuthenticAMD
                     (b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975);    // HygonGenuine
    if (!amd) return true;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    unsigned const family = ((a >> 8) & 0xf) == 0xf ? 0xf + ((a >> 20) & 0xff) : (a >> 8) & 0xf;
    return family >= 0x19;
#else
    return false;
#endif
}

}  // namespace rank_select

// A read-only view of a table in the rank-select layout (see top). The words must outlive it, and
// start on a 64-byte boundary for a lookup to read one line (a loaded index's sections do).
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
    // lookups) was slower: the offset's line has not arrived yet for the group's last k-mers.
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
    // (tests/core/qf/rank_select_test.cpp). Why not one routine: the query is bound by the
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

    // Every lookup, the way the layout is defined (see top): walks the run-end bits block by
    // block from E_b and the run's remainders one by one, bounded by max_scan_blocks and the
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
    // run's end (see top), so the occupied and run-end bits are walked side by side, a set bit at a
    // time, and only the slots inside runs are visited.
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

// Writes the rank-select layout from fingerprints in increasing order, in one pass: the one writer
// of the layout, for a built level saved from its concurrent table (write_rank_select below) and
// for qmer index's sorted build, which writes its first level straight from its sorted
// fingerprints and never builds the concurrent table. Placement is the sequential layout's
// (layout.hpp, sorted_placement): each fingerprint at the first free slot at or after its
// quotient. Finished blocks are handed to emit(std::span<uint64_t const>) in order, a chunk at a
// time, so the writer holds a few chunks, not the table.
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
        if (n0 == 0 && end != 0) {
            uint64_t const q = fingerprints[0] >> r;
            if (q >= canonical) throw bad("a quotient past the canonical slots");
            if (q >= total) return 0;
            place(fingerprints[0], q, q, 0);
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
        if (elements_ != 0) ends_[next_ - 1 - window_first_ * at_.s] = 0xff;
        slide(shape_.blocks(), 0, emit);
        flush(emit);
        return elements_;
    }

    uint64_t size() const noexcept { return elements_; }

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
};

// A quiescent locally locked filter's current table in the rank-select layout: its shape, and
// its words through emit(std::span<uint64_t const>) in order, a chunk at a time. Returns the
// number of fingerprints written.
inline rank_select::shape rank_select_shape_of(locally_locked_filter const& f) {
    return {f.geometry().canonical_slots(), f.total_slots(), f.geometry().remainder_bits};
}
template <typename Emit>
uint64_t write_rank_select(locally_locked_filter const& f, Emit&& emit) {
    rank_select_writer w(rank_select_shape_of(f));
    constexpr size_t chunk = size_t{1} << 12;
    std::vector<uint64_t> fps;
    fps.reserve(chunk);
    auto put = [&] {
        if (w.append(fps, emit) != fps.size())
            throw std::invalid_argument("quotient table: more elements than its slots hold");
        fps.clear();
    };
    f.for_each_fingerprint([&](uint64_t fp) {
        fps.push_back(fp);
        if (fps.size() == chunk) put();
    });
    put();
    return w.finish(emit);
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

// The concurrent filter again from a rank-select table (an index opened to append to): an empty
// table of the same geometry and slot count, refilled by append_sorted in one pass. Throws
// std::invalid_argument if the words are not a consistent table of that shape.
inline std::unique_ptr<locally_locked_filter> thaw_rank_select(rank_select_table const& t,
                                                               growing_policy policy) {
    auto f = std::make_unique<locally_locked_filter>(
        t.geometry(), static_cast<size_t>(t.shape().total_slots), policy);
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
