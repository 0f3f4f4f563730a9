// Tests of core/kmer/hash.hpp: that it is XXH3 (published test vectors), that its values never
// change (pinned values: an index stores only the seed, so a changed hash silently breaks old
// indexes), that the seed matters, and that the top bits, which the quotient filters use as
// fingerprints, are uniform.

#include "core/kmer/hash.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kmer/scanner.hpp"

// The library, to check the hasher against (XXH3 itself, inlined: the tests link no xxhash).
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace {

constexpr uint64_t prime32 = 2654435761ULL;
constexpr uint64_t prime64 = 11400714785074694797ULL;

// xxHash's self-test input: byte i is the top byte of prime32 * prime64^i (mod 2^64).
std::vector<unsigned char> xxhash_test_buffer(size_t length) {
    std::vector<unsigned char> buffer(length);
    uint64_t generator = prime32;
    for (auto& byte : buffer) {
        byte = static_cast<unsigned char>(generator >> 56);
        generator *= prime64;
    }
    return buffer;
}

TEST(kmer_hash, the_library_is_xxh3_as_published) {
    // Values from xxHash's own sanity-check table (XXH3_64bits with seed 0 and seed prime64 on
    // 6 and 12 bytes of its test buffer): the 4-8 byte path our 8-byte inputs take, and the next.
    auto const buffer = xxhash_test_buffer(12);
    EXPECT_EQ(XXH3_64bits_withSeed(buffer.data(), 6, 0), 0x27B56A84CD2D7325ULL);
    EXPECT_EQ(XXH3_64bits_withSeed(buffer.data(), 6, prime64), 0x84589C116AB59AB9ULL);
    EXPECT_EQ(XXH3_64bits_withSeed(buffer.data(), 12, 0), 0xA713DAF0DFBB77E7ULL);
    EXPECT_EQ(XXH3_64bits_withSeed(buffer.data(), 12, prime64), 0xE7303E1B2336DE0EULL);
}

TEST(kmer_hash, is_xxh3_over_the_little_endian_bytes) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{1}, prime64}) {
        qmer::kmer_hasher const hasher{seed};
        for (uint64_t value :
             {uint64_t{0}, uint64_t{6}, uint64_t{0x0123456789ABCDEF}, ~uint64_t{0}}) {
            std::array<unsigned char, 8> bytes{};
            for (size_t i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
            EXPECT_EQ(hasher(value), XXH3_64bits_withSeed(bytes.data(), 8, seed));
        }
    }
}

