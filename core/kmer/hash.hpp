#pragma once
// The 64-bit hash of a canonical k-mer (ARCHITECTURE.md, hashing contract): XXH3 64-bit, seeded,
// over the k-mer's 8-byte little-endian representation. The filters take this hash, never the
// k-mer; a quotient filter level uses its top q + r bits as the fingerprint, so the top bits must
// be uniform (tests/core/kmer/hash_test.cpp checks that, and pins known values).
//
// FIXED FOREVER: the hash of a given (canonical k-mer, seed) pair must never change. The index file
// stores the seed, not the hashes' recipe; an index built with one function and queried with
// another answers "absent" for k-mers it holds, which is a silent false negative. Any change here
// (another hash, another byte order, another input width) needs a new index format version.
//
// The byte order is fixed to little-endian whatever the machine, so indexes are portable.
//
// The hash is XXH3's 4-to-8-byte path (xxHash's doc/xxhash_spec.md, "XXH3 algorithm overview",
// inputs of 4 to 8 bytes) written out for the one length we hash, with its seed's part worked out
// once per hasher rather than on every k-mer's path (bench/qf/LOOKUP_FILL.md has the count).
// It works on the value, whose little-endian bytes are the input, so no byte swap is needed on any
// machine. tests/core/kmer/hash_test.cpp checks it against the library's XXH3_64bits_withSeed on
// random seeds and values, and pins known values.

#include <cstdint>

namespace qmer {

class kmer_hasher {
  public:
    constexpr kmer_hasher(uint64_t seed = 0) noexcept : seed_(seed), bitflip_(bitflip_of(seed)) {}

    constexpr uint64_t seed() const noexcept { return seed_; }
    // The seed's part of the hash (below): for a batch version of operator() that does the same
    // lane by lane (app/index/bin_hashing.cpp; its test pins the two equal).
    constexpr uint64_t bitflip() const noexcept { return bitflip_; }
    static constexpr uint64_t multiplier = 0x9FB21C651E98DF25ULL;  // XXH3 rrmxmx's

    constexpr uint64_t operator()(uint64_t canonical) const noexcept {
        // The two 32-bit little-endian reads at offsets 0 and 4, the first one on top.
        uint64_t const input = (canonical >> 32) | (canonical << 32);
        uint64_t h = input ^ bitflip_;
        // XXH3's rrmxmx finalizer, with the input length 8.
        h ^= rotl(h, 49) ^ rotl(h, 24);
        h *= multiplier;
        h ^= (h >> 35) + 8;
        h *= multiplier;
        return h ^ (h >> 28);
    }

  private:
    // XXH3's default secret, bytes 8-15 xor bytes 16-23 (little-endian words).
    static constexpr uint64_t secret_8_xor_16 = 0xC73AB174C5ECD5A2ULL;

    static constexpr uint64_t rotl(uint64_t x, unsigned r) noexcept {
        return (x << r) | (x >> (64 - r));
    }
    // The seed as the 4-8 byte path uses it: its low half byte-swapped into its high half.
    static constexpr uint64_t bitflip_of(uint64_t seed) noexcept {
        uint64_t const swapped = __builtin_bswap32(static_cast<uint32_t>(seed));
        return secret_8_xor_16 - (seed ^ (swapped << 32));
    }

    uint64_t seed_;
    uint64_t bitflip_;
};

}  // namespace qmer
