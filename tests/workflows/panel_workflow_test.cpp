// The workflow's screening of every sample against every index (workflows/Snakefile): by default
// one `qmer query -x ...` job per sample, which reads it once; with `panel_split: true` one job per
// sample x index and a `qmer merge` per sample. Both give the table a direct query writes, the
// same report byte for byte, and the same clean reads (the reads no index matched); each job asks
// for at least the memory it uses.
#include <zlib.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "cli/cli_fixture.hpp"
#include "sanitized.hpp"

namespace {

using qmer::test::cli_test;
namespace fs = std::filesystem;

std::string gunzip_text(fs::path const& p) {
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

// Jobs per rule in the "Job stats" table a dry run prints.
std::map<std::string, int> job_counts(std::string const& log) {
    std::map<std::string, int> counts;
    std::regex const row(R"(^(\w+)\s+(\d+)\s+\d+\s+\d+$)");
    std::istringstream in(log);
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
        if (std::regex_match(line, m, row)) counts[m[1]] = std::stoi(m[2]);
    return counts;
}

// The "@name" lines of a FASTQ text, in order.
std::vector<std::string> fastq_names(std::string const& fastq) {
    std::vector<std::string> names;
    std::istringstream in(fastq);
    std::string line;
    for (size_t i = 0; std::getline(in, line); ++i)
        if (i % 4 == 0) names.push_back(line.substr(1, line.find(' ') - 1));
    return names;
}

// The read_ids of a per-read table's rows of category `category`, in order.
std::vector<std::string> ids_of(std::string const& table, std::string const& category) {
    std::vector<std::string> ids;
    std::istringstream in(table);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("#") || line.starts_with("read_id")) continue;
        if (line.substr(line.rfind('\t') + 1) == category)
            ids.push_back(line.substr(0, line.find('\t')));
    }
    return ids;
}

class panel_workflow : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        if (std::system("command -v snakemake > /dev/null 2>&1") != 0)
            GTEST_FAIL() << "snakemake is not installed (scripts/install-deps installs it)";
        if (std::system("command -v zstd > /dev/null 2>&1") != 0)
            GTEST_FAIL() << "zstd is not installed (scripts/install-deps installs it)";
        // The third sample: the lambda pairs interleaved, zstd-compressed.
        std::istringstream r1(gunzip_text(data("lambda_reads_1.fq.gz")));
        std::istringstream r2(gunzip_text(data("lambda_reads_2.fq.gz")));
        std::string interleaved, line;
        for (;;) {
            std::string record1, record2;
            for (int i = 0; i < 4 && std::getline(r1, line); ++i) record1 += line + "\n";
            for (int i = 0; i < 4 && std::getline(r2, line); ++i) record2 += line + "\n";
            if (record1.empty()) break;
            interleaved += record1 + record2;
        }
        write_file("interleaved.fq", interleaved);
        ASSERT_EQ(shell("zstd -q --rm interleaved.fq").exit_code, 0);
        std::string const d = QMER_DATA_DIR;
        write_file("config.yaml", "qmer: " + std::string(QMER_BINARY) +
                                      "\nthreads: 2\nreferences:\n  lambda:\n    - " + d +
                                      "/lambda_virus.fa.gz\n  plasmid:\n    - " + d +
                                      "/plasmid_pWM5.embl\n  lepto: " + d +
                                      "/leptospira_contig.gbk\nsamples:\n  pairs:\n    r1: " + d +
                                      "/lambda_reads_1.fq.gz\n    r2: " + d +
                                      "/lambda_reads_2.fq.gz\n  unrelated:\n    reads: " + d +
                                      "/unrelated_reads.fq.gz\n  mixed:\n    reads: "
                                      "interleaved.fq.zst\n    interleaved: true\n");
    }

    // Runs snakemake on config.yaml with `args` (e.g. "--config outdir=x"); `log` gets its output.
    int snakemake(std::string const& args, std::string& log) {
        std::string const cmd = "cd '" + dir().string() + "' && snakemake -s '" +
                                std::string(QMER_SOURCE_DIR) +
                                "/workflows/Snakefile' --configfile config.yaml --cores 2 " + args +
                                " > snakemake.log 2>&1";
        int const status = std::system(cmd.c_str());
        log = slurp(dir() / "snakemake.log");
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
};

