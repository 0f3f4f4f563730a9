// The lookups behind the minimizer gate (app/pipeline/gated_lookups.hpp), against the same
// lookups without it: every read's k-mers counted alike, its hits never above those without the
// gate nor below its exact count (a k-mer of the reference is never turned away, those of
// overloaded windows included), and --quick's reads settled whenever their exact hits settle them;
// on every block-hashing path this CPU runs, each giving the same counts (the rolling scan and the
// blocks take turns as the read goes under the gate and out of it).

#include "app/pipeline/gated_lookups.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/kmer/batch_hashing.hpp"
#include "core/kmer/sequence_hashing.hpp"

namespace {

using namespace qmer::app;

std::string random_bases(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s;
    for (size_t i = 0; i < n; ++i) s += "ACGT"[rng() % 4];
    return s;
}

// A filter that holds the reference's hashes and answers 1 in 64 others present by chance.
struct set_filter {
    std::unordered_set<uint64_t> held;
    bool contains(uint64_t h) const {
        return held.contains(h) || (h * 0x9E3779B97F4A7C15ULL) >> 58 == 0;
    }
};

constexpr unsigned window_bits = 12;

struct fixture {
    std::vector<uint64_t> marks = std::vector<uint64_t>((uint64_t{1} << window_bits) / 64, 0);
    std::string reference = random_bases(30000, 11);
    std::unordered_set<uint64_t> exact;
    set_filter filter;
    qmer::qf::gate_bits made{window_bits};

