// kseq.h comes first, as in io/detail/fastx_source.cpp (its isspace() must be glibc's inline one).
#include <htslib/kseq.h>

// io/detail/fastx_source.cpp parses FASTA and FASTQ with kseq.h's kseq_read over a field reader
// of its own (ks_getuntil2 with memchr). This test reads generated text, valid in every way the
// formats allow (multi-line records, CRLF line ends, blank lines, headers with comments, tabs and
// runs of spaces, empty records, lines longer than kseq's 16 KiB buffer, no final newline), with
// that reader and with kseq.h's own, and asks for the same records, field for field.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/sequence_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace {

struct memory_text {
    std::string const* text;
    size_t at = 0;
};
using memory_text_ptr = memory_text*;

// Short reads, as a pipe or a decompressor hands them over: records cross kseq's buffer refills.
int read_memory(memory_text_ptr m, void* buf, int n) {
    size_t const take = std::min<size_t>({static_cast<size_t>(n), m->text->size() - m->at, 7000});
    std::memcpy(buf, m->text->data() + m->at, take);
    m->at += take;
    return static_cast<int>(take);
}

KSEQ_INIT(memory_text_ptr, read_memory)

}  // namespace

namespace qmer::io::test {
namespace {

std::vector<owned_record> with_stock_kseq(std::string const& text) {
    memory_text m{&text};
    kseq_t* seq = kseq_init(&m);
    std::vector<owned_record> out;
    while (kseq_read(seq) >= 0)
        out.push_back({std::string(seq->name.s, seq->name.l),
                       seq->comment.l ? std::string(seq->comment.s, seq->comment.l) : "",
                       std::string(seq->seq.s, seq->seq.l),
                       seq->qual.l ? std::string(seq->qual.s, seq->qual.l) : ""});
    kseq_destroy(seq);
    return out;
}

// A random valid FASTA or FASTQ text.
std::string random_text(std::mt19937_64& rng, bool fastq) {
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    std::string const eol = pick(3) == 0 ? "\r\n" : "\n";
    auto bases = [&](size_t n) {
        std::string s(n, 'A');
        for (char& c : s) c = "ACGTNacgtn"[pick(10)];
        return s;
    };
    std::string text;
    if (!fastq && pick(2) == 0) text += eol;  // a blank line before the first record
    size_t const records = 1 + pick(40);
    for (size_t i = 0; i < records; ++i) {
        text += fastq ? "@" : ">";
        text += 'r';
        text += std::to_string(i);
        switch (pick(4)) {
            case 0:
                break;
            case 1:
                text += " comment with  spaces";
                break;
            case 2:
                text += "\tcomment\twith\ttabs";
                break;
            default:
                text += "   x=1 y=2";
                break;
        }
        text += eol;
        // Lengths from empty to past kseq's 16 KiB buffer.
        size_t const length = pick(5) == 0 ? 16000 + pick(40000) : pick(300);
        std::string const seq = bases(length);
        size_t const width = fastq && pick(2) == 0 ? length + 1 : 1 + pick(120);
        // Lines of `width`; an empty FASTQ sequence is one empty line, and so is its quality.
        auto lines = [&](std::string const& s) {
            if (s.empty() && fastq) text += eol;
            for (size_t at = 0; at < s.size(); at += width) {
                text.append(s, at, width);
                text += eol;
            }
        };
        lines(seq);
        if (!fastq && pick(6) == 0) text += eol;  // blank lines inside FASTA
        if (fastq) {
            text += '+';
            if (pick(2) == 0) text += std::to_string(i);
            text += eol;
            std::string qual(length, 'I');
            for (char& c : qual) c = static_cast<char>('!' + pick(40));
            lines(qual);
        }
    }
    if (pick(3) == 0 && text.size() >= eol.size())
        text.resize(text.size() - eol.size());  // no final line end
    return text;
}

class fastx_source_test : public temp_folder_test {};

TEST_F(fastx_source_test, reads_what_kseq_reads) {
    std::mt19937_64 rng(2026);
    for (int round = 0; round < 60; ++round) {
        bool const fastq = round % 2 == 1;
        std::string const text = random_text(rng, fastq);
        std::string const p = write(fastq ? "r.fq" : "r.fa", text);
        auto const want = with_stock_kseq(text);
        ASSERT_FALSE(want.empty()) << round;
        ASSERT_EQ(read_all(p), want) << "round " << round;
    }
}

}  // namespace
}  // namespace qmer::io::test
