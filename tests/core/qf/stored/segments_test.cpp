// Tests of core/qf/stored/segments.hpp: a level written unit by unit, each unit's middle by its
// own writer, must be the one writer's words, byte for byte, at every fill, with units that split
// a quotient, share a boundary fingerprint, or start inside a run from the units before.
#include "core/qf/stored/segments.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/qf/stored/writer.hpp"

namespace {

using qmer::qf::rank_select_writer;
using qmer::qf::unit_segment;
namespace rank_select = qmer::qf::rank_select;

// n distinct sorted fingerprints of quotients below m (uniform), r remainder bits.
std::vector<uint64_t> sorted_fingerprints(uint64_t m, unsigned r, size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> fps(n);
    for (auto& fp : fps) fp = rng() % (m << r);
    std::sort(fps.begin(), fps.end());
    fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
    return fps;
}

std::vector<uint64_t> one_writer(rank_select::shape s, std::vector<uint64_t> const& fps) {
    std::vector<uint64_t> words;
    auto keep = [&](std::span<uint64_t const> w) { words.insert(words.end(), w.begin(), w.end()); };
    rank_select_writer w(s);
    EXPECT_EQ(w.append(fps, keep), fps.size());
    w.finish(keep);
    return words;
}

struct split_result {
    std::vector<uint64_t> words;
    size_t middles = 0, units = 0;
};

// The units are [cuts[i], cuts[i + 1]) of fps; `shared` repeats each unit's last fingerprint at
// the start of the next (as neighbouring bins can), which the serial turn must skip.
split_result split_writers(rank_select::shape s, std::vector<uint64_t> const& fps,
                           std::vector<size_t> const& cuts, bool shared) {
    split_result out;
    auto keep = [&](std::span<uint64_t const> w) {
        out.words.insert(out.words.end(), w.begin(), w.end());
    };
    rank_select_writer level(s), unit_writer(s);
    std::vector<uint64_t> piece, unit_piece;
    bool any = false;
    uint64_t last = 0;
    for (size_t u = 0; u + 1 < cuts.size(); ++u) {
        std::vector<uint64_t> unit(fps.begin() + static_cast<ptrdiff_t>(cuts[u]),
                                   fps.begin() + static_cast<ptrdiff_t>(cuts[u + 1]));
        if (shared && u > 0 && cuts[u] > 0) unit.insert(unit.begin(), fps[cuts[u] - 1]);
        auto fp = [&](size_t i) { return unit[i]; };
        unit_segment seg;
        qmer::qf::find_unit_segment(s, unit.size(), fp, seg);
        if (seg.found) qmer::qf::write_unit_segment(seg, fp, unit_writer, unit_piece);
        size_t const at = any && !unit.empty() && unit[0] == last ? 1 : 0;
        uint64_t const elements_before = level.size();
        bool const middle =
            seg.found && seg.start_after(level.next_slot(), at, s.block_slots()) != nullptr;
        size_t const took = qmer::qf::append_unit(level, seg, unit.size(), at, fp, keep, piece);
        EXPECT_EQ(took, unit.size() - at);
        EXPECT_EQ(level.size(), elements_before + took);
        if (took != 0) {
            any = true;
            last = unit[at + took - 1];
        }
        out.middles += middle;
        ++out.units;
    }
    level.finish(keep);
    return out;
}

std::vector<size_t> even_cuts(size_t n, size_t units) {
    std::vector<size_t> cuts;
    for (size_t u = 0; u <= units; ++u) cuts.push_back(n * u / units);
    return cuts;
}

struct fill_case {
    unsigned r;
    double fill;
    size_t units;
};

class segments_fill : public testing::TestWithParam<fill_case> {};

TEST_P(segments_fill, split_words_equal_the_one_writers) {
    auto const [r, fill, units] = GetParam();
    uint64_t const m = 300'007;  // not a power of two: unit boundaries split quotients
    rank_select::shape const s{m, m + 4096, r};
    auto const fps = sorted_fingerprints(m, r, static_cast<size_t>(fill * static_cast<double>(m)),
                                         r * 1000 + units);
    auto const expected = one_writer(s, fps);
    for (bool shared : {false, true}) {
        auto const got = split_writers(s, fps, even_cuts(fps.size(), units), shared);
        ASSERT_EQ(got.words.size(), expected.size());
        EXPECT_TRUE(got.words == expected) << "r " << r << " fill " << fill << " shared " << shared;
        // Most units are written in the middle by their own writer (the point of it).
        EXPECT_GE(got.middles * 10, got.units * 8) << got.middles << " of " << got.units;
    }
}

INSTANTIATE_TEST_SUITE_P(fills, segments_fill,
                         testing::Values(fill_case{11, 0.5, 16}, fill_case{11, 0.9, 16},
                                         fill_case{11, 0.95, 32}, fill_case{8, 0.95, 8},
                                         fill_case{16, 0.9, 64}, fill_case{11, 0.98, 16}));

// Units so small that the runs from the units before reach past every cut: the serial writer
// takes them whole, and the words are still the one writer's.
TEST(segments, units_inside_long_runs_fall_back_to_the_one_writer) {
    unsigned const r = 11;
    uint64_t const m = 40'009;
    rank_select::shape const s{m, m + 4096, r};
    auto const fps = sorted_fingerprints(m, r, static_cast<size_t>(0.97 * m), 7);
    auto const expected = one_writer(s, fps);
    auto const got = split_writers(s, fps, even_cuts(fps.size(), 2000), true);
    EXPECT_TRUE(got.words == expected);
    EXPECT_LT(got.middles, got.units);
}

// Fingerprints crowded in one place (a long cluster) and empty stretches: cuts only where the
// cluster has ended.
TEST(segments, a_long_cluster_and_empty_stretches) {
    unsigned const r = 10;
    uint64_t const m = 100'003;
    rank_select::shape const s{m, m + 8192, r};
    std::vector<uint64_t> fps;
    for (uint64_t q = 20'000; q < 20'600; ++q)  // two per quotient: a cluster of 1,200 slots
        for (uint64_t x : {uint64_t{3}, uint64_t{900}}) fps.push_back(q << r | x);
    for (uint64_t q = 50'000; q < 90'000; q += 7) fps.push_back(q << r | (q % 1000));
    auto const expected = one_writer(s, fps);
    for (size_t units : {1, 2, 3, 5, 40}) {
        auto const got = split_writers(s, fps, even_cuts(fps.size(), units), false);
        EXPECT_TRUE(got.words == expected) << units << " units";
    }
}

// A level that fills up: a unit the level cannot hold whole goes to the one writer, which stops
// where the one writer alone stops.
TEST(segments, a_full_level_stops_where_the_one_writer_stops) {
    unsigned const r = 11;
    uint64_t const m = 50'021;
    rank_select::shape const s{m, m + 4096, r};
    auto const fps = sorted_fingerprints(m, r, static_cast<size_t>(0.9 * m), 11);
    uint64_t const room = fps.size() / 2 + 123;
    rank_select_writer one(s, room), split(s, room), unit_writer(s);
    std::vector<uint64_t> a, b, piece, unit_piece;
    auto keep_a = [&](std::span<uint64_t const> w) { a.insert(a.end(), w.begin(), w.end()); };
    auto keep_b = [&](std::span<uint64_t const> w) { b.insert(b.end(), w.begin(), w.end()); };
    size_t const took_one = one.append(fps, keep_a);
    one.finish(keep_a);
    auto const cuts = even_cuts(fps.size(), 8);
    size_t took_split = 0;
    for (size_t u = 0; u + 1 < cuts.size(); ++u) {
        auto fp = [&](size_t i) { return fps[cuts[u] + i]; };
        size_t const n = cuts[u + 1] - cuts[u];
        unit_segment seg;
        qmer::qf::find_unit_segment(s, n, fp, seg);
        if (seg.found) qmer::qf::write_unit_segment(seg, fp, unit_writer, unit_piece);
        size_t const took = qmer::qf::append_unit(split, seg, n, 0, fp, keep_b, piece);
        took_split += took;
        if (took != n) break;
    }
    split.finish(keep_b);
    EXPECT_EQ(took_split, took_one);
    EXPECT_EQ(took_one, room);
    EXPECT_TRUE(a == b);
}

}  // namespace
