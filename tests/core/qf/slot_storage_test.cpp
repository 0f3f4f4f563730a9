// Tests of core/qf/slot_storage.hpp (packed slots in atomic groups) and core/qf/fingerprint.hpp
// (the quotient/remainder split shared by the quotient filters).

#include "core/qf/slot_storage.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "core/qf/fingerprint.hpp"

namespace {

using qmer::qf::geometry;
using qmer::qf::grouped_slots;

// The division-free group index equals the division for every group size a slot width gives
// (1 to 64 slots per group) at every slot a table can have (below 2^41): around each multiple of
// the divisor, at the ends, and at random.
TEST(group_divider, equals_the_division_below_two_to_the_41) {
    std::mt19937_64 rng(41);
    uint64_t const top = uint64_t{1} << 41;
    for (unsigned spg = 1; spg <= 64; ++spg) {
        qmer::qf::group_divider const d(spg);
        auto check = [&](uint64_t slot) {
            ASSERT_EQ(d.group_of(slot), slot / spg) << spg << " " << slot;
            ASSERT_EQ(d.lane_of(slot, d.group_of(slot)), slot % spg) << spg << " " << slot;
        };
        for (uint64_t slot = 0; slot < 4096; ++slot) check(slot);
        for (uint64_t g = top / spg - 4096; g < top / spg; ++g)
            for (uint64_t off : {uint64_t{0}, uint64_t{spg - 1}}) check(g * spg + off);
        check(top - 1);
        for (int i = 0; i < 100000; ++i) check(rng() % top);
    }
}

TEST(grouped_slots, geometry_of_the_packing) {
    grouped_slots s(1000, 16);
    EXPECT_EQ(s.slot_count(), 1000u);
    EXPECT_EQ(s.slot_bits(), 16u);
    EXPECT_EQ(s.slots_per_group(), 4u);
    EXPECT_EQ(s.group_count(), 250u);
    EXPECT_EQ(s.group_of(7), 1u);
    EXPECT_EQ(s.index_in_group(7), 3u);
    grouped_slots t(10, 13);  // 4 per group, 12 bits wasted
    EXPECT_EQ(t.slots_per_group(), 4u);
    EXPECT_EQ(t.group_count(), 3u);
    grouped_slots w(5, 64);
    EXPECT_EQ(w.slots_per_group(), 1u);
    EXPECT_EQ(w.group_count(), 5u);
    EXPECT_THROW(grouped_slots(4, 0), std::invalid_argument);
    EXPECT_THROW(grouped_slots(4, 65), std::invalid_argument);
}

TEST(grouped_slots, starts_zeroed_and_aligned) {
    grouped_slots s(1 << 20, 16);  // 2 MiB: the huge-page path
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.groups().data()) % 64, 0u);
    EXPECT_GE(s.memory_bytes(), s.group_count() * 8);
    for (size_t g = 0; g < s.group_count(); g += 4099) EXPECT_EQ(s.load_group(g), 0u);
    EXPECT_EQ(s.get(s.slot_count() - 1), 0u);
}

// Oracle: a plain vector of values. Every odd slot width, random writes, must read back exactly and
// never disturb a neighbour.
TEST(grouped_slots, set_and_get_match_a_vector_for_every_width) {
    std::mt19937_64 rng(42);
    for (unsigned bits = 1; bits <= 64; ++bits) {
        size_t const n = 517;
        grouped_slots s(n, bits);
        std::vector<uint64_t> oracle(n, 0);
        uint64_t const mask = grouped_slots::slot_mask(bits);
        for (int step = 0; step < 3000; ++step) {
            size_t const i = rng() % n;
            uint64_t const v = rng() & mask;
            s.set_unsynchronized(i, v);
            oracle[i] = v;
        }
        for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(s.get(i), oracle[i]) << bits << " bits, slot " << i;
    }
}

