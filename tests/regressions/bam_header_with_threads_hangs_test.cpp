// Regression (found by fuzz/sequence_reader_fuzz): `qmer query -t 2` on a damaged BAM file must not
// wait forever (exit only by SIGKILL: the wait ignores SIGTERM). With decompression threads started
// before the header is read, htslib 1.16's bam_hdr_read() asks its reader thread whether the
// end-of-file marker is there; when that thread has already stopped on the damaged block, nobody
// answers (a race). So the header is read first and the threads started after it
// (io/detail/hts_source.cpp).
//
// The finding (fuzz/findings/bam_header_threads_hang.bam) goes through the real binary under
// timeout(1), many times, as the hang is a race; and a valid BAM whose header spans several BGZF
// blocks reads the same with threads as without (they start mid-stream).

#include <gtest/gtest.h>
#include <htslib/sam.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "io/sequence_reader.hpp"

namespace {

class bam_header_with_threads_hangs : public qmer::test::cli_test {};

TEST_F(bam_header_with_threads_hangs, damaged_bam_is_refused_every_time) {
    std::filesystem::copy_file(
        std::string(QMER_SOURCE_DIR) + "/fuzz/findings/bam_header_threads_hang.bam",
        dir() / "damaged.bam");
    write_file("ref.fa", ">ref\nACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGC\n");
    ASSERT_EQ(qmer({"index", "-q", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    for (int threads : {2, 3, 4}) {
        for (int run = 0; run < 10; ++run) {
            auto const r =
                shell("timeout -k 5 30 \"$QMER\" query -q -t " + std::to_string(threads) +
                      " ref.qmer damaged.bam > /dev/null 2> err.txt");
            std::string const err = slurp(dir() / "err.txt");
            // timeout(1) exits 124 after its TERM, 137 after its KILL.
            ASSERT_TRUE(r.exit_code != 124 && r.exit_code != 137)
                << "hung with -t " << threads << " (run " << run << ")";
            ASSERT_EQ(r.exit_code, 3) << err;
            EXPECT_TRUE(err.starts_with("qmer: error: ")) << err;
            EXPECT_NE(err.find("damaged.bam"), std::string::npos) << err;
        }
    }
}

TEST_F(bam_header_with_threads_hangs, header_over_several_blocks_reads_the_same_with_threads) {
    // ~160 KiB of header (BGZF blocks hold 64 KiB) and 20,000 unaligned reads.
    std::string header = "@HD\tVN:1.6\tSO:unsorted\n";
    for (int i = 0; header.size() < 160 * 1024; ++i)
        header += "@SQ\tSN:contig_with_a_long_name_" + std::to_string(i) + "\tLN:1000\n";
    std::string const path = (dir() / "big.bam").string();
    {
        samFile* out = sam_open(path.c_str(), "wb");
        ASSERT_NE(out, nullptr);
        sam_hdr_t* hdr = sam_hdr_parse(header.size(), header.c_str());
        ASSERT_NE(hdr, nullptr);
        ASSERT_EQ(sam_hdr_write(out, hdr), 0);
        bam1_t* b = bam_init1();
        std::string const bases = "ACGTTGCAAGGCTTAACCGGTTAACGTAGCTAGCTAGGATCCGATCGATCGGAT";
        for (int i = 0; i < 20000; ++i) {
            std::string line = "read" + std::to_string(i) + "\t4\t*\t0\t0\t*\t*\t0\t0\t" +
                               bases.substr(static_cast<size_t>(i % 20), 30) + "\t" +
                               std::string(30, 'I');
            kstring_t ks = {line.size(), line.size() + 1, line.data()};
            ASSERT_GE(sam_parse1(&ks, hdr, b), 0);
            ASSERT_GE(sam_write1(out, hdr, b), 0);
        }
        bam_destroy1(b);
        sam_hdr_destroy(hdr);
        ASSERT_EQ(sam_close(out), 0);
    }
    auto read_all = [&](unsigned threads) {
        qmer::io::sequence_reader reader(path, {.decompression_threads = threads});
        std::vector<std::string> out;
        qmer::io::record_batch batch;
        while (reader.next_batch(batch))
            for (qmer::io::sequence_record const r : batch)
                out.push_back(std::string(r.name) + ' ' + std::string(r.sequence));
        return out;
    };
    auto const plain = read_all(0);
    ASSERT_EQ(plain.size(), 20000u);
    EXPECT_EQ(plain.front(), "read0 " + std::string("ACGTTGCAAGGCTTAACCGGTTAACGTAGC"));
    for (unsigned threads : {1u, 2u, 4u}) EXPECT_EQ(read_all(threads), plain) << threads;
}

}  // namespace
