#pragma once
// How each level of a multi-level filter reads a minimizer-local hash, so that every level keeps
// super-k-mer locality (issue 15, item 2), not only the first.
//
// A minimizer-local hash (core/kmer/sequence_hashing.hpp) puts the top B bits of its minimizer's
// spread on top, and a quotient filter maps a hash to its canonical slot by its top bits, so the
// k-mers of a super-k-mer land in one window of slots / 2^B slots. B is fixed by the first level
// (windows of 32 to 64 of its slots). Level i of the expandable filter (core/qf/expandable.hpp) has
// 2^i times level 0's slots: read the same way, its windows are 2^i times wider, and from level 3
// or so on a super-k-mer's k-mers are random lines again. An index grown 64x by --append spent
// most of its query time on those levels' misses (bench/append/README.md).
//
// A level sized by --append (core/qf/expandable.hpp, "Sized levels") can be larger still: one
// level 64x the first, whose windows were 64 times too wide, made its lookups 1.4x slower than a
// one-level index's.
//
// So the hash carries E more bits of the minimizer's spread, bits B .. B + E - 1, at its bottom
// (hash_scheme::minimizer_local_levels; E = 8), where no level's fingerprint reaches, and a level
// whose final size is 2^e or more (up to 2^(e+1)) times the first level's reads it with e (at most
// E) of them moved up under the top B:
//   T(h) = top B bits of h | the top e of its bottom E bits | the bits between, shifted down e
// The level's top B + e bits are then minimizer bits: its windows have level 0's width in its own
// slots again, to within a factor 2 (for levels up to 2^E times the first). Level 0 has e = 0, the
// identity, so a first level reads the hash as it always did, and E = 0 (every index before
// format 6, and plain hashes) makes every map the identity: those indexes answer exactly as
// before. The map is fixed by the level's final size, which bounded growing never changes (a
// level's fingerprints must not change as it doubles).
//
// Why nothing else changes: a level applies its map to every hash it stores and to every hash it
// is asked about, and the map depends on the level alone, so an element is found where it was put
// (consecutive inserts, queries, the sorted append: all go through apply()). T drops the bottom
// e bits of the k-mer's own bits, but a level's fingerprint uses fewer than 64 - B - E of those
// (its quotient and remainder bits below the window's), so within a window the fingerprint is
// still uniform: the false-positive argument of core/kmer/sequence_hashing.hpp holds per level.
// What T gives up is monotonicity: sorted hashes no longer give a level's fingerprints in order,
// so the sorted append (app/index/run.cpp) sorts each level's fingerprints after mapping them.

#include <bit>
#include <cstdint>

namespace qmer::qf {

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

    // The map of a level whose final size is `level_slots` canonical slots, in a stack whose
    // first level has `first_slots` at its final size.
    level_window_map of(uint64_t level_slots, uint64_t first_slots) const noexcept {
        if (identity() || first_slots == 0 || level_slots / first_slots < 2) return {};
        auto const doublings = static_cast<unsigned>(std::bit_width(level_slots / first_slots)) - 1;
        unsigned const e = doublings < extra_bits ? doublings : extra_bits;
        return {e, extra_bits - e, 64 - window_bits - e, ~(~uint64_t{0} >> window_bits)};
    }

    friend constexpr bool operator==(level_windows const&, level_windows const&) = default;
};

}  // namespace qmer::qf
