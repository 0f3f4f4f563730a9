// Regression (found by fuzz/sequence_reader_fuzz, fuzz/findings/bam_header_claims_gigabytes.bam):
// a 16-byte file, "BAM\1" and a header text length of 1,094,863,108 bytes, made htslib 1.16's
// bam_hdr_read() allocate that much before reading (libFuzzer's 1 GiB allocation limit stopped
// it; a reader of a damaged file should not take gigabytes to say so). io/detail/hts_source.cpp
// checks the text length and the reference count that the first block shows against bounds no
// real header nears (256 MiB of text, 2^26 references) and refuses the file as a damaged BAM
// header, naming it.

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

TEST_F(bam_header_claims_gigabytes, bounds_themselves_are_left_to_htslib) {
    // At the bounds the file is not refused by the check: htslib reads on and finds it truncated
    // (its own error, not ours), without the check's message.
    std::string const p = write("refs.bam", "BAM\1" + le32(0) + le32(1u << 26));
    try {
        read_all(p);
        FAIL() << "a truncated header was read";
    } catch (qmer::input_error const& e) {
        EXPECT_EQ(std::string(e.what()).find("damaged BAM header"), std::string::npos) << e.what();
    }
}

}  // namespace
