// Regression: an output that is also an input must not replace it while qmer exits 0 (`qmer query
// -o reads.fq idx.qmer reads.fq` would turn the reads into the TSV; `--summary idx.qmer` the index
// into JSON; `qmer index -o ref.fa.gz ref.fa.gz` the reference into the index). Every such command
// is refused before anything is written: exit 2, one line naming both paths, every file in the
// folder as it was (no temporary left either). Symlinks and hard links count; "-" and /dev/null
// stay allowed; `index --append` keeps rewriting its own index.
#include <unistd.h>

#include <map>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;

class output_same_file_as_input : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", ">ref\n" + reference + "\n");
        write_file("reads.fq", "@r1\n" + reference.substr(0, 40) + "\n+\n" + std::string(40, 'I') +
                                   "\n@r2\n" + reference.substr(10, 40) + "\n+\n" +
                                   std::string(40, 'I') + "\n");
        write_file("reads_1.fq", slurp(dir() / "reads.fq"));
        write_file("reads_2.fq", slurp(dir() / "reads.fq"));
        ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
        ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.fa.gz", "ref.fa"}).exit_code, 0);
        // ref.fa.gz is an index under a reference's name from here on; make it a real gzip.
        ASSERT_EQ(shell("gzip -c ref.fa > ref.fa.gz").exit_code, 0);
    }

    // Every file of the folder (name -> content; symlinks by their target's content).
    std::map<std::string, std::string> snapshot() const {
        std::map<std::string, std::string> files;
        for (auto const& e : std::filesystem::directory_iterator(dir()))
            files[e.path().filename().string()] = slurp(e.path());
        return files;
    }

    // Runs args, expects the refusal naming both paths, and every file untouched.
    void expect_refused(std::vector<std::string> const& args, std::string const& output,
                        std::string const& other, std::string const& stdin_file = "") {
        auto const before = snapshot();
        cli_result const r = qmer(args, stdin_file);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find("'" + output + "'"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("'" + other + "'"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("same file"), std::string::npos) << r.err;
        EXPECT_EQ(snapshot(), before) << "a file changed, appeared or vanished";
    }

    std::string const reference = "ACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGCTTAGGC";
};

// The four commands of the issue.
TEST_F(output_same_file_as_input, tsv_onto_the_reads) {
    expect_refused({"query", "-o", "reads.fq", "ref.qmer", "reads.fq"}, "reads.fq", "reads.fq");
}

TEST_F(output_same_file_as_input, matched_onto_the_reads) {
    expect_refused({"query", "-o", "/dev/null", "--matched", "reads.fq", "ref.qmer", "reads.fq"},
                   "reads.fq", "reads.fq");
}

TEST_F(output_same_file_as_input, summary_onto_the_index) {
    expect_refused({"query", "-o", "/dev/null", "--summary", "ref.qmer", "ref.qmer", "reads.fq"},
                   "ref.qmer", "ref.qmer");
}

TEST_F(output_same_file_as_input, index_onto_its_reference) {
    expect_refused({"index", "-k", "15", "-o", "ref.fa.gz", "ref.fa.gz"}, "ref.fa.gz", "ref.fa.gz");
    expect_refused({"index", "-k", "15", "-o", "ref.fa", "ref.qmer", "ref.fa"}, "ref.fa", "ref.fa");
}

TEST_F(output_same_file_as_input, symlink_to_an_input) {
    ASSERT_EQ(::symlink("reads.fq", (dir() / "link.fq").c_str()), 0);
    ASSERT_EQ(::symlink("ref.qmer", (dir() / "link.qmer").c_str()), 0);
    // The output is a link to the reads; the reads are given through a link; the index through
    // one.
    expect_refused({"query", "-o", "link.fq", "ref.qmer", "reads.fq"}, "link.fq", "reads.fq");
    expect_refused({"query", "-o", "reads.fq", "ref.qmer", "link.fq"}, "reads.fq", "link.fq");
    expect_refused({"query", "--summary", "ref.qmer", "link.qmer", "reads.fq"}, "ref.qmer",
                   "link.qmer");
    expect_refused({"index", "-k", "15", "-o", "link.fq", "reads.fq"}, "link.fq", "reads.fq");
}