TEST(grouped_slots, with_slot_only_touches_its_slot) {
    uint64_t g = 0;
    g = grouped_slots::with_slot(g, 1, 13, 0x1fff);
    EXPECT_EQ(g, uint64_t{0x1fff} << 13);
    g = grouped_slots::with_slot(g, 0, 13, 0xffff);  // excess bits of the value are dropped
    EXPECT_EQ(grouped_slots::slot_in(g, 0, 13), 0x1fffu);
    EXPECT_EQ(grouped_slots::slot_in(g, 1, 13), 0x1fffu);
    EXPECT_EQ(grouped_slots::slot_in(g, 2, 13), 0u);
    g = grouped_slots::with_slot(g, 1, 13, 5);
    EXPECT_EQ(grouped_slots::slot_in(g, 0, 13), 0x1fffu);
    EXPECT_EQ(grouped_slots::slot_in(g, 1, 13), 5u);
}

// Threads that each increment their own slot with CAS loops on shared groups: no update is lost.
TEST(grouped_slots, cas_on_shared_groups_loses_nothing) {
    unsigned const threads = 8;
    grouped_slots s(threads, 8);  // all eight slots in one group
    std::vector<std::thread> pool;
    int const rounds = 200;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < rounds; ++i) {
                size_t const g = s.group_of(t);
                uint64_t expected = s.load_group(g);
                for (;;) {
                    uint64_t const v = grouped_slots::slot_in(expected, s.index_in_group(t), 8);
                    if (s.cas_group(
                            g, expected,
                            grouped_slots::with_slot(expected, s.index_in_group(t), 8, v + 1)))
                        break;
                }
            }
        });
    for (auto& th : pool) th.join();
    for (unsigned t = 0; t < threads; ++t) EXPECT_EQ(s.get(t), static_cast<uint64_t>(rounds));
}

TEST(grouped_slots, move_transfers_the_table) {
    grouped_slots a(100, 10);
    a.set_unsynchronized(50, 777);
    grouped_slots b(std::move(a));
    EXPECT_EQ(b.get(50), 777u);
    EXPECT_EQ(a.group_count(), 0u);
    grouped_slots c;
    c = std::move(b);
    EXPECT_EQ(c.get(50), 777u);
}

TEST(fingerprint, top_bits_split_into_quotient_and_remainder) {
    geometry const g{4, 8};
    uint64_t const h = 0xABCD'1234'5678'9ABCULL;
    EXPECT_EQ(g.quotient(h), 0xAu);
    EXPECT_EQ(g.remainder(h), 0xBCu);
    EXPECT_EQ(g.fingerprint(h), 0xABCu);
    EXPECT_EQ(g.fingerprint_of(0xA, 0xBC), 0xABCu);
    EXPECT_EQ(g.fingerprint(g.hash_of_fingerprint(0xABC)), 0xABCu);
}

TEST(fingerprint, growing_keeps_the_fingerprint) {
    std::mt19937_64 rng(7);
    geometry g{10, 13};
    for (int step = 0; step < 12; ++step) {
        geometry const next = g.grown();
        EXPECT_EQ(next.fingerprint_bits(), g.fingerprint_bits());
        for (int i = 0; i < 1000; ++i) {
            uint64_t const h = rng();
            ASSERT_EQ(next.fingerprint(h), g.fingerprint(h));
            // The new quotient is the old one followed by the old remainder's top bit.
            ASSERT_EQ(next.quotient(h),
                      (g.quotient(h) << 1) | (g.remainder(h) >> (g.remainder_bits - 1)));
        }
        g = next;
    }
}

TEST(fingerprint, validate_rejects_impossible_geometry) {
    EXPECT_NO_THROW((geometry{20, 13}.validate()));
    EXPECT_THROW((geometry{0, 13}.validate()), std::invalid_argument);
    EXPECT_THROW((geometry{20, 0}.validate()), std::invalid_argument);
    EXPECT_THROW((geometry{40, 30}.validate()), std::invalid_argument);
}

}  // namespace
