// The workflow's screening panel (workflows/Snakefile, rules panel, panel_part, panel_merge,
// panel_report): one job per sample by default, one per sample x index with `panel_split: true`;
// both give the table a direct `qmer query -x ...` writes, and the same report.
#include <zlib.h>

#include <filesystem>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

std::string gunzip_text(std::filesystem::path const& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    std::string out;
    if (f == nullptr) return out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    gzclose(f);
    return out;
}

// Replaces every `from` in text by `to`.
std::string replaced(std::string text, std::string const& from, std::string const& to) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

class panel_workflow : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        if (std::system("command -v snakemake > /dev/null 2>&1") != 0)
            GTEST_FAIL() << "snakemake is not installed (scripts/install-deps installs it)";
    }

    // Runs the workflow with outdir `out` and the given panel_split; returns its exit status.
    int run(std::string const& out, bool split, std::string& log) {
        std::string const data = QMER_DATA_DIR;
        write_file(out + ".yaml", "qmer: " + std::string(QMER_BINARY) + "\noutdir: " + out +
                                      "\nthreads: 2\npanel_split: " + (split ? "true" : "false") +
                                      "\nreferences:\n  lambda:\n    - " + data +
                                      "/lambda_virus.fa.gz\n  plasmid:\n    - " + data +
                                      "/plasmid_pWM5.embl\nsamples:\n  pairs:\n    r1: " + data +
                                      "/lambda_reads_1.fq.gz\n    r2: " + data +
                                      "/lambda_reads_2.fq.gz\n  unrelated:\n    reads: " + data +
                                      "/unrelated_reads.fq.gz\n");
        std::string const cmd = "cd '" + dir().string() + "' && snakemake -s '" +
                                std::string(QMER_SOURCE_DIR) + "/workflows/Snakefile' " +
                                "--configfile " + out + ".yaml --cores 2 > " + out + ".log 2>&1";
        int const status = std::system(cmd.c_str());
        log = slurp(dir() / (out + ".log"));
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
};

TEST_F(panel_workflow, split_and_joint_runs_give_the_direct_query_and_one_report) {
    std::string log;
    ASSERT_EQ(run("joint", false, log), 0) << log;
    ASSERT_EQ(run("split", true, log), 0) << log;
    EXPECT_NE(log.find("panel_merge"), std::string::npos) << "split mode ran no merge:\n" << log;
    EXPECT_TRUE(std::filesystem::exists(dir() / "split/panel/parts/pairs.plasmid.tsv.gz"));

    auto const report = slurp(dir() / "joint" / "panel_report.tsv");
    EXPECT_EQ(report, slurp(dir() / "split" / "panel_report.tsv"));
    // Per sample: every index, multiple and none; the lambda reads are lambda's.
    EXPECT_NE(report.find("pairs\tlambda\t9880\t0.988000\t9880\n"), std::string::npos) << report;
    EXPECT_NE(report.find("pairs\tnone\t120\t0.012000\t\n"), std::string::npos) << report;
    EXPECT_NE(report.find("unrelated\tplasmid\t0\t"), std::string::npos) << report;

    // MultiQC's bars are the panel's categories, one bar per sample (not one per sample and
    // index), the same in both modes.
    auto const bars = slurp(dir() / "joint" / "qmer_categories_mqc.json");
    EXPECT_EQ(bars, slurp(dir() / "split" / "qmer_categories_mqc.json"));
    EXPECT_NE(bars.find("\"lambda\": 9880"), std::string::npos) << bars;
    EXPECT_NE(bars.find("\"none\": 120"), std::string::npos) << bars;
    EXPECT_NE(bars.find("\"unrelated\": {"), std::string::npos) << bars;
    EXPECT_EQ(bars.find("(lambda)"), std::string::npos) << bars;

    // The table of a direct query against the same indexes.
    std::string const data = QMER_DATA_DIR;
    std::filesystem::create_directories(dir() / "out");
    std::filesystem::copy(dir() / "joint" / "index", dir() / "out" / "index");
    auto const direct =
        qmer({"query", "-x", "lambda=out/index/lambda.qmer", "-x", "plasmid=out/index/plasmid.qmer",
              data + "/lambda_reads_1.fq.gz", data + "/lambda_reads_2.fq.gz"});
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    for (char const* mode : {"joint", "split"}) {
        auto const table = gunzip_text(dir() / mode / "panel" / "pairs.tsv.gz");
        EXPECT_EQ(replaced(table, std::string(mode) + "/index/", "out/index/"), direct.out) << mode;
    }
}

}  // namespace
