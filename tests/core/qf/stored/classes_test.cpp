// Tests of core/qf/stored/classes.hpp: the class interner gives one id per distinct set of
// references (checked against a map from sets to ids over many random sets, so that sets whose
// keys meet in its hash map are still told apart member by member), unions classes, counts their
// uses, and renumbers them by frequency into a class table; the class table refuses offsets and
// members that do not describe sets; class_id_bits is the width an id needs.

#include "core/qf/stored/classes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

namespace qmer::test {
namespace {

using qf::class_interner;
using qf::class_table;

using set_t = std::vector<uint32_t>;

set_t members_of(std::span<uint32_t const> m) {
    return set_t(m.begin(), m.end());
}

// A sorted set without repeats of 1 .. max_size members below `universe`.
set_t random_set(std::mt19937_64& rng, uint32_t universe, size_t max_size) {
    size_t const size = 1 + rng() % max_size;
    set_t s;
    for (size_t i = 0; i < size; ++i) s.push_back(static_cast<uint32_t>(rng() % universe));
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return s;
}

TEST(class_interner, the_same_set_twice_has_one_id_and_counts_both_uses) {
    class_interner in;
    set_t const a{1, 4, 7};
    uint32_t const id = in.intern(a);
    EXPECT_EQ(in.intern(a), id);
    EXPECT_EQ(in.intern(set_t{1, 4, 7}, 5), id);
    EXPECT_EQ(in.size(), 1u);
    EXPECT_EQ(in.count(id), 7u);
    EXPECT_EQ(members_of(in.members(id)), a);
}

TEST(class_interner, different_sets_have_different_ids_in_order_of_first_appearance) {
    class_interner in;
    // Sets that share members, prefixes of one another, and single members.
    std::vector<set_t> const sets{{0}, {1}, {0, 1}, {1, 2}, {0, 1, 2}, {2}, {0, 2}, {5, 6, 7, 8}};
    for (size_t i = 0; i < sets.size(); ++i) EXPECT_EQ(in.intern(sets[i]), i);
    for (size_t i = 0; i < sets.size(); ++i) {
        EXPECT_EQ(in.intern(sets[i]), i);
        EXPECT_EQ(members_of(in.members(static_cast<uint32_t>(i))), sets[i]);
        EXPECT_EQ(in.count(static_cast<uint32_t>(i)), 2u);
    }
    EXPECT_EQ(in.size(), sets.size());
}

// Many random sets, repeated often (a small universe), and sets of every prefix of a long list:
// the interner's ids are the map's, its members and counts too.
TEST(class_interner, agrees_with_a_map_from_sets_to_ids_over_many_random_sets) {
    std::mt19937_64 rng(17);
    class_interner in;
    std::map<set_t, uint32_t> oracle;
    std::vector<uint64_t> counts;
    auto intern = [&](set_t const& s, uint64_t count) {
        auto const [it, added] = oracle.emplace(s, static_cast<uint32_t>(oracle.size()));
        if (added) counts.push_back(0);
        counts[it->second] += count;
        ASSERT_EQ(in.intern(s, count), it->second);
    };
    for (int i = 0; i < 50000; ++i) {
        uint32_t const universe = i % 3 == 0 ? 12 : i % 3 == 1 ? 200 : 100000;
        intern(random_set(rng, universe, i % 5 == 0 ? 40 : 5), 1 + rng() % 3);
    }
    set_t prefix;
    for (uint32_t m = 0; m < 300; ++m) {
        prefix.push_back(m * 3);
        intern(prefix, 1);
        intern(set_t{m * 3}, 1);
    }
    ASSERT_EQ(in.size(), oracle.size());
    EXPECT_GT(oracle.size(), 20000u);
    for (auto const& [set, id] : oracle) {
        ASSERT_EQ(members_of(in.members(id)), set) << id;
        ASSERT_EQ(in.count(id), counts[id]) << id;
    }
}

TEST(class_interner, union_of_two_classes_is_the_class_of_their_union) {
    class_interner in;
    uint32_t const a = in.intern(set_t{1, 3});
    uint32_t const b = in.intern(set_t{2, 3, 9});
    uint32_t const u = in.union_of(a, b);
    EXPECT_NE(u, a);
    EXPECT_NE(u, b);
    EXPECT_EQ(members_of(in.members(u)), (set_t{1, 2, 3, 9}));
    EXPECT_EQ(in.count(u), 1u);
    // The same union again, either way round, or interned directly: the same id.
    EXPECT_EQ(in.union_of(b, a, 4), u);
    EXPECT_EQ(in.intern(set_t{1, 2, 3, 9}), u);
    EXPECT_EQ(in.count(u), 6u);
    // A union that is one of the two: that class's id.
    uint32_t const c = in.intern(set_t{3});
    EXPECT_EQ(in.union_of(a, c), a);
    EXPECT_EQ(in.union_of(c, u), u);
    // A class with itself: itself, counted.
    uint64_t const before = in.count(b);
    EXPECT_EQ(in.union_of(b, b, 3), b);
    EXPECT_EQ(in.count(b), before + 3);
    EXPECT_EQ(in.size(), 4u);
    // The classes' counts are untouched by their union but where the union is one of them.
    EXPECT_EQ(in.count(a), 2u);
    EXPECT_EQ(in.count(c), 1u);
}

// Unions of random classes (the interner's member storage grows while a union is interned)
// against the map.
TEST(class_interner, random_unions_agree_with_a_map_from_sets_to_ids) {
    std::mt19937_64 rng(5);
    class_interner in;
    std::map<set_t, uint32_t> oracle;
    std::vector<set_t> by_id;
    auto expect_id = [&](set_t const& s) {
        auto const [it, added] = oracle.emplace(s, static_cast<uint32_t>(oracle.size()));
        if (added) by_id.push_back(s);
        return it->second;
    };
    for (int i = 0; i < 64; ++i) {
        set_t const s = random_set(rng, 64, 6);
        ASSERT_EQ(in.intern(s), expect_id(s));
    }
    for (int i = 0; i < 20000; ++i) {
        auto const a = static_cast<uint32_t>(rng() % by_id.size());
        auto const b = static_cast<uint32_t>(rng() % by_id.size());
        set_t u;
        std::set_union(by_id[a].begin(), by_id[a].end(), by_id[b].begin(), by_id[b].end(),
                       std::back_inserter(u));
        uint32_t const expected = expect_id(u);
        ASSERT_EQ(in.union_of(a, b), expected) << i;
        ASSERT_EQ(members_of(in.members(expected)), u) << i;
    }
    EXPECT_EQ(in.size(), oracle.size());
}

TEST(class_interner, add_and_forget_change_a_count) {
    class_interner in;
    uint32_t const a = in.intern(set_t{0}, 3);
    in.add(a);
    EXPECT_EQ(in.count(a), 4u);
    in.add(a, 10);
    EXPECT_EQ(in.count(a), 14u);
    in.forget(a, 13);
    EXPECT_EQ(in.count(a), 1u);
    in.forget(a);
    EXPECT_EQ(in.count(a), 0u);
    EXPECT_EQ(in.size(), 1u);  // forgotten, not removed
}

TEST(class_interner, by_frequency_orders_by_count_then_first_appearance_and_drops_unused) {
    class_interner in;
    std::vector<set_t> const sets{{0}, {1, 2}, {3}, {0, 3}, {4}, {1}};
    std::vector<uint64_t> const counts{1, 5, 5, 3, 2, 5};
    for (size_t i = 0; i < sets.size(); ++i) in.intern(sets[i], counts[i]);
    // {4} used twice, both forgotten; {0, 3} loses one of its three.
    in.forget(4, 2);
    in.forget(3);
    auto const [renumbered, table] = in.by_frequency(5);
    // Counts: 1, 5, 5, 2, 0, 5 -> ids 1, 2, 5 (ties by first appearance), then 3, then 0.
    std::vector<uint32_t> const expected{4, 0, 1, 3, UINT32_MAX, 2};
    EXPECT_EQ(renumbered, expected);
    ASSERT_EQ(table.size(), 5u);
    for (size_t old = 0; old < sets.size(); ++old)
        if (renumbered[old] != UINT32_MAX) {
            EXPECT_EQ(members_of(table.members(renumbered[old])), sets[old]) << old;
        }
    EXPECT_EQ(table.offsets(), (std::vector<uint64_t>{0, 2, 3, 4, 6, 7}));
    EXPECT_EQ(table.all_members(), (set_t{1, 2, 3, 1, 0, 3, 0}));
}

// Random counts against a stable sort by count: the renumbering is a permutation of the used
// classes, and the table lists each used class's members under its new id.
TEST(class_interner, by_frequency_agrees_with_a_stable_sort_by_count) {
    std::mt19937_64 rng(11);
    class_interner in;
    std::map<set_t, uint32_t> seen;
    std::vector<set_t> sets;
    for (int i = 0; i < 3000; ++i) {
        set_t const s = random_set(rng, 30, 4);
        if (seen.emplace(s, static_cast<uint32_t>(sets.size())).second) sets.push_back(s);
        in.intern(s, 1 + rng() % 4);
    }
    // Forget every use of a fifth of the classes.
    for (uint32_t id = 0; id < in.size(); ++id)
        if (rng() % 5 == 0) in.forget(id, in.count(id));
    std::vector<uint32_t> order;
    for (uint32_t id = 0; id < in.size(); ++id)
        if (in.count(id) != 0) order.push_back(id);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return in.count(a) > in.count(b); });
    auto const [renumbered, table] = in.by_frequency(30);
    ASSERT_EQ(renumbered.size(), in.size());
    ASSERT_EQ(table.size(), order.size());
    EXPECT_LT(order.size(), in.size());  // some were dropped
    for (size_t i = 0; i < order.size(); ++i) {
        ASSERT_EQ(renumbered[order[i]], i);
        ASSERT_EQ(members_of(table.members(i)), sets[order[i]]);
    }
    for (uint32_t id = 0; id < in.size(); ++id)
        if (in.count(id) == 0) {
            ASSERT_EQ(renumbered[id], UINT32_MAX) << id;
        }
}

