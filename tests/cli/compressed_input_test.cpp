// zstd, xz and bzip2 inputs through the real binary: `qmer query` on compressed reads (single,
// paired, from standard input) writes the TSV it writes for the plain reads, `qmer index` of a
// compressed reference writes the very bytes it writes for the plain one, and damage is one line
// naming the file.

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;
using qmer::test::tsv_body;

class compressed_input : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        ASSERT_EQ(shell("gzip -dc '" + data("lambda_reads_1.fq.gz").string() + "' > r1.fq && " +
                        "gzip -dc '" + data("lambda_reads_2.fq.gz").string() + "' > r2.fq")
                      .exit_code,
                  0);
        for (std::string const& tool : tools)
            ASSERT_EQ(shell(tool + " -c r1.fq > r1.fq." + tool + " && " + tool +
                            " -c r2.fq > r2.fq." + tool)
                          .exit_code,
                      0);
        ASSERT_EQ(qmer({"index", "-q", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()})
                      .exit_code,
                  0);
    }

    // The TSV body of `qmer query` on `reads` (one file or two), fed `stdin_file` if given.
    std::string query(std::vector<std::string> const& reads, std::string const& stdin_file = "") {
        std::vector<std::string> args = {"query", "-q", "-o", "out.tsv", "lambda.qmer"};
        args.insert(args.end(), reads.begin(), reads.end());
        cli_result const r = qmer(args, stdin_file);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::string const body = tsv_body(slurp(dir() / "out.tsv"));
        EXPECT_FALSE(body.empty());
        return body;
    }

    std::vector<std::string> const tools = {"zstd", "xz", "bzip2"};
};

TEST_F(compressed_input, query_gives_the_tsv_of_the_plain_reads) {
    std::string const single = query({"r1.fq"});
    std::string const paired = query({"r1.fq", "r2.fq"});
    EXPECT_NE(single, paired);
    for (std::string const& tool : tools) {
        EXPECT_EQ(query({"r1.fq." + tool}), single) << tool;
        EXPECT_EQ(query({"r1.fq." + tool, "r2.fq." + tool}), paired) << tool;
        EXPECT_EQ(query({"-"}, "r1.fq." + tool), single) << tool << " on standard input";
    }
    // Mates compressed differently.
    EXPECT_EQ(query({"r1.fq.zstd", "r2.fq.bzip2"}), paired);
    EXPECT_EQ(query({"r1.fq.xz", "r2.fq"}), paired);
}

TEST_F(compressed_input, index_of_a_compressed_reference_is_byte_identical) {
    // The same command line in folders whose ref.fa differ only in compression: the index records
    // the command line, so nothing but the content may differ.
    ASSERT_EQ(shell("mkdir plain && gzip -dc '" + data("lambda_virus.fa.gz").string() +
                    "' > plain/ref.fa")
                  .exit_code,
              0);
    ASSERT_EQ(shell("cd plain && $QMER index -q -o ref.qmer ref.fa").exit_code, 0);
    std::string const want = slurp(dir() / "plain" / "ref.qmer");
    ASSERT_FALSE(want.empty());
    for (std::string const& tool : tools) {
        ASSERT_EQ(shell("mkdir " + tool + " && " + tool + " -c plain/ref.fa > " + tool +
                        "/ref.fa && cd " + tool + " && $QMER index -q -o ref.qmer ref.fa")
                      .exit_code,
                  0)
            << tool;
        EXPECT_TRUE(slurp(dir() / tool / "ref.qmer") == want) << tool;
    }
}

TEST_F(compressed_input, damage_is_one_line_naming_the_file) {
    for (std::string const& tool : tools) {
        std::string const name = "cut.fq." + tool;
        ASSERT_EQ(shell("head -c 300000 r1.fq." + tool + " > " + name).exit_code, 0);
        cli_result const r = qmer({"query", "-q", "-o", "out.tsv", "lambda.qmer", name});
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        // (bzip2's first block, 900 kB of text, is cut: found when the file is opened.)
        EXPECT_NE(r.err.find("qmer: error: " + name + ": "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("truncated " + tool + " data"), std::string::npos) << r.err;
    }
}

}  // namespace
