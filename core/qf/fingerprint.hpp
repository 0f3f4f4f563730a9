#pragma once
// The fingerprint of a 64-bit hash in a quotient filter with m canonical slots and r remainder bits
// (shared convention of every filter in core/qf/): with M = m * 2^r,
//   fingerprint = floor(h * M / 2^64)     (the high word of the 128-bit product)
//   quotient    = fingerprint >> r        (the canonical slot, 0 .. m - 1)
//   remainder   = fingerprint & (2^r - 1)
// For m = 2^q this is exactly the TOP q + r bits of the hash (h >> (64 - q - r)), the layout of
// Maier, Sanders, Williger (SEA 2020); any other m (2^(q-1) < m < 2^q, "non-power-of-two quotient
// ranges") lets a table be sized to its content instead of to the next power of two, which can
// waste almost half of it. Two hashes share a fingerprint with probability 1/M, so the
// false-positive rate stays n / M.
//
// Taking the high bits of the product (not the low bits of h) is what makes bounded growing work
// (ARCHITECTURE.md; the SEA 2020 paper's section 3.3): doubling the table (2m slots, r - 1
// remainder bits) keeps M, hence each element's fingerprint and identity; the remainder's top bit
// moves into the quotient.

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/bounds.hpp"

namespace qmer::qf {

struct geometry {
    unsigned quotient_bits =
        0;  // q: the canonical slots number at most 2^q (exactly, if slots = 0)
    unsigned remainder_bits = 0;  // r
    // The canonical slots when they are not 2^q: 2^(q-1) < slots < 2^q. 0: exactly 2^q.
    uint64_t slots = 0;

    // m canonical slots and r remainder bits, q = ceil(log2 m).
    static constexpr geometry with_slots(uint64_t m, unsigned r) noexcept {
        unsigned const q = m <= 1 ? 0 : static_cast<unsigned>(std::bit_width(m - 1));
        return {q, r, std::has_single_bit(m) ? 0 : m};
    }

    constexpr unsigned fingerprint_bits() const noexcept { return quotient_bits + remainder_bits; }
    constexpr uint64_t canonical_slots() const noexcept {
        return slots != 0 ? slots : uint64_t{1} << quotient_bits;
    }
    // M = m * 2^r, the number of distinct fingerprints (< 2^63 by validate()).
    constexpr uint64_t fingerprint_space() const noexcept {
        return canonical_slots() << remainder_bits;
    }
    constexpr uint64_t remainder_mask() const noexcept {
        return remainder_bits == 0 ? 0 : ~uint64_t{0} >> (64 - remainder_bits);
    }

    constexpr uint64_t fingerprint(uint64_t h) const noexcept {
        __extension__ using u128 = unsigned __int128;
        return static_cast<uint64_t>((static_cast<u128>(h) * fingerprint_space()) >> 64);
    }
    constexpr uint64_t quotient(uint64_t h) const noexcept {
        return fingerprint(h) >> remainder_bits;
    }
    constexpr uint64_t remainder(uint64_t h) const noexcept {
        return fingerprint(h) & remainder_mask();
    }
    // The q + r bit fingerprint as an integer (quotient in the high part): sorting fingerprints
    // sorts by quotient first, the order in which a quotient filter stores them. fingerprint(h) is
    // monotonic in h, so sorting hashes sorts their fingerprints too.
    constexpr uint64_t fingerprint_of(uint64_t quotient_value,
                                      uint64_t remainder_value) const noexcept {
        return (quotient_value << remainder_bits) | remainder_value;
    }
    // The smallest hash whose fingerprint is `fp` (< M): lets tests and level migration re-insert a
    // stored fingerprint through the hash interface. ceil(fp * 2^64 / M) fits: fp < M.
    constexpr uint64_t hash_of_fingerprint(uint64_t fp) const noexcept {
        __extension__ using u128 = unsigned __int128;
        uint64_t const space = fingerprint_space();
        return static_cast<uint64_t>(((static_cast<u128>(fp) << 64) + space - 1) / space);
    }

    // The geometry after one bounded-growing step: twice the slots, the same fingerprints.
    constexpr geometry grown() const noexcept {
        return {quotient_bits + 1, remainder_bits - 1, slots == 0 ? 0 : 2 * slots};
    }
    // The geometry `steps` doublings before this one (slots must divide by 2^steps).
    constexpr geometry shrunk(unsigned steps) const noexcept {
        return {quotient_bits - steps, remainder_bits + steps, slots >> steps};
    }

    // q in 1..40 (2^40 slots is far beyond any machine here), r in 1..(63 - q) so q + r <= 63 and
    // M < 2^63; slots, when set, strictly between 2^(q-1) and 2^q.
    void validate() const {
        if (quotient_bits < 1 || quotient_bits > max_quotient_bits)
            throw std::invalid_argument("quotient filter: quotient bits must be in 1.." +
                                        std::to_string(max_quotient_bits));
        if (remainder_bits < 1 || quotient_bits + remainder_bits > max_fingerprint_bits)
            throw std::invalid_argument("quotient filter: remainder bits must be in 1..(" +
                                        std::to_string(max_fingerprint_bits) + " - q)");
        if (slots != 0 && (slots <= (uint64_t{1} << (quotient_bits - 1)) ||
                           slots >= (uint64_t{1} << quotient_bits)))
            throw std::invalid_argument(
                "quotient filter: canonical slots must lie strictly between 2^(q-1) and 2^q");
    }
};

}  // namespace qmer::qf
