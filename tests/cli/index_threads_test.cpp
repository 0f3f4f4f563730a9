// `qmer index` reads FASTA references in chunks parsed by several threads (io/chunked_reader.hpp):
// the index it builds holds the same k-mers at every -t (its description and the answers of a
// query are the same), and of several problems in several files the first in file order is
// reported.
#include <random>
#include <regex>
#include <sstream>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
using qmer::test::tsv_body;

// `qmer info` without the lines that name the file or the command line.
std::string description(std::string const& info) {
    std::istringstream in(info);
    std::string line, kept;
    while (std::getline(in, line))
        if (!line.starts_with("index:") && !line.starts_with("built by:")) kept += line + "\n";
    return kept;
}

using index_threads = cli_test;

TEST_F(index_threads, the_same_index_at_every_thread_count) {
    // ~9 Mbp in three files: thousands of short records, records of 200 kbp (several lines of
    // 60), blank lines, CRLF, and the bundled genome: chunks of 4 MB, some ending inside long runs
    // of records.
    std::mt19937_64 rng(40);
    std::string many, long_records;
    auto bases = [&](size_t n) {
        std::string s(n, 'A');
        for (char& c : s) c = "ACGTN"[rng() % 200 == 0 ? 4 : rng() % 4];
        return s;
    };
    for (int i = 0; i < 6000; ++i) {
        std::string const seq = bases(rng() % 1000);
        many += ">short" + std::to_string(i) + (i % 7 ? "\n" : " with a comment\r\n");
        for (size_t at = 0; at < seq.size(); at += 60) many += seq.substr(at, 60) + "\n";
        if (i % 11 == 0) many += "\n";
    }
    for (int i = 0; i < 30; ++i) {
        std::string const seq = bases(200000);
        long_records += ">long" + std::to_string(i) + "\n";
        for (size_t at = 0; at < seq.size(); at += 60) long_records += seq.substr(at, 60) + "\n";
    }
    write_file("many.fa", many);
    write_file("long.fa", long_records);
    std::string reads;
    for (int i = 0; i < 2000; ++i) {
        std::string const& from = i % 2 ? many : long_records;
        size_t const at = rng() % (from.size() - 200);
        std::string read = from.substr(at, 150);
        for (char& c : read)
            if (c == '\n' || c == '\r' || c == '>') c = 'A';
        reads += "@q" + std::to_string(i) + "\n" + read + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file("reads.fq", reads);
    std::string info, answers;
    for (char const* threads : {"1", "2", "3", "8"}) {
        auto const built = qmer({"index", "-t", threads, "-o", "refs.qmer", "many.fa", "long.fa",
                                 data("lambda_virus.fa.gz").string()});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        auto const described = qmer({"info", "refs.qmer"});
        auto const answered = qmer({"query", "-o", "answers.tsv", "refs.qmer", "reads.fq"});
        ASSERT_EQ(answered.exit_code, 0) << answered.err;
        std::string const now_answers = tsv_body(slurp(dir() / "answers.tsv"));
        if (info.empty()) {
            info = description(described.out);
            answers = now_answers;
            EXPECT_NE(info.find("inputs:         3"), std::string::npos) << info;
            // N is one base in 200: most of the 9 Mbp's 31-mers hold none.
            std::smatch kmers;
            ASSERT_TRUE(std::regex_search(info, kmers, std::regex("k-mers: +([0-9]+) distinct")))
                << info;
            EXPECT_GT(std::stoull(kmers[1]), 6000000u) << info;
            continue;
        }
        EXPECT_EQ(description(described.out), info) << "-t " << threads;
        EXPECT_TRUE(now_answers == answers) << "query answers differ at -t " << threads;
    }
}

TEST_F(index_threads, the_first_problem_in_file_order) {
    // A FASTQ record in the middle of the first file, a '+' line at the end of the second, and a
    // third that is not a sequence file at all: the first file's problem is the one reported.
    std::string fa;
    for (int i = 0; i < 40000; ++i) fa += ">r" + std::to_string(i) + "\nACGTACGTACGTACGTACGTACGT\n";
    size_t const middle = fa.find(">r20000\n");
    write_file("first.fa", fa.substr(0, middle) + "@fq\nACGT\n" + fa.substr(middle));
    write_file("second.fa", fa + ">x\nACGT\n+\nIIII\n");
    write_file("third.txt", "hello\n");
    for (char const* threads : {"1", "2", "3", "8"}) {
        auto const r =
            qmer({"index", "-t", threads, "-o", "x.qmer", "first.fa", "second.fa", "third.txt"});
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find("first.fa: record 20001: expected '>' at the start of the record, "
                             "found '@'"),
                  std::string::npos)
            << "-t " << threads << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
        auto const later = qmer({"index", "-t", threads, "-o", "x.qmer", "second.fa", "third.txt"});
        EXPECT_NE(later.err.find("second.fa: record 40001: a line starting with '+'"),
                  std::string::npos)
            << "-t " << threads << ": " << later.err;
    }
}

}  // namespace
