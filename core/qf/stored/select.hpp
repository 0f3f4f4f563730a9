#pragma once
// Select within a 64-bit word for the rank-select layout's lookups (block_format.hpp): the
// broadword routine every x86-64 CPU runs, BMI2's pdep where it is fast, and the check that picks
// one once per command.

#include <bit>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace qmer::qf::rank_select {

// select_bit(x, n): the position of the n-th set bit of x (n >= 1, x has at least n set bits),
// in constant time without BMI2's pdep (x86-64-v2 has none): the bytes' popcounts summed into
// running totals by one multiplication pick the byte, a table the bit within it (Vigna, "Broadword
// Implementation of Rank/Select Queries", WEA 2008, section 5). A bit-at-a-time loop would take up
// to 64 dependent steps, more than the cache miss the lookup waits for.
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
// (pdep_is_fast); both give the same positions (tests/core/qf/stored/rank_select_test.cpp). pdep is
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

}  // namespace qmer::qf::rank_select
