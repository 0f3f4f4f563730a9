// Tests of core/qf/stored/level_windows.hpp: the identity where it must be (level 0, E = 0, older
// indexes), the window bits a larger level reads, and what that buys: a read's k-mers fall in as
// few windows of a level 64 times the first as of the first.

#include "core/qf/stored/level_windows.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>

#include "core/kmer/sequence_hashing.hpp"

namespace {

using qmer::qf::level_windows;

TEST(locality_window_bits, windows_span_32_to_64_slots) {
    EXPECT_EQ(qmer::qf::locality_window_bits(63), 0u);
    EXPECT_EQ(qmer::qf::locality_window_bits(64), 1u);
    for (uint64_t slots :
         {64ull, 100ull, 1000ull, 53056ull, 1ull << 20, 20'000'000ull, 3'000'000'000ull}) {
        unsigned const b = qmer::qf::locality_window_bits(slots);
        double const window = static_cast<double>(slots) / static_cast<double>(uint64_t{1} << b);
        EXPECT_GE(window, 32.0) << slots;
        EXPECT_LT(window, 64.0) << slots;
    }
}

TEST(level_windows, is_the_identity_for_the_first_level_and_older_hashes) {
    std::mt19937_64 rng(1);
    // B = 14: a first level of 2^14 windows of 32-64 slots, 2^19 to 2^20 - 1 slots.
    uint64_t const first = 600000;
    ASSERT_EQ(qmer::qf::locality_window_bits(first), 14u);
    level_windows const none{};
    level_windows const scheme_1{14, 0};
    level_windows const scheme_2{14, 8};
    for (int i = 0; i < 1000; ++i) {
        uint64_t const h = rng();
        EXPECT_EQ(none.of(uint64_t{1} << 30).apply(h), h);
        EXPECT_EQ(scheme_1.of(uint64_t{1} << 30).apply(h), h);
        EXPECT_EQ(scheme_2.of(first).apply(h), h);
        EXPECT_EQ(scheme_2.of((uint64_t{1} << 20) - 1).apply(h), h);  // still 14 window bits
    }
    // Each level's windows as the first level's rule would size them: 32 to 64 of its slots.
    EXPECT_EQ(scheme_2.of(2 * first).moved, 1u);
    EXPECT_EQ(scheme_2.of(uint64_t{1} << 20).moved, 1u);
    EXPECT_EQ(scheme_2.of(62 * first).moved, 6u);         // 37.2 M slots: 2^20 windows of 35
    EXPECT_EQ(scheme_2.of(uint64_t{1} << 40).moved, 8u);  // at most E
}

// T(h): the top B bits, then the top e of the bottom E bits, then the bits between.
TEST(level_windows, a_larger_level_reads_the_bottom_window_bits_under_the_top_ones) {
    std::mt19937_64 rng(2);
    unsigned const b = 14, e_bits = 8;
    level_windows const w{b, e_bits};
    for (unsigned e = 1; e <= e_bits; ++e) {
        auto const map = w.of(uint64_t{1} << (b + 5 + e));
        ASSERT_EQ(map.moved, e);
        for (int i = 0; i < 200; ++i) {
            uint64_t const h = rng();
            uint64_t const t = map.apply(h);
            EXPECT_EQ(t >> (64 - b), h >> (64 - b));
            uint64_t const moved = (h >> (e_bits - e)) & ((uint64_t{1} << e) - 1);
            EXPECT_EQ((t >> (64 - b - e)) & ((uint64_t{1} << e) - 1), moved);
            // The bits between, shifted down e: the next 64 - b - e_bits of them are h's.
            unsigned const between = 64 - b - e_bits;
            EXPECT_EQ((t << (b + e)) >> (64 - between), (h << b) >> (64 - between));
        }
    }
}

// The point of it: a read's hashes, mapped for a level 64 times the first, fall into as many
// windows of that level (its top B + 6 bits) as into windows of the first (the top B bits):
// one per super-k-mer. Unmapped, they spread over about one window per k-mer.
TEST(level_windows, a_level_64_times_the_first_keeps_a_reads_windows) {
    std::mt19937_64 rng(3);
    unsigned const b = 14;
    qmer::local_kmer_hashing const hashing(31, 0, 20, b, {}, qmer::level_window_extra_bits);
    level_windows const w{b, qmer::level_window_extra_bits};
    auto const map = w.of(uint64_t{1} << (b + 5 + 6));  // 64 times a first level of 2^(b+5)
    size_t first = 0, mapped = 0, unmapped = 0, kmers = 0;
    for (int r = 0; r < 200; ++r) {
        std::string read(150, 'A');
        for (auto& c : read) c = "ACGT"[rng() % 4];
        std::set<uint64_t> a, m, u;
        hashing.for_each(read, [&](uint64_t h) {
            a.insert(h >> (64 - b));
            m.insert(map.apply(h) >> (64 - b - 6));
            u.insert(h >> (64 - b - 6));
            ++kmers;
        });
        first += a.size();
        mapped += m.size();
        unmapped += u.size();
    }
    EXPECT_LE(mapped, first + first / 50);  // two minimizers may share level 0's top bits only
    EXPECT_GT(unmapped, 3 * mapped);
    EXPECT_LT(mapped, kmers / 4);
}

}  // namespace