TEST_F(panel_workflow, reads_each_sample_once_or_once_per_index_when_split) {
    std::string log;
    // 3 samples x 3 indexes: one query per sample; split, one per sample x index and a merge
    // per sample. Beside them: the 3 indexes, the two reports and `all`.
    ASSERT_EQ(snakemake("-n --quiet", log), 0) << log;
    EXPECT_EQ(job_counts(log), (std::map<std::string, int>{{"all", 1},
                                                           {"index", 3},
                                                           {"panel_report", 1},
                                                           {"query", 3},
                                                           {"report", 1},
                                                           {"total", 9}}))
        << log;
    ASSERT_EQ(snakemake("-n --quiet --config panel_split=true", log), 0) << log;
    EXPECT_EQ(job_counts(log), (std::map<std::string, int>{{"all", 1},
                                                           {"index", 3},
                                                           {"merge", 3},
                                                           {"panel_report", 1},
                                                           {"query_part", 9},
                                                           {"report", 1},
                                                           {"total", 18}}))
        << log;
}

TEST_F(panel_workflow, split_and_joint_runs_give_the_direct_query_one_report_and_clean_reads) {
    std::string log;
    ASSERT_EQ(snakemake("--config outdir=joint write_unmatched=true split_categories=true", log), 0)
        << log;
    ASSERT_EQ(snakemake("--config outdir=split write_unmatched=true panel_split=true", log), 0)
        << log;
    EXPECT_NE(log.find("rule merge:"), std::string::npos) << "split mode ran no merge:\n" << log;
    // The parts are the merge's alone: gone once it has run.
    EXPECT_FALSE(fs::exists(dir() / "split/query/parts/pairs.plasmid.tsv.gz"));
    EXPECT_FALSE(fs::exists(dir() / "split/query/parts/pairs.lambda.unmatched"));

    for (char const* file : {"qmer_report.tsv", "panel_report.tsv", "qmer_categories_mqc.json",
                             "qmer_general_stats_mqc.json"})
        EXPECT_EQ(slurp(dir() / "joint" / file), slurp(dir() / "split" / file)) << file;

    // Per sample x index, what the index matched; per sample, every index, multiple and none.
    auto const report = slurp(dir() / "joint" / "qmer_report.tsv");
    EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 1 + 3 * 3) << report;
    // 9,879: pair r3425 has 3 exact hits, one short of its threshold; before the minimizer gate
    // (format 9) a chance hit made it 4 and called it.
    EXPECT_NE(report.find("pairs\tlambda\t20000\t10000\t10000\t9879\t0.987900\t"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("mixed\tlambda\t20000\t10000\t10000\t9879\t0.987900\t"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("unrelated\tplasmid\t1000\t0\t1000\t0\t"), std::string::npos) << report;
    auto const panel = slurp(dir() / "joint" / "panel_report.tsv");
    EXPECT_NE(panel.find("pairs\tlambda\t9879\t0.987900\t9879\n"), std::string::npos) << panel;
    EXPECT_NE(panel.find("pairs\tnone\t121\t0.012100\t\n"), std::string::npos) << panel;

    // MultiQC's bars are the panel's categories, one bar per sample (not one per sample and
    // index).
    auto const bars = slurp(dir() / "joint" / "qmer_categories_mqc.json");
    EXPECT_NE(bars.find("\"lambda\": 9879"), std::string::npos) << bars;
    EXPECT_NE(bars.find("\"unrelated\": {"), std::string::npos) << bars;
    EXPECT_EQ(bars.find("(lambda)"), std::string::npos) << bars;

    // The table of a direct query against the same indexes.
    std::string const data = QMER_DATA_DIR;
    fs::create_directories(dir() / "out");
    fs::copy(dir() / "joint" / "index", dir() / "out" / "index");
    auto const direct = qmer({"query", "-x", "lambda=out/index/lambda.qmer", "-x",
                              "plasmid=out/index/plasmid.qmer", "-x", "lepto=out/index/lepto.qmer",
                              data + "/lambda_reads_1.fq.gz", data + "/lambda_reads_2.fq.gz"});
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    for (char const* mode : {"joint", "split"}) {
        auto const table = gunzip_text(dir() / mode / "query" / "pairs.tsv.gz");
        EXPECT_EQ(replaced(table, std::string(mode) + "/index/", "out/index/"), direct.out) << mode;
    }

    // Clean reads: the reads (pairs) of category none, the same in both modes, for single,
    // paired and interleaved samples.
    auto const none = ids_of(direct.out, "none");
    ASSERT_EQ(none.size(), 121u);  // r3425 among them (above)
    for (char const* file : {"pairs/reads_1.fq.gz", "pairs/reads_2.fq.gz", "unrelated/reads.fq.gz",
                             "mixed/reads.fq.gz"}) {
        auto const joint = gunzip_text(dir() / "joint/clean" / file);
        EXPECT_FALSE(joint.empty()) << file;
        EXPECT_EQ(joint, gunzip_text(dir() / "split/clean" / file)) << file;
    }
    EXPECT_EQ(fastq_names(gunzip_text(dir() / "joint/clean/pairs/reads_1.fq.gz")), none);
    EXPECT_EQ(fastq_names(gunzip_text(dir() / "split/clean/mixed/reads.fq.gz")).size(),
              2 * none.size());
    // And, asked for, one file per category.
    EXPECT_EQ(gunzip_text(dir() / "joint/categories/pairs/reads.none_1.fq.gz"),
              gunzip_text(dir() / "joint/clean/pairs/reads_1.fq.gz"));
    EXPECT_EQ(fastq_names(gunzip_text(dir() / "joint/categories/pairs/reads.lambda_2.fq.gz")),
              ids_of(direct.out, "lambda"));

    // Nothing left to do on a second run, in either mode.
    ASSERT_EQ(snakemake("--config outdir=joint write_unmatched=true split_categories=true", log), 0)
        << log;
    EXPECT_NE(log.find("Nothing to be done"), std::string::npos) << log;
    ASSERT_EQ(snakemake("--config outdir=split write_unmatched=true panel_split=true", log), 0)
        << log;
    EXPECT_NE(log.find("Nothing to be done"), std::string::npos) << log;
}

TEST_F(panel_workflow, categories_per_file_need_the_joint_panel) {
    std::string log;
    EXPECT_NE(snakemake("-n --config panel_split=true split_categories=true", log), 0) << log;
    EXPECT_NE(log.find("'split_categories' needs 'panel_split: false'"), std::string::npos) << log;
}

TEST_F(panel_workflow, jobs_ask_for_at_least_the_memory_they_use) {
    std::string log;
    ASSERT_EQ(snakemake("--config outdir=out threads=1", log), 0) << log;
    // With the indexes built, a dry run shows what each job would ask the scheduler for.
    ASSERT_EQ(snakemake("-n -p --forcerun index query --config outdir=out threads=1", log), 0)
        << log;
    std::smatch m;
    std::regex const query(
        R"(rule query:[^]*?wildcards: sample=(\w+)\n\s*resources: [^\n]*mem_mib=(\d+))");
    int queries = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), query);
         it != std::sregex_iterator(); ++it, ++queries) {
        std::string const summary = slurp(dir() / "out/query" / ((*it)[1].str() + ".json"));
        auto const at = summary.find("\"peak_rss_bytes\": ");
        ASSERT_NE(at, std::string::npos) << summary;
        long const peak = std::stol(summary.substr(at + 18));
        // A sanitized qmer's shadow memory and quarantine are not what a user's qmer takes.
        if (!QMER_TEST_SANITIZED) {
            EXPECT_GE(std::stol((*it)[2]) << 20, peak) << (*it)[0];
        }
        // The three indexes' bytes (under 1 MiB), the reads in flight and one thread, rounded up.
        EXPECT_LE(std::stol((*it)[2]), 1 + 64 + 32 + 1) << (*it)[0];
    }
    EXPECT_EQ(queries, 3) << log;
    // qmer index keeps to the memory the job asks for, which covers what it used.
    std::regex const index(R"(index -t 1 --max-memory (\d+)M .*-o out/index/(\w+)\.qmer)");
    int indexes = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), index);
         it != std::sregex_iterator(); ++it, ++indexes) {
        std::string const index_log = slurp(dir() / "out/logs/index" / ((*it)[2].str() + ".log"));
        ASSERT_TRUE(std::regex_search(index_log, m, std::regex(R"(peak RSS ([0-9.]+) MiB)")))
            << index_log;
        if (!QMER_TEST_SANITIZED) {
            EXPECT_GE(std::stod((*it)[1]), std::stod(m[1])) << (*it)[0];
        }
    }
    EXPECT_EQ(indexes, 3) << log;
}

}  // namespace
