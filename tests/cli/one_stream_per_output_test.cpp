// Outputs never share a stream and inputs are never given twice (io/same_file.hpp): refused before
// anything is read or written, exit 2, one line naming both. Reads outputs take their record
// format from their names (app/query/output_names.hpp).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;

class one_stream_per_output : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        auto const r = qmer({"index", "-q", "-o", "ref.qmer", data("lambda_virus.fa.gz").string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::filesystem::copy_file(data("lambda_reads_1.fq.gz"), dir() / "r1.fq.gz");
        std::filesystem::copy_file(data("lambda_reads_2.fq.gz"), dir() / "r2.fq.gz");
    }

    // The folder's names other than the inputs: what a refused command must not have made.
    std::vector<std::string> made() const {
        std::vector<std::string> out;
        for (auto const& e : std::filesystem::directory_iterator(dir())) {
            auto const name = e.path().filename().string();
            if (name != "ref.qmer" && name != "r1.fq.gz" && name != "r2.fq.gz" &&
                name != "stdout.txt" && name != "stderr.txt")
                out.push_back(name);
        }
        return out;
    }

    void expect_refused(std::vector<std::string> const& args, std::vector<std::string> const& said,
                        std::string const& stdin_file = "") {
        cli_result const r = qmer(args, stdin_file);
        std::string shown;
        for (auto const& a : args) shown += a + " ";
        EXPECT_EQ(r.exit_code, 2) << shown << r.err;
        EXPECT_TRUE(r.out.empty()) << shown << r.out.substr(0, 200);
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        for (auto const& s : said) EXPECT_NE(r.err.find(s), std::string::npos) << shown << r.err;
        EXPECT_EQ(made(), std::vector<std::string>{}) << shown;
    }
};

TEST_F(one_stream_per_output, two_outputs_on_stdout_are_refused) {
    expect_refused({"query", "--unmatched", "-", "ref.qmer", "r1.fq.gz"},
                   {"'-' (--unmatched)", "'-' (-o)", "standard output"});
    expect_refused({"query", "--summary", "-", "ref.qmer", "r1.fq.gz"},
                   {"'-' (--summary)", "'-' (-o)"});
    expect_refused(
        {"query", "-o", "t.tsv", "--summary", "-", "--matched", "-", "ref.qmer", "r1.fq.gz"},
        {"'-' (--matched)", "'-' (--summary)"});
    // Standard output redirected to a file, and that file named again as an output.
    auto const r = shell("$QMER query --unmatched out.fq ref.qmer r1.fq.gz > out.fq 2> err.txt");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(slurp(dir() / "err.txt").find("standard output"), std::string::npos)
        << slurp(dir() / "err.txt");
    // Through a pipe: /dev/stdout is the pipe standard output is open on.
    auto const p = shell(
        "$QMER query --matched /dev/stdout ref.qmer r1.fq.gz 2> err.txt | cat > piped.txt; "
        "exit ${PIPESTATUS[0]}");
    EXPECT_EQ(p.exit_code, 2) << slurp(dir() / "err.txt");
    EXPECT_TRUE(slurp(dir() / "piped.txt").empty());
}

TEST_F(one_stream_per_output, stdout_where_a_name_is_derived_is_refused) {
    expect_refused({"query", "-o", "t.tsv", "--unmatched", "-", "ref.qmer", "r1.fq.gz", "r2.fq.gz"},
                   {"--unmatched -", "two mate files", "clean_1.fq.gz"});
    expect_refused({"query", "-o", "t.tsv", "--matched", "-", "ref.qmer", "r1.fq.gz", "r2.fq.gz"},
                   {"--matched -"});
    expect_refused(
        {"query", "-o", "t.tsv", "--split-by-category", "-", "-x", "ref.qmer", "r1.fq.gz"},
        {"--split-by-category -", "one file per category"});
}

