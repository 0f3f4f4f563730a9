// Regression (found by fuzz/index_damage_fuzz, an out-of-memory of gigabytes): a crafted
// linear-probing index (a valid checksum) whose quotient bits, a 64-bit value in the file, are 2^32
// + 32. A range check that skips a q above 40 instead of refusing it, and a from_arrays that reads
// the value as unsigned (32), allocate a table of 2^32 slots before comparing it with the few saved
// words. linear_probing::from_arrays checks the 64-bit values and the word count before it
// allocates, and the expandable stack's first remainder bits are bounded on their own (their sum
// with the quotient bits could wrap).
//
// fuzz/findings/linear_probing_geometry_truncated_oom.bin is the edit script; here it is replayed
// through the real binary with its address space limited to 2 GiB, so a loader that allocates first
// fails with "out of memory" (exit 1) instead of exit 4, and the same geometry is written on
// purpose.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "crafted_index_fixture.hpp"
#include "fuzz/index_damage.hpp"
#include "sanitized.hpp"

namespace {

class linear_probing_geometry_truncated_oom : public qmer::test::crafted_index_test {};

constexpr uint64_t wraps_to(unsigned v) {
    return (uint64_t{1} << 32) + v;
}

TEST_F(linear_probing_geometry_truncated_oom, quotient_or_remainder_bits_past_32_bits_are_refused) {
    std::vector<uint64_t> const words(64);
    // q read as unsigned would be 40: 2^40 slots, more memory than any machine here.
    expect_damaged<qmer::qf::linear_probing>({{{wraps_to(40), 9, 0}, words}}, "bad geometry",
                                             "q = 2^32 + 40");
    expect_damaged<qmer::qf::linear_probing>({{{10, wraps_to(9), 0}, words}}, "bad geometry",
                                             "r = 2^32 + 9");
    // In range, but more slots than the words hold: refused before the table is allocated.
    expect_damaged<qmer::qf::linear_probing>({{{30, 9, 0}, words}}, "array size",
                                             "q = 30 with 64 words");
}

TEST_F(linear_probing_geometry_truncated_oom, a_saved_filter_still_loads) {
    qmer::qf::linear_probing f(10, 9);
    for (uint64_t i = 0; i < 500; ++i) f.insert(qmer::fuzz::splitmix64(i));
    auto const arrays = f.arrays();
    std::vector<qmer::filter_array> saved{
        {arrays[0].params, {arrays[0].words.begin(), arrays[0].words.end()}}};
    auto const loaded = qmer::qf::linear_probing::from_arrays(saved);
    EXPECT_EQ(loaded->size(), f.size());
    for (uint64_t i = 0; i < 500; ++i) EXPECT_TRUE(loaded->contains(qmer::fuzz::splitmix64(i)));
}

TEST_F(linear_probing_geometry_truncated_oom, expandable_remainder_bits_that_wrap_are_refused) {
    qmer::qf::expandable_options o;
    o.expected_elements = 1000;
    qmer::qf::expandable_filter f(o);
    for (uint64_t i = 0; i < 500; ++i) f.insert(qmer::fuzz::splitmix64(i));
    std::vector<qmer::filter_array> arrays;
    for (auto const& a : f.arrays()) arrays.push_back({a.params, {a.words.begin(), a.words.end()}});
    // Q0 + R0 wraps to 1 when R0 = 2^64 - Q0 + 1.
    arrays[0].params[7] = ~uint64_t{0} - arrays[0].params[6] + 2;
    expect_damaged<qmer::qf::expandable_filter>(arrays, "bad first level geometry",
                                                "R0 = 2^64 - Q0 + 1");
}

class linear_probing_geometry_truncated_oom_cli : public qmer::test::cli_test {};

TEST_F(linear_probing_geometry_truncated_oom_cli, the_finding_is_a_damaged_index) {
    qmer::test::write_crafted_finding("linear_probing_geometry_truncated_oom.bin",
                                      dir() / "crafted.qmer");
    write_file("reads.fq",
               "@a\nACGTTGCATGCATGCAAAGGGCCCTTTAGG\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n");
    // 2 GiB of address space: enough for qmer, not for the table the old loader allocated (not
    // under AddressSanitizer, whose shadow memory alone needs more).
    std::string const limit = QMER_TEST_SANITIZED ? "" : "ulimit -v 2097152; ";
    auto const r = shell(limit + "\"$QMER\" query -t 2 crafted.qmer reads.fq > out.txt 2> err.txt");
    std::string const err = slurp(dir() / "err.txt");
    EXPECT_EQ(r.exit_code, 4) << err;
    EXPECT_NE(err.find("qmer: error: 'crafted.qmer': damaged index"), std::string::npos) << err;
}

}  // namespace
