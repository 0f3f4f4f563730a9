// What a build records and says (app/index/build_report.hpp): the header's account of how the
// index was made (the references added to those it had), the closing line's counts, size and
// bits per k-mer (the file's size, or the memory's where it has none) and what the memory limit
// made the build do, and the note on indexes of 3 levels or more.

#include "app/index/build_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "temp_folder.hpp"

namespace {

using namespace qmer::app;

TEST(finish_header, records_the_build_and_adds_the_references_to_those_recorded) {
    qmer::io::index_header header;
    header.k = 25;
    header.hash_seed = 9;
    header.filter = "expandable";
    header.filter_params = {1, 2, 3};
    header.elements = 10;
    header.kmers_scanned = 1000;
    header.command = "qmer index -o x.qmer old.fa";
    header.inputs = {"old.fa"};
    finish_header(header, {"qmer index --append -o x.qmer a.fa b.fa", {"a.fa", "b.fa"}},
                  {4, 5, 6, 7}, 123, 1000 + 456);
    EXPECT_EQ(header.filter_params, (std::vector<uint64_t>{4, 5, 6, 7}));
    EXPECT_EQ(header.elements, 123u);
    EXPECT_EQ(header.kmers_scanned, 1456u);
    EXPECT_EQ(header.qmer_version, QMER_VERSION);
    EXPECT_EQ(header.command, "qmer index --append -o x.qmer a.fa b.fa");
    EXPECT_EQ(header.inputs, (std::vector<std::string>{"old.fa", "a.fa", "b.fa"}));
    // What the build set before is its own.
    EXPECT_EQ(header.k, 25u);
    EXPECT_EQ(header.hash_seed, 9u);
    EXPECT_EQ(header.filter, "expandable");
}

TEST(finish_header, a_new_index_records_exactly_its_references) {
    qmer::io::index_header header;
    finish_header(header, {"qmer index -o y.qmer", {}}, {}, 0, 0);
    EXPECT_TRUE(header.inputs.empty());
    EXPECT_TRUE(header.filter_params.empty());
    EXPECT_EQ(header.command, "qmer index -o y.qmer");
}

// The closing line of report_built, as stderr shows it.
std::string reported(std::string const& output, std::string const& scratch,
                     build_counts const& counts, uint64_t elements, double memory_bytes,
                     char const* how = "", bool quiet = false) {
    testing::internal::CaptureStderr();
    {
        progress_meter progress("qmer index", quiet);  // made here: stderr is no terminal
        report_built(output, scratch, progress, counts, elements, memory_bytes, how);
    }
    return testing::internal::GetCapturedStderr();
}

build_counts counted(uint64_t kmers, uint64_t scratch_bytes = 0, unsigned passes = 0) {
    // build_counts cannot be copied or moved (its atomic): made in place.
    return {{kmers}, 0, 0, scratch_bytes, passes, 0};
}

bool ends_with(std::string const& s, std::string const& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(report_built, says_the_kmers_the_distinct_ones_and_the_index_file_size) {
    qmer::test::temp_folder const dir;
    std::string const index = (dir / "x.qmer").string();
    std::ofstream(index) << std::string(1000, 'x');
    // 1000 bytes for 1000 elements: 8 bits each; the file's size, not the memory's.
    std::string const line = reported(index, "/scratch", counted(2500), 1000, 4096);
    EXPECT_EQ(line.rfind("[qmer index] ", 0), 0u) << line;
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
    EXPECT_TRUE(ends_with(line,
                          "; 2.50 k k-mers, 1.00 k distinct, index 1000 B on disk "
                          "(8.00 bits/k-mer)\n"))
        << line;
}

TEST(report_built, an_index_without_a_file_is_sized_by_its_memory) {
    qmer::test::temp_folder const dir;
    for (std::string const& output : {std::string("-"), (dir / "absent.qmer").string()}) {
        std::string const line = reported(output, "/scratch", counted(3000000), 2048, 4096);
        EXPECT_TRUE(ends_with(line,
                              "; 3.00 M k-mers, 2.05 k distinct, index 4.0 KiB in memory "
                              "(16.00 bits/k-mer)\n"))
            << line;
    }
}

TEST(report_built, says_what_the_memory_limit_made_the_build_do) {
    qmer::test::temp_folder const dir;
    std::string const line = reported("-", "/big/tmp", counted(5000, uint64_t{3} << 20, 4), 5000,
                                      5000, "; and one more thing");
    EXPECT_TRUE(ends_with(line,
                          "(8.00 bits/k-mer); 3.0 MiB of k-mers went through a scratch file in "
                          "'/big/tmp'; the references were read in 4 passes to keep to the memory "
                          "limit; and one more thing\n"))
        << line;
    // One pass and no scratch file: nothing about them.
    std::string const plain = reported("-", "/big/tmp", counted(5000, 0, 1), 5000, 5000);
    EXPECT_TRUE(ends_with(plain, "(8.00 bits/k-mer)\n")) << plain;
}

TEST(report_built, an_index_of_no_kmers_has_no_bits_per_kmer) {
    std::string const line = reported("-", ".", counted(0), 0, 64);
    EXPECT_NE(line.find("index 64 B in memory (0.00 bits/k-mer)"), std::string::npos) << line;
}

TEST(report_built, quiet_says_nothing) {
    EXPECT_EQ(reported("-", ".", counted(5000), 5000, 5000, "", true), "");
}

// Regression: a count below 1000 must be printed with one space before its word ("999 k-mers", not
// "999 k-mers"): human_count leaves no separating space after a number with neither prefix nor
// unit, since the line adds its own.
TEST(report_built, counts_below_a_thousand_read_with_one_space) {
    std::string const line = reported("-", ".", counted(999), 500, 500);
    EXPECT_NE(line.find("; 999 k-mers, 500 distinct, index 500 B in memory (8.00 bits/k-mer)"),
              std::string::npos)
        << line;
}

TEST(note_levels, notes_an_index_of_3_levels_or_more_naming_it) {
    for (size_t levels : {0u, 1u, 2u}) {
        testing::internal::CaptureStderr();
        note_levels("x.qmer", levels);
        EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << levels;
    }
    testing::internal::CaptureStderr();
    note_levels("/data/x.qmer", 3);
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "qmer: note: '/data/x.qmer' has 3 levels: a query looks up each absent k-mer in all "
              "3, several times the cost of a one-level index; one 'qmer index' run over all the "
              "references builds one level\n");
    testing::internal::CaptureStderr();
    note_levels("y.qmer", 7);
    std::string const seven = testing::internal::GetCapturedStderr();
    EXPECT_NE(seven.find("'y.qmer' has 7 levels"), std::string::npos) << seven;
    EXPECT_NE(seven.find("in all 7,"), std::string::npos) << seven;
}

}  // namespace
