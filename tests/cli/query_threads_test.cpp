// `qmer query` gives the same bytes whatever -t: the TSV, the --unmatched and --matched FASTQ and
// the --summary JSON (less its timing, memory and thread-count fields) of -t 2, 3 and 8 are those
// of -t 1, on the bundled data and on generated reads large enough to be cut into several chunks
// (io/chunked_reader.hpp: 2 MB of text each), and so is an error: the first malformed record,
// with no output left behind.
#include <algorithm>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
using qmer::test::tsv_body;

// The summary without the lines that differ from run to run (times, rates, memory) or with -t.
std::string stable_summary(std::string const& json) {
    std::istringstream in(json);
    std::string line, kept;
    while (std::getline(in, line)) {
        bool drop = false;
        for (char const* key : {"\"wall_seconds\"", "\"cpu_seconds\"", "\"reads_per_second\"",
                                "\"peak_rss_bytes\"", "\"threads\""})
            drop = drop || line.find(key) != std::string::npos;
        if (!drop) kept += line + "\n";
    }
    return kept;
}

class query_threads : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        auto const r = qmer({"index", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }

    // Runs the query at every thread count of `threads` and expects every output the same as at
    // the first. Returns the TSV of the first.
    std::string expect_same_outputs(std::vector<std::string> const& reads,
                                    std::vector<std::string> const& extra = {}) {
        std::string tsv, unmatched, matched, summary;
        for (char const* threads : {"1", "2", "3", "8"}) {
            std::vector<std::string> args = {
                "query",        "-t",          threads,     "-o",        "out.tsv", "--summary",
                "summary.json", "--unmatched", "unmatched", "--matched", "matched"};
            args.insert(args.end(), extra.begin(), extra.end());
            args.push_back("lambda.qmer");
            args.insert(args.end(), reads.begin(), reads.end());
            auto const r = qmer(args);
            EXPECT_EQ(r.exit_code, 0) << r.err;
            std::string const now_tsv = slurp(dir() / "out.tsv");
            // Paired input writes mates 1 and 2 to NAME_1 and NAME_2 (interleaved input keeps
            // NAME). Names without a format suffix keep the reads' format (FASTA or FASTQ).
            auto fastq = [&](std::string const& name) {
                return slurp(dir() / name) + slurp(dir() / (name + "_1")) +
                       slurp(dir() / (name + "_2"));
            };
            std::string const now_unmatched = fastq("unmatched");
            std::string const now_matched = fastq("matched");
            std::string const now_summary = stable_summary(slurp(dir() / "summary.json"));
            if (tsv.empty()) {
                tsv = now_tsv, unmatched = now_unmatched, matched = now_matched;
                summary = now_summary;
                EXPECT_NE(summary.find("\"reads\": "), std::string::npos) << summary;
                EXPECT_FALSE(unmatched.empty() && matched.empty());
                continue;
            }
            // Not EXPECT_EQ on megabytes: a failure names the output and the thread count.
            EXPECT_TRUE(now_tsv == tsv) << "TSV differs at -t " << threads;
            EXPECT_TRUE(now_unmatched == unmatched) << "--unmatched differs at -t " << threads;
            EXPECT_TRUE(now_matched == matched) << "--matched differs at -t " << threads;
            EXPECT_EQ(now_summary, summary) << "at -t " << threads;
        }
        return tsv;
    }
};

// `count` reads of 150 bp, half from the lambda genome's reads (so that some match), the rest
// random; quality lines that start with '@' or '+' now and then, and some empty reads.
std::string generated_reads(size_t count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string fq;
    for (size_t i = 0; i < count; ++i) {
        size_t const length = i % 97 == 0 ? 0 : 150;
        std::string seq(length, 'A');
        for (char& c : seq) c = "ACGT"[rng() % 4];
        std::string qual(length, 'I');
        for (char& c : qual) c = static_cast<char>('!' + rng() % 40);
        if (length != 0 && i % 5 == 0) qual[0] = i % 10 ? '@' : '+';
        fq += "@gen:" + std::to_string(i) + " 1:N:0\n" + seq + "\n+\n" + qual + "\n";
    }
    return fq;
}

TEST_F(query_threads, bundled_reads_give_the_same_outputs_at_every_thread_count) {
    std::string const tsv = expect_same_outputs({data("lambda_reads_1.fq.gz").string()});
    EXPECT_GT(std::count(tsv.begin(), tsv.end(), '\n'), 10000);
    expect_same_outputs({data("unrelated_reads.fq.gz").string()}, {"--quick"});
    expect_same_outputs({data("lambda_reads_1.fq.gz").string()}, {"--quick"});
    // Paired input (read and paired serially) too.
    expect_same_outputs(
        {data("lambda_reads_1.fq.gz").string(), data("lambda_reads_2.fq.gz").string()});
}

