// Regression (found by fuzz/sequence_reader_fuzz, fuzz/findings/bam_header_claims_gigabytes.bam):
// a 16-byte file, "BAM\1" and a header text length of 1,094,863,108 bytes, makes htslib 1.16's
// bam_hdr_read() allocate that much before reading (a reader of a damaged file should not take
// gigabytes to say so). io/detail/hts_source.cpp
// checks the text length, the reference count and the name lengths that the first block shows
// against what the file can hold and bounds no real header nears (256 MiB of text, 2^26
// references) and refuses the file as a damaged BAM header, naming it.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "io/sequence_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace {

using qmer::io::test::compression;
using qmer::io::test::read_all;

class bam_header_claims_gigabytes : public qmer::io::test::temp_folder_test {};

std::string le32(uint32_t v) {
    return {static_cast<char>(v & 0xFF), static_cast<char>(v >> 8 & 0xFF),
            static_cast<char>(v >> 16 & 0xFF), static_cast<char>(v >> 24 & 0xFF)};
}

void expect_refused(std::string const& path, std::string const& what) {
    try {
        read_all(path);
        FAIL() << path << " was read";
    } catch (qmer::input_error const& e) {
        std::string const message = e.what();
        EXPECT_NE(message.find(path), std::string::npos) << message;
        EXPECT_NE(message.find("damaged BAM header"), std::string::npos) << message;
        EXPECT_NE(message.find(what), std::string::npos) << message;
    }
}

TEST_F(bam_header_claims_gigabytes, the_finding_is_refused_as_a_damaged_header) {
    std::string const p = path("finding.bam");
    std::filesystem::copy_file(
        std::string(QMER_SOURCE_DIR) + "/fuzz/findings/bam_header_claims_gigabytes.bam", p);
    expect_refused(p, "1094863108 bytes of header text");
}

TEST_F(bam_header_claims_gigabytes, huge_text_or_reference_counts_are_refused_compressed_or_not) {
    for (auto how : {compression::none, compression::bgzf}) {
        expect_refused(write("text.bam", "BAM\1" + le32((256u << 20) + 1) + "@HD", how),
                       "268435457 bytes of header text");
        expect_refused(write("refs.bam", "BAM\1" + le32(3) + "@HD" + le32((1u << 26) + 1), how),
                       "67108865 reference sequences");
    }
}

TEST_F(bam_header_claims_gigabytes, a_header_that_fits_its_file_exactly_is_read) {
    // One reference whose name and length end the file: every declared size fits, so the check
    // lets htslib read it, and it is a valid BAM with no records. One byte less and the name's
    // length (with the reference length after it) runs past the file: refused by the check.
    std::string const header =
        "BAM\1" + le32(0) + le32(1) + le32(5) + std::string("chr1\0", 5) + le32(1000);
    EXPECT_TRUE(read_all(write("fits.bam", header)).empty());
    expect_refused(write("short.bam", header.substr(0, header.size() - 1)),
                   "5 bytes for the name of reference 1");
}

TEST_F(bam_header_claims_gigabytes, counts_past_the_file_are_refused_however_small) {
    // Well under the fixed bounds, but more than a 12-byte file can hold.
    expect_refused(write("refs.bam", "BAM\1" + le32(0) + le32(2)), "2 reference sequences");
    expect_refused(write("text.bam", "BAM\1" + le32(100) + "@HD"), "100 bytes of header text");
}

// Regression (found by fuzz/sequence_reader_fuzz,
// fuzz/findings/bam_reference_name_claims_gigabytes.bam): a 62-byte file, an uncompressed "BAM\1"
// header with no text, 458,496 references and a first reference name of 1,094,861,634 bytes, makes
// htslib 1.16's bam_hdr_read() call malloc(1094861634) before reading the name. Every size the
// first block shows is checked against what the file can hold too, the names' lengths included.
class bam_reference_name_claims_gigabytes : public qmer::io::test::temp_folder_test {};

std::string refusal(std::string const& path) {
    try {
        read_all(path);
    } catch (qmer::input_error const& e) {
        return e.what();
    }
    return "(read without an error)";
}

TEST_F(bam_reference_name_claims_gigabytes, the_finding_is_refused_as_a_damaged_header) {
    std::string const p = path("finding.bam");
    std::filesystem::copy_file(
        std::string(QMER_SOURCE_DIR) + "/fuzz/findings/bam_reference_name_claims_gigabytes.bam", p);
    std::string const message = refusal(p);
    EXPECT_NE(message.find(p + ": damaged BAM header"), std::string::npos) << message;
    // The reference count is the first size past what 62 bytes can hold.
    EXPECT_NE(message.find("458496 reference sequences"), std::string::npos) << message;
}

TEST_F(bam_reference_name_claims_gigabytes, a_huge_name_length_is_refused_compressed_or_not) {
    // One reference, room in the file for it, then a name of 1 GiB: the name's own check refuses
    // it.
    std::string const header =
        "BAM\1" + le32(0) + le32(1) + le32(1u << 30) + "chr1" + std::string(8, '\0');
    for (auto how : {compression::none, compression::bgzf}) {
        std::string const p = write(how == compression::none ? "raw.bam" : "bgzf.bam", header, how);
        std::string const message = refusal(p);
        EXPECT_NE(message.find(p + ": damaged BAM header"), std::string::npos) << message;
        EXPECT_NE(message.find("1073741824 bytes for the name of reference 1"), std::string::npos)
            << message;
    }
}

TEST_F(bam_reference_name_claims_gigabytes, a_later_name_in_the_first_block_is_checked_too) {
    std::string const header = "BAM\1" + le32(0) + le32(3) + le32(5) + std::string("chr1\0", 5) +
                               le32(1000) + le32(5) + std::string("chr2\0", 5) + le32(2000) +
                               le32(0x41424342u) + "chr3";
    std::string const message = refusal(write("third.bam", header, compression::bgzf));
    EXPECT_NE(message.find("1094861634 bytes for the name of reference 3"), std::string::npos)
        << message;
}

}  // namespace
