// Tests of core/qf/stored/ (block format, select, table, writer, levels) and
// core/qf/concurrent/freeze_thaw.hpp: a table written in the rank-and-select layout answers exactly
// what the concurrent table it was written from answers (the same fingerprint set, so the same
// answer for every hash, present or absent), from 30% to 99% fill, on power-of-two and odd slot
// counts, narrow and wide remainders; it reads back as the same fingerprints and refills the same
// concurrent table word for word; its fast lookup agrees with the general one where windows crowd;
// and damaged words never crash or hang a lookup.

#include "core/qf/concurrent/freeze_thaw.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/stored/levels.hpp"

namespace qmer::test {
namespace {

using qf::locally_locked_filter;
using qf::rank_select_table;

struct written {
    std::vector<uint64_t> words;
    uint64_t elements = 0;
    rank_select_table view() const { return rank_select_table(shape, words, elements); }
    qf::rank_select::shape shape;
};

written write(locally_locked_filter const& f) {
    written w;
    w.shape = qf::rank_select_shape_of(f);
    w.elements = qf::write_rank_select(f, [&](std::span<uint64_t const> chunk) {
        w.words.insert(w.words.end(), chunk.begin(), chunk.end());
    });
    return w;
}

// Fills f with random hashes to `fill` of its canonical slots; returns them.
std::vector<uint64_t> fill_to(locally_locked_filter& f, double fill, std::mt19937_64& rng) {
    std::vector<uint64_t> in;
    auto const target = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
    while (f.size() < target) {
        uint64_t const h = rng();
        if (f.insert(h) == insert_result::inserted) in.push_back(h);
    }
    return in;
}

std::vector<uint64_t> fingerprints_of(locally_locked_filter const& f) {
    std::vector<uint64_t> out;
    f.for_each_fingerprint([&](uint64_t fp) { out.push_back(fp); });
    return out;
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
    qf::geometry g;
    double fill;
};

class rank_select_oracle : public ::testing::TestWithParam<case_t> {};

TEST_P(rank_select_oracle, answers_as_the_table_it_was_written_from) {
    auto const [g, fill] = GetParam();
    std::mt19937_64 rng(g.canonical_slots() * 31 + g.remainder_bits);
    locally_locked_filter f(g);
    auto const in = fill_to(f, fill, rng);
    auto const w = write(f);
    ASSERT_EQ(w.elements, f.size());
    ASSERT_EQ(w.words.size(), w.shape.words());
    auto const t = w.view();
    for (uint64_t h : in) ASSERT_TRUE(t.contains(h)) << std::hex << h;  // no false negative
    // Absent hashes, and hashes next to stored ones (same quotient, other remainders): the same
    // answer as the concurrent table, which holds the same fingerprints.
    size_t positives = 0;
    std::vector<uint64_t> probes;
    for (int i = 0; i < 200000; ++i) {
        uint64_t const h = i % 2 ? rng() : in[rng() % in.size()] + (rng() % 4096) - 2048;
        bool const expect = f.contains_final(h);
        ASSERT_EQ(t.contains(h), expect) << std::hex << h;
        positives += expect;
        probes.push_back(h);
    }
    EXPECT_GT(positives, 0u);
    // A group's count (the query's lookups) is the count of its members' answers, in groups of
    // every length from 0 to 40.
    size_t counted = 0, groups_with_both = 0;
    for (size_t at = 0, len = 0; at < probes.size(); at += len, len = (len + 1) % 41) {
        std::span<uint64_t const> const group(probes.data() + at,
                                              std::min(len, probes.size() - at));
        uint64_t expect = 0;
        for (uint64_t h : group) expect += f.contains_final(h);
        ASSERT_EQ(t.count_contained(group), expect) << at;
        if (can_run_pdep_select()) {
            ASSERT_EQ(t.count_contained<qf::rank_select::pdep_select>(group), expect) << at;
        }
        counted += expect;
        groups_with_both += expect > 0 && expect < group.size();
    }
    EXPECT_EQ(counted, positives);
    EXPECT_GT(groups_with_both, 0u);
    // Reads back as the same fingerprints, and refills the same table word for word.
    std::vector<uint64_t> fps;
    t.for_each_fingerprint([&](uint64_t fp) { fps.push_back(fp); });
    ASSERT_EQ(fps, fingerprints_of(f));
    // Read in parts between random block boundaries (runs cross them at high fill), the parts
    // give the same fingerprints in order, and their counts add up.
    size_t const blocks = w.shape.blocks();
    for (int trial = 0; trial < 4; ++trial) {
        std::vector<size_t> cuts{0, blocks};
        for (int i = 0; i < 3 + trial * 20; ++i) cuts.push_back(rng() % (blocks + 1));
        std::sort(cuts.begin(), cuts.end());
        std::vector<uint64_t> parts;
        uint64_t seen = 0;
        for (size_t i = 0; i + 1 < cuts.size(); ++i)
            seen += t.for_each_fingerprint_in(cuts[i], cuts[i + 1],
                                              [&](uint64_t fp) { parts.push_back(fp); });
        ASSERT_EQ(seen, t.size());
        ASSERT_EQ(parts, fps) << "trial " << trial;
    }
    auto const thawed = qf::thaw_rank_select(t, {});
    ASSERT_EQ(thawed->size(), f.size());
    ASSERT_EQ(thawed->groups().size(), f.groups().size());
    for (size_t i = 0; i < f.groups().size(); ++i)
        ASSERT_EQ(thawed->groups()[i].load(), f.groups()[i].load()) << "group " << i;
}

INSTANTIATE_TEST_SUITE_P(
    fills_and_shapes, rank_select_oracle,
    ::testing::Values(case_t{{12, 11}, 0.3}, case_t{{12, 11}, 0.7}, case_t{{12, 11}, 0.95},
                      case_t{{12, 11}, 0.99}, case_t{qf::geometry::with_slots(3000, 7), 0.95},
                      case_t{qf::geometry::with_slots(4032, 1), 0.9},
                      case_t{qf::geometry::with_slots(1000, 50), 0.95},
                      case_t{qf::geometry::with_slots(100, 56), 0.99}, case_t{{6, 3}, 0.95},
                      // Runs compared a word at a time (remainder_lanes): 12, 4, 3 and 2 lanes
                      // a word, and one lane of 33 bits.
                      case_t{{11, 5}, 0.97}, case_t{{11, 16}, 0.97}, case_t{{10, 21}, 0.99},
                      case_t{{10, 32}, 0.98}, case_t{{10, 33}, 0.95},
                      // More than one flush of 8192 blocks, with offsets pending across flushes.
                      case_t{{20, 9}, 0.97}));

// Minimizer-local hashing (core/kmer/sequence_hashing.hpp) crowds windows of ~32 canonical slots
// unevenly: runs pile up, offsets point blocks past their own, and runs grow longer than a word's
// lanes. contains_fingerprint's fast path and its fallback must answer there exactly as the
// general lookup and the concurrent table do. The table is checked to hold each case the fast
// path hands on, so that the comparison covers them.
//
// The fast path reads its fields with byte loads: r = 6 (s = 62) is the shape whose run ends do not
// fit one (all its lookups take the general path), r = 12 and 16 those where a byte load holds
// fewer remainders than a word (4 against 5, 3 against 4): the longer runs take the general path.
TEST(rank_select, fast_lookup_agrees_with_the_general_one_on_crowded_windows) {
    for (unsigned r : {5u, 6u, 11u, 12u, 16u, 20u}) {
        std::mt19937_64 rng(1000 + r);
        qf::geometry const g{14, r};
        unsigned const window_bits = 9;  // 2^14 / 2^9 = 32 slots a window
        locally_locked_filter f(g);
        std::vector<uint64_t> hot(12);
        for (auto& w : hot) w = rng() >> (64 - window_bits);
        std::vector<uint64_t> in;
        auto const target = static_cast<size_t>(0.95 * static_cast<double>(f.capacity()));
        while (f.size() < target) {
            // A quarter of the hashes go to 12 windows (each ~4x its share), the rest anywhere.
            uint64_t const window =
                rng() % 4 == 0 ? hot[rng() % hot.size()] : rng() >> (64 - window_bits);
            uint64_t const h = (window << (64 - window_bits)) | (rng() >> window_bits);
            if (f.insert(h) == insert_result::inserted) in.push_back(h);
        }
        auto const w = write(f);
        auto const t = w.view();
        // The cases the fast path hands on, or takes by a multiplication: offsets past the
        // block, and runs longer than a word's lanes.
        unsigned const s = w.shape.block_slots();
        size_t far_offsets = 0;
        for (size_t b = 0; b < w.shape.blocks(); ++b)
            far_offsets += (w.words[b * qf::rank_select::block_words] & 0xffff) >= s;
        EXPECT_GT(far_offsets, 10u) << "r = " << r;
        std::vector<uint64_t> fps;
        t.for_each_fingerprint([&](uint64_t fp) { fps.push_back(fp); });
        size_t longest = 0, run = 0;
        for (size_t i = 0; i < fps.size(); ++i) {
            run = i > 0 && fps[i] >> r == fps[i - 1] >> r ? run + 1 : 1;
            longest = std::max(longest, run);
        }
        EXPECT_GT(longest, 64u / r) << "r = " << r;
        uint64_t const mask = (uint64_t{1} << r) - 1;
        bool const bmi2 = can_run_pdep_select();
        auto check = [&](uint64_t fp) {
            bool const fast = t.contains_fingerprint(fp >> r, fp & mask);
            ASSERT_EQ(fast, t.contains_fingerprint_general(fp >> r, fp & mask)) << std::hex << fp;
            if (bmi2) {
                ASSERT_EQ(fast,
                          t.contains_fingerprint<qf::rank_select::pdep_select>(fp >> r, fp & mask))
                    << std::hex << fp;
            }
        };
        for (uint64_t fp : fps) {
            ASSERT_TRUE(t.contains_fingerprint(fp >> r, fp & mask)) << std::hex << fp;
            // The neighbours of a stored fingerprint: the same run, the runs around it.
            for (uint64_t delta : {uint64_t{1}, uint64_t{2}, mask, mask + 1, mask + 2})
                for (uint64_t near : {fp + delta, fp - delta})
                    if (near < (g.canonical_slots() << r)) check(near);
        }
        for (int i = 0; i < 100000; ++i) check(rng() % (g.canonical_slots() << r));
        for (uint64_t h : in) ASSERT_TRUE(t.contains(h));
        for (int i = 0; i < 100000; ++i) {
            uint64_t const h = rng();
            ASSERT_EQ(t.contains(h), f.contains_final(h)) << std::hex << h;
        }
    }
}

// Hashes in the order minimizer-local hashing (core/kmer/sequence_hashing.hpp) hands a read's
// k-mers over: runs of 1 to 12 (a super-k-mer) sharing their top window_bits, so their quotients
// fall in one window of the table, two or three blocks, in no order within it. Half the runs are
// stored hashes of one window (neighbours in sorted order) and hashes next to them, the other half
// hashes of a random window.
std::vector<uint64_t> superkmer_probes(std::vector<uint64_t> const& sorted_in, unsigned window_bits,
                                       size_t count, std::mt19937_64& rng) {
    std::vector<uint64_t> out;
    while (out.size() < count) {
        size_t const length = 1 + rng() % 12;
        std::vector<uint64_t> run;
        if (rng() % 2) {
            size_t const at = rng() % (sorted_in.size() - length);
            for (size_t i = 0; i < length; ++i) {
                uint64_t const h = sorted_in[at + i];
                run.push_back(rng() % 3 ? h : h + (rng() % 4096) - 2048);
            }
        } else {
            uint64_t const window = rng() >> (64 - window_bits);
            for (size_t i = 0; i < length; ++i)
                run.push_back((window << (64 - window_bits)) | (rng() >> window_bits));
        }
        std::shuffle(run.begin(), run.end(), rng);
        out.insert(out.end(), run.begin(), run.end());
    }
    return out;
}

// count_contained (the default query's lookups) and the rank_select_group_lookup under it, which
// keep each block's decoded run ends for the lookups after it in the same block, answer as the
// general lookup does for every hash: on tables 50 to 95% full with windows crowded as
// minimizer-local hashing crowds them, for groups of hashes that share blocks as a read's
// super-k-mers do and groups that do not, with both selects. r = 5 has 64-slot blocks (a run end
// word of E_b's block shifted by the whole block), r = 6 the shape whose lookups all take the
// general path, r = 16 runs longer than a byte load's lanes.
TEST(rank_select, group_lookups_agree_with_the_general_one_on_superkmer_groups) {
    bool const bmi2 = can_run_pdep_select();
    for (unsigned r : {5u, 6u, 11u, 16u}) {
        for (double fill : {0.5, 0.7, 0.85, 0.95}) {
            std::mt19937_64 rng(2000 + r * 100 + static_cast<unsigned>(fill * 100));
            qf::geometry const g{14, r};
            unsigned const window_bits = 9;  // 32 slots a window
            locally_locked_filter f(g);
            std::vector<uint64_t> hot(12);
            for (auto& w : hot) w = rng() >> (64 - window_bits);
            std::vector<uint64_t> in;
            auto const target = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
            while (f.size() < target) {
                uint64_t const window =
                    rng() % 4 == 0 ? hot[rng() % hot.size()] : rng() >> (64 - window_bits);
                uint64_t const h = (window << (64 - window_bits)) | (rng() >> window_bits);
                if (f.insert(h) == insert_result::inserted) in.push_back(h);
            }
            std::sort(in.begin(), in.end());
            auto const w = write(f);
            auto const t = w.view();
            unsigned const s = w.shape.block_slots();
            if (fill > 0.9) {
                size_t far_offsets = 0;
                for (size_t b = 0; b < w.shape.blocks(); ++b)
                    far_offsets += (w.words[b * qf::rank_select::block_words] & 0xffff) >= s;
                EXPECT_GT(far_offsets, 10u) << "r = " << r;
            }
            auto block_of = [&](uint64_t h) { return g.quotient(h) / s; };
            for (bool const local : {true, false}) {
                std::vector<uint64_t> probes;
                if (local) {
                    probes = superkmer_probes(in, window_bits, 40000, rng);
                } else {
                    for (int i = 0; i < 40000; ++i)
                        probes.push_back(i % 2 ? rng() : in[rng() % in.size()]);
                }
                // The groups share blocks as the query's do, or (uniform hashes) hardly ever.
                size_t same_block = 0;
                for (size_t i = 1; i < probes.size(); ++i)
                    same_block += block_of(probes[i]) == block_of(probes[i - 1]);
                if (local) {
                    EXPECT_GT(same_block, probes.size() / 3) << "r = " << r;
                } else {
                    EXPECT_LT(same_block, probes.size() / 50) << "r = " << r;
                }
                size_t positives = 0;
                for (size_t at = 0, len = 1; at < probes.size(); at += len, len = len % 64 + 1) {
                    std::span<uint64_t const> const group(probes.data() + at,
                                                          std::min(len, probes.size() - at));
                    qf::rank_select_group_lookup<qf::rank_select::broadword_select> broadword(t);
                    qf::rank_select_group_lookup<qf::rank_select::pdep_select> pdep(t);
                    uint64_t expect = 0;
                    for (uint64_t const h : group) {
                        uint64_t const fp = g.fingerprint(h);
                        bool const general =
                            t.contains_fingerprint_general(fp >> r, fp & g.remainder_mask());
                        ASSERT_EQ(general, f.contains_final(h)) << std::hex << h;
                        ASSERT_EQ(broadword.contains(h), general) << std::hex << h;
                        if (bmi2) {
                            ASSERT_EQ(pdep.contains(h), general) << std::hex << h;
                        }
                        expect += general;
                    }
                    ASSERT_EQ(t.count_contained(group), expect) << at;
                    if (bmi2) {
                        ASSERT_EQ(t.count_contained<qf::rank_select::pdep_select>(group), expect)
                            << at;
                    }
                    positives += expect;
                }
                EXPECT_GT(positives, probes.size() / 10) << "r = " << r;
                EXPECT_LT(positives, probes.size()) << "r = " << r;
            }
        }
    }
}

TEST(rank_select, empty_table_answers_nothing) {
    locally_locked_filter f(qf::geometry{10, 8});
    auto const w = write(f);
    EXPECT_EQ(w.elements, 0u);
    auto const t = w.view();
    std::mt19937_64 rng(1);
    for (int i = 0; i < 10000; ++i) EXPECT_FALSE(t.contains(rng()));
}

TEST(rank_select, a_block_is_one_cache_line) {
    // r = 11: 38 slots of 13 bits and a 16-bit offset in 512 bits, 13.5 bits per slot, against
    // 16 in the concurrent layout (4 slots of 14 bits per 64-bit word).
    qf::rank_select::shape const s{1u << 20, (1u << 20) + (1u << 14) + 64, 11};
    EXPECT_EQ(s.block_slots(), 38u);
    EXPECT_EQ(s.words(), s.blocks() * 8);
    EXPECT_EQ(qf::rank_select::slots_per_block(1), 64u);  // capped: one word of occupied bits
    EXPECT_EQ(qf::rank_select::slots_per_block(61), 7u);
    for (unsigned r = 1; r <= 61; ++r)
        EXPECT_LE(16 + (r + 2) * qf::rank_select::slots_per_block(r), 512u) << r;
}

TEST(rank_select, refuses_words_that_do_not_match_the_shape) {
    std::vector<uint64_t> words(10);
    EXPECT_THROW(rank_select_table({1000, 1100, 8}, words, 0), std::invalid_argument);
    EXPECT_THROW(rank_select_table({1000, 999, 8}, words, 0), std::invalid_argument);
    EXPECT_THROW(rank_select_table({1000, 1100, 0}, words, 0), std::invalid_argument);
    EXPECT_THROW(rank_select_table({1000, 1100, 62}, words, 0), std::invalid_argument);
}

TEST(rank_select_writer, refuses_fingerprints_it_cannot_place) {
    qf::rank_select::shape const s{128, 200, 8};
    auto ignore = [](std::span<uint64_t const>) {};
    {
        qf::rank_select_writer w(s);
        std::vector<uint64_t> const down{(5u << 8) | 3, (5u << 8) | 2};  // out of order
        EXPECT_THROW(w.append(down, ignore), std::invalid_argument);
    }
    {
        qf::rank_select_writer w(s);
        std::vector<uint64_t> const past{uint64_t{128} << 8};  // quotient 128 of 128
        EXPECT_THROW(w.append(past, ignore), std::invalid_argument);
    }
}

// The sorted build's stopping rule is append_sorted's: it stops before the fingerprint that would
// land past the last slot, or be one more than max_elements, and has then written exactly what
// the concurrent table holds after the same append (word for word through write_rank_select).
TEST(rank_select_writer, stops_where_append_sorted_stops) {
    std::mt19937_64 rng(23);
    for (unsigned r : {3u, 11u, 20u}) {
        for (uint64_t max_new : {uint64_t{700}, ~uint64_t{0}}) {
            qf::geometry const g = qf::geometry::with_slots(1000, r);
            size_t const total = 1000 + 40;  // a small overflow area: the slots run out first
            std::vector<uint64_t> fps;
            for (int i = 0; i < 1300; ++i) fps.push_back(rng() % g.fingerprint_space());
            std::sort(fps.begin(), fps.end());
            // Quotients crowded at the end, so the overflow area fills.
            for (int i = 0; i < 200; ++i)
                fps.push_back(((999 - i / 40) << r | static_cast<uint64_t>(i % 40)));
            std::sort(fps.begin(), fps.end());
            locally_locked_filter f(g, total, {});
            locally_locked_filter::sorted_append_state st;
            size_t const took = f.append_sorted(fps, st, max_new);
            ASSERT_LT(took, fps.size()) << "the case must stop early";
            qf::rank_select_writer w({g.canonical_slots(), total, r}, max_new);
            std::vector<uint64_t> direct;
            auto to_direct = [&](std::span<uint64_t const> c) {
                direct.insert(direct.end(), c.begin(), c.end());
            };
            // In pieces, as the sorted build hands over its buckets.
            size_t consumed = 0;
            for (size_t at = 0; at < fps.size() && consumed == at; at += 97) {
                size_t const n = std::min<size_t>(97, fps.size() - at);
                consumed += w.append(std::span<uint64_t const>(fps).subspan(at, n), to_direct);
            }
            EXPECT_EQ(consumed, took);
            EXPECT_EQ(w.finish(to_direct), f.size());
            auto const via_table = write(f);
            EXPECT_EQ(direct, via_table.words) << "r " << r;
        }
    }
}

// The layout as core/qf/stored/block_format.hpp defines it, bit by bit: each fingerprint at the
// first free slot at or after its quotient, its quotient's occupied bit, its remainder, a run-end
// bit at the last slot of each quotient, and each block's offset from the last slot taken by a
// smaller quotient. The writer must produce exactly these words.
std::vector<uint64_t> layout_by_definition(qf::rank_select::shape shape,
                                           std::vector<uint64_t> const& fps) {
    qf::rank_select::fields const at{shape.block_slots(), shape.remainder_bits};
    unsigned const s = at.s, r = at.r;
    std::vector<uint64_t> words(shape.words(), 0);
    auto block = [&](uint64_t slot) { return words.data() + slot / s * 8; };
    std::vector<uint64_t> pos(fps.size());
    uint64_t next = 0;
    for (size_t i = 0; i < fps.size(); ++i) {
        uint64_t const q = fps[i] >> r;
        pos[i] = std::max(q, next);
        next = pos[i] + 1;
        qf::rank_select::or_bits(block(q), at.occupieds() + static_cast<unsigned>(q % s), 1, 1);
        qf::rank_select::or_bits(block(pos[i]), at.remainder(static_cast<unsigned>(pos[i] % s)), r,
                                 fps[i] & ((uint64_t{1} << r) - 1));
        if (i + 1 == fps.size() || fps[i + 1] >> r != q)
            qf::rank_select::or_bits(block(pos[i]),
                                     at.runends() + static_cast<unsigned>(pos[i] % s), 1, 1);
    }
    size_t i = 0;
    uint64_t end = 0;  // one past the last slot of a quotient below the block
    for (size_t b = 0; b < shape.blocks(); ++b) {
        for (; i < fps.size() && fps[i] >> r < b * s; ++i) end = pos[i] + 1;
        if (end > b * s) words[b * 8] |= end - b * s;
    }
    return words;
}

// Sorted distinct fingerprints for `shape`: `n` uniform ones, and `crowds` quotients that take
// `per_crowd` consecutive remainders each (runs far longer than a block, clusters that push
// later quotients many blocks on).
std::vector<uint64_t> writer_input(qf::rank_select::shape shape, size_t n, size_t crowds,
                                   uint64_t per_crowd, std::mt19937_64& rng) {
    unsigned const r = shape.remainder_bits;
    uint64_t const space = shape.canonical_slots << r;
    std::vector<uint64_t> fps;
    for (size_t i = 0; i < n; ++i) fps.push_back(rng() % space);
    for (size_t c = 0; c < crowds; ++c) {
        uint64_t const q = rng() % shape.canonical_slots;
        uint64_t const most = r >= 40 ? per_crowd : std::min(per_crowd, uint64_t{1} << r);
        for (uint64_t x = 0; x < most; ++x) fps.push_back(q << r | x);
    }
    std::sort(fps.begin(), fps.end());
    fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
    // Those that fit the table's slots.
    uint64_t next = 0;
    size_t fit = 0;
    for (; fit < fps.size() && std::max(fps[fit] >> r, next) < shape.total_slots; ++fit)
        next = std::max(fps[fit] >> r, next) + 1;
    fps.resize(fit);
    return fps;
}

// Every remainder width's block shape, sparse to nearly full tables, uniform and crowded
// fingerprints, handed over in pieces of 1 to 3000 (slides of the writer's window at every
// point, and windows that must grow past their 64 blocks), with duplicates on the way: the same
// words as the layout's definition.
TEST(rank_select_writer, writes_the_layout_as_defined) {
    std::mt19937_64 rng(41);
    for (unsigned r : {1u, 2u, 3u, 5u, 7u, 8u, 11u, 13u, 16u, 21u, 31u, 32u, 33u, 47u, 50u, 61u}) {
        for (double fill : {0.02, 0.5, 0.9, 0.99}) {
            for (size_t crowds : {size_t{0}, size_t{3}}) {
                // Fingerprints of at most 63 bits: few quotients for the widest remainders.
                uint64_t const canonical =
                    std::min<uint64_t>(20000 + rng() % 5000, uint64_t{1} << (63 - r));
                qf::rank_select::shape const shape{canonical, canonical + canonical / 8, r};
                // About fill * canonical fingerprints, a crowd taking up to 3000 of them.
                auto const n = static_cast<size_t>(fill * static_cast<double>(canonical));
                size_t const crowded = std::min<size_t>(crowds * 3000, n / 2);
                auto fps = writer_input(shape, n - crowded, crowds, crowded / 3 + 1, rng);
                auto const expected = layout_by_definition(shape, fps);
                // Duplicates of some fingerprints, which the writer skips.
                std::vector<uint64_t> input;
                for (uint64_t fp : fps) {
                    input.push_back(fp);
                    if (rng() % 50 == 0) input.push_back(fp);
                }
                qf::rank_select_writer w(shape);
                std::vector<uint64_t> words;
                auto keep = [&](std::span<uint64_t const> c) {
                    words.insert(words.end(), c.begin(), c.end());
                };
                for (size_t at = 0; at < input.size();) {
                    size_t const piece = std::min<size_t>(input.size() - at, 1 + rng() % 3000);
                    ASSERT_EQ(w.append(std::span<uint64_t const>(input).subspan(at, piece), keep),
                              piece);
                    at += piece;
                }
                ASSERT_EQ(w.finish(keep), fps.size());
                ASSERT_EQ(words, expected) << "r " << r << " fill " << fill << " crowds " << crowds;
            }
        }
    }
}

// A run may end at most max_scan_blocks blocks past its quotient's (a lookup scans no farther),
// and a block's offset must fit 16 bits: at each limit the writer writes, one slot past it, it
// refuses (when the run is written, or at finish).
TEST(rank_select_writer, refuses_a_run_past_the_lookups_reach_and_an_offset_past_16_bits) {
    auto write_all = [](qf::rank_select::shape shape, std::vector<uint64_t> const& fps) {
        qf::rank_select_writer w(shape);
        auto ignore = [](std::span<uint64_t const>) {};
        for (size_t at = 0; at < fps.size(); at += 1000)
            w.append(
                std::span<uint64_t const>(fps).subspan(at, std::min<size_t>(1000, fps.size() - at)),
                ignore);
        w.finish(ignore);
    };
    auto message = [&](qf::rank_select::shape shape, std::vector<uint64_t> const& fps) {
        try {
            write_all(shape, fps);
        } catch (std::invalid_argument const& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    {
        // r = 61: 7 slots a block, so a run reaches max_scan_blocks before an offset needs 17 bits.
        // Quotient 3 in block 0 (slots 0-6): its run may end in block max_scan_blocks at most.
        unsigned const r = 61, s = qf::rank_select::slots_per_block(r);
        uint64_t const last_slot = (qf::rank_select::max_scan_blocks + 1) * s - 1;
        qf::rank_select::shape const shape{100, last_slot + 10, r};
        std::vector<uint64_t> fps;
        for (uint64_t x = 0; x + 3 <= last_slot; ++x) fps.push_back(uint64_t{3} << r | x);
        EXPECT_EQ(message(shape, fps), "");
        fps.push_back(uint64_t{3} << r | (last_slot - 2));
        EXPECT_NE(message(shape, fps).find("too far"), std::string::npos);
        // The same run followed by a later quotient of the block.
        fps.push_back(uint64_t{5} << r);
        EXPECT_NE(message(shape, fps).find("too far"), std::string::npos);
    }
    {
        // A run twice as far (refused before the writer's window grows to hold it).
        unsigned const r = 50, s = qf::rank_select::slots_per_block(r);
        uint64_t const slots = 2 * (qf::rank_select::max_scan_blocks + 1) * s;
        qf::rank_select::shape const shape{1000, slots + 100, r};
        std::vector<uint64_t> fps;
        for (uint64_t x = 0; x < slots; ++x) fps.push_back(uint64_t{3} << r | x);
        EXPECT_NE(message(shape, fps).find("too far"), std::string::npos);
    }
    {
        // r = 1: 64 slots a block. Quotients from 0 on with both remainders each: block b begins
        // 64 b slots into the cluster, so block 1024 needs offset 65536.
        unsigned const r = 1;
        auto cluster = [](uint64_t quotients) {
            std::vector<uint64_t> fps;
            for (uint64_t q = 0; q < quotients; ++q) fps.insert(fps.end(), {q << 1, q << 1 | 1});
            return fps;
        };
        qf::rank_select::shape const shape{200000, 300000, r};
        EXPECT_EQ(message(shape, cluster(1023 * 64 + 1)), "");  // block 1023: offset 65472
        EXPECT_NE(message(shape, cluster(1024 * 64 + 1)).find("16 bits"), std::string::npos);
    }
}

// Damaged words: every lookup returns (bounded scans, reads inside the words) and reading back
// either succeeds or says what is wrong. Run under ASan by scripts/sanitize.
TEST(rank_select, damaged_words_never_crash_or_hang_a_lookup) {
    std::mt19937_64 rng(7);
    for (unsigned r : {1u, 5u, 11u, 29u, 61u}) {
        qf::rank_select::shape const s{5000, 5000 + 5000 / 64 + 64, r};
        std::vector<uint64_t> words(s.words());
        for (int round = 0; round < 4; ++round) {
            for (auto& w : words) {
                // All ones, all random, sparse, and huge offsets.
                w = round == 0 ? ~uint64_t{0} : round == 1 ? rng() : rng() & rng() & rng();
            }
            if (round == 3)
                for (size_t b = 0; b < s.blocks(); ++b)
                    words[b * qf::rank_select::block_words] =
                        (words[b * 8] & ~uint64_t{0xffff}) | rng() % 2000;
            rank_select_table const t(s, words, 100);
            size_t yes = 0;
            for (int i = 0; i < 20000; ++i) yes += t.contains(rng());
            // The group lookups, on hashes in runs of one block as a read's super-k-mers are.
            std::vector<uint64_t> group(64);
            for (int i = 0; i < 300; ++i) {
                uint64_t const top = rng();
                for (auto& h : group) h = (top & ~(~uint64_t{0} >> 12)) | (rng() >> 12);
                yes += t.count_contained(group);
                if (can_run_pdep_select())
                    yes += t.count_contained<qf::rank_select::pdep_select>(group);
            }
            (void)yes;
            try {
                t.for_each_fingerprint([](uint64_t) {});
            } catch (std::invalid_argument const&) {
            }
            try {
                (void)qf::thaw_rank_select(t, {});
            } catch (std::invalid_argument const&) {
            }
        }
    }
}

// The levels of an expandable filter, each written in the rank-select layout, answer as the
// filter does, for stored and random hashes.
TEST(rank_select_levels, answer_as_the_expandable_filter) {
    qf::expandable_filter f(2000, 0.001);
    std::mt19937_64 rng(11);
    std::vector<uint64_t> in;
    for (int i = 0; i < 60000; ++i) {
        in.push_back(rng());
        f.insert(in.back());
    }
    ASSERT_GE(f.levels(), 3u);
    f.freeze();
    std::vector<written> ws;
    std::vector<rank_select_table> views;
    ws.reserve(f.levels());
    for (unsigned j = 0; j < f.levels(); ++j) ws.push_back(write(f.level(j)));
    for (auto const& w : ws) views.push_back(w.view());
    qf::rank_select_levels const levels(std::move(views));
    EXPECT_EQ(levels.size(), f.size());
    for (uint64_t h : in) {
        levels.prefetch(h);
        ASSERT_TRUE(levels.contains(h));
    }
    for (int i = 0; i < 200000; ++i) {
        uint64_t const h = rng();
        ASSERT_EQ(levels.contains(h), f.contains(h)) << std::hex << h;
    }
    EXPECT_NEAR(levels.false_positive_rate(), f.false_positive_rate(), 1e-12);
    // count_contained (level by level, fullest first, each level prefetched for the hashes that
    // reach it) counts what contains() answers, for groups of every size around its pending
    // group of 64, of stored and random hashes mixed, uniform or in runs of one window, under
    // both prefetch modes.
    std::vector<uint64_t> sorted = in;
    std::sort(sorted.begin(), sorted.end());
    for (bool const local : {false, true}) {
        std::vector<rank_select_table> again;
        for (auto const& w : ws) again.push_back(w.view());
        qf::rank_select_levels const grouped(std::move(again), local);
        for (size_t size : {size_t{1}, size_t{7}, size_t{64}, size_t{65}, size_t{200}}) {
            for (int round = 0; round < 200; ++round) {
                std::vector<uint64_t> group;
                uint64_t expected = 0;
                // Every other round, runs of hashes close together, as a read's super-k-mers
                // share a window (the levels' lookups keep decoded blocks): stored hashes
                // neighbouring in sorted order, and hashes next to them.
                size_t at = 0;
                for (size_t i = 0; i < size; ++i) {
                    uint64_t h = rng() % 2 ? in[rng() % in.size()] : rng();
                    if (round % 2) {
                        if (i % 6 == 0) at = rng() % (sorted.size() - 6);
                        h = sorted[at + i % 6] + (rng() % 2 ? 0 : rng() % 4096);
                    }
                    grouped.prefetch_first(h);
                    group.push_back(h);
                    expected += f.contains(h);
                }
                ASSERT_EQ(grouped.count_contained(group), expected) << size;
                if (can_run_pdep_select()) {
                    ASSERT_EQ(grouped.count_contained<qf::rank_select::pdep_select>(group),
                              expected);
                }
            }
        }
    }
}

}  // namespace
}  // namespace qmer::test

namespace qmer::test {
namespace {

// remainder_lanes::any_equal against one comparison per lane, for every width a table can have:
// lanes equal to x, lanes one bit away from it in each position (where a carry between lanes
// would show), and random words; lanes past n never count.
TEST(rank_select, remainder_lanes_match_a_comparison_per_lane) {
    std::mt19937_64 rng(17);
    for (unsigned r = 1; r <= qf::max_remainder_bits; ++r) {
        qf::rank_select::remainder_lanes const lanes(r);
        ASSERT_EQ(lanes.count, 64 / r);
        uint64_t const mask = (uint64_t{1} << r) - 1;
        for (int round = 0; round < 3000; ++round) {
            uint64_t const x = round % 4 == 0 ? 0 : round % 4 == 1 ? mask : rng() & mask;
            uint64_t word = rng();
            for (unsigned i = 0; i < lanes.count; ++i) {
                uint64_t lane = (word >> (i * r)) & mask;
                switch (rng() % 4) {
                    case 0:
                        lane = x;
                        break;
                    case 1:
                        lane = x ^ (uint64_t{1} << (rng() % r));
                        break;
                    default:
                        break;
                }
                word = (word & ~(mask << (i * r))) | (lane << (i * r));
            }
            for (unsigned n = 1; n <= lanes.count; ++n) {
                bool expect = false;
                for (unsigned i = 0; i < n; ++i) expect |= ((word >> (i * r)) & mask) == x;
                ASSERT_EQ(lanes.any_equal(word, x, n), expect)
                    << "r " << r << " n " << n << std::hex << " word " << word << " x " << x;
            }
        }
    }
}

TEST(rank_select, select_bit_finds_every_set_bit) {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 20000; ++round) {
        uint64_t const x = round < 64    ? uint64_t{1} << round
                           : round == 64 ? ~uint64_t{0}
                                         : rng() & (round % 3 ? rng() : ~uint64_t{0});
        unsigned n = 0;
        for (unsigned bit = 0; bit < 64; ++bit)
            if ((x >> bit) & 1) {
                ASSERT_EQ(qf::rank_select::select_bit(x, ++n), bit) << std::hex << x;
                if (can_run_pdep_select()) {
                    ASSERT_EQ(qf::rank_select::pdep_select::select(x, n), bit) << std::hex << x;
                }
            }
    }
}

}  // namespace
}  // namespace qmer::test
