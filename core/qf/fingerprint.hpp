#pragma once
// The fingerprint of a 64-bit hash in a quotient filter with q quotient bits and r remainder bits
// (shared convention of every filter in core/qf/): the TOP q + r bits of the hash,
//   quotient  = h >> (64 - q)                                  (the canonical slot, 0 .. 2^q - 1)
//   remainder = (h >> (64 - q - r)) & (2^r - 1)
// Taking the top bits (not the bottom ones) is what makes bounded growing work (DESIGN.md, seed 001
// section 3.3): doubling the table moves the remainder's top bit into the quotient, q+1 / r-1 bits,
// and the stored q + r bit fingerprint - hence each element's identity - is unchanged.

#include <cstdint>
#include <stdexcept>

namespace qmer::qf {

struct geometry {
    unsigned quotient_bits = 0;   // q: 2^q canonical slots
    unsigned remainder_bits = 0;  // r

    constexpr unsigned fingerprint_bits() const noexcept { return quotient_bits + remainder_bits; }
    constexpr uint64_t canonical_slots() const noexcept { return uint64_t{1} << quotient_bits; }
    constexpr uint64_t remainder_mask() const noexcept {
        return remainder_bits == 0 ? 0 : ~uint64_t{0} >> (64 - remainder_bits);
    }

    constexpr uint64_t quotient(uint64_t h) const noexcept {
        return quotient_bits == 0 ? 0 : h >> (64 - quotient_bits);
    }
    constexpr uint64_t remainder(uint64_t h) const noexcept {
        return remainder_bits == 0 ? 0 : (h >> (64 - fingerprint_bits())) & remainder_mask();
    }
    // The q + r bit fingerprint as an integer (quotient in the high part): sorting fingerprints
    // sorts by quotient first, the order in which a quotient filter stores them.
    constexpr uint64_t fingerprint(uint64_t h) const noexcept {
        return fingerprint_bits() == 0 ? 0 : h >> (64 - fingerprint_bits());
    }
    constexpr uint64_t fingerprint_of(uint64_t quotient_value,
                                      uint64_t remainder_value) const noexcept {
        return (quotient_value << remainder_bits) | remainder_value;
    }
    // A hash whose fingerprint is `fp` (the lower 64 - q - r bits zero): lets tests and level
    // migration re-insert a stored fingerprint through the hash interface.
    constexpr uint64_t hash_of_fingerprint(uint64_t fp) const noexcept {
        return fingerprint_bits() == 0 ? 0 : fp << (64 - fingerprint_bits());
    }

    // The geometry after one bounded-growing step: twice the slots, the same fingerprint.
    constexpr geometry grown() const noexcept { return {quotient_bits + 1, remainder_bits - 1}; }

    // q in 1..40 (2^40 slots is far beyond any machine here), r in 1..(63 - q) so q + r <= 63 and
    // every shift above stays below 64.
    void validate() const {
        if (quotient_bits < 1 || quotient_bits > 40)
            throw std::invalid_argument("quotient filter: quotient bits must be in 1..40");
        if (remainder_bits < 1 || quotient_bits + remainder_bits > 63)
            throw std::invalid_argument("quotient filter: remainder bits must be in 1..(63 - q)");
    }
};

}  // namespace qmer::qf