TEST_F(one_stream_per_output, one_output_on_stdout_still_works) {
    auto r = qmer({"query", "-o", "t.tsv", "--unmatched", "-", "ref.qmer", "r1.fq.gz"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty() || r.out.starts_with("@")) << r.out.substr(0, 100);
    r = qmer({"query", "-o", "/dev/null", "--summary", "-", "ref.qmer", "r1.fq.gz"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("{")) << r.out.substr(0, 100);
    // Interleaved pairs are one stream: --unmatched - is fine.
    r = qmer({"query", "-o", "t.tsv", "--interleaved", "--unmatched", "-", "ref.qmer", "-"},
             "r1.fq.gz");
    EXPECT_NE(r.exit_code, 2) << r.err;
}

TEST_F(one_stream_per_output, an_input_given_twice_is_refused) {
    expect_refused({"query", "-o", "t.tsv", "ref.qmer", "r1.fq.gz", "r1.fq.gz"},
                   {"'r1.fq.gz' (reads, mate 2)", "'r1.fq.gz' (reads, mate 1)", "same file"});
    // Another name for the same file: a hard link and a symlink.
    std::filesystem::create_hard_link(dir() / "r1.fq.gz", dir() / "linked.fq.gz");
    std::filesystem::create_symlink("r1.fq.gz", dir() / "sym.fq.gz");
    auto const r = qmer({"query", "-o", "t.tsv", "ref.qmer", "r1.fq.gz", "linked.fq.gz"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << r.err;
    auto const s = qmer({"query", "-o", "t.tsv", "ref.qmer", "sym.fq.gz", "r1.fq.gz"});
    EXPECT_EQ(s.exit_code, 2) << s.err;
    std::filesystem::remove(dir() / "linked.fq.gz");
    std::filesystem::remove(dir() / "sym.fq.gz");
    expect_refused({"query", "-o", "t.tsv", "ref.qmer", "-", "-"}, {"standard input", "read once"},
                   "r1.fq.gz");
    std::filesystem::copy_file(dir() / "ref.qmer", dir() / "copy.qmer");
    std::filesystem::create_symlink("ref.qmer", dir() / "again.qmer");
    auto const x =
        qmer({"query", "-o", "t.tsv", "-x", "A=ref.qmer", "-x", "B=again.qmer", "r1.fq.gz"});
    EXPECT_EQ(x.exit_code, 2) << x.err;
    EXPECT_NE(x.err.find("'again.qmer' (-x B) and 'ref.qmer' (-x A) are the same file"),
              std::string::npos)
        << x.err;
    // A reference twice.
    auto const i = qmer({"index", "-q", "-o", "twice.qmer", data("lambda_virus.fa.gz").string(),
                         data("lambda_virus.fa.gz").string()});
    EXPECT_EQ(i.exit_code, 2) << i.err;
    EXPECT_NE(i.err.find("(reference) are the same file"), std::string::npos) << i.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "twice.qmer"));
    // A file given as the index and as the reads is for the index reader to name.
    auto const fa = qmer({"query", "-o", "t.tsv", "r1.fq.gz", "r1.fq.gz"});
    EXPECT_NE(fa.exit_code, 0);
    EXPECT_EQ(fa.err.find("same file"), std::string::npos) << fa.err;
    // A copy is another file: a panel of two equal indexes is the user's choice.
    auto const c =
        qmer({"query", "-o", "t.tsv", "-x", "A=ref.qmer", "-x", "B=copy.qmer", "r1.fq.gz"});
    EXPECT_EQ(c.exit_code, 0) << c.err;
}

TEST_F(one_stream_per_output, a_missing_index_exits_as_an_input_error_either_way) {
    auto const positional = qmer({"query", "-o", "t.tsv", "nosuch.qmer", "r1.fq.gz"});
    auto const panel = qmer({"query", "-o", "t.tsv", "-x", "nosuch.qmer", "r1.fq.gz"});
    EXPECT_EQ(positional.exit_code, 3) << positional.err;
    EXPECT_EQ(panel.exit_code, 3) << panel.err;
    EXPECT_NE(panel.err.find("'nosuch.qmer': cannot open index"), std::string::npos) << panel.err;
    EXPECT_NE(positional.err.find("'nosuch.qmer': cannot open index"), std::string::npos)
        << positional.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "t.tsv"));
}

// --unmatched clean.fa writes FASTA whatever the reads are; a FASTQ name for FASTA reads is
// refused, nothing written.
TEST_F(one_stream_per_output, reads_outputs_take_their_format_from_their_names) {
    auto r = qmer({"query", "-o", "t.tsv", "--unmatched", "clean.FA", "--matched", "host.fasta.gz",
                   "ref.qmer", "r1.fq.gz"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const fa = slurp(dir() / "clean.FA");
    if (!fa.empty()) {
        EXPECT_EQ(fa[0], '>');
        EXPECT_EQ(fa.find("\n+\n"), std::string::npos);
    }
    auto const host = shell("gzip -dc host.fasta.gz > host.fasta");
    ASSERT_EQ(host.exit_code, 0);
    auto const matched = slurp(dir() / "host.fasta");
    ASSERT_FALSE(matched.empty());
    EXPECT_EQ(matched[0], '>');
    EXPECT_EQ(matched.find("\n+\n"), std::string::npos);
    // FASTA reads into a FASTQ name.
    ASSERT_EQ(shell("gzip -dc r1.fq.gz | awk 'NR % 4 == 1 { print \">\" substr($0, 2) } "
                    "NR % 4 == 2 { print }' > reads.fa")
                  .exit_code,
              0);
    r = qmer({"query", "-o", "t2.tsv", "--matched", "m.fq", "ref.qmer", "reads.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--matched 'm.fq': a FASTQ name, but the reads are FASTA"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "m.fq"));
    EXPECT_FALSE(std::filesystem::exists(dir() / "t2.tsv"));
    // Without a format suffix the reads keep their own.
    r = qmer({"query", "-o", "t3.tsv", "--matched", "m.out", "ref.qmer", "reads.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(slurp(dir() / "m.out")[0], '>');
}

}  // namespace
