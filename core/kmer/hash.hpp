#pragma once
// The 64-bit hash of a canonical k-mer (DESIGN.md, hashing contract): XXH3 64-bit, seeded, over the
// k-mer's 8-byte little-endian representation. The filters take this hash, never the k-mer; a
// quotient filter level uses its top q + r bits as the fingerprint, so the top bits must be uniform
// (tests/core/kmer/hash_test.cpp checks that, and pins known values).
//
// FIXED FOREVER: the hash of a given (canonical k-mer, seed) pair must never change. The index file
// stores the seed, not the hashes' recipe; an index built with one function and queried with
// another answers "absent" for k-mers it holds, which is a silent false negative. Any change here
// (another hash, another byte order, another input width) needs a new index format version.
//
// The byte order is fixed to little-endian whatever the machine, so indexes are portable: a
// big-endian machine byte-swaps before hashing.
//
// Header-only with XXH_INLINE_ALL: the 8-byte case of XXH3 is a handful of multiplies and shifts,
// and inlining lets the compiler drop XXH3's length dispatch (the length is the constant 8).

#include <bit>
#include <cstdint>
#include <cstring>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace qmer {

struct kmer_hasher {
    uint64_t seed = 0;

    uint64_t operator()(uint64_t canonical) const noexcept {
        if constexpr (std::endian::native == std::endian::big) {
            canonical = __builtin_bswap64(canonical);
        }
        unsigned char bytes[sizeof canonical];
        std::memcpy(bytes, &canonical, sizeof canonical);
        return XXH3_64bits_withSeed(bytes, sizeof bytes, seed);
    }
};

}  // namespace qmer