TEST(class_interner, by_frequency_with_every_use_forgotten_is_an_empty_table) {
    class_interner in;
    uint32_t const a = in.intern(set_t{0, 1});
    in.forget(a);
    auto const [renumbered, table] = in.by_frequency(2);
    EXPECT_EQ(renumbered, (std::vector<uint32_t>{UINT32_MAX}));
    EXPECT_EQ(table.size(), 0u);
}

TEST(class_interner, by_frequency_refuses_members_past_the_reference_count) {
    class_interner in;
    in.intern(set_t{0, 7});
    EXPECT_THROW(in.by_frequency(7), std::invalid_argument);
    EXPECT_NO_THROW(in.by_frequency(8));
}

TEST(class_table, holds_the_sets_it_was_given) {
    class_table const empty;
    EXPECT_EQ(empty.size(), 0u);
    class_table const t({0, 1, 4, 6}, {2, 0, 3, 9, 1, 2}, 10);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(members_of(t.members(0)), (set_t{2}));
    EXPECT_EQ(members_of(t.members(1)), (set_t{0, 3, 9}));
    EXPECT_EQ(members_of(t.members(2)), (set_t{1, 2}));
    EXPECT_EQ(t.offsets(), (std::vector<uint64_t>{0, 1, 4, 6}));
    EXPECT_EQ(t.all_members(), (set_t{2, 0, 3, 9, 1, 2}));
    // No classes at all.
    EXPECT_EQ(class_table({0}, {}, 1).size(), 0u);
}

