#pragma once
// The rank-and-select query layout of a quotient filter table: what a finished level of the
// default filter is stored as in the index file and queried as, straight from the file's bytes
// (ARCHITECTURE.md, "Index file" and "Performance rules"). The design is that of the
// rank-and-select quotient filter (Pandey, Bender, Johnson, Patro, "A General-Purpose Counting
// Filter: Making Every Bit Count", SIGMOD 2017, section 3), with the fingerprint mapping of
// core/qf/fingerprint.hpp, and with each block sized to one cache line.
//
// Why a second layout: the concurrent filters (core/qf/concurrent/locally_locked.hpp, Algorithm 1
// of Maier, Sanders, Williger, SEA 2020) mark each slot with occupied/continuation/shifted bits, so
// a query must walk back to its cluster start to learn which run is its quotient's, and that walk
// grows with the fill (at 95% fill, clusters are hundreds of slots long). Here each block carries
// an offset, so a query finds its run from its own block: one rank and one select, whatever the
// fill. A table nobody writes any more (a level of a built index) needs none of the concurrent
// layout's lock states, so it is stored in this form.
//
// Slot positions are the same as in the sequential layout (core/qf/three_bit_layout.hpp):
// fingerprints in increasing order, each at the first free slot at or after its quotient, m
// canonical slots followed by the overflow slots, no wrap-around. Slots are grouped into blocks of
// s = min(64, floor(496 / (r + 2))) slots (38 at r = 11), and block b (slots sb .. sb + s - 1) is
// one 64-byte line, 8 words read as one 512-bit little-endian integer:
//   bits [0, 16)              offset: E_b - sb, or 0 when E_b <= sb, where E_b is the first slot
//                             after the runs of every quotient below sb (the slots before E_b
//                             belong to earlier blocks' quotients)
//   bits [16, 16 + s)         occupieds: bit j set when quotient sb + j has a run
//   bits [16 + s, 16 + 2s)    runends: bit j set when slot sb + j holds the last fingerprint
//                             of a run
//   bits [16 + 2s + j r, ...) the remainder of slot sb + j, r bits
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

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "core/bounds.hpp"

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

}  // namespace rank_select
}  // namespace qmer::qf
