// Tests of rank_select_table's value bits (core/qf/stored/table.hpp): a table written by
// rank_select_writer from extended fingerprints (fp << c | value) answers find(h) with the value
// stored beside h's fingerprint, or `absent`, exactly as a map from fingerprints to values does,
// for narrow and wide remainders, 1 to 24 value bits and fills up to 99%; contains() and
// count_contained() agree with it; the table reads back as the extended fingerprints written; a
// table without value bits still answers as before; and impossible value widths are refused.

#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/qf/fingerprint.hpp"

namespace qmer::test {
namespace {

using qf::rank_select_table;

struct written {
    qf::rank_select::shape shape;
    std::vector<uint64_t> words;
    uint64_t elements = 0;
};

written write(qf::rank_select::shape shape, std::vector<uint64_t> const& sorted) {
    written w;
    w.shape = shape;
    qf::rank_select_writer writer(shape);
    auto keep = [&](std::span<uint64_t const> c) {
        w.words.insert(w.words.end(), c.begin(), c.end());
    };
    EXPECT_EQ(writer.append(sorted, keep), sorted.size());
    w.elements = writer.finish(keep);
    return w;
}

// pdep_select runs pdep, which a CPU without BMI2 lacks (elsewhere than x86-64 it is select_bit).
bool can_run_pdep_select() {
#if defined(__x86_64__)
    return __builtin_cpu_supports("bmi2");
#else
    return true;
#endif
}

struct case_t {
    uint64_t m;    // canonical slots
    unsigned r;    // the fingerprints' remainder bits
    unsigned c;    // value bits
    double fill;   // distinct fingerprints / m
    bool crowded;  // a tenth of the hashes in a few narrow ranges (long runs, far offsets)
};

void PrintTo(case_t const& c, std::ostream* os) {
    *os << "m " << c.m << " r " << c.r << " c " << c.c << " fill " << c.fill
        << (c.crowded ? " crowded" : "");
}

class value_bits_oracle : public ::testing::TestWithParam<case_t> {};

TEST_P(value_bits_oracle, find_answers_as_a_map_from_fingerprints_to_values) {
    auto const [m, r, c, fill, crowded] = GetParam();
    std::mt19937_64 rng(m * 131 + r * 7 + c);
    qf::geometry const g = qf::geometry::with_slots(m, r);
    uint64_t const value_mask = (uint64_t{1} << c) - 1;
    // Hashes until `fill` of the slots hold a distinct fingerprint; hashes that meet on a
    // fingerprint keep the first one's value.
    std::unordered_map<uint64_t, uint64_t> oracle;
    std::vector<uint64_t> hashes;
    // Crowds: windows of 16 canonical slots that take a quarter of the hashes.
    std::vector<uint64_t> hot;
    for (int i = 0; i < 8; ++i) hot.push_back(rng());
    uint64_t const window = ~uint64_t{0} / m * 16;
    auto const target = static_cast<size_t>(fill * static_cast<double>(m));
    while (oracle.size() < target) {
        uint64_t const h =
            crowded && rng() % 4 == 0 ? hot[rng() % hot.size()] + rng() % window : rng();
        hashes.push_back(h);
        oracle.emplace(g.fingerprint(h), rng() & value_mask);
    }
    std::vector<uint64_t> extended;
    for (auto const& [fp, value] : oracle) extended.push_back(fp << c | value);
    std::sort(extended.begin(), extended.end());
    qf::rank_select::shape const shape{m, m + m / 8 + 64, r + c};
    auto const w = write(shape, extended);
    ASSERT_EQ(w.elements, extended.size());
    rank_select_table const t(shape, w.words, w.elements, c);
    // Crowds push runs past their block: offsets of more than a block.
    if (crowded) {
        uint64_t far = 0;
        for (size_t b = 0; b < shape.blocks(); ++b)
            far = std::max(far, w.words[b * qf::rank_select::block_words] & 0xffff);
        EXPECT_GE(far, shape.block_slots());
    }
    ASSERT_EQ(t.value_bits(), c);
    ASSERT_EQ(t.geometry().remainder_bits, r);
    ASSERT_EQ(t.geometry().fingerprint_space(), g.fingerprint_space());
    // Every hash written: its fingerprint's value (no false negative).
    for (uint64_t const h : hashes) {
        ASSERT_EQ(t.find(h), oracle.at(g.fingerprint(h))) << std::hex << h;
        ASSERT_TRUE(t.contains(h)) << std::hex << h;
    }
    // Random hashes, and hashes of the fingerprints next to stored ones (same quotient, other
    // remainders, or the neighbouring quotient): the map's answer by fingerprint.
    size_t held = 0, not_held = 0;
    std::vector<uint64_t> probes;
    for (int i = 0; i < 100000; ++i) {
        uint64_t h = rng();
        if (i % 2 == 1) {
            uint64_t const fp = extended[rng() % extended.size()] >> c;
            uint64_t const near = fp + (rng() % 9) - 4;
            if (near >= g.fingerprint_space()) continue;
            h = g.hash_of_fingerprint(near);
            ASSERT_EQ(g.fingerprint(h), near);
        }
        auto const it = oracle.find(g.fingerprint(h));
        uint64_t const expect = it == oracle.end() ? rank_select_table::absent : it->second;
        ASSERT_EQ(t.find(h), expect) << std::hex << h;
        ASSERT_EQ(t.contains(h), it != oracle.end()) << std::hex << h;
        ++(it == oracle.end() ? not_held : held);
        probes.push_back(h);
    }
    EXPECT_GT(held, 0u);
    EXPECT_GT(not_held, 0u);
    // Groups of lookups count what contains() answers.
    for (size_t at = 0, len = 1; at < probes.size(); at += len, len = len % 37 + 1) {
        std::span<uint64_t const> const group(probes.data() + at,
                                              std::min(len, probes.size() - at));
        uint64_t expect = 0;
        for (uint64_t const h : group) expect += oracle.count(g.fingerprint(h));
        ASSERT_EQ(t.count_contained(group), expect) << at;
        if (can_run_pdep_select()) {
            ASSERT_EQ(t.count_contained<qf::rank_select::pdep_select>(group), expect) << at;
        }
    }
    // Reads back as the extended fingerprints written, in order.
    std::vector<uint64_t> back;
    t.for_each_fingerprint([&](uint64_t fp) { back.push_back(fp); });
    ASSERT_EQ(back, extended);
}

INSTANTIATE_TEST_SUITE_P(
    widths_and_fills, value_bits_oracle,
    ::testing::Values(
        // Narrow remainders: many hashes share a fingerprint; 1 to 24 value bits.
        case_t{4096, 4, 8, 0.95, false}, case_t{3000, 5, 1, 0.95, false},
        case_t{5000, 6, 24, 0.95, false}, case_t{2048, 7, 16, 0.99, false},
        case_t{4096, 4, 24, 0.5, true}, case_t{6000, 5, 16, 0.95, true},
        // The usual widths (r = 11 at the default --fpr), power-of-two and odd slot counts.
        case_t{1 << 14, 11, 1, 0.95, false}, case_t{1 << 14, 11, 8, 0.3, false},
        case_t{10000, 11, 16, 0.95, true}, case_t{12345, 9, 24, 0.97, false},
        // Wide remainders: extended fingerprints of 63 bits (q + r + c), slots of up to the
        // layout's 61 bits.
        case_t{1000, 29, 24, 0.95, false}, case_t{777, 37, 16, 0.95, true},
        case_t{3333, 43, 8, 0.9, false}, case_t{64, 33, 24, 0.95, false},
        case_t{20, 42, 16, 0.95, false}, case_t{4, 60, 1, 0.75, false},
        // More than one flush of the writer's blocks.
        case_t{1 << 19, 8, 8, 0.95, false}));

// A lookup of a hash whose fingerprint is not stored answers absent even where a stored
// remainder's value bits, read as remainder bits, would make it look stored: the fingerprints
// (q, x) and (q, x + 1) stored with values that make each slot's whole bits differ from the
// others only in the value.
TEST(value_bits, find_compares_the_remainder_part_only) {
    unsigned const r = 5, c = 3;
    qf::geometry const g = qf::geometry::with_slots(256, r);
    qf::rank_select::shape const shape{256, 256 + 64, r + c};
    // Quotient 10: remainders 3 (value 7) and 4 (value 0); quotient 11: remainder 0 (value 5).
    std::vector<uint64_t> const extended{((10u << r | 3u) << c) | 7u, ((10u << r | 4u) << c) | 0u,
                                         ((11u << r | 0u) << c) | 5u};
    auto const w = write(shape, extended);
    rank_select_table const t(shape, w.words, w.elements, c);
    EXPECT_EQ(t.find(g.hash_of_fingerprint(10u << r | 3u)), 7u);
    EXPECT_EQ(t.find(g.hash_of_fingerprint(10u << r | 4u)), 0u);
    EXPECT_EQ(t.find(g.hash_of_fingerprint(11u << r | 0u)), 5u);
    for (uint64_t x : {0u, 1u, 2u, 5u, 31u}) {
        EXPECT_EQ(t.find(g.hash_of_fingerprint(10u << r | x)), rank_select_table::absent) << x;
        EXPECT_FALSE(t.contains(g.hash_of_fingerprint(10u << r | x))) << x;
    }
    EXPECT_EQ(t.find(g.hash_of_fingerprint(11u << r | 1u)), rank_select_table::absent);
    EXPECT_EQ(t.find(g.hash_of_fingerprint(12u << r | 0u)), rank_select_table::absent);
    EXPECT_EQ(t.find(g.hash_of_fingerprint(9u << r | 3u)), rank_select_table::absent);
}

// The largest value fits: 24 bits of ones beside the remainder.
TEST(value_bits, holds_the_largest_value_of_its_width) {
    for (unsigned c : {1u, 8u, 16u, 24u}) {
        unsigned const r = 6;
        uint64_t const top = (uint64_t{1} << c) - 1;
        qf::geometry const g = qf::geometry::with_slots(1000, r);
        qf::rank_select::shape const shape{1000, 1100, r + c};
        std::vector<uint64_t> fps;
        for (uint64_t q = 0; q < 1000; q += 3) fps.push_back(g.fingerprint_of(q, q % 64));
        std::vector<uint64_t> extended;
        for (size_t i = 0; i < fps.size(); ++i)
            extended.push_back(fps[i] << c | (i % 2 == 0 ? top : 0));
        auto const w = write(shape, extended);
        rank_select_table const t(shape, w.words, w.elements, c);
        for (size_t i = 0; i < fps.size(); ++i)
            ASSERT_EQ(t.find(g.hash_of_fingerprint(fps[i])), i % 2 == 0 ? top : 0) << c << " " << i;
    }
}

// value_bits = 0 is the layout without values: contains answers as the set of fingerprints, the
// fast path included, and find names a stored fingerprint by value 0.
TEST(value_bits, a_table_without_value_bits_still_answers_contains) {
    std::mt19937_64 rng(3);
    for (unsigned r : {4u, 11u, 20u}) {
        qf::geometry const g = qf::geometry::with_slots(5000, r);
        std::vector<uint64_t> hashes;
        std::unordered_set<uint64_t> distinct;
        while (distinct.size() < 4750) {
            hashes.push_back(rng());
            distinct.insert(g.fingerprint(hashes.back()));
        }
        std::vector<uint64_t> fps(distinct.begin(), distinct.end());
        std::sort(fps.begin(), fps.end());
        qf::rank_select::shape const shape{5000, 5000 + 5000 / 8, r};
        auto const w = write(shape, fps);
        rank_select_table const t(shape, w.words, w.elements);
        ASSERT_EQ(t.value_bits(), 0u);
        for (uint64_t const h : hashes) {
            ASSERT_TRUE(t.contains(h));
            ASSERT_EQ(t.find(h), 0u);
        }
        for (int i = 0; i < 50000; ++i) {
            uint64_t const h = rng();
            bool const held = std::binary_search(fps.begin(), fps.end(), g.fingerprint(h));
            ASSERT_EQ(t.contains(h), held);
            ASSERT_EQ(t.find(h), held ? 0 : rank_select_table::absent);
        }
        std::vector<uint64_t> back;
        t.for_each_fingerprint([&](uint64_t fp) { back.push_back(fp); });
        ASSERT_EQ(back, fps);
    }
}

TEST(value_bits, the_constructor_refuses_value_bits_it_cannot_hold) {
    for (unsigned stored : {8u, 20u, 30u, 40u}) {
        qf::rank_select::shape const shape{1000, 1100, stored};
        std::vector<uint64_t> const words(shape.words(), 0);
        // At least one remainder bit must remain, and at most 24 value bits.
        EXPECT_THROW(rank_select_table(shape, words, 0, stored), std::invalid_argument) << stored;
        EXPECT_THROW(rank_select_table(shape, words, 0, stored + 1), std::invalid_argument);
        EXPECT_THROW(rank_select_table(shape, words, 0, 25), std::invalid_argument) << stored;
        EXPECT_NO_THROW(rank_select_table(shape, words, 0, std::min(stored - 1, 24u))) << stored;
        EXPECT_NO_THROW(rank_select_table(shape, words, 0, 0)) << stored;
    }
    EXPECT_EQ(rank_select_table::max_value_bits, 24u);
    // An empty table with value bits finds nothing.
    qf::rank_select::shape const shape{1000, 1100, 20};
    std::vector<uint64_t> const words(shape.words(), 0);
    rank_select_table const t(shape, words, 0, 12);
    std::mt19937_64 rng(9);
    for (int i = 0; i < 1000; ++i) {
        uint64_t const h = rng();
        ASSERT_EQ(t.find(h), rank_select_table::absent);
        ASSERT_FALSE(t.contains(h));
    }
}

}  // namespace
}  // namespace qmer::test
