// local_fingerprint_offsets (app/index/bin_hashing.hpp) gives, eight lanes at a time where the CPU
// has AVX-512, what the scalar hash, combine and fingerprint give one k-mer at a time: on random
// k-mers and spreads, every window width and both extra-bit settings, power-of-two tables and
// others, seeds whose halves differ, and batch lengths that leave a tail.

#include "app/index/bin_hashing.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
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

TEST(bin_hashing, runs_expand_as_the_scalar_scan_does) {
    // Every k, every run length a record holds (1 to k + 1), random bases: the CPU's expander
    // (AVX-512 where it has it) gives canonical_kmers' k-mers, and the scalar one does too.
    std::mt19937_64 rng(20261128);
    auto const expand = qmer::app::run_expander_for_this_cpu();
    for (unsigned k = 1; k <= 32; ++k) {
        for (unsigned n = 1; n <= k + 1 && n <= 33; ++n) {
            for (int round = 0; round < 20; ++round) {
                uint64_t const first = rng() & qmer::kmer_mask(k);
                uint64_t const tail = n == 1 ? 0 : rng() & (~uint64_t{0} >> (64 - 2 * (n - 1)));
                uint64_t const spread = rng();
                std::vector<uint64_t> expected(n);
                qmer::app::canonical_kmers(first, tail, n, k, expected.data());
                for (auto* f : {expand, &qmer::app::expand_run_scalar}) {
                    std::vector<uint64_t> kmers(n + qmer::app::expand_slack, 1),
                        spreads(n + qmer::app::expand_slack, 1);
                    f(first, tail, n, k, spread, kmers.data(), spreads.data());
                    ASSERT_EQ(std::vector<uint64_t>(kmers.begin(), kmers.begin() + n), expected)
                        << "k " << k << " n " << n;
                    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(spreads[i], spread);
                }
            }
        }
    }
    // The k-mers are those of the sequence itself: a run cut from a known one.
    std::string const bases = "ACGTTGCAAGGCTTACCGATTAGCATCGGATCCAGTACGT";
    unsigned const k = 21, n = static_cast<unsigned>(bases.size()) - k + 1;
    ASSERT_LE(n, k + 1);
    uint64_t first = 0, tail = 0;
    for (unsigned i = 0; i < k; ++i) first = first << 2 | qmer::encode_base(bases[i]);
    for (unsigned i = k; i < bases.size(); ++i) tail = tail << 2 | qmer::encode_base(bases[i]);
    std::vector<uint64_t> kmers(n + qmer::app::expand_slack), spreads(kmers.size());
    expand(first, tail, n, k, 0, kmers.data(), spreads.data());
    for (unsigned i = 0; i < n; ++i) {
        uint64_t forward = 0;
        for (unsigned j = 0; j < k; ++j) forward = forward << 2 | qmer::encode_base(bases[i + j]);
        EXPECT_EQ(kmers[i], qmer::canonical(forward, k)) << "k-mer " << i;
    }
}

TEST(bin_hashing, unique_copy_drops_repeats_in_place_and_out) {
    // Sorted values with runs of repeats across the 16-lane boundaries, `last` equal to the first
    // value or not, in place and into another buffer: std::unique's result, and `last` carried.
    std::mt19937_64 rng(20261129);
    for (size_t n = 0; n <= 100; ++n) {
        for (int round = 0; round < 10; ++round) {
            std::vector<uint32_t> in(n);
            uint32_t x = static_cast<uint32_t>(rng() % 5);
            for (auto& v : in) v = x += static_cast<uint32_t>(rng() % 3 == 0 ? 1 : 0);
            uint32_t const before = round % 2 == 0 || n == 0 ? ~uint32_t{0} : in[0];
            std::vector<uint32_t> expected;
            uint32_t seen = before;
            for (uint32_t v : in)
                if (v != seen) expected.push_back(seen = v);
            for (bool in_place : {false, true}) {
                std::vector<uint32_t> source = in, out(n, 7);
                uint32_t* const to = in_place ? source.data() : out.data();
                uint32_t last = before;
                size_t const written = qmer::app::unique_copy(source.data(), n, last, to);
                ASSERT_EQ(std::vector<uint32_t>(to, to + written), expected)
                    << "n " << n << (in_place ? " in place" : "");
                ASSERT_EQ(last, n == 0 ? before : in.back());
            }
        }
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
