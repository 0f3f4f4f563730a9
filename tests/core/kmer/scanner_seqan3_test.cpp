// Cross-check of core/kmer/scanner.hpp with SeqAn3, an independent implementation.
//
// views::minimiser_hash with an ungapped shape of k, a window of k bases and seed 0 reports, for
// each k-mer, min(forward hash, reverse-complement hash) XOR 0: exactly the canonical k-mer value,
// packed first base most significant as ours is. With window = k the minimiser window holds one
// value, so every k-mer is reported, none deduplicated. SeqAn3 allows k <= 64 / log2(4) = 32 for
// dna4.
//
// Only N-free sequences: dna4 turns N into A (ARCHITECTURE.md), so SeqAn3 cannot be the oracle
// there; the brute-force oracle in scanner_test.cpp covers non-bases. Lowercase is included:
// SeqAn3's dna4 assigns 'a' as 'A', as our encoding does.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <seqan3/alphabet/nucleotide/dna4.hpp>
#include <seqan3/search/views/minimiser_hash.hpp>
#include <string>
#include <vector>

#include "core/kmer/scanner.hpp"

namespace {

std::vector<uint64_t> seqan3_canonical_kmers(std::string const& seq, unsigned k) {
    std::vector<seqan3::dna4> dna(seq.size());
    for (size_t i = 0; i < seq.size(); ++i) dna[i].assign_char(seq[i]);
    std::vector<uint64_t> values;
    auto view = dna | seqan3::views::minimiser_hash(seqan3::ungapped{static_cast<uint8_t>(k)},
                                                    seqan3::window_size{k}, seqan3::seed{0});
    for (uint64_t v : view) values.push_back(v);
    return values;
}

std::vector<uint64_t> qmer_canonical_kmers(std::string const& seq, unsigned k) {
    std::vector<uint64_t> values;
    size_t expected_pos = 0;
    qmer::for_each_canonical_kmer(seq, k, [&](uint64_t v, size_t pos) {
        EXPECT_EQ(pos, expected_pos++);  // N-free: one k-mer at every position
        values.push_back(v);
    });
    return values;
}

std::string random_bases(std::mt19937_64& rng, size_t length) {
    static constexpr char bases[] = "ACGTACGTACGTacgt";
    std::string s(length, 'A');
    for (char& c : s) c = bases[rng() % 16];
    return s;
}

TEST(scanner_seqan3, canonical_values_match_minimiser_hash_with_window_k_and_seed_0) {
    std::mt19937_64 rng(31);
    for (unsigned k : {1u, 2u, 3u, 7u, 8u, 15u, 16u, 17u, 19u, 21u, 25u, 27u, 31u, 32u}) {
        for (int round = 0; round < 5; ++round) {
            std::string const seq = random_bases(rng, k + rng() % 2000);
            auto const ours = qmer_canonical_kmers(seq, k);
            ASSERT_EQ(ours.size(), seq.size() - k + 1);
            ASSERT_EQ(ours, seqan3_canonical_kmers(seq, k)) << "k = " << k << ", round " << round;
        }
    }
}

TEST(scanner_seqan3, palindromes_and_low_complexity_agree) {
    // Runs of one base and reverse-palindromic sequences make forward and reverse strands tie or
    // cross often, where a wrong min() or an off-by-one in the reverse strand would show.
    for (unsigned k : {1u, 4u, 11u, 31u, 32u}) {
        for (std::string const& seq :
             {std::string(100, 'A'), std::string(100, 'T'), std::string(64, 'G') + "CCCC",
              std::string("ACGT") + "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT",
              std::string("GAATTCGAATTCGAATTCGAATTCGAATTCGAATTCGAATTCGAATTC")}) {
            ASSERT_EQ(qmer_canonical_kmers(seq, k), seqan3_canonical_kmers(seq, k))
                << "k = " << k << ", sequence " << seq;
        }
    }
}

}  // namespace
