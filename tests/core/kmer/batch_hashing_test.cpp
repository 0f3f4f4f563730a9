// Tests of core/kmer/batch_hashing.hpp: on every path this CPU runs, the block hasher gives
// exactly the hashes of for_each_tagged (minimizer-local) and for_each (plain), whatever the read:
// every length 0..300, N runs, other bytes, lowercase, k from 16 to 32, overloaded windows marked.

#include "core/kmer/batch_hashing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/kmer/sequence_hashing.hpp"

namespace {

using qmer::simd_level;

// Bases in both cases, with runs of N and stray bytes a read may hold (IUPAC codes, U, '.').
std::string random_read(std::mt19937_64& rng, size_t n) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGTACGTACGTacgt"[rng() % 16];
    if (n != 0 && rng() % 2 == 0) {
        size_t const runs = 1 + rng() % 3;
        for (size_t r = 0; r < runs; ++r) {
            size_t const start = rng() % n, length = 1 + rng() % 20;
            for (size_t i = start; i < start + length && i < n; ++i) s[i] = 'N';
        }
    }
    if (n != 0 && rng() % 4 == 0) s[rng() % n] = "RYUu.-n\x80"[rng() % 8];
    return s;
}

template <typename Hashing>
std::vector<uint64_t> expected_hashes(Hashing const& hashing, std::string const& read) {
    std::vector<uint64_t> out;
    if constexpr (Hashing::minimizer_local) {
        hashing.for_each_tagged(read, [&](uint64_t h, bool) { out.push_back(h); });
    } else {
        hashing.for_each(read, [&](uint64_t h) { out.push_back(h); });
    }
    return out;
}

std::vector<uint64_t> batch_hashes(qmer::batch_kmer_hashing const& batch, std::string const& read) {
    std::vector<uint64_t> out;
    batch.hash_all(read, out);
    return out;
}

class batch_hashing : public ::testing::TestWithParam<simd_level> {
  protected:
    void SetUp() override {
        if (!qmer::simd_level_supported(GetParam()))
            GTEST_SKIP() << qmer::simd_level_name(GetParam()) << " is not supported by this CPU";
    }
};

TEST_P(batch_hashing, equals_for_each_tagged_on_every_length_and_k) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::mt19937_64 rng(seed);
        for (unsigned k = 16; k <= 32; ++k) {
            unsigned const m = qmer::locality_minimizer_length(k);
            unsigned const bits = 6 + static_cast<unsigned>(rng() % 8);
            // About a third of the windows overloaded, so that both branches run in every read.
            std::vector<uint64_t> marks((uint64_t{1} << bits) / 64 + 1);
            for (auto& w : marks) w = rng() & rng();
            unsigned const extra = (k % 2) ? qmer::level_window_extra_bits : 0;
            qmer::local_kmer_hashing const local(k, seed * 77, m, bits, marks, extra);
            qmer::batch_kmer_hashing const batch(local, GetParam());
            for (size_t n = 0; n <= 300; ++n) {
                std::string const read = random_read(rng, n);
                ASSERT_EQ(batch_hashes(batch, read), expected_hashes(local, read))
                    << "k " << k << " length " << n << " seed " << seed << " read " << read;
            }
        }
    }
}

TEST_P(batch_hashing, equals_for_each_without_overloaded_windows) {
    std::mt19937_64 rng(4);
    for (unsigned k : {16u, 21u, 31u, 32u}) {
        qmer::local_kmer_hashing const local(k, 9, qmer::locality_minimizer_length(k), 20, {});
        qmer::batch_kmer_hashing const batch(local, GetParam());
        for (size_t n = 0; n <= 300; n += 7) {
            std::string const read = random_read(rng, n);
            ASSERT_EQ(batch_hashes(batch, read), expected_hashes(local, read)) << "k " << k;
        }
    }
}

// The plain mask marks exactly the k-mers for_each_tagged tags as an overloaded window's, block by
// block, at any block start and size (the query asks for the rest of a group).
TEST_P(batch_hashing, plain_mask_is_for_each_tagged_flag) {
    std::mt19937_64 rng(8);
    unsigned const bits = 8;
    std::vector<uint64_t> marks((uint64_t{1} << bits) / 64);
    for (auto& w : marks) w = rng() & rng();
    qmer::local_kmer_hashing const local(31, 5, 20, bits, marks, qmer::level_window_extra_bits);
    qmer::batch_kmer_hashing const batch(local, GetParam());
    uint64_t marked = 0;
    for (int i = 0; i < 200; ++i) {
        std::string const read = random_read(rng, 31 + rng() % 270);
        std::vector<uint64_t> want_hashes;
        std::vector<bool> want_plain;
        local.for_each_tagged(read, [&](uint64_t h, bool plain) {
            want_hashes.push_back(h);
            want_plain.push_back(plain);
        });
        std::vector<uint64_t> got_hashes;
        std::vector<bool> got_plain;
        for (size_t first = 0; first + 31 <= read.size();) {
            size_t const count = 1 + rng() % qmer::batch_kmer_hashing::block_kmers;
            uint64_t out[qmer::batch_kmer_hashing::block_kmers];
            uint64_t plain = ~uint64_t{0};  // cleared by the call
            size_t const n = batch.hash_block(read, first, count, out, plain, [](uint64_t) {});
            if (n < 64) {
                ASSERT_EQ(plain >> n, 0u);  // no bit past the hashes made
            }
            for (size_t j = 0; j < n; ++j) {
                got_hashes.push_back(out[j]);
                got_plain.push_back((plain >> j) & 1);
            }
            first += count;
        }
        ASSERT_EQ(got_hashes, want_hashes) << read;
        ASSERT_EQ(got_plain, want_plain) << read;
        for (bool p : want_plain) marked += p;
    }
    EXPECT_GT(marked, 100u);  // the overloaded branch ran
}

