// Regression (found by fuzz/index_damage_fuzz, with resealed edits): a filter's geometry read from
// an index file (slot count, quotient bits, Bloom bits, cuckoo buckets) must be compared with the
// saved words before it is used to allocate and zero the filter's table. Otherwise one damaged
// parameter in a file with a valid checksum (damaged before it was sealed, or made on purpose)
// makes the loader ask for petabytes: std::bad_alloc (exit 1, "unexpected failure") instead of
// index_error, or, for sizes the kernel grants, zeroing until the machine runs out of memory; and a
// cuckoo bucket count that is not a power of two must not come out as usage_error (exit 2, "bad
// command line"). Every such file must be refused as a damaged index, before any allocation.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "app/filters/persistence.hpp"
#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/error.hpp"
#include "core/qf/baseline/external_locks.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "crafted_index_fixture.hpp"
#include "io/index_file.hpp"

namespace {

class index_geometry_allocates_before_check : public qmer::test::crafted_index_test {
  protected:
    // Saves filter's arrays with params[which] replaced by value, sealed with a valid checksum,
    // and loads the file as filter type F.
    template <typename F>
    void expect_refused(F const& filter, size_t which, uint64_t value) {
        auto arrays = qmer::app::filter_sections<F>::arrays(filter);
        ASSERT_EQ(arrays.size(), 1u);
        ASSERT_LT(which, arrays[0].params.size());
        arrays[0].params[which] = value;
        expect_damaged<F>(arrays, "",
                          "parameter " + std::to_string(which) + " = " + std::to_string(value));
    }
};

TEST_F(index_geometry_allocates_before_check, locally_locked_slot_count) {
    qmer::qf::locally_locked_filter const f(6, 8);
    expect_refused(f, 2, uint64_t{1} << 60);  // total slots
    expect_refused(f, 2, uint64_t{1} << 20);  // still far more than the saved words hold
}

TEST_F(index_geometry_allocates_before_check, externally_locked_quotient_bits) {
    qmer::qf::external_locks_filter const f(6, 8);
    expect_refused(f, 0, 48);  // 2^48 slots
    expect_refused(f, 0, 30);
}

TEST_F(index_geometry_allocates_before_check, linear_probing_quotient_bits) {
    qmer::qf::linear_probing const f(6, 8);
    expect_refused(f, 0, 40);
    expect_refused(f, 0, 30);
}

TEST_F(index_geometry_allocates_before_check, bloom_bits) {
    qmer::bloom_filter const f(100, 0.01);
    expect_refused(f, 0, uint64_t{1} << 62);
    // Geometry the constructor itself refuses (as a user's parameter, usage_error: exit 2) is a
    // damaged index when it comes from a file (found by index_damage_fuzz, resealed edits).
    expect_refused(f, 0, 0);   // no bits
    expect_refused(f, 1, 60);  // more probes than the filter makes
}

TEST_F(index_geometry_allocates_before_check, blocked_bloom_blocks) {
    qmer::blocked_bloom_filter const f(100, 0.01);
    expect_refused(f, 0, uint64_t{1} << 55);
    expect_refused(f, 0, 0);   // no blocks
    expect_refused(f, 1, 60);  // more probes than the filter makes
}

TEST_F(index_geometry_allocates_before_check, expandable_level_slot_count) {
    qmer::qf::expandable_filter f(1000, 0.01, false);
    for (uint64_t h = 1; h <= 100; ++h) f.insert(h * 0x9e3779b97f4a7c15ULL);
    // Index format 2: the level in the concurrent layout (core's own arrays).
    auto arrays = f.arrays();
    ASSERT_GE(arrays.size(), 2u);
    ASSERT_EQ(arrays[1].params.size(), 5u);
    arrays[1].params[2] = uint64_t{1} << 60;  // the first level's total slots
    expect_damaged<qmer::qf::expandable_filter>(arrays, "", "2^60 slots in level 0");
}

// Index format 3: the level in the rank-select layout is refused on its shape before the
// concurrent table it is thawed into is allocated.
TEST_F(index_geometry_allocates_before_check, expandable_rank_select_level_slot_count) {
    qmer::qf::expandable_filter f(1000, 0.01, false);
    for (uint64_t h = 1; h <= 100; ++h) f.insert(h * 0x9e3779b97f4a7c15ULL);
    auto arrays = qmer::app::filter_sections<qmer::qf::expandable_filter>::arrays(f);
    ASSERT_GE(arrays.size(), 2u);
    ASSERT_EQ(arrays[1].params.size(), 6u);
    std::vector<uint64_t> words(qmer::qf::rank_select_shape_of(f.level(0)).words());
    arrays[1].words = words;
    arrays[1].params[2] = uint64_t{1} << 60;  // total slots
    expect_damaged<qmer::qf::expandable_filter>(arrays, "", "2^60 slots in a rank-select level");
    arrays[1].params[2] = f.level(0).total_slots() + 64;  // one block more than the words hold
    expect_damaged<qmer::qf::expandable_filter>(arrays, "word count",
                                                "a rank-select level with too few words");
}

TEST_F(index_geometry_allocates_before_check, cuckoo_buckets) {
    qmer::cuckoo_filter const f(100);
    expect_refused(f, 0, uint64_t{1} << 50);
    expect_refused(f, 0, 3);  // not a power of two: index_error, not usage_error
}

}  // namespace
