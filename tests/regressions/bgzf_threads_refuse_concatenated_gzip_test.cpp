// Regression (found by fuzz/sequence_reader_fuzz): a BGZF file followed by a plain gzip member,
// e.g. `cat a.fa.bgz b.fa.gz > ref.fa.gz` (one valid gzip stream that gzip -dc and qmer -t 1 read
// whole), must not be refused with decompression threads - that is, by default - as "truncated or
// unreadable data (htslib error 4)". htslib 1.16's threaded reader falls back to single-threaded
// reading at the gzip member and marks its own fallback as an I/O error
// (io/detail/bgzf_fallback.hpp). Both the text path and the SAM path read it, the same records with
// any number of threads.
//
// Accepting that fallback must not let two damaged inputs through with threads: a BAM whose second
// block is cut short, where htslib takes the same fallback path after a race, and a bgzipped SAM
// that htslib's threaded SAM parser reads otherwise. Both stay refused.

#include <gtest/gtest.h>
#include <htslib/bgzf.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "core/error.hpp"
#include "io/sequence_reader.hpp"

namespace {

class bgzf_threads_refuse_concatenated_gzip : public qmer::test::cli_test {};

// Every record's name and sequence, read with `threads` decompression threads.
std::vector<std::string> read_all(std::string const& path, unsigned threads) {
    qmer::io::sequence_reader reader(path, {.decompression_threads = threads});
    qmer::io::record_batch batch;
    std::vector<std::string> out;
    while (reader.next_batch(batch))
        for (auto const& r : batch)
            out.push_back(std::string(r.name) + " " + std::string(r.sequence));
    return out;
}

TEST_F(bgzf_threads_refuse_concatenated_gzip, the_fuzz_findings_read_whole_with_threads) {
    std::string const findings = std::string(QMER_SOURCE_DIR) + "/fuzz/findings/";
    std::vector<std::string> const fasta{"a ACGT", "b GGGG"};
    std::vector<std::string> const sam{"r1 ACGTACGTAC", "r2 ACGTACGTAC"};
    for (unsigned threads : {0u, 1u, 2u, 4u}) {
        SCOPED_TRACE(threads);
        EXPECT_EQ(read_all(findings + "bgzf_then_gzip_member.fa.gz", threads), fasta);
        EXPECT_EQ(read_all(findings + "bgzf_then_gzip_member.sam.gz", threads), sam);
    }
}

TEST_F(bgzf_threads_refuse_concatenated_gzip, damage_after_the_first_block_is_still_refused) {
    std::string const findings = std::string(QMER_SOURCE_DIR) + "/fuzz/findings/";
    for (std::string const name :
         {"bgzf_bam_cut_block_threads_race.bam", "bgzf_sam_cut_block_after_copy.sam.gz"}) {
        // The BAM's refusal with threads depended on a race in htslib: many runs.
        for (int run = 0; run < 20; ++run) {
            for (unsigned threads : {0u, 1u, 2u}) {
                SCOPED_TRACE(name + " threads " + std::to_string(threads));
                EXPECT_THROW(read_all(findings + name, threads), qmer::input_error);
            }
        }
    }
}

TEST_F(bgzf_threads_refuse_concatenated_gzip, many_blocks_then_a_gzip_member_through_the_binary) {
    // ~1.3 MB of FASTA in BGZF blocks (64 KiB each: more blocks than the threads' queue holds at
    // once), then a gzip member of 500 more records, then the end-of-file marker block.
    std::string first, second;
    for (int i = 0; i < 2000; ++i) {
        std::string seq;
        for (int j = 0; j < 600; ++j) seq += "ACGT"[(i * 7 + j * j) % 4];
        (i < 1500 ? first : second) += ">r" + std::to_string(i) + "\n" + seq + "\n";
    }
    std::string const bgzf_path = (dir() / "first.bgz").string();
    {
        BGZF* out = bgzf_open(bgzf_path.c_str(), "w");
        ASSERT_NE(out, nullptr);
        ASSERT_EQ(bgzf_write(out, first.data(), first.size()), static_cast<ssize_t>(first.size()));
        ASSERT_EQ(bgzf_close(out), 0);  // writes the end-of-file marker block
    }
    write_file("second.fa", second);
    write_file("all.fa", first + second);
    // The 28-byte marker moves to the end, as bgzip writes it and as cat of two files leaves it
    // when the marker is kept in the middle too (both are read the same).
    ASSERT_EQ(shell("head -c -28 first.bgz > mixed.fa.gz && gzip -c second.fa >> mixed.fa.gz && "
                    "tail -c 28 first.bgz >> mixed.fa.gz && "
                    "cat first.bgz > kept.fa.gz && gzip -c second.fa >> kept.fa.gz && "
                    "tail -c 28 first.bgz >> kept.fa.gz")
                  .exit_code,
              0);
    ASSERT_EQ(qmer({"index", "-q", "-k", "21", "-o", "ref.qmer", "all.fa"}).exit_code, 0);
    auto const expected = qmer({"query", "-q", "-t", "1", "ref.qmer", "all.fa"});
    ASSERT_EQ(expected.exit_code, 0) << expected.err;
    auto const body = [](std::string const& tsv) { return tsv.substr(tsv.find("read_id")); };
    for (std::string const input : {"mixed.fa.gz", "kept.fa.gz"}) {
        for (std::string const threads : {"1", "2", "4"}) {
            SCOPED_TRACE(input + " -t " + threads);
            auto const r = qmer({"query", "-q", "-t", threads, "ref.qmer", input});
            ASSERT_EQ(r.exit_code, 0) << r.err;
            EXPECT_EQ(body(r.out), body(expected.out));
        }
        EXPECT_EQ(read_all((dir() / input).string(), 2).size(), 2000u);
    }
}

}  // namespace