TEST_F(output_same_file_as_input, hard_link_to_an_input) {
    ASSERT_EQ(::link((dir() / "reads.fq").c_str(), (dir() / "hard.fq").c_str()), 0);
    expect_refused({"query", "-o", "/dev/null", "--unmatched", "hard.fq", "ref.qmer", "reads.fq"},
                   "hard.fq", "reads.fq");
    ASSERT_EQ(::link((dir() / "ref.fa").c_str(), (dir() / "hard.fa").c_str()), 0);
    expect_refused({"index", "-k", "15", "-o", "hard.fa", "ref.fa"}, "hard.fa", "ref.fa");
}

// Paired reads write --matched x.fq as x_1.fq and x_2.fq: those are the names compared.
TEST_F(output_same_file_as_input, mate_outputs_onto_the_mates) {
    expect_refused({"query", "-o", "/dev/null", "--unmatched", "reads.fq", "ref.qmer", "reads_1.fq",
                    "reads_2.fq"},
                   "reads_1.fq", "reads_1.fq");
    // --matched reads.fq writes reads_1.fq/reads_2.fq, not reads.fq: allowed with other mates.
    ASSERT_EQ(::symlink("reads_1.fq", (dir() / "m_1.fq").c_str()), 0);
    ASSERT_EQ(::symlink("reads_2.fq", (dir() / "m_2.fq").c_str()), 0);
    auto const r =
        qmer({"query", "-o", "/dev/null", "--matched", "out.fq", "ref.qmer", "m_1.fq", "m_2.fq"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir() / "out_1.fq"));
}

TEST_F(output_same_file_as_input, two_outputs_onto_one_file) {
    // Neither exists yet: the same name, also through another spelling of the folder.
    std::filesystem::create_directory(dir() / "sub");
    expect_refused({"query", "-o", "out.tsv", "--summary", "out.tsv", "ref.qmer", "reads.fq"},
                   "out.tsv", "out.tsv");
    expect_refused(
        {"query", "-o", "sub/out.tsv", "--matched", "sub/../sub/out.tsv", "ref.qmer", "reads.fq"},
        "sub/../sub/out.tsv", "sub/out.tsv");
    // Both exist, hard-linked.
    write_file("a.tsv", "keep me\n");
    ASSERT_EQ(::link((dir() / "a.tsv").c_str(), (dir() / "b.json").c_str()), 0);
    expect_refused({"query", "-o", "a.tsv", "--summary", "b.json", "ref.qmer", "reads.fq"},
                   "b.json", "a.tsv");
    // --matched and --unmatched onto one mate file.
    expect_refused({"query", "-o", "/dev/null", "--matched", "x.fq", "--unmatched", "x.fq",
                    "ref.qmer", "reads_1.fq", "reads_2.fq"},
                   "x_1.fq", "x_1.fq");
}

// The standard streams are compared by what they are open on.
TEST_F(output_same_file_as_input, stdin_is_the_output) {
    expect_refused({"query", "-o", "reads.fq", "ref.qmer", "-"}, "reads.fq", "-", "reads.fq");
    // Standard output appended to the reads: they would grow while being read.
    auto const before = slurp(dir() / "reads.fq");
    EXPECT_EQ(shell("$QMER query ref.qmer reads.fq >> reads.fq 2> err.txt").exit_code, 2);
    EXPECT_EQ(slurp(dir() / "reads.fq"), before);
    EXPECT_NE(slurp(dir() / "err.txt").find("same file"), std::string::npos);
}

TEST_F(output_same_file_as_input, devices_and_streams_stay_allowed) {
    auto const before = snapshot();
    auto r = qmer({"query", "-o", "/dev/null", "--summary", "/dev/null", "--matched", "/dev/null",
                   "--unmatched", "/dev/null", "ref.qmer", "reads.fq"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = qmer({"query", "-o", "-", "--summary", "/dev/stderr", "ref.qmer", "-"}, "reads.fq");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("r1\t"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
}

// --append reads the index it then replaces: that is what it is for, and it keeps working; a
// reference that is the index is still refused.
TEST_F(output_same_file_as_input, append_rewrites_its_own_index) {
    auto const before = slurp(dir() / "ref.qmer");
    auto const r = qmer({"index", "--append", "-k", "15", "-o", "ref.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(slurp(dir() / "ref.qmer"), before);
    auto const info = qmer({"info", "ref.qmer"});
    EXPECT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("reads.fq"), std::string::npos) << info.out;
    expect_refused({"index", "--append", "-k", "15", "-o", "ref.qmer", "ref.qmer"}, "ref.qmer",
                   "ref.qmer");
}

}  // namespace