// Minimizers that repeat inside a window (a poly-A run: every m-mer the same) and windows whose
// smallest m-mer hash comes first, last, or twice.
TEST_P(batch_hashing, equals_for_each_tagged_on_repeats) {
    std::mt19937_64 rng(5);
    qmer::local_kmer_hashing const local(31, 3, 20, 10, {});
    qmer::batch_kmer_hashing const batch(local, GetParam());
    for (std::string const& unit : {std::string("A"), std::string("AC"), std::string("ACGTTGCA"),
                                    std::string("acgtACGTTTTTTTTTTTTTTTTTTTTTTTTTGG")}) {
        std::string read;
        while (read.size() < 250) read += unit;
        read += random_read(rng, 40);
        EXPECT_EQ(batch_hashes(batch, read), expected_hashes(local, read)) << unit;
    }
}

TEST_P(batch_hashing, plain_scheme_equals_for_each) {
    std::mt19937_64 rng(6);
    for (unsigned k = 1; k <= 32; ++k) {
        qmer::plain_kmer_hashing const plain(k, 1234 + k);
        qmer::batch_kmer_hashing const batch(plain, GetParam());
        for (size_t n = 0; n <= 300; n += (k < 16 ? 11 : 1)) {
            std::string const read = random_read(rng, n);
            ASSERT_EQ(batch_hashes(batch, read), expected_hashes(plain, read))
                << "k " << k << " length " << n;
        }
    }
}

// A block starting anywhere, of any count, gives the slice of the whole read's hashes that
// starts there (what the query's groups ask for), and never writes past what it returns.
TEST_P(batch_hashing, a_block_is_its_slice_of_the_read) {
    std::mt19937_64 rng(7);
    qmer::local_kmer_hashing const local(31, 11, 20, 12, {});
    qmer::batch_kmer_hashing const batch(local, GetParam());
    std::string const read = std::string(200, 'C') + random_read(rng, 300);
    std::vector<int64_t> index_of(read.size(), -1);
    auto const all = expected_hashes(local, read);
    size_t next = 0;
    qmer::kmer_scanner(31).for_each(read, [&](uint64_t, size_t pos) { index_of[pos] = next++; });
    ASSERT_EQ(next, all.size());
    for (int trial = 0; trial < 500; ++trial) {
        size_t const first = rng() % read.size();
        size_t const count = 1 + rng() % qmer::batch_kmer_hashing::block_kmers;
        std::vector<uint64_t> out(count + 1, 0xDEADBEEF);
        size_t const n = batch.hash_block(read, first, count, out.data());
        std::vector<uint64_t> expected;
        for (size_t p = first; p < first + count && p < read.size(); ++p)
            if (index_of[p] >= 0) expected.push_back(all[static_cast<size_t>(index_of[p])]);
        ASSERT_EQ(std::vector<uint64_t>(out.begin(), out.begin() + static_cast<ptrdiff_t>(n)),
                  expected)
            << "first " << first << " count " << count;
        EXPECT_EQ(out[count], 0xDEADBEEF) << "written past the room of count";
    }
}

// The callback the query prefetches with sees every hash of the block, in order.
TEST_P(batch_hashing, each_sees_the_hashes_in_order) {
    std::mt19937_64 rng(8);
    std::vector<uint64_t> marks(64, 0x0101010101010101ULL);
    qmer::local_kmer_hashing const local(31, 12, 20, 12, marks, qmer::level_window_extra_bits);
    qmer::batch_kmer_hashing const batch(local, GetParam());
    for (int trial = 0; trial < 50; ++trial) {
        std::string const read = random_read(rng, 1 + rng() % 200);
        uint64_t out[qmer::batch_kmer_hashing::block_kmers];
        std::vector<uint64_t> seen;
        size_t const n = batch.hash_block(read, rng() % 20, qmer::batch_kmer_hashing::block_kmers,
                                          out, [&](uint64_t h) { seen.push_back(h); });
        EXPECT_EQ(seen, std::vector<uint64_t>(out, out + n)) << read;
    }
}

std::string path_name(::testing::TestParamInfo<simd_level> const& path) {
    return qmer::simd_level_name(path.param);
}

INSTANTIATE_TEST_SUITE_P(paths, batch_hashing,
                         ::testing::Values(simd_level::scalar, simd_level::avx512), path_name);

TEST(best_simd_level, is_supported) {
    EXPECT_TRUE(qmer::simd_level_supported(qmer::best_simd_level()));
    EXPECT_TRUE(qmer::simd_level_supported(simd_level::scalar));
}

}  // namespace
