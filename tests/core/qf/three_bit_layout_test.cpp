// Tests of the group-at-a-time scanning helpers of core/qf/baseline/sequential.hpp (namespace
// qmer::qf::scan), which the sequential and the locally locked quotient filters use on their hot
// paths: each is checked against the obvious slot-by-slot loop (the code they replaced) over the
// real tables of filled filters, for every slot width from 4 bits (16 slots per group, the lane
// count's overflow case) to 64 bits (one slot per group), including widths whose slots-per-group is
// not a power of two (the division by multiplication).

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "core/qf/baseline/sequential.hpp"

namespace qmer::test {
namespace {

using qf::grouped_slots;
namespace scan = qf::scan;
namespace status = qf::status;

TEST(group_scan, layout_arithmetic_matches_division_for_every_slot_width) {
    std::mt19937_64 rng(1);
    for (unsigned bits = 4; bits <= 64; ++bits) {
        grouped_slots slots(1000, bits);
        scan::layout const l(slots);
        unsigned const spg = 64 / bits;
        ASSERT_EQ(l.slots_per_group(), spg);
        // group_of: small slots, and slots up to 2^41 (the largest table is 2^40 + overflow).
        for (uint64_t slot = 0; slot < 5000; ++slot) ASSERT_EQ(l.group_of(slot), slot / spg);
        for (int i = 0; i < 100000; ++i) {
            uint64_t const slot = rng() >> 23;
            ASSERT_EQ(l.group_of(slot), slot / spg) << bits << " " << slot;
        }
        for (unsigned k = 0; k < spg; ++k) {
            ASSERT_EQ(l.lane_at_bit(k * bits), k);
            ASSERT_EQ(std::popcount(l.upto(k)), static_cast<int>(k + 1));
            ASSERT_EQ(std::popcount(l.from(k)), static_cast<int>(spg - k));
        }
        // count() equals popcount for every subset of lanes (all of them when spg is small).
        for (int i = 0; i < 4000; ++i) {
            uint64_t const lanes = (i == 0 ? ~uint64_t{0} : rng()) & l.lane0();
            ASSERT_EQ(l.count(lanes), static_cast<unsigned>(std::popcount(lanes)))
                << bits << " " << lanes;
        }
        // Lanes past the last slot (1000 slots) are not real.
        size_t const last = l.group_count() - 1;
        ASSERT_EQ(static_cast<size_t>(std::popcount(l.real(last))), 1000 - last * spg);
    }
}

TEST(group_scan, nth_bit) {
    EXPECT_EQ(scan::nth_bit(0b101100, 1), 2u);
    EXPECT_EQ(scan::nth_bit(0b101100, 2), 3u);
    EXPECT_EQ(scan::nth_bit(0b101100, 3), 5u);
    EXPECT_EQ(scan::nth_bit(uint64_t{1} << 63, 1), 63u);
}

// A sequential filter filled to `fill`, and the slot-by-slot answers its table gives.
struct filled {
    filled(unsigned q, unsigned r, double fill, uint64_t seed) : f(q, r) {
        std::mt19937_64 rng(seed);
        auto const n = static_cast<size_t>(fill * static_cast<double>(f.capacity()));
        while (f.size() < n) f.insert(rng());
    }
    uint64_t at(size_t i) const { return f.slots().get(i); }
    size_t total() const { return f.total_slots(); }

    qf::sequential_filter f;
};

uint64_t st(uint64_t v) {
    return v & status::mask;
}
bool is_shifted(uint64_t v) {
    return (v & status::shifted) != 0;
}
bool is_continuation(uint64_t v) {
    return (v & status::shifted) && (v & status::continuation);
}
bool is_hole(uint64_t v) {
    return st(v) == status::empty || st(v) == status::write_lock;
}

void check_against_slot_loops(unsigned q, unsigned r, double fill, uint64_t seed) {
    filled const t(q, r, fill, seed);
    auto const& s = t.f.slots();
    scan::layout const l(s);
    std::mt19937_64 rng(seed + 100);
    size_t const total = t.total();
    for (int probe = 0; probe < 3000; ++probe) {
        size_t const pos = rng() % total;
        uint64_t gv = 0;

        size_t stop = pos;
        while (stop != scan::npos && is_shifted(t.at(stop)))
            stop = stop == 0 ? scan::npos : stop - 1;
        size_t const got_stop = scan::last_stop_at_or_before(s, l, pos, gv);
        ASSERT_EQ(got_stop, stop) << "pos " << pos;
        if (stop != scan::npos) {
            ASSERT_EQ(gv, s.load_group(l.group_of(stop)));
        }

        size_t hole = pos;
        while (hole < total && !is_hole(t.at(hole))) ++hole;
        ASSERT_EQ(scan::first_hole_at_or_after(s, l, pos, gv), hole < total ? hole : scan::npos)
            << "pos " << pos;

        if (stop != scan::npos) {
            // summarize(c, pos) against the slot loop over (c, pos].
            scan::span_summary const sum = scan::summarize(s, l, stop, pos);
            bool all = true;
            unsigned occ = 0, starts = 0;
            for (size_t i = stop + 1; i <= pos; ++i) {
                all = all && is_shifted(t.at(i));
                occ += (t.at(i) & status::occupied) != 0;
                if (i < pos) starts += !is_continuation(t.at(i));
            }
            ASSERT_EQ(sum.all_shifted, all);
            ASSERT_EQ(sum.occupied, occ);
            ASSERT_EQ(sum.run_starts, starts);
            ASSERT_EQ(sum.start_value, t.at(stop));
            ASSERT_EQ(sum.q_value, t.at(pos));
        }

        // nth_run_start_after against "do ++p; while (continuation(p))" n times.
        unsigned const n = 1 + static_cast<unsigned>(rng() % 12);
        size_t p = pos;
        for (unsigned k = 0; k < n && p != scan::npos; ++k) {
            do ++p;
            while (p < total && is_continuation(t.at(p)));
            if (p >= total) p = scan::npos;
        }
        size_t const got = scan::nth_run_start_after(s, l, pos, n);
        if (p != scan::npos) {
            ASSERT_EQ(got, p) << "pos " << pos << " n " << n;
        }

        // run_contains against the slot loop of Block I, for remainders around the slot's.
        uint64_t const rem = t.at(pos) >> 3;
        for (uint64_t x : {rem, rem + 1, rem == 0 ? rem : rem - 1, uint64_t{0}}) {
            bool want = false;
            for (size_t i = pos;;) {
                uint64_t const y = t.at(i) >> 3;
                if (y >= x) {
                    want = y == x;
                    break;
                }
                if (++i >= total || !is_continuation(t.at(i))) break;
            }
            ASSERT_EQ(scan::run_contains(s, l, total, pos, x), want) << "pos " << pos;
        }
    }
}

TEST(group_scan, helpers_match_slot_loops_on_filled_tables) {
    // Slot widths 4 (16 per group), 7 (9 per group), 11 (5), 16 (4), 23 (2), 33 and 53 (1).
    for (unsigned r : {1u, 4u, 8u, 13u, 20u, 30u, 50u}) {
        unsigned const q = r >= 50 ? 9 : 11;
        for (double fill : {0.5, 0.9, 0.97}) check_against_slot_loops(q, r, fill, r * 10 + 1);
    }
}

}  // namespace
}  // namespace qmer::test
