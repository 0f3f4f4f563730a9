// Regression (found by fuzz/sequence_reader_fuzz in CI,
// fuzz/findings/bgzf_bad_first_block_then_gzip.fa.gz): a first BGZF block whose size field is
// impossible, then a gzip member holding ">b GGGG", then another such block. Read without
// decompression threads it is refused at offset 0; with them (`qmer index -t 2`, the default on 2+
// cores) htslib 1.16's threaded reader takes the bad block for the start of a plain gzip stream,
// falls back to reading the file so and accepts the record. So the first block is read before the
// threads start (io/detail/opened_input.cpp): the same refusal with threads or without, naming the
// file; a valid multi-block BGZF file reads the same both ways.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "io/sequence_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace {

using qmer::io::test::compression;
using qmer::io::test::read_all;

class bgzf_threads_accept_a_bad_first_block : public qmer::io::test::temp_folder_test {};

TEST_F(bgzf_threads_accept_a_bad_first_block, refused_with_threads_and_without) {
    std::string const p = path("finding.fa.gz");
    std::filesystem::copy_file(
        std::string(QMER_SOURCE_DIR) + "/fuzz/findings/bgzf_bad_first_block_then_gzip.fa.gz", p);
    for (unsigned threads : {0u, 1u, 2u, 4u}) {
        try {
            read_all(p, {.decompression_threads = threads});
            FAIL() << "read with " << threads << " threads";
        } catch (qmer::input_error const& e) {
            std::string const message = e.what();
            EXPECT_TRUE(message.starts_with(p)) << message;
            EXPECT_NE(message.find("gzip/BGZF data"), std::string::npos) << message;
        }
    }
}

TEST_F(bgzf_threads_accept_a_bad_first_block, valid_bgzf_reads_the_same_with_threads) {
    // ~300 KiB of FASTA: several 64 KiB BGZF blocks, so the threads start after the first.
    std::string fasta;
    for (int i = 0; fasta.size() < 300 * 1024; ++i)
        fasta += ">r" + std::to_string(i) + "\n" + std::string(70 + i % 50, "ACGT"[i % 4]) + "\n";
    std::string const p = write("many.fa.gz", fasta, compression::bgzf);
    auto const expected = read_all(p, {.decompression_threads = 0});
    ASSERT_GT(expected.size(), 1000u);
    for (unsigned threads : {1u, 2u, 4u}) {
        auto const got = read_all(p, {.decompression_threads = threads});
        ASSERT_EQ(got.size(), expected.size()) << threads << " threads";
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i].name, expected[i].name);
            ASSERT_EQ(got[i].sequence, expected[i].sequence);
        }
    }
}

}  // namespace
