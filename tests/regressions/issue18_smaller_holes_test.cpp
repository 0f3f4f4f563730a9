// Smaller holes a new user could hit, one test each, named after the hole.
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;

class issue18 : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", ">ref\n" + reference + "\n");
        std::string reads;
        // 2,000 reads, ~200 KB: more than the reader's first look at a pipe (64 KB).
        for (int i = 0; i < 2000; ++i)
            reads += "@r" + std::to_string(i) + "\n" + reference.substr(i % 20, 40) + "\n+\n" +
                     std::string(40, 'I') + "\n";
        write_file("reads.fq", reads);
    }
    static size_t lines(std::string const& s) { return std::count(s.begin(), s.end(), '\n'); }
    static bool has(std::string const& s, std::string const& what) {
        return s.find(what) != std::string::npos;
    }

    std::string const reference = "ACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGCTTAGGC";
};

// `--expected 1000000000000` is a usage error naming the option (not std::invalid_argument, exit
// 1).
TEST_F(issue18, oversized_expected_ended_in_invalid_argument) {
    for (std::string const filter : {"expandable", "locally-locked", "linear-probing", "bloom"}) {
        for (std::string const expected :
             {"70000000000", "1000000000000", "18446744073709551615"}) {
            auto const r = qmer(
                {"index", "--filter", filter, "--expected", expected, "-o", "x.qmer", "ref.fa"});
            EXPECT_EQ(r.exit_code, 2) << filter << " " << expected << ": " << r.err;
            EXPECT_TRUE(r.err.starts_with("qmer: error: --expected " + expected)) << r.err;
            EXPECT_EQ(lines(r.err), 1u) << r.err;
        }
    }
    // Within the bound but beyond memory: the memory limit's error (exit 6), before allocating.
    auto const r = qmer({"index", "--filter", "locally-locked", "--expected", "60000000000",
                         "--max-memory", "1G", "-o", "x.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 6) << r.err;
    EXPECT_TRUE(has(r.err, "the index needs")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
}

// `-t 100000000` would ask for 2e8 batches in flight and run out of memory (or be killed) instead
// of starting; the bound is max_threads (app/common/threads.hpp).
TEST_F(issue18, huge_thread_count_ran_out_of_memory) {
    ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    for (auto const& args : std::vector<std::vector<std::string>>{
             {"index", "-t", "100000000", "-o", "x.qmer", "ref.fa"},
             {"query", "-t", "1025", "-o", "out.tsv", "ref.qmer", "reads.fq"}}) {
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: -t ")) << r.err;
        EXPECT_EQ(lines(r.err), 1u) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
    EXPECT_FALSE(std::filesystem::exists(dir() / "out.tsv"));
    EXPECT_EQ(
        qmer({"query", "-q", "-t", "1024", "-o", "out.tsv", "ref.qmer", "reads.fq"}).exit_code, 0);
}

// `qmer index --filter cuckoo` failed with the default --fpr 0.001, which it cannot honour.
TEST_F(issue18, cuckoo_refused_the_default_fpr) {
    auto r = qmer({"index", "-q", "--filter", "cuckoo", "-k", "15", "-o", "c.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(has(r.err, "--filter cuckoo") && has(r.err, "0.00195312")) << r.err;
    auto const info = qmer({"info", "c.qmer"});
    EXPECT_TRUE(has(info.out, "fpr bound:      0.00195312")) << info.out;
    r = qmer({"query", "c.qmer", "reads.fq"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // An --fpr the user asked for is still refused, not changed.
    r = qmer({"index", "--filter", "cuckoo", "--fpr", "0.001", "-o", "d.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "d.qmer"));
}

// xz, bzip2 and zstd files are read as the plain file, from a file or from standard input, not
// refused as "not a sequence file: it starts with byte 0xfd".
TEST_F(issue18, xz_bzip2_zstd_called_not_a_sequence_file) {
    ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    ASSERT_EQ(qmer({"query", "-q", "-o", "plain.tsv", "ref.qmer", "reads.fq"}).exit_code, 0);
    std::string const plain = qmer::test::tsv_body(slurp(dir() / "plain.tsv"));
    ASSERT_GE(lines(plain), 2000u);
    for (std::string const tool : {"xz", "bzip2", "zstd"}) {
        if (shell("command -v " + tool + " > /dev/null").exit_code != 0) {
            ADD_FAILURE() << tool << " is not installed (scripts/install-deps installs it)";
            continue;
        }
        ASSERT_EQ(shell(tool + " -c reads.fq > reads.fq.z 2> /dev/null").exit_code, 0);
        for (auto const& as_stdin : {false, true}) {
            auto const r =
                as_stdin ? qmer({"query", "-q", "-o", "out.tsv", "ref.qmer", "-"}, "reads.fq.z")
                         : qmer({"query", "-q", "-o", "out.tsv", "ref.qmer", "reads.fq.z"});
            EXPECT_EQ(r.exit_code, 0) << r.err;
            EXPECT_EQ(qmer::test::tsv_body(slurp(dir() / "out.tsv")), plain) << tool;
        }
    }
}

// `qmer info` names the filter's parameters, not `parameters 3553718635695981905,50343,...`.
TEST_F(issue18, info_printed_the_parameters_as_raw_integers) {
    ASSERT_EQ(qmer({"index", "-k", "15", "--seed", "7", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    auto const text = qmer({"info", "ref.qmer"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    for (auto const* name : {"levels 1", "level 0:", "slots ", "remainder bits 11", "fill ",
                             "hash seed:      7", "layout rank-select"})
        EXPECT_TRUE(has(text.out, name)) << name << " in\n" << text.out;
    EXPECT_FALSE(has(text.out, "3553718635695981905")) << text.out;
    auto const json = qmer({"info", "--json", "ref.qmer"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_TRUE(has(json.out, "\"filter_parameters\": {\"levels\": 1")) << json.out;
    EXPECT_TRUE(has(json.out, "\"remainder_bits\": 11")) << json.out;
    for (std::string const filter : {"locally-locked", "linear-probing", "bloom", "cuckoo"}) {
        ASSERT_EQ(qmer({"index", "-q", "--filter", filter, "-k", "15", "-o", "f.qmer", "ref.fa"})
                      .exit_code,
                  0);
        auto const r = qmer({"info", "f.qmer"});
        EXPECT_TRUE(has(r.out, filter == "bloom" ? "probes" : "slots")) << r.out;
        EXPECT_FALSE(has(r.out, "does not name")) << r.out;
    }
}

}  // namespace
