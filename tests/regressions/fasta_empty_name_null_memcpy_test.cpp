// Regression (found by fuzz/sequence_reader_fuzz, input "\n> \n"): a FASTA header with no name
// leaves kseq's name buffer null, and the FASTA/FASTQ source must not copy it with memcpy(dst,
// nullptr, 0), which is undefined behaviour (UBSan aborts the asan preset on it). The record must
// read as one record with an empty name, comment and sequence.

#include <gtest/gtest.h>

#include "io/sequence_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace {

using qmer::io::test::compression;
using qmer::io::test::read_all;

class fasta_empty_name_null_memcpy : public qmer::io::test::temp_folder_test {};

TEST_F(fasta_empty_name_null_memcpy, header_without_name_is_an_empty_record) {
    for (auto how : {compression::none, compression::gzip, compression::bgzf}) {
        auto const records = read_all(write("empty_name.fa", "\n> \n", how));
        ASSERT_EQ(records.size(), 1u);
        EXPECT_EQ(records[0].name, "");
        EXPECT_EQ(records[0].comment, "");
        EXPECT_EQ(records[0].sequence, "");
    }
}

TEST_F(fasta_empty_name_null_memcpy, nameless_records_keep_their_sequences) {
    auto const records = read_all(write("two.fa", ">\nACGT\n> \n\n>x\nGG\n"));
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0].name, "");
    EXPECT_EQ(records[0].sequence, "ACGT");
    EXPECT_EQ(records[1].sequence, "");
    EXPECT_EQ(records[2].name, "x");
    EXPECT_EQ(records[2].sequence, "GG");
}

}  // namespace
