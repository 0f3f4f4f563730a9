#pragma once
// How each level of a multi-level filter reads a minimizer-local hash, so that every level keeps
// super-k-mer locality (bench/qf/LOCALITY.md), not only the first.
//
// A minimizer-local hash (core/kmer/sequence_hashing.hpp) puts the top B bits of its minimizer's
// spread on top, and a quotient filter maps a hash to its canonical slot by its top bits, so the
// k-mers of a super-k-mer land in one window of slots / 2^B slots. B is fixed by the first level
// (windows of 32 to 64 of its slots). Level i of the expandable filter
// (core/qf/concurrent/expandable.hpp) has 2^i times level 0's slots: read the same way, its windows
// are 2^i times wider, and from level 3 or so on a super-k-mer's k-mers are random lines again,
// which on an index grown 64x by --append would be most of its query time (bench/append/README.md).
//
// A level sized by --append (core/qf/concurrent/expandable.hpp, "Sized levels") can be larger
// still: one level 64x the first would read windows 64 times too wide, and its lookups would be
// slower than a one-level index's (bench/append/README.md).
//
// So the hash carries E more bits of the minimizer's spread, bits B .. B + E - 1, at its bottom
// (hash_scheme::minimizer_local_levels; E = 8), where no level's fingerprint reaches, and a level
// reads it with e of them moved up under the top B:
//   T(h) = top B bits of h | the top e of its bottom E bits | the bits between, shifted down e
// e is what the window rule asks of the level's final size, less B: locality_window_bits(its
// slots) - B, at most E (B itself is locality_window_bits of the first level's slots). The
// level's top B + e bits are then minimizer bits, and its windows span 32 to 64 of its own slots
// like the first level's (for levels up to 2^E times the first). Level 0 has e = 0, the identity,
// so a first level reads the hash as format 4's did, and E = 0 (indexes of formats below 6, and
// plain hashes) makes every map the identity: those indexes answer as the qmer that wrote them did.
// The map is fixed by the level's final size, which bounded growing never changes (a level's
// fingerprints must not change as it doubles).
//
// Why nothing else changes: a level applies its map to every hash it stores and to every hash it
// is asked about, and the map depends on the level alone, so an element is found where it was put
// (consecutive inserts, queries, the sorted append: all go through apply()). T drops the bottom
// e bits of the k-mer's own bits, but a level's fingerprint uses fewer than 64 - B - E of those
// (its quotient and remainder bits below the window's), so within a window the fingerprint is
// still uniform: the false-positive argument of core/kmer/sequence_hashing.hpp holds per level.
// What T gives up is monotonicity: sorted hashes do not give a level's fingerprints in order,
// so the sorted append (app/index/run.cpp) sorts each level's fingerprints after mapping them.

#include <bit>
#include <cstdint>

namespace qmer::qf {

// The slots a window aims at, at least: 32 slots is one 64-byte rank-select block at 11 remainder
// bits (38 slots per block); a window spans [min_window_slots, 2 min_window_slots).
inline constexpr uint64_t min_window_slots = 32;

// The window bits of a table of `slots` canonical slots: the most with slots / 2^bits >= 32 (0:
// the table is too small for windows to matter; a first level that small hashes plainly).
constexpr unsigned locality_window_bits(uint64_t slots) noexcept {
    if (slots < 2 * min_window_slots) return 0;
    return static_cast<unsigned>(std::bit_width(slots / min_window_slots)) - 1;
}

// T for one level (see top): apply() is a few shifts, or nothing for the identity.
struct level_window_map {
    unsigned moved = 0;        // e: window bits brought up (0: the identity)
    unsigned from_bottom = 0;  // E - e: where they sit, counted from bit 0
    unsigned up = 0;           // 64 - B - e: where they go
    uint64_t top_mask = 0;     // the top B bits

    [[gnu::always_inline]] uint64_t apply(uint64_t h) const noexcept {
        if (moved == 0) return h;
        uint64_t const window = (h >> from_bottom) & ((uint64_t{1} << moved) - 1);
        return (h & top_mask) | (window << up) | ((h & ~top_mask) >> moved);
    }
};

// The hash layout every level of one filter reads (see top). Default: the identity everywhere.
struct level_windows {
    unsigned window_bits = 0;  // B, 1..40 (0: no windows)
    unsigned extra_bits = 0;   // E, at most 64 - B - 1 (0: every map is the identity)

    constexpr bool identity() const noexcept { return window_bits == 0 || extra_bits == 0; }

    // The map of a level whose final size is `level_slots` canonical slots.
    level_window_map of(uint64_t level_slots) const noexcept {
        unsigned const wanted = locality_window_bits(level_slots);
        if (identity() || wanted <= window_bits) return {};
        unsigned const e = wanted - window_bits < extra_bits ? wanted - window_bits : extra_bits;
        return {e, extra_bits - e, 64 - window_bits - e, ~(~uint64_t{0} >> window_bits)};
    }

    friend constexpr bool operator==(level_windows const&, level_windows const&) = default;
};

}  // namespace qmer::qf
