// app/query/output_names.hpp: the record format a reads output's name asks for and the names
// derived from it.
#include "app/query/output_names.hpp"

#include <gtest/gtest.h>

namespace {

using namespace qmer::app;

TEST(output_names, category_and_mate_files_go_before_the_suffix) {
    EXPECT_EQ(category_path("out/s.fq.gz", "A"), "out/s.A.fq.gz");
    EXPECT_EQ(category_path("out/s.fastq", "none"), "out/s.none.fastq");
    EXPECT_EQ(category_path("out/s", "A"), "out/s.A.fq");
    EXPECT_EQ(mate_path(category_path("s.fq.gz", "B"), 2), "s.B_2.fq.gz");
    EXPECT_EQ(mate_path("clean.fq.gz", 1), "clean_1.fq.gz");
    EXPECT_EQ(mate_path("clean", 2), "clean_2");
}

TEST(output_names, suffixes_match_in_any_case_and_keep_the_users_case) {
    EXPECT_EQ(mate_path("clean.FQ.GZ", 1), "clean_1.FQ.GZ");
    EXPECT_EQ(mate_path("clean.Fastq.Bgz", 2), "clean_2.Fastq.Bgz");
    EXPECT_EQ(mate_path("clean.fq.zst", 1), "clean_1.fq.zst");
    EXPECT_EQ(mate_path("clean.fna.ZST", 2), "clean_2.fna.ZST");
    EXPECT_EQ(category_path("s.FA.gz", "B"), "s.B.FA.gz");
    EXPECT_EQ(category_path("s.gz", "B"), "s.B.gz");
    // A name that only looks like a suffix is not one.
    EXPECT_EQ(mate_path(".fq", 1), ".fq_1");
    EXPECT_EQ(mate_path("clean.fqz", 1), "clean.fqz_1");
}

TEST(output_names, the_format_follows_the_name) {
    EXPECT_EQ(record_format_by_name("clean.fq"), record_format::fastq);
    EXPECT_EQ(record_format_by_name("clean.FASTQ.gz"), record_format::fastq);
    EXPECT_EQ(record_format_by_name("clean.fa"), record_format::fasta);
    EXPECT_EQ(record_format_by_name("clean.fasta.zst"), record_format::fasta);
    EXPECT_EQ(record_format_by_name("clean.FNA.BGZ"), record_format::fasta);
    EXPECT_EQ(record_format_by_name("clean.fas"), record_format::fasta);
    EXPECT_EQ(record_format_by_name("clean"), record_format::as_read);
    EXPECT_EQ(record_format_by_name("clean.txt.gz"), record_format::as_read);
    EXPECT_EQ(record_format_by_name("-"), record_format::as_read);
    EXPECT_EQ(fastx_suffix_length("a.fq.GZ"), 6u);
    EXPECT_EQ(fastx_suffix_length("a.txt"), 0u);
}

}  // namespace