TEST_F(query_threads, generated_reads_in_several_chunks) {
    // Lambda's reads and 25,000 generated ones in one file: ~11 MB of text, five or six chunks.
    ASSERT_EQ(
        shell("gzip -dc '" + data("lambda_reads_1.fq.gz").string() + "' > mixed.fq").exit_code, 0);
    {
        std::ofstream out(dir() / "mixed.fq", std::ios::app | std::ios::binary);
        out << generated_reads(25000, 40);
    }
    std::string const tsv = tsv_body(expect_same_outputs({"mixed.fq"}));
    EXPECT_EQ(std::count(tsv.begin(), tsv.end(), '\n'), 35000 + 1);  // the reads and the header
    expect_same_outputs({"mixed.fq"}, {"--quick"});
    // The same reads as gzip, as FASTA, and as multi-line FASTQ (where the cutter sees no record
    // it can verify: here one chunk, in a larger file serial parsing): the same outputs.
    ASSERT_EQ(shell("gzip -c mixed.fq > mixed.fq.gz").exit_code, 0);
    EXPECT_TRUE(tsv_body(expect_same_outputs({"mixed.fq.gz"})) == tsv);
    ASSERT_EQ(shell("awk 'NR % 4 == 1 { print \">\" substr($0, 2) } NR % 4 == 2' mixed.fq > "
                    "mixed.fa")
                  .exit_code,
              0);
    expect_same_outputs({"mixed.fa"});
    ASSERT_EQ(shell("awk 'NR % 4 == 2 || NR % 4 == 0 { print substr($0, 1, 70); "
                    "print substr($0, 71); next } { print }' mixed.fq > wrapped.fq")
                  .exit_code,
              0);
    EXPECT_TRUE(tsv_body(expect_same_outputs({"wrapped.fq"})) == tsv);
}

TEST_F(query_threads, generated_mates_in_two_files_and_interleaved) {
    // Mates of 150 and 100 bases: the files' chunks hold different numbers of records, which the
    // pairing evens out (io/chunked_paired_reader.hpp).
    std::string const first = generated_reads(20000, 5);
    std::string second = generated_reads(20000, 6);
    std::string mates1, mates2, interleaved;
    std::istringstream in1(first), in2(second);
    std::string l1[4], l2[4];
    for (int i = 0; i < 20000; ++i) {
        for (auto& line : l1) std::getline(in1, line);
        for (auto& line : l2) std::getline(in2, line);
        l2[0] = l1[0].substr(0, l1[0].find(' ')) + " 2:N:0";
        l2[1] = l2[1].substr(0, 100);
        l2[3] = l2[3].substr(0, 100);
        std::string const a = l1[0] + "\n" + l1[1] + "\n+\n" + l1[3] + "\n";
        std::string const b = l2[0] + "\n" + l2[1] + "\n+\n" + l2[3] + "\n";
        mates1 += a;
        mates2 += b;
        interleaved += a + b;
    }
    write_file("m1.fq", mates1);
    write_file("m2.fq", mates2);
    write_file("il.fq", interleaved);
    std::string const two = tsv_body(expect_same_outputs({"m1.fq", "m2.fq"}));
    EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 20000 + 1);
    EXPECT_TRUE(tsv_body(expect_same_outputs({"il.fq"}, {"--interleaved"})) == two);
    expect_same_outputs({"m1.fq", "m2.fq"}, {"--quick"});
}

TEST_F(query_threads, the_first_malformed_record_is_reported_at_every_thread_count) {
    // Two malformed records in different chunks: a short quality at read 20,001, binary data at
    // read 30,001. The first is the error, whichever thread parses which chunk first.
    std::string fq = generated_reads(20000, 1);
    fq += "@bad1\nACGT\n+\nIII\n";
    fq += generated_reads(10000, 2);
    fq += std::string("@bad2\nAC\0T\n+\nIIII\n", 19);
    fq += generated_reads(100, 3);
    write_file("bad.fq", fq);
    std::string first_error;
    for (char const* threads : {"1", "2", "3", "8"}) {
        auto const r = qmer({"query", "-t", threads, "-o", "out.tsv", "--unmatched", "u.fq",
                             "lambda.qmer", "bad.fq"});
        EXPECT_EQ(r.exit_code, 3) << r.err;  // an input error
        // bad1's quality is short: kseq reads the next line into it, as at every -t.
        std::smatch error;
        ASSERT_TRUE(std::regex_search(r.err, error,
                                      std::regex("bad\\.fq: record 20001: quality length [^\\n]*")))
            << "-t " << threads << ": " << r.err;
        if (first_error.empty()) first_error = error.str();
        EXPECT_EQ(error.str(), first_error) << "-t " << threads;
        EXPECT_FALSE(std::filesystem::exists(dir() / "out.tsv")) << threads;
        EXPECT_FALSE(std::filesystem::exists(dir() / "u.fq")) << threads;
    }
    EXPECT_NE(first_error.find("in 'bad1'"), std::string::npos) << first_error;
}

}  // namespace
