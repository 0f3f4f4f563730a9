// Regression (found by fuzz/sequence_reader_fuzz, fuzz/findings/sam_empty_record.sam): a SAM line
// with an empty query name and no bases gives a record with no storage, and the SAM/BAM source must
// not copy its name with memcpy(nullptr, ..., 0), undefined behaviour (UBSan aborts the asan preset
// on it). The record reads as one empty record; the next record reads as usual.

#include <gtest/gtest.h>

#include "io/sequence_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace {

using qmer::io::test::compression;
using qmer::io::test::read_all;

class sam_empty_record_null_memcpy : public qmer::io::test::temp_folder_test {};

TEST_F(sam_empty_record_null_memcpy, nameless_empty_record_then_a_read) {
    for (auto how : {compression::none, compression::bgzf}) {
        auto const records = read_all(write("empty.sam",
                                            "\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n"
                                            "r2\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n",
                                            how));
        ASSERT_EQ(records.size(), 2u);
        EXPECT_EQ(records[0].name, "");
        EXPECT_EQ(records[0].sequence, "");
        EXPECT_EQ(records[1].name, "r2");
        EXPECT_EQ(records[1].sequence, "ACGT");
        EXPECT_EQ(records[1].quality, "IIII");
    }
}

}  // namespace
