// Tests of core/kmer/sequence_hashing.hpp: what the minimizer-local scheme promises the filters
// (a hash per k-mer that depends on the k-mer alone, locality within a super-k-mer, the plain hash
// in overloaded windows) and how the build decides which windows are overloaded.

#include "core/kmer/sequence_hashing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/kmer/minimizer.hpp"

namespace {

std::string random_bases(std::mt19937_64& rng, size_t n) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

template <typename Hashing>
std::vector<uint64_t> hashes_of(Hashing const& hashing, std::string const& seq) {
    std::vector<uint64_t> out;
    hashing.for_each(seq, [&](uint64_t h) { out.push_back(h); });
    return out;
}

TEST(plain_kmer_hashing, is_the_kmer_hasher_of_every_canonical_kmer) {
    std::mt19937_64 rng(1);
    std::string const seq = random_bases(rng, 500);
    std::vector<uint64_t> expected;
    qmer::kmer_hasher const hasher{42};
    qmer::kmer_scanner(31).for_each(seq,
                                    [&](uint64_t x, size_t) { expected.push_back(hasher(x)); });
    EXPECT_EQ(hashes_of(qmer::plain_kmer_hashing(31, 42), seq), expected);
}

TEST(local_kmer_hashing, top_bits_come_from_the_minimizer_and_the_rest_from_the_kmer) {
    std::mt19937_64 rng(2);
    std::string const seq = random_bases(rng, 3000);
    unsigned const bits = 20;
    qmer::local_kmer_hashing const local(31, 9, 20, bits, {});
    auto const h = hashes_of(local, seq);
    std::vector<uint64_t> kmers, minimizers;
    qmer::minimizer_scanner(31, 20, 9).for_each(seq, [&](uint64_t x, uint64_t mz) {
        kmers.push_back(x);
        minimizers.push_back(qmer::minimizer_spread(mz));
    });
    ASSERT_EQ(h.size(), kmers.size());
    qmer::kmer_hasher const hasher{9};
    for (size_t i = 0; i < h.size(); ++i) {
        EXPECT_EQ(h[i] >> (64 - bits), minimizers[i] >> (64 - bits));
        EXPECT_EQ(h[i] << bits, hasher(kmers[i]) >> bits << bits);
    }
}

// What makes the scheme safe to query: a k-mer's hash is the same whatever read it sits in.
TEST(local_kmer_hashing, a_kmers_hash_does_not_depend_on_its_context) {
    std::mt19937_64 rng(3);
    std::string const seq = random_bases(rng, 2000);
    std::vector<uint64_t> marks(1 << 10, 0x5555555555555555ULL);  // every other window plain
    qmer::local_kmer_hashing const local(31, 0, 20, 16, marks);
    auto const whole = hashes_of(local, seq);
    for (size_t i = 0; i + 31 <= seq.size(); i += 13)
        EXPECT_EQ(hashes_of(local, seq.substr(i, 31)), std::vector<uint64_t>{whole[i]});
}

TEST(local_kmer_hashing, overloaded_windows_take_the_plain_hash) {
    std::mt19937_64 rng(4);
    std::string const seq = random_bases(rng, 4000);
    unsigned const bits = 12;
    std::vector<uint64_t> marks(64, 0);
    std::vector<uint64_t> minimizers, kmers;
    qmer::minimizer_scanner(31, 20, 0).for_each(seq, [&](uint64_t x, uint64_t mz) {
        kmers.push_back(x);
        minimizers.push_back(qmer::minimizer_spread(mz));
    });
    std::set<uint64_t> plain_windows;
    for (size_t i = 0; i < minimizers.size(); i += 50) plain_windows.insert(minimizers[i] >> 52);
    for (uint64_t w : plain_windows) marks[w / 64] |= uint64_t{1} << (w % 64);
    auto const h = hashes_of(qmer::local_kmer_hashing(31, 0, 20, bits, marks), seq);
    qmer::kmer_hasher const hasher{0};
    size_t plain = 0;
    for (size_t i = 0; i < h.size(); ++i) {
        bool const overloaded = plain_windows.count(minimizers[i] >> 52) != 0;
        uint64_t const expected =
            overloaded ? hasher(kmers[i]) : (minimizers[i] >> 52 << 52) | (hasher(kmers[i]) >> 12);
        EXPECT_EQ(h[i], expected) << i;
        plain += overloaded;
    }
    EXPECT_GT(plain, 0u);
    EXPECT_LT(plain, h.size());
}

// Scheme 2 (minimizer_local_levels): the same hash as scheme 1 but for its bottom
// level_window_extra_bits bits, which carry the spread's next bits (window bits for the levels
// above the first, core/qf/stored/level_windows.hpp); overloaded windows keep the plain hash.
TEST(local_kmer_hashing, extra_window_bits_take_the_bottom_of_the_hash) {
    std::mt19937_64 rng(14);
    std::string const seq = random_bases(rng, 3000);
    unsigned const bits = 12, extra = qmer::level_window_extra_bits;
    std::vector<uint64_t> marks(64, 0);
    marks[5] = ~uint64_t{0};  // windows 320..383 plain
    std::vector<uint64_t> spreads;
    qmer::minimizer_scanner(31, 20, 0).for_each(
        seq, [&](uint64_t, uint64_t mz) { spreads.push_back(qmer::minimizer_spread(mz)); });
    auto const one = hashes_of(qmer::local_kmer_hashing(31, 0, 20, bits, marks), seq);
    auto const two = hashes_of(qmer::local_kmer_hashing(31, 0, 20, bits, marks, extra), seq);
    ASSERT_EQ(one.size(), two.size());
    uint64_t const low = (uint64_t{1} << extra) - 1;
    size_t plain = 0;
    for (size_t i = 0; i < one.size(); ++i) {
        if ((spreads[i] >> (64 - bits)) / 64 == 5) {
            EXPECT_EQ(two[i], one[i]) << i;
            ++plain;
            continue;
        }
        EXPECT_EQ(two[i] & ~low, one[i] & ~low) << i;
        EXPECT_EQ(two[i] & low, (spreads[i] >> (64 - bits - extra)) & low) << i;
    }
    EXPECT_LT(plain, one.size());
    EXPECT_THROW(qmer::local_kmer_hashing(31, 0, 20, bits, {}, extra + 1), qmer::usage_error);
}

// The build's pass over the crowded windows hands over exactly the k-mers for_each_tagged tags
// plain, with the same hashes, in order; nothing without marks.
TEST(local_kmer_hashing, for_each_overloaded_gives_the_plain_tagged_kmers) {
    std::mt19937_64 rng(5);
    std::string const seq = random_bases(rng, 20000) + "NNACGTN" + random_bases(rng, 3000);
    unsigned const bits = 10;
    std::vector<uint64_t> marks(16, 0);
    for (int i = 0; i < 40; ++i) {
        uint64_t const w = rng() % 1024;
        marks[w / 64] |= uint64_t{1} << (w % 64);
    }
    qmer::local_kmer_hashing const hashing(31, 7, 20, bits, marks);
    std::vector<uint64_t> tagged, overloaded;
    hashing.for_each_tagged(seq, [&](uint64_t h, bool plain) {
        if (plain) tagged.push_back(h);
    });
    hashing.for_each_overloaded(seq, [&](uint64_t h) { overloaded.push_back(h); });
    EXPECT_GT(tagged.size(), 10u);
    EXPECT_EQ(overloaded, tagged);
    std::vector<uint64_t> none;
    qmer::local_kmer_hashing(31, 7, 20, bits, {}).for_each_overloaded(seq, [&](uint64_t h) {
        none.push_back(h);
    });
    EXPECT_TRUE(none.empty());
}

// Regression: the window must not come from the minimizer's own top bits: a minimizer is the
// smallest of w hashes, so those bits are small (most k-mers would go to the first windows and the
// table's offsets would overflow). Top 6 bits over 200 k random k-mers (in ~30 k super-k-mers):
// every 64th of the table within 25% of its share.
TEST(local_kmer_hashing, hashes_spread_evenly_over_the_table) {
    std::mt19937_64 rng(6);
    std::string const seq = random_bases(rng, 200'030);
    std::vector<size_t> per_part(64, 0);
    size_t n = 0;
    qmer::local_kmer_hashing(31, 0, 20, 16, {}).for_each(seq, [&](uint64_t h) {
        ++per_part[h >> 58];
        ++n;
    });
    for (size_t part = 0; part < 64; ++part) {
        EXPECT_GT(per_part[part], n / 64 * 3 / 4) << part;
        EXPECT_LT(per_part[part], n / 64 * 5 / 4) << part;
    }
}

TEST(local_kmer_hashing, rejects_bad_parameters) {
    std::vector<uint64_t> short_marks(1, 0);
    EXPECT_THROW(qmer::local_kmer_hashing(31, 0, 20, 0, {}), qmer::usage_error);
    EXPECT_THROW(qmer::local_kmer_hashing(31, 0, 20, 41, {}), qmer::usage_error);
    EXPECT_THROW(qmer::local_kmer_hashing(31, 0, 20, 7, short_marks), qmer::usage_error);
    EXPECT_NO_THROW(qmer::local_kmer_hashing(31, 0, 20, 6, short_marks));
}

TEST(locality_minimizer_length, gives_windows_of_at_most_12_kmers_from_k_16) {
    EXPECT_EQ(qmer::locality_minimizer_length(15), 0u);
    EXPECT_EQ(qmer::locality_minimizer_length(31), 20u);
    for (unsigned k = 16; k <= 32; ++k) {
        unsigned const m = qmer::locality_minimizer_length(k);
        EXPECT_GE(m, 2 * k / 3) << k;
        EXPECT_LE(k - m + 1, 12u) << k;
        EXPECT_NO_THROW(qmer::minimizer_scanner(k, m, 0));
    }
}

TEST(overload_threshold, is_two_and_a_half_times_a_windows_slots) {
    EXPECT_DOUBLE_EQ(qmer::overload_threshold(1024, 2), 640.0);
    EXPECT_DOUBLE_EQ(qmer::overload_threshold(53056, 10), 2.5 * 53056 / 1024);
}

}  // namespace
