#pragma once
// 2-bit nucleotide encoding (ARCHITECTURE.md, k-mer contract): A=0 C=1 G=2 T=3, lowercase as
// uppercase. Every other byte (N, IUPAC codes, '-', '.', '*', digits, whitespace) is `invalid_base`
// and ends a k-mer run; it is never turned into a base. U/u are invalid too: qmer indexes DNA, and
// reading U as T would silently index RNA as if it were its DNA copy (convert RNA explicitly before
// indexing).

#include <array>
#include <cstdint>

namespace qmer {

inline constexpr uint8_t invalid_base = 4;

namespace detail {
constexpr std::array<uint8_t, 256> make_base_codes() {
    std::array<uint8_t, 256> codes{};
    codes.fill(invalid_base);
    codes['A'] = codes['a'] = 0;
    codes['C'] = codes['c'] = 1;
    codes['G'] = codes['g'] = 2;
    codes['T'] = codes['t'] = 3;
    return codes;
}
inline constexpr std::array<uint8_t, 256> base_codes = make_base_codes();
}  // namespace detail

// The 2-bit code of a character, or invalid_base.
constexpr uint8_t encode_base(char c) noexcept {
    return detail::base_codes[static_cast<unsigned char>(c)];
}

// The complement of a 2-bit code: A<->T, C<->G is 3 - code.
constexpr uint8_t complement_code(uint8_t code) noexcept {
    return static_cast<uint8_t>(3 - code);
}

// The uppercase character of a 2-bit code.
constexpr char decode_base(uint8_t code) noexcept {
    return "ACGT"[code & 3];
}

}  // namespace qmer
