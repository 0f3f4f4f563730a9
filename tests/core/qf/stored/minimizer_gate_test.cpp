// Tests of core/qf/stored/minimizer_gate.hpp: a k-mer whose bit was set always passes (the gate
// never turns a stored k-mer away), the k-mers of one super-k-mer share one bit, and absent
// minimizers are mostly turned away; the section's parameters are checked.

#include "core/qf/stored/minimizer_gate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kmer/sequence_hashing.hpp"

namespace {

using qmer::qf::gate_bits;
using qmer::qf::minimizer_gate;

std::string random_bases(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s;
    for (size_t i = 0; i < n; ++i) s += "ACGT"[rng() % 4];
    return s;
}

TEST(minimizer_gate, a_set_hash_always_passes_and_few_others_do) {
    unsigned const window_bits = 12;
    gate_bits made(window_bits);
    std::mt19937_64 rng(3);
    std::vector<uint64_t> stored(20000);
    for (auto& h : stored) {
        h = rng();
        made.set(h);
    }
    minimizer_gate const gate(made.words(), window_bits);
    for (uint64_t h : stored) ASSERT_TRUE(gate.passes(h));
    // 20,000 bits set at random among 2^12 x 32 = 131,072: ~14% of them.
    uint64_t passed = 0;
    for (int i = 0; i < 100000; ++i) passed += gate.passes(rng());
    EXPECT_GT(passed, 10000u);
    EXPECT_LT(passed, 18000u);
}

TEST(minimizer_gate, a_super_kmers_kmers_share_their_bit) {
    // Minimizer-local hashes of scheme 2: a k-mer's window and low bits are its minimizer's, so
    // one set bit (any k-mer of the run's) passes the whole run; absent sequence mostly fails.
    unsigned const window_bits = 14;
    qmer::local_kmer_hashing const hashing(31, 0, 20, window_bits, {},
                                           qmer::level_window_extra_bits);
    std::string const reference = random_bases(20000, 1);
    gate_bits made(window_bits);
    std::set<uint64_t> bits;
    hashing.for_each(reference, [&](uint64_t h) {
        made.set(h);
        bits.insert(qmer::qf::gate_bit_of(h, window_bits));
    });
    // ~20,000 k-mers in runs of ~6.5 k-mers: one bit per run (up to collisions), not per k-mer.
    EXPECT_LT(bits.size(), 5000u);
    EXPECT_GT(bits.size(), 2000u);
    minimizer_gate const gate(made.words(), window_bits);
    hashing.for_each(reference, [&](uint64_t h) { ASSERT_TRUE(gate.passes(h)); });
    uint64_t kmers = 0, passed = 0;
    hashing.for_each(random_bases(20000, 2), [&](uint64_t h) {
        ++kmers;
        passed += gate.passes(h);
    });
    EXPECT_LT(passed, kmers / 5);
}

TEST(minimizer_gate, merges_and_checks_its_words_and_parameters) {
    gate_bits a(4), b(4);
    a.set(uint64_t{1} << 60);
    b.set(~uint64_t{0});
    a.merge(b.words());
    minimizer_gate const gate(a.words(), 4);
    EXPECT_TRUE(gate.passes(uint64_t{1} << 60));
    EXPECT_TRUE(gate.passes(~uint64_t{0}));
    EXPECT_THROW(a.merge(gate_bits(5).words()), std::invalid_argument);
    EXPECT_THROW(minimizer_gate(gate_bits(5).words(), 4), std::invalid_argument);
    EXPECT_EQ(a.words().size(), 8u);  // 2^4 windows of 32 bits

    EXPECT_TRUE(minimizer_gate::is_gate(minimizer_gate::params(20)));
    // A level's parameters (q, r, total, size, canonical, layout) are no gate.
    EXPECT_FALSE(
        minimizer_gate::is_gate(std::vector<uint64_t>{20, 11, 1100000, 900000, 1 << 20, 1}));
    EXPECT_THROW(minimizer_gate::is_gate(std::vector<uint64_t>{qmer::qf::gate_tag, 20, 16}),
                 std::invalid_argument);
    EXPECT_THROW(minimizer_gate::is_gate(std::vector<uint64_t>{qmer::qf::gate_tag, 0, 32}),
                 std::invalid_argument);
}

}  // namespace