TEST(class_table, refuses_bad_offsets) {
    // None; not from 0; not ending at the member count (short and long); an empty class; a
    // class ending before it starts.
    EXPECT_THROW(class_table({}, {}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({1, 2}, {0, 1}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 1}, {0, 1}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 3}, {0, 1}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 1, 1, 2}, {0, 1}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 2, 1, 2}, {0, 1}, 4), std::invalid_argument);
    // An offset past the members before the last one: refused without reading past the members
    // (the ASan build, scripts/sanitize, checks the reads).
    EXPECT_THROW(class_table({0, 5, 3}, {0, 1, 2}, 10), std::invalid_argument);
}

TEST(class_table, refuses_unsorted_repeated_and_out_of_range_members) {
    EXPECT_THROW(class_table({0, 2}, {1, 0}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 2}, {1, 1}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 1, 3}, {0, 3, 2}, 4), std::invalid_argument);
    // A member equal to the reference count, in the first class or a later one.
    EXPECT_THROW(class_table({0, 1}, {4}, 4), std::invalid_argument);
    EXPECT_THROW(class_table({0, 1, 3}, {0, 1, 4}, 4), std::invalid_argument);
    EXPECT_NO_THROW(class_table({0, 1, 3}, {0, 1, 3}, 4));
    // Order is within a class: the next class may start below the last one's end.
    EXPECT_NO_THROW(class_table({0, 2, 3}, {2, 3, 0}, 4));
}

TEST(class_id_bits, is_the_width_of_the_largest_id) {
    EXPECT_EQ(qf::class_id_bits(0), 1u);
    EXPECT_EQ(qf::class_id_bits(1), 1u);
    EXPECT_EQ(qf::class_id_bits(2), 1u);
    EXPECT_EQ(qf::class_id_bits(3), 2u);
    EXPECT_EQ(qf::class_id_bits(4), 2u);
    EXPECT_EQ(qf::class_id_bits(5), 3u);
    EXPECT_EQ(qf::class_id_bits(256), 8u);
    EXPECT_EQ(qf::class_id_bits(257), 9u);
    EXPECT_EQ(qf::class_id_bits(size_t{1} << 24), 24u);
    EXPECT_EQ(qf::class_id_bits((size_t{1} << 24) + 1), 25u);
    // Every count: 2^bits ids name them, 2^(bits - 1) do not (bits > 1).
    for (size_t classes = 1; classes < 5000; ++classes) {
        unsigned const bits = qf::class_id_bits(classes);
        ASSERT_GE(uint64_t{1} << bits, classes);
        if (bits > 1) {
            ASSERT_LT(uint64_t{1} << (bits - 1), classes);
        }
    }
    static_assert(qf::class_id_bits(257) == 9);
}

}  // namespace
}  // namespace qmer::test
