// The externally locked filter's lock stripes must be whole groups, because a slot is written by
// storing its whole 64-bit group. With stripes of exactly 4096 slots and 3, 5, 6 or 7 slots to a
// group (slots of 17-21, 12, 10 or 9 bits: --fpr 1e-4 gives 17), the group around a stripe boundary
// would hold slots of two stripes, and two threads holding neighbouring stripes could each load it,
// set their own slot and store it: one element lost, a false negative.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/qf/baseline/external_locks.hpp"
#include "sanitized.hpp"

namespace {

using qmer::qf::external_locks_filter;

// Every group's slots share one stripe, at every slot width.
TEST(externally_locked_stripes_split_a_group, no_group_spans_two_stripes) {
    for (unsigned r = 1; r <= qmer::qf::max_remainder_bits; ++r) {
        external_locks_filter const f(std::min(14u, 63 - r), r);
        auto const& slots = f.slots();
        unsigned const spg = slots.slots_per_group();
        for (size_t first = 0; first < slots.slot_count(); first += spg) {
            size_t const last = std::min(first + spg, slots.slot_count()) - 1;
            ASSERT_EQ(f.stripe_of(first), f.stripe_of(last))
                << "r = " << r << ": slots " << first << ".." << last;
        }
        // Stripes stay about 4096 slots (the paper's baseline), not one per group.
        EXPECT_GE(f.stripe_of(slots.slot_count() - 1), (slots.slot_count() - 1) / 4096 / 2)
            << "r = " << r;
    }
}

// Two threads insert, in step, the keys of the slots either side of every 4096-slot boundary
// (empty slots: one store each). With stripes that split a group, the two stores meet in one group
// and one is lost in most runs.
TEST(externally_locked_stripes_split_a_group, neighbouring_stripes_lose_no_store) {
    unsigned const q = 18, r = 9;  // 12-bit slots, 5 to a group
    int const rounds = QMER_TEST_SANITIZED ? 10 : 100;
    for (int round = 0; round < rounds; ++round) {
        external_locks_filter f(q, r);
        qmer::qf::geometry const g{q, r};
        size_t const boundaries = (size_t{1} << q) / 4096 - 1;
        auto key = [&](size_t slot) {
            return g.hash_of_fingerprint(g.fingerprint_of(slot, 1 + static_cast<uint64_t>(round)));
        };
        std::atomic<size_t> arrived{0};
        auto worker = [&](size_t offset) {
            for (size_t b = 1; b <= boundaries; ++b) {
                // Both threads reach boundary b before either inserts there.
                arrived.fetch_add(1);
                while (arrived.load() < 2 * b) std::this_thread::yield();
                f.insert(key(b * 4096 - offset));
            }
        };
        std::thread below(worker, 1), above(worker, 0);
        below.join();
        above.join();
        size_t lost = 0;
        for (size_t b = 1; b <= boundaries; ++b)
            lost += !f.contains(key(b * 4096 - 1)) + !f.contains(key(b * 4096));
        ASSERT_EQ(lost, 0u) << "round " << round;
        ASSERT_EQ(f.size(), 2 * boundaries);
    }
}

}  // namespace
