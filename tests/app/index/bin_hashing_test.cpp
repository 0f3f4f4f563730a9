// local_fingerprint_offsets (app/index/bin_hashing.hpp) gives, eight lanes at a time where the CPU
// has AVX-512, what the scalar hash, combine and fingerprint give one k-mer at a time: on random
// k-mers and spreads, every window width and both extra-bit settings, power-of-two tables and
// others, seeds whose halves differ, and batch lengths that leave a tail.

#include "app/index/bin_hashing.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using qmer::local_kmer_hashing;
using qmer::qf::geometry;

TEST(bin_hashing, batch_equals_the_scalar_functions) {
    if (!qmer::app::local_fingerprint_offsets_vectorized())
        GTEST_SKIP() << "this CPU has no AVX-512: the batch is the scalar loop itself";
    std::mt19937_64 rng(20261126);
    for (int round = 0; round < 400; ++round) {
        unsigned const window_bits = 1 + static_cast<unsigned>(rng() % 40);
        unsigned const extra_bits = rng() % 2 == 0 ? 0 : qmer::level_window_extra_bits;
        uint64_t const seed = round % 4 == 0 ? 0 : rng();
        local_kmer_hashing const hashing(31, seed, 20, window_bits, {}, extra_bits);
        unsigned const quotient_bits = 8 + static_cast<unsigned>(rng() % 32);
        unsigned const remainder_bits = 1 + static_cast<unsigned>(rng() % 16);
        uint64_t const slots = round % 3 == 0
                                   ? uint64_t{1} << quotient_bits
                                   : (uint64_t{1} << (quotient_bits - 1)) + 1 +
                                         rng() % ((uint64_t{1} << (quotient_bits - 1)) - 1);
        geometry const g = geometry::with_slots(slots, remainder_bits);
        size_t const n = rng() % 100;
        std::vector<uint64_t> kmers(n), spreads(n);
        for (size_t i = 0; i < n; ++i) {
            kmers[i] = rng() & qmer::kmer_mask(31);
            spreads[i] = rng();
        }
        uint64_t const first = n == 0 ? 0 : g.fingerprint(rng());
        std::vector<uint32_t> batch(n + 1, 7), scalar(n + 1, 7);
        qmer::app::local_fingerprint_offsets(hashing, g, first, kmers.data(), spreads.data(), n,
                                             batch.data());
        qmer::app::local_fingerprint_offsets_scalar(hashing, g, first, kmers.data(), spreads.data(),
                                                    n, scalar.data());
        ASSERT_EQ(batch, scalar) << "round " << round << ": window bits " << window_bits
                                 << ", extra " << extra_bits << ", slots " << slots << ", r "
                                 << remainder_bits << ", n " << n;
    }
}

TEST(bin_hashing, scalar_is_the_hash_the_query_takes) {
    // The scalar path is local_hash and fingerprint themselves, so the fill's offsets are the
    // query's fingerprints less the bin's first.
    local_kmer_hashing const hashing(31, 42, 20, 16, {});
    geometry const g = geometry::with_slots(3'000'000, 9);
    std::mt19937_64 rng(7);
    std::vector<uint64_t> kmers(37), spreads(37);
    for (size_t i = 0; i < kmers.size(); ++i) {
        kmers[i] = rng() & qmer::kmer_mask(31);
        spreads[i] = rng();
    }
    uint64_t const first = 1000;
    std::vector<uint32_t> out(kmers.size());
    qmer::app::local_fingerprint_offsets(hashing, g, first, kmers.data(), spreads.data(),
                                         kmers.size(), out.data());
    for (size_t i = 0; i < kmers.size(); ++i)
        EXPECT_EQ(out[i], static_cast<uint32_t>(
                              g.fingerprint(hashing.local_hash(kmers[i], spreads[i])) - first));
}

}  // namespace
