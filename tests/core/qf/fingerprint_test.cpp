// The fingerprint mapping of core/qf/fingerprint.hpp: for 2^q slots it is the top q + r bits of
// the hash (the layout of Maier, Sanders, Williger, SEA 2020, and of every index written before
// non-power-of-two slot counts); for any slot count the quotient stays in range, fingerprints are
// monotonic in the hash (the order a quotient filter and a sorted build rely on), bounded growing
// keeps them, and hash_of_fingerprint inverts them.

#include "core/qf/fingerprint.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>

namespace {

using qmer::qf::geometry;

TEST(fingerprint, power_of_two_slots_take_the_top_bits) {
    std::mt19937_64 rng(1);
    for (unsigned q : {1u, 10u, 26u, 40u}) {
        for (unsigned r : {1u, 8u, 13u, 63u - q}) {
            geometry const g{q, r};
            ASSERT_EQ(g.canonical_slots(), uint64_t{1} << q);
            for (int i = 0; i < 1000; ++i) {
                uint64_t const h = rng();
                ASSERT_EQ(g.fingerprint(h), h >> (64 - q - r)) << q << " " << r;
                ASSERT_EQ(g.quotient(h), h >> (64 - q));
                ASSERT_EQ(g.remainder(h), (h >> (64 - q - r)) & g.remainder_mask());
            }
        }
    }
}

TEST(fingerprint, with_slots_picks_the_quotient_bits) {
    EXPECT_EQ(geometry::with_slots(1024, 5).quotient_bits, 10u);
    EXPECT_EQ(geometry::with_slots(1024, 5).slots, 0u);  // a power of two is stored as 2^q
    EXPECT_EQ(geometry::with_slots(1025, 5).quotient_bits, 11u);
    EXPECT_EQ(geometry::with_slots(1025, 5).canonical_slots(), 1025u);
    EXPECT_EQ(geometry::with_slots(36'845'760, 11).quotient_bits, 26u);
    EXPECT_NO_THROW(geometry::with_slots(1025, 5).validate());
    EXPECT_THROW((geometry{11, 5, 1024}).validate(), std::invalid_argument);  // not above 2^10
    EXPECT_THROW((geometry{11, 5, 2048}).validate(), std::invalid_argument);  // not below 2^11
}

TEST(fingerprint, any_slot_count_maps_every_hash_into_range_in_order) {
    std::mt19937_64 rng(2);
    for (uint64_t m :
         {uint64_t{3}, uint64_t{1000}, uint64_t{36'845'760}, (uint64_t{1} << 40) - 8}) {
        geometry const g = geometry::with_slots(m, 11);
        ASSERT_EQ(g.fingerprint(~uint64_t{0}), g.fingerprint_space() - 1);
        ASSERT_EQ(g.fingerprint(0), 0u);
        uint64_t prev_h = 0, prev_fp = 0;
        for (int i = 0; i < 2000; ++i) {
            uint64_t const h = prev_h + (rng() >> 16);  // 2000 steps stay below 2^64
            uint64_t const fp = g.fingerprint(h);
            ASSERT_LT(g.quotient(h), m);
            ASSERT_EQ(g.fingerprint_of(g.quotient(h), g.remainder(h)), fp);
            ASSERT_GE(fp, prev_fp) << "fingerprints follow the hash order";
            // The smallest hash of a fingerprint maps back to it, and the hash before it does not.
            uint64_t const first = g.hash_of_fingerprint(fp);
            ASSERT_LE(first, h);
            ASSERT_EQ(g.fingerprint(first), fp);
            if (first > 0) {
                ASSERT_EQ(g.fingerprint(first - 1), fp - 1);
            }
            prev_h = h;
            prev_fp = fp;
        }
    }
}

TEST(fingerprint, growing_keeps_every_fingerprint) {
    std::mt19937_64 rng(3);
    for (uint64_t m : {uint64_t{1} << 12, uint64_t{5000}, uint64_t{3'000'008}}) {
        geometry g = geometry::with_slots(m, 12);
        for (int step = 0; step < 4; ++step) {
            geometry const next = g.grown();
            ASSERT_EQ(next.fingerprint_space(), g.fingerprint_space());
            ASSERT_EQ(next.canonical_slots(), 2 * g.canonical_slots());
            ASSERT_EQ(next.shrunk(1).canonical_slots(), g.canonical_slots());
            for (int i = 0; i < 1000; ++i) {
                uint64_t const h = rng();
                ASSERT_EQ(next.fingerprint(h), g.fingerprint(h));
                // The remainder's top bit moves into the quotient.
                ASSERT_EQ(next.quotient(h),
                          2 * g.quotient(h) + (g.remainder(h) >> (g.remainder_bits - 1)));
            }
            g = next;
        }
    }
}

// n keys in m slots with r remainder bits collide with a fresh key at rate n / (m 2^r), not
// n / 2^(q + r): measured on a slot count just past a power of two, where the two differ ~2x.
TEST(fingerprint, collision_rate_is_one_over_the_fingerprint_space) {
    geometry const g = geometry::with_slots(4100, 4);  // M = 65,600; 2^(q+r) = 131,072
    std::mt19937_64 rng(4);
    std::vector<bool> seen(g.fingerprint_space());
    size_t const n = 20000;
    for (size_t i = 0; i < n; ++i) seen[g.fingerprint(rng())] = true;
    size_t taken = 0;
    for (bool b : seen) taken += b;
    size_t const probes = 400000;
    size_t hits = 0;
    for (size_t i = 0; i < probes; ++i) hits += seen[g.fingerprint(rng())];
    double const expected = static_cast<double>(taken) / static_cast<double>(g.fingerprint_space());
    EXPECT_NEAR(static_cast<double>(hits) / probes, expected, 0.01);
}

}  // namespace
