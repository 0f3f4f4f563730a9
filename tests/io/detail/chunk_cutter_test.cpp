// Tests of io/detail/chunk_cutter: where FASTQ and FASTA text is cut (a record start proved by its
// lines, never a lone '@'), where the search goes on when the text stops too early, and the cutter
// reading a stream into pieces that put the text back together byte for byte.

#include "io/detail/chunk_cutter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/detail/memory_input.hpp"

namespace qmer::io::detail {
namespace {

TEST(find_fastq_cut, cuts_at_the_first_record_whose_four_lines_are_whole) {
    std::string const text = "@r1\nACGT\n+\nIIII\n@r2\nGG\n+r2\nII\n@r3\nT\n+\nI\n";
    EXPECT_EQ(find_fastq_cut(text, 1).at, 16u);
    EXPECT_TRUE(find_fastq_cut(text, 1).found);
    EXPECT_EQ(find_fastq_cut(text, 16).at, 16u);       // a line start
    EXPECT_EQ(find_fastq_cut(text, 17).at, 30u);       // inside a record: the next one
    cut_search const none = find_fastq_cut(text, 32);  // r3 is the last record: nothing after it
    EXPECT_FALSE(none.found);
    EXPECT_EQ(none.at, text.size());
}

TEST(find_fastq_cut, a_quality_line_starting_with_at_is_not_a_record) {
    // r1's quality starts with '@' and r2's with '+': neither may be taken for a record start.
    std::string const text = "@r1\nACG\n+\n@II\n@r2\nAC\n+\n+I\n@r3\nA\n+\n@\n";
    cut_search const first = find_fastq_cut(text, 1);
    ASSERT_TRUE(first.found);
    EXPECT_EQ(text.substr(first.at, 4), "@r2\n");
    cut_search const second = find_fastq_cut(text, first.at + 1);
    ASSERT_TRUE(second.found);
    EXPECT_EQ(text.substr(second.at, 4), "@r3\n");
    // "@II" followed by "@r2" (a sequence line may not start with '@'), "@\n" at the very end.
    EXPECT_FALSE(find_fastq_cut(text, second.at + 1).found);
}

TEST(find_fastq_cut, quality_lines_that_look_like_a_record_are_skipped_when_lengths_differ) {
    // Multi-line quality: "@AAA", "BBBB", "+CCC", "DD" look like a record but for the lengths.
    std::string const text = "@r1\nACGTACGTACGTAC\n+\n@AAA\nBBBB\n+CCC\nDD\n@r2\nA\n+\nI\n";
    cut_search const found = find_fastq_cut(text, 1);
    ASSERT_TRUE(found.found);
    EXPECT_EQ(text.substr(found.at, 4), "@r2\n");
}

TEST(find_fastq_cut, crlf_and_empty_records) {
    std::string const crlf = "@a\r\nAC\r\n+\r\nII\r\n@b\r\nGT\r\n+\r\nII\r\n";
    EXPECT_EQ(find_fastq_cut(crlf, 1).at, 15u);
    std::string const empty = "@a\n\n+\n\n@b\n\n+\n\n";
    EXPECT_EQ(find_fastq_cut(empty, 1).at, 7u);
}

TEST(find_fastq_cut, text_that_stops_inside_the_candidate_asks_for_more) {
    std::string const whole = "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIII\n";
    for (size_t stop = 17; stop < whole.size(); ++stop) {
        cut_search const partial = find_fastq_cut(std::string_view(whole).substr(0, stop), 1);
        EXPECT_FALSE(partial.found) << stop;
        EXPECT_EQ(partial.at, 16u) << stop;  // looked at again from r2 once more text is there
    }
    EXPECT_TRUE(find_fastq_cut(whole, 1).found);
    // A quality line already longer than its sequence line settles it without its line end: the
    // search goes on after @x (from its unfinished last line).
    cut_search const longer = find_fastq_cut("@r\nA\n+\nI\n@x\nAC\n+\nIII", 1);
    EXPECT_FALSE(longer.found);
    EXPECT_EQ(longer.at, 17u);
}

TEST(find_fasta_cut, cuts_before_a_header_line_only) {
    std::string const text = ">a x>y\nAC>GT\n\n>b\nTT\n";
    cut_search const found = find_fasta_cut(text, 1);
    ASSERT_TRUE(found.found);
    EXPECT_EQ(found.at, 14u);
    cut_search const none = find_fasta_cut(text, 15);
    EXPECT_FALSE(none.found);
    EXPECT_EQ(none.at, text.size());
    // A '>' that is the first byte of text not yet read is found on the next look from there.
    cut_search const later = find_fasta_cut(text + ">c\n", none.at);
    EXPECT_TRUE(later.found);
    EXPECT_EQ(later.at, text.size());
}

// Cuts text into pieces through a chunk_cutter over a memory_input.
std::vector<std::string> pieces_of(std::string const& text, bool fastq, size_t target, size_t most,
                                   std::vector<cut_piece>* marks = nullptr) {
    memory_input input(text);
    chunk_cutter cutter(input, fastq, target, most);
    byte_buffer bytes;
    cut_piece piece;
    std::vector<std::string> out;
    while (cutter.cut(bytes, piece)) {
        out.emplace_back(bytes.view());
        if (marks != nullptr) marks->push_back(piece);
    }
    return out;
}

TEST(chunk_cutter, pieces_put_the_text_back_together_and_start_at_records) {
    std::mt19937_64 rng(40);
    std::string text;
    for (int i = 0; i < 3000; ++i) {
        size_t const length = rng() % 200;
        std::string quality(length, 'I');
        if (length != 0 && rng() % 3 == 0) quality[0] = rng() % 2 ? '@' : '+';
        text += "@read" + std::to_string(i) + "\n" + std::string(length, 'A') + "\n+\n" + quality +
                "\n";
    }
    for (size_t target : {1, 7, 300, 5000, 70000}) {
        std::vector<cut_piece> marks;
        auto const pieces = pieces_of(text, true, target, 1 << 20, &marks);
        std::string joined;
        for (size_t i = 0; i < pieces.size(); ++i) {
            joined += pieces[i];
            EXPECT_TRUE(pieces[i].starts_with("@read")) << target << " piece " << i;
            EXPECT_TRUE(marks[i].starts_verified);
            EXPECT_EQ(marks[i].last, i + 1 == pieces.size());
            EXPECT_TRUE(marks[i].failure.empty());
        }
        EXPECT_EQ(joined, text) << target;
        if (target == 1) {
            EXPECT_EQ(pieces.size(), 3000u);  // a cut before every record
        }
        if (target == 70000) {
            EXPECT_LT(pieces.size(), 20u);
        }
    }
}

TEST(chunk_cutter, multi_line_fastq_is_cut_blind_at_most_bytes) {
    std::string text;
    for (int i = 0; i < 2000; ++i)
        text += "@r" + std::to_string(i) + "\nACGTACGTAC\nGTACGTACGT\n+\n@IIIIIIIII\n+IIIIIIIII\n";
    std::vector<cut_piece> marks;
    auto const pieces = pieces_of(text, true, 100, 40000, &marks);
    ASSERT_GT(pieces.size(), 3u);
    // The first piece waited for a record to show up for `most` bytes; then, with none seen,
    // pieces are cut from the target on (at the end of each read of 16 kB).
    EXPECT_GE(pieces[0].size(), 40000u);
    std::string joined;
    for (size_t i = 0; i < pieces.size(); ++i) {
        joined += pieces[i];
        EXPECT_EQ(marks[i].starts_verified, i == 0) << i;  // only the input's start is known
        if (i > 0) {
            EXPECT_LE(pieces[i].size(), 16384u) << i;
        }
    }
    EXPECT_EQ(joined, text);
    // Once records show up again, cuts are verified again.
    std::string const then = text + "@a\nAC\n+\nII\n@b\nAC\n+\nII\n@c\nAC\n+\nII\n";
    marks.clear();
    auto const more = pieces_of(then, true, 10, 40000, &marks);
    ASSERT_GE(more.size(), 3u);
    EXPECT_EQ(more[more.size() - 2], "@b\nAC\n+\nII\n");
    EXPECT_EQ(more.back(), "@c\nAC\n+\nII\n");
    EXPECT_TRUE(marks.back().starts_verified);
}

TEST(chunk_cutter, a_fasta_record_longer_than_the_target_is_one_piece) {
    std::string const big(100000, 'C');
    std::string const text = ">a\nAC\n>big\n" + big + "\n>c\nGG\n>d\nT";
    auto const pieces = pieces_of(text, false, 4, 8);
    std::vector<std::string> const want = {">a\nAC\n", ">big\n" + big + "\n", ">c\nGG\n", ">d\nT"};
    EXPECT_EQ(pieces, want);
}

// Cuts text into pieces with a split (record_split) of FASTA records.
std::vector<std::string> split_pieces_of(std::string const& text, bool fastq, size_t target,
                                         record_split split, std::vector<cut_piece>& marks) {
    memory_input input(text);
    chunk_cutter cutter(input, fastq, target, 8 * target, split);
    byte_buffer bytes;
    cut_piece piece;
    std::vector<std::string> out;
    while (cutter.cut(bytes, piece)) {
        out.emplace_back(bytes.view());
        marks.push_back(piece);
    }
    return out;
}

// The sequence bytes kseq keeps of FASTA text (line breaks dropped).
std::string bases_of(std::string_view text) {
    std::string out;
    for (char c : text)
        if (c != '\n') out += c;
    return out;
}

TEST(chunk_cutter, a_long_fasta_record_is_cut_inside_when_a_split_is_given) {
    std::mt19937_64 rng(5);
    std::string big;
    for (int i = 0; i < 60000; ++i) big += "ACGTNacgtn"[rng() % 10];
    std::string lines;
    for (size_t at = 0; at < big.size(); at += 60) lines += big.substr(at, 60) + "\n";
    std::string const text = ">a\nAC\n>big some words\n" + lines + ">c\nGG\n";
    std::vector<cut_piece> marks;
    // Pieces are read 16 KiB at a time: a split of 1 byte cuts near the end of what was read.
    auto const pieces = split_pieces_of(text, false, 4, {1, 30}, marks);
    std::string joined;
    size_t inside_big = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
        std::string piece = pieces[i];
        if (marks[i].cut_inside) {
            ASSERT_EQ(piece.back(), '\n');
            piece.pop_back();  // the line end added where the record was cut
            ASSERT_LT(i + 1, pieces.size());
            EXPECT_TRUE(marks[i + 1].continues);
            // The next piece's lead: the header line of the record cut, and its (up to) 30
            // sequence bytes before the cut.
            std::string const so_far = joined + piece;
            size_t const header = so_far.rfind("\n>") + 1;
            size_t const header_end = so_far.find('\n', header) + 1;
            std::string const before = bases_of(so_far.substr(header_end));
            size_t const carried = std::min<size_t>(30, before.size());
            EXPECT_EQ(marks[i + 1].lead, so_far.substr(header, header_end - header) +
                                             before.substr(before.size() - carried));
            EXPECT_EQ(marks[i + 1].carried, carried);
            inside_big += so_far.substr(header, 4) == ">big";
        } else if (i + 1 < pieces.size()) {
            EXPECT_FALSE(marks[i + 1].continues);
        }
        joined += piece;
    }
    EXPECT_EQ(joined, text);
    EXPECT_GE(inside_big, 3u);
    EXPECT_EQ(pieces.front(), ">a\nAC\n");
    EXPECT_FALSE(marks.front().continues);
}

TEST(chunk_cutter, a_cut_inside_a_record_is_never_where_a_line_would_end_it) {
    // Sequence lines full of bytes kseq would take for a header or a '+' line at a line start,
    // and CRLF line ends: no piece may start a sequence line with them, or split "\r\n".
    std::mt19937_64 rng(8);
    for (size_t carry : {0u, 1u, 3u}) {
        std::string text = ">r\r\n";
        for (int line = 0; line < 4000; ++line) {
            for (int i = 0; i < 9; ++i) text += ">@+AC"[rng() % 5];
            text += "\r\n";
        }
        std::vector<cut_piece> marks;
        auto const pieces = split_pieces_of(text, false, 1 << 20, {1, carry}, marks);
        ASSERT_GT(pieces.size(), 1u);
        for (size_t i = 1; i < pieces.size(); ++i) {
            ASSERT_TRUE(marks[i].continues);
            std::string const first =
                marks[i].lead.substr(marks[i].lead.size() - marks[i].carried) + pieces[i];
            EXPECT_EQ(std::string(">@+\r\n").find(first[0]), std::string::npos) << carry;
            EXPECT_NE(pieces[i - 1].substr(pieces[i - 1].size() - 2), "\r\n");
        }
    }
}

TEST(chunk_cutter, a_split_leaves_fastq_alone) {
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "@r" + std::to_string(i) + "\nACGTACGT\n+\nIIIIIIII\n";
    std::vector<cut_piece> with, without;
    EXPECT_EQ(split_pieces_of(text, true, 100, {1, 30}, with),
              split_pieces_of(text, true, 100, {}, without));
    for (cut_piece const& m : with) EXPECT_FALSE(m.continues || m.cut_inside);
}

TEST(chunk_cutter, an_empty_text_is_one_empty_last_piece) {
    std::vector<cut_piece> marks;
    auto const pieces = pieces_of("", true, 10, 100, &marks);
    ASSERT_EQ(pieces.size(), 1u);
    EXPECT_TRUE(pieces[0].empty());
    EXPECT_TRUE(marks[0].last);
}

}  // namespace
}  // namespace qmer::io::detail