    qmer::local_kmer_hashing hashing() const {
        return {31, 0, 20, window_bits, marks, qmer::level_window_extra_bits};
    }
    fixture() {
        // Every 16th window overloaded: its k-mers are hashed plainly and set no bit.
        for (auto& w : marks) w = 0x0001000100010001ULL;
        hashing().for_each_tagged(reference, [&](uint64_t h, bool plain) {
            exact.insert(h);
            filter.held.insert(h);
            if (!plain) made.set(h);
        });
    }
    uint64_t exact_hits(std::string const& seq) const {
        uint64_t n = 0;
        hashing().for_each(seq, [&](uint64_t h) { n += exact.contains(h); });
        return n;
    }
};

// Reads: from the reference, from the reference with every 25th base changed, and unrelated;
// lengths 0 to 300, some with an N.
std::vector<std::string> reads_of(std::string const& reference) {
    std::mt19937 rng(5);
    std::vector<std::string> out;
    for (int i = 0; i < 800; ++i) {
        size_t const length = rng() % 301;
        std::string read;
        switch (i % 4) {
            case 0:
                read = reference.substr(rng() % (reference.size() - length), length);
                break;
            case 1:
                read = reference.substr(rng() % (reference.size() - length), length);
                for (size_t j = 7; j < read.size(); j += 25) read[j] = read[j] == 'A' ? 'C' : 'A';
                break;
            case 2:
                read = random_bases(length, 1000 + i);
                break;
            default:
                // Unrelated bases, then the reference: the read goes under the gate with no hit
                // and out of it at a later check, maybe more than once (a second unrelated run).
                read = random_bases(length / 3, 2000 + i) +
                       reference.substr(rng() % (reference.size() - length), length);
                if (i % 8 == 3) read += random_bases(100, 3000 + i) + reference.substr(100, 120);
        }
        if (i % 7 == 0 && read.size() > 50) read[40] = 'N';
        out.push_back(read);
    }
    return out;
}

class gated_lookups : public ::testing::TestWithParam<qmer::simd_level> {
  protected:
    void SetUp() override {
        if (!qmer::simd_level_supported(GetParam()))
            GTEST_SKIP() << qmer::simd_level_name(GetParam()) << " is not supported by this CPU";
    }
};

TEST_P(gated_lookups, count_every_kmer_and_lose_only_chance_hits) {
    fixture const f;
    qmer::qf::minimizer_gate const gate(f.made.words(), window_bits);
    auto const hashing = f.hashing();
    qmer::batch_kmer_hashing const blocks(hashing, GetParam());
    auto const reads = reads_of(f.reference);
    uint64_t chance_before = 0, chance_after = 0;
    for (size_t i = 0; i < reads.size(); ++i) {
        // Single reads, and pairs (a read with the next one as its mate).
        for (bool paired : {false, true}) {
            std::string const& mate = reads[(i + 1) % reads.size()];
            uint64_t kmers = 0, hits = 0;
            auto ungated = [&](std::string const& seq) {
                kmers += for_each_kmer_hash_grouped(
                    f.filter, hashing, seq, [&](std::span<uint64_t const> group) {
                        hits += count_contained_read_only(f.filter, group);
                    });
            };
            ungated(reads[i]);
            if (paired) ungated(mate);
            gated_read read;
            count_gated(f.filter, gate, hashing, blocks, reads[i], read, false, 0);
            if (paired) count_gated(f.filter, gate, hashing, blocks, mate, read, false, 0);
            uint64_t const exact = f.exact_hits(reads[i]) + (paired ? f.exact_hits(mate) : 0);
            ASSERT_EQ(read.kmers, kmers) << i;
            ASSERT_LE(read.hits, hits) << i;
            ASSERT_GE(read.hits, exact) << i;
            if (i % 4 == 2) {  // unrelated reads
                chance_before += hits - exact;
                chance_after += read.hits - exact;
            }
        }
    }
    // The gate turns many chance hits of unrelated reads away: not those among a read's first
    // ungated_kmers, nor the later ones of a read such a hit keeps from the gate, and the reads
    // are 0 to 300 bases long (half of them measured 0.51 of the hits before).
    EXPECT_GT(chance_before, 100u);
    EXPECT_LT(chance_after * 10, chance_before * 6);
}

TEST_P(gated_lookups, quick_settles_every_read_its_exact_hits_settle) {
    fixture const f;
    qmer::qf::minimizer_gate const gate(f.made.words(), window_bits);
    auto const hashing = f.hashing();
    qmer::batch_kmer_hashing const blocks(hashing, GetParam());
    for (auto const& seq : reads_of(f.reference)) {
        uint64_t total = 0;
        hashing.for_each(seq, [&](uint64_t) { ++total; });
        for (uint64_t settle : {1u, 4u, 20u}) {
            gated_read read;
            count_gated(f.filter, gate, hashing, blocks, seq, read, true, settle);
            ASSERT_LE(read.kmers, total);
            if (f.exact_hits(seq) >= settle) {
                ASSERT_GE(read.hits, settle);
            } else if (read.hits < settle) {
                ASSERT_EQ(read.kmers, total);  // not settled: every k-mer handed over
            }
            // Settled: the k-mers up to the one that settled it, which is a hit.
            if (read.hits >= settle) {
                std::vector<uint64_t> hashes;
                hashing.for_each(seq, [&](uint64_t h) { hashes.push_back(h); });
                ASSERT_GE(read.kmers, 1u);
                ASSERT_TRUE(f.filter.contains(hashes[read.kmers - 1]));
            }
        }
    }
}

// The counts do not depend on the path that hashed the gated groups: the scalar one is the rolling
// scan throughout (as before the block hasher), the AVX-512 one takes turns with it. Among the
// reads: some that go under the gate and out of it again, and noisy long reads (nanopore-like:
// 5,000 bases, 12% substitutions, some with unrelated stretches), a pair's mates given in turn.
TEST(gated_lookups_paths, every_path_counts_alike) {
    if (!qmer::simd_level_supported(qmer::simd_level::avx512)) GTEST_SKIP() << "no AVX-512";
    fixture const f;
    qmer::qf::minimizer_gate const gate(f.made.words(), window_bits);
    auto const hashing = f.hashing();
    qmer::batch_kmer_hashing const scalar(hashing, qmer::simd_level::scalar);
    qmer::batch_kmer_hashing const wide(hashing, qmer::simd_level::avx512);
    size_t back_out = 0;
    std::vector<std::string> reads = reads_of(f.reference);
    std::mt19937 rng(9);
    for (int i = 0; i < 24; ++i) {
        std::string read = f.reference.substr(rng() % (f.reference.size() - 5000), 5000);
        for (auto& c : read)
            if (rng() % 100 < 12) c = "ACGT"[rng() % 4];
        if (i % 3 == 1) read.replace(1000, 700, random_bases(700, 4000 + i));
        if (i % 3 == 2) read = random_bases(2000, 5000 + i) + read;
        reads.push_back(read);
    }
    for (size_t i = 0; i + 1 < reads.size(); i += 2) {  // pairs: a read and the next
        for (bool quick : {false, true}) {
            gated_read a, b;
            for (size_t j = i; j < i + 2; ++j) {
                count_gated(f.filter, gate, hashing, scalar, reads[j], a, quick, 3);
                count_gated(f.filter, gate, hashing, wide, reads[j], b, quick, 3);
            }
            ASSERT_EQ(a.kmers, b.kmers) << i;
            ASSERT_EQ(a.hits, b.hits) << i;
        }
    }
    for (auto const& seq : reads) {
        for (bool quick : {false, true}) {
            gated_read a, b;
            count_gated(f.filter, gate, hashing, scalar, seq, a, quick, 3);
            count_gated(f.filter, gate, hashing, wide, seq, b, quick, 3);
            ASSERT_EQ(a.kmers, b.kmers) << seq;
            ASSERT_EQ(a.hits, b.hits) << seq;
            back_out += !quick && !a.gating && a.kmers > ungated_kmers + gate_check_kmers &&
                        a.hits > 0 && f.exact_hits(seq.substr(0, 40)) == 0;
        }
    }
    EXPECT_GT(back_out, 20u);  // reads that went under the gate and came out of it
}

INSTANTIATE_TEST_SUITE_P(paths, gated_lookups,
                         ::testing::Values(qmer::simd_level::scalar, qmer::simd_level::avx512),
                         [](auto const& p) { return qmer::simd_level_name(p.param); });

}  // namespace