TEST(kmer_hash, equals_the_library_on_random_seeds_and_values) {
    // The hasher writes XXH3's 8-byte path out with its seed's part worked out once: it must give
    // XXH3_64bits_withSeed over the value's 8 little-endian bytes for every seed and value.
    uint64_t x = 0x243F6A8885A308D3ULL;
    auto next = [&x] {  // splitmix64
        uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    for (int s = 0; s < 200; ++s) {
        // Every third seed has a zero half, the halves the seed's byte swap moves.
        uint64_t seed = next();
        if (s % 3 == 1) seed &= 0xFFFFFFFFULL;
        if (s % 3 == 2) seed &= ~uint64_t{0xFFFFFFFFULL};
        qmer::kmer_hasher const hasher{seed};
        ASSERT_EQ(hasher.seed(), seed);
        for (int i = 0; i < 1000; ++i) {
            uint64_t const value = i < 4 ? uint64_t{0} - static_cast<uint64_t>(i) : next();
            std::array<unsigned char, 8> bytes{};
            for (size_t b = 0; b < 8; ++b) bytes[b] = static_cast<unsigned char>(value >> (8 * b));
            ASSERT_EQ(hasher(value), XXH3_64bits_withSeed(bytes.data(), 8, seed))
                << std::hex << "value 0x" << value << " seed 0x" << seed;
        }
    }
}

TEST(kmer_hash, pinned_values_never_change) {
    // Computed once with this header and, independently, with Debian's libxxhash 0.8.1 shared
    // library over the same 8 little-endian bytes. If this test fails, the hash of stored indexes
    // changed: do not update these numbers; restore the function (or bump the index format version,
    // and say so).
    struct pinned {
        uint64_t canonical;
        uint64_t seed;
        uint64_t hash;
    };
    static constexpr pinned values[] = {
        {0, 0, 0xC77B3ABB6F87ACD9ULL},
        {6, 0, 0x6B994BDA4763673BULL},
        {0x0123456789ABCDEFULL, 0, 0xB78DF414284277A6ULL},
        {0, 42, 0x4596708167F8EB2EULL},
        {6, 42, 0xC8795237702DFA6BULL},
        {0x9555555555555555ULL, 0x8F3F73B5CF1C9ADEULL, 0xFDFC3141A02359D2ULL},
    };
    for (auto const& v : values) {
        EXPECT_EQ(qmer::kmer_hasher{v.seed}(v.canonical), v.hash)
            << std::hex << "canonical 0x" << v.canonical << " seed 0x" << v.seed;
    }
}

TEST(kmer_hash, same_input_same_hash_and_the_seed_changes_it) {
    qmer::kmer_hasher const a{0};
    qmer::kmer_hasher const a_again{0};
    qmer::kmer_hasher const b{1};
    qmer::kmer_hasher const c{0xDEADBEEF};
    int same_ab = 0;
    int same_bc = 0;
    for (uint64_t v = 0; v < 10000; ++v) {
        ASSERT_EQ(a(v), a_again(v));
        ASSERT_EQ(a(v), a(v));
        same_ab += a(v) == b(v);
        same_bc += b(v) == c(v);
    }
    EXPECT_EQ(same_ab, 0);
    EXPECT_EQ(same_bc, 0);
}

// Chi-square statistic of the top `bits` bits of the hashes over 2^bits equal buckets.
double chi_square_top_bits(std::vector<uint64_t> const& hashes, unsigned bits) {
    std::vector<double> counts(size_t{1} << bits, 0.0);
    for (uint64_t h : hashes) counts[h >> (64 - bits)] += 1;
    double const expected = static_cast<double>(hashes.size()) / static_cast<double>(counts.size());
    double chi = 0;
    for (double c : counts) chi += (c - expected) * (c - expected) / expected;
    return chi;
}

void expect_uniform_top_bits(std::vector<uint64_t> const& hashes, char const* what) {
    // Deterministic inputs, so no flakiness; the bounds are 6 standard deviations (chi-square with
    // d degrees of freedom has mean d and variance 2d), wide enough for any sound hash and far too
    // narrow for one that ignores input bits or leaves top bits constant.
    for (unsigned bits : {1u, 4u, 8u, 12u, 16u}) {
        double const df = std::ldexp(1.0, static_cast<int>(bits)) - 1;
        double const chi = chi_square_top_bits(hashes, bits);
        EXPECT_LT(chi, df + 6 * std::sqrt(2 * df) + 10) << what << ", top " << bits << " bits";
    }
    // Each of the top 32 bits is set half the time (standard deviation 0.5/sqrt(n) ~ 0.0005).
    for (unsigned bit = 32; bit < 64; ++bit) {
        size_t ones = 0;
        for (uint64_t h : hashes) ones += (h >> bit) & 1;
        double const fraction = static_cast<double>(ones) / static_cast<double>(hashes.size());
        EXPECT_NEAR(fraction, 0.5, 0.004) << what << ", bit " << bit;
    }
}

TEST(kmer_hash, top_bits_are_uniform_on_structured_inputs) {
    constexpr size_t n = size_t{1} << 20;
    qmer::kmer_hasher const hasher{0};
    // Consecutive integers: the low bits of k-mers vary, the high ones barely.
    std::vector<uint64_t> hashes(n);
    for (size_t i = 0; i < n; ++i) hashes[i] = hasher(i);
    expect_uniform_top_bits(hashes, "consecutive integers");
    // Canonical 31-mers of one periodic-ish sequence: real k-mers, all 2-bit packed.
    std::vector<uint64_t> kmers;
    std::string seq;
    uint64_t x = 12345;
    while (seq.size() < n + 30) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        seq.push_back("ACGT"[x >> 62]);
    }
    qmer::kmer_scanner(31).for_each(seq, [&](uint64_t v, size_t) { kmers.push_back(hasher(v)); });
    ASSERT_EQ(kmers.size(), n);
    expect_uniform_top_bits(kmers, "canonical 31-mers");
    // Seeded hashes of the same consecutive integers.
    qmer::kmer_hasher const seeded{0x8F3F73B5CF1C9ADEULL};
    for (size_t i = 0; i < n; ++i) hashes[i] = seeded(i);
    expect_uniform_top_bits(hashes, "consecutive integers, seeded");
}

TEST(kmer_hash, one_input_bit_flips_about_half_the_output_bits) {
    qmer::kmer_hasher const hasher{7};
    double total = 0;
    size_t trials = 0;
    for (uint64_t v = 0; v < 2000; ++v) {
        uint64_t const base = v * 0x9E3779B97F4A7C15ULL;
        for (unsigned bit = 0; bit < 64; ++bit) {
            total += std::popcount(hasher(base) ^ hasher(base ^ (uint64_t{1} << bit)));
            ++trials;
        }
    }
    EXPECT_NEAR(total / static_cast<double>(trials), 32.0, 0.2);
}

}  // namespace
