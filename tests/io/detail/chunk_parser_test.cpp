// Tests of io/detail/chunk_parser: which endings of a piece of text are whole (its records are the
// file's), which are incomplete (a record may go on in the next piece, and from where it must be
// parsed again), and that a malformed record is a result only when the piece alone shows it.

#include "io/detail/chunk_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/sequence_test_files.hpp"

namespace qmer::io::detail {
namespace {

using test::owned_record;
using ending = chunk_outcome::ending;

struct parsed {
    chunk_outcome outcome;
    std::vector<owned_record> records;
};

parsed parse(std::string_view text, bool fastq, bool last = false, std::string failure = {},
             std::string_view second = {}) {
    record_batch batch;
    parsed out;
    out.outcome = parse_chunk(text, second, fastq, last, failure, batch);
    for (sequence_record const r : batch) out.records.push_back(test::own(r));
    return out;
}

std::string const two_fastq = "@r1 c\nACGT\n+\nIIII\n@r2\nGG\n+\n@+\n";

TEST(parse_chunk, whole_fastq_records) {
    parsed const p = parse(two_fastq, true);
    EXPECT_EQ(p.outcome.how, ending::whole);
    std::vector<owned_record> const want = {{"r1", "c", "ACGT", "IIII"}, {"r2", "", "GG", "@+"}};
    EXPECT_EQ(p.records, want);
    // Blank lines after the last record are between records: still whole.
    EXPECT_EQ(parse(two_fastq + "\n\r\n \n", true).outcome.how, ending::whole);
}

TEST(parse_chunk, a_fastq_record_cut_anywhere_is_incomplete_from_its_start) {
    size_t const r2 = two_fastq.find("@r2");
    for (size_t cut = r2 + 1; cut < two_fastq.size(); ++cut) {
        parsed const p = parse(std::string_view(two_fastq).substr(0, cut), true);
        EXPECT_EQ(p.outcome.how, ending::incomplete) << cut;
        EXPECT_EQ(p.outcome.resume, r2) << cut;
        ASSERT_EQ(p.records.size(), 1u) << cut;
        EXPECT_EQ(p.records[0].name, "r1");
    }
    // Cut right after r1: whole, r2 is the next piece's.
    EXPECT_EQ(parse(std::string_view(two_fastq).substr(0, r2), true).outcome.how, ending::whole);
    // Cut inside r1: nothing whole, all of it to parse again.
    parsed const early = parse(std::string_view(two_fastq).substr(0, 8), true);
    EXPECT_EQ(early.outcome.how, ending::incomplete);
    EXPECT_EQ(early.outcome.resume, 0u);
    EXPECT_TRUE(early.records.empty());
}

TEST(parse_chunk, a_short_quality_line_reads_on_into_the_next_piece) {
    // kseq reads quality lines until they are as long as the sequence: r1's short quality takes
    // the next line too, so r1 is not settled by this piece.
    parsed const p = parse("@r1\nACGT\n+\nIII\n", true);
    EXPECT_EQ(p.outcome.how, ending::incomplete);
    EXPECT_EQ(p.outcome.resume, 0u);
    // As the last piece, it is the serial reader's error.
    parsed const last = parse("@r1\nACGT\n+\nIII\n", true, true);
    EXPECT_EQ(last.outcome.how, ending::bad);
    EXPECT_EQ(last.outcome.problem, "quality length 3 differs from sequence length 4 in 'r1'");
}

TEST(parse_chunk, a_malformed_record_inside_the_piece_is_a_result) {
    parsed const p = parse("@r1\nAC\n+\nII\njunk\n@r3\nA\n+\nI\n", true);
    EXPECT_EQ(p.outcome.how, ending::bad);
    EXPECT_EQ(p.outcome.problem, "expected '@' at the start of the record, found 'j'");
    ASSERT_EQ(p.records.size(), 1u);
    parsed const nul = parse(std::string("@r1\nAC\n+\nII\n@r2\nA\0\n+\nII\n@r3\n", 28), true);
    EXPECT_EQ(nul.outcome.how, ending::bad);
    EXPECT_EQ(nul.outcome.problem, "binary data: a NUL byte at position 2 of the sequence");
    // A record missing its '+' line at the piece's end might have it in the next piece.
    EXPECT_EQ(parse("@r1\nAC\n+\nII\n@r2\nACGT\n", true).outcome.how, ending::incomplete);
    EXPECT_EQ(parse("@r1\nAC\n+\nII\n@r2\nACGT\n", true, true).outcome.problem,
              "no '+' line after the sequence of 'r2'");
}

TEST(parse_chunk, fasta_records_run_to_the_end_of_the_piece) {
    parsed const p = parse(">a x\nAC\nGT\n\n>b\n>c\nTT\n\n", false);
    EXPECT_EQ(p.outcome.how, ending::whole);
    std::vector<owned_record> const want = {
        {"a", "x", "ACGT", ""}, {"b", "", "", ""}, {"c", "", "TT", ""}};
    EXPECT_EQ(p.records, want);
    // A '+' line in FASTA: an error, but kseq reads "quality" past the piece, so it may not be the
    // error the whole file gives (a damaged stream further on would be): incomplete, from '>c'.
    std::string const plus = ">a\nAC\n>c\nACGTACGT\n+\nII\n";
    parsed const q = parse(plus, false);
    EXPECT_EQ(q.outcome.how, ending::incomplete);
    EXPECT_EQ(q.outcome.resume, plus.find(">c"));
    EXPECT_EQ(q.records.size(), 1u);
    EXPECT_EQ(parse(plus, false, true).outcome.problem,
              "a line starting with '+' inside FASTA record 'c' (FASTQ records in a FASTA file?)");
}

TEST(parse_chunk, the_last_piece_reports_the_stream_failure_where_the_text_stops) {
    std::string const failure = "truncated or corrupt gzip/BGZF data (htslib error 2)";
    parsed const after = parse(two_fastq, true, true, failure);
    EXPECT_EQ(after.outcome.how, ending::bad);
    EXPECT_EQ(after.outcome.problem, failure);
    EXPECT_EQ(after.records.size(), 2u);  // the damage is met looking for a third record
    parsed const inside = parse(std::string_view(two_fastq).substr(0, 20), true, true, failure);
    EXPECT_EQ(inside.outcome.problem, failure);
    EXPECT_EQ(inside.records.size(), 1u);
    // Not the last piece: the failure is not this piece's to report.
    EXPECT_EQ(parse(two_fastq, true, false, failure).outcome.how, ending::whole);
}

TEST(parse_chunk, text_in_two_parts_reads_as_one) {
    for (size_t split = 0; split <= two_fastq.size(); ++split) {
        parsed const p = parse(std::string_view(two_fastq).substr(0, split), true, false, {},
                               std::string_view(two_fastq).substr(split));
        EXPECT_EQ(p.outcome.how, ending::whole) << split;
        EXPECT_EQ(p.records.size(), 2u) << split;
    }
}

}  // namespace
}  // namespace qmer::io::detail
