// The memory plan of qmer index (app/index/memory_plan.hpp): where the sorted build keeps its
// fingerprints for a limit (in memory, a scratch file, passes, or none), what a build holds
// besides its table, the least limit each route keeps to, and the messages of a limit refused.

#include "app/index/memory_plan.hpp"

#include <gtest/gtest.h>

#include <string>

#include "app/index/sorted_build.hpp"
#include "app/index/superkmer_bins.hpp"
#include "core/error.hpp"

namespace {

using namespace qmer::app;

constexpr uint64_t MiB = uint64_t{1} << 20;
constexpr uint64_t GiB = uint64_t{1} << 30;

// 100 M k-mer positions at one record of 1 Mbp: a table of 2^27 slots, 10 remainder bits.
reference_census census_of_100m() {
    return {.distinct_estimate = 100'000'000,
            .kmer_positions = 100'000'000,
            .bases = 100'000'000,
            .longest_record = 1'000'000};
}
qmer::qf::geometry table_geometry() {
    return qmer::qf::geometry::with_slots(uint64_t{1} << 27, 10);
}
constexpr uint64_t table_bytes = 220 * MiB;

TEST(memory_plan, fingerprints_stay_in_memory_up_to_the_table_size_or_256_mib) {
    // 20 M positions: 100 MB of fingerprints, within 256 MiB.
    reference_census census = census_of_100m();
    census.kmer_positions = 20'000'000;
    auto const plan = plan_sorted_build(table_geometry(), table_bytes, true, 64 * GiB, census, 2);
    EXPECT_EQ(plan.passes, 1u);
    EXPECT_FALSE(plan.spill);
    // 100 M positions (500 MB) go to the scratch file, however roomy the limit: the build's peak
    // stays near the index's size.
    EXPECT_TRUE(
        plan_sorted_build(table_geometry(), table_bytes, true, 64 * GiB, census_of_100m(), 2)
            .spill);
}

TEST(memory_plan, a_tighter_limit_spills_to_a_scratch_file_in_one_pass) {
    auto const census = census_of_100m();
    // The fingerprints in memory (5 bytes a position) would take 500 MB, more than half of what
    // the table and the reading leave of 1 GiB.
    auto const plan = plan_sorted_build(table_geometry(), table_bytes, true, GiB, census, 2);
    ASSERT_TRUE(spilled_fingerprint_buckets::supports(table_geometry()));
    EXPECT_EQ(plan.passes, 1u);
    EXPECT_TRUE(plan.spill);
    EXPECT_LE(plan.spill_buffer_bytes_per_thread, max_spill_buffer_bytes_per_thread);
    // The buffers it chose fit what is left.
    EXPECT_LE(spilled_fingerprint_buckets::memory_bytes(table_geometry(), census.kmer_positions, 2,
                                                        plan.spill_buffer_bytes_per_thread) +
                  build_held_bytes(table_bytes, true, census, 2),
              GiB);
}

TEST(memory_plan, fingerprints_the_scratch_file_cannot_hold_are_read_in_passes_or_inserted) {
    // 30 remainder bits: fingerprints of 57 bits, beyond the scratch file's bins.
    auto const g = qmer::qf::geometry::with_slots(uint64_t{1} << 27, 30);
    ASSERT_FALSE(spilled_fingerprint_buckets::supports(g));
    auto const census = census_of_100m();
    if (fingerprint_buckets::supports(g)) {
        auto const passes = plan_sorted_build(g, 600 * MiB, false, 1400 * MiB, census, 2);
        EXPECT_GT(passes.passes, 1u);
        EXPECT_FALSE(passes.spill);
    }
    // Less room beside the table and the reading than a 64th of the fingerprints (7.4 MiB):
    // k-mer by k-mer.
    EXPECT_EQ(plan_sorted_build(g, 600 * MiB, false, 686 * MiB, census, 2).passes, 0u);
}

TEST(memory_plan, the_table_written_after_reading_is_held_without_the_reading) {
    auto const census = census_of_100m();
    uint64_t const overhead = build_overhead_bytes(census.longest_record, 4);
    EXPECT_EQ(overhead, process_bytes + 2 * 4 * qmer::io::record_batch::default_byte_budget +
                            census.longest_record * 5 / 2);
    EXPECT_EQ(build_held_bytes(table_bytes, false, census, 4), table_bytes + overhead);
    EXPECT_EQ(build_held_bytes(table_bytes, true, census, 4),
              std::max(overhead, table_bytes + process_bytes));
    EXPECT_GE(least_build_memory(table_geometry(), table_bytes, true, census, 4),
              build_held_bytes(table_bytes, true, census, 4));
}

TEST(memory_plan, super_kmer_records_in_memory_are_at_least_256_mib) {
    EXPECT_EQ(records_in_memory(0, 0, 2, 0, false), 256 * MiB);
    uint64_t const reading = build_overhead_bytes(0, 2);
    EXPECT_EQ(records_in_memory(2 * GiB, 0, 2, 0, false), 2 * GiB - reading);
    // Streamed into the index file, the level takes no memory: 1.4x the table less the reading.
    EXPECT_EQ(records_in_memory(2 * GiB, 0, 2, 0, true),
              static_cast<uint64_t>(1.4 * static_cast<double>(2 * GiB)) - reading);
}

TEST(memory_plan, a_super_kmer_build_keeps_to_the_limit_it_accepts) {
    auto const census = census_of_100m();
    unsigned const bits = 20;
    unsigned const bin_bits = 10;
    auto const plan =
        plan_superkmer_build(bin_bits, bits, table_bytes, 4 * GiB, census, 31, 19, 2, true);
    EXPECT_GE(plan.least, build_held_bytes(table_bytes, true, census, 2));
    EXPECT_LE(plan.least + plan.memory_budget, 4 * GiB);
    EXPECT_GT(plan.expected_record_bytes, 0.0);
    // At its least limit: no records in memory beyond what the plan allows, no buffers to spare.
    auto const tight =
        plan_superkmer_build(bin_bits, bits, table_bytes, plan.least, census, 31, 19, 2, true);
    EXPECT_EQ(tight.buffer_bytes_per_thread, 0u);
    EXPECT_EQ(tight.memory_budget, 0u);
}

TEST(memory_plan, a_refused_limit_says_what_the_build_needs_and_whose_limit_it_is) {
    try {
        require_least_memory(300 * MiB, 200 * MiB, {.limit = 100 * MiB, .given = false});
        FAIL() << "no error";
    } catch (qmer::capacity_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("at least 300.0 MiB"), std::string::npos) << what;
        EXPECT_NE(what.find("its table 200.0 MiB"), std::string::npos) << what;
        EXPECT_NE(what.find("80% of this machine's memory"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(require_least_memory(100 * MiB, 50 * MiB, {.limit = 100 * MiB}));
    try {
        memory_exceeded(2 * GiB, {.limit = GiB, .given = true});
        FAIL() << "no error";
    } catch (qmer::capacity_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("needs 2.0 GiB"), std::string::npos) << what;
        EXPECT_EQ(what.find("80%"), std::string::npos) << what;
    }
}

}  // namespace
