// The Snakemake workflow (workflows/Snakefile) run for real on data/: the report's numbers equal a
// direct `qmer query`, a second run has nothing to do, a dry run plans every rule, a broken
// input fails its rule with qmer's message in the rule's log, --config overrides single keys of
// workflows/config.yaml, the qmer binary is found on PATH, else in the checkout's build folder,
// and MultiQC run over the results shows qmer's numbers and takes no file for another tool's.
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class snakefile : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        if (std::system("command -v snakemake > /dev/null 2>&1") != 0)
            GTEST_FAIL() << "snakemake is not installed (scripts/install-deps installs it)";
    }

    void write_config(std::string const& samples) {
        std::string const data = QMER_DATA_DIR;
        write_file("config.yaml", "qmer: " + std::string(QMER_BINARY) +
                                      "\noutdir: out\nthreads: 2\nwrite_unmatched: true\n"
                                      "references:\n  lambda:\n    - " +
                                      data + "/lambda_virus.fa.gz\nsamples:\n" + samples);
    }

    int snakemake(std::string const& args, std::string& output) {
        return run_snakemake(std::string(QMER_SOURCE_DIR) + "/workflows/Snakefile",
                             "--configfile config.yaml " + args, output);
    }

    // Runs the Snakefile at `snakefile_path` in the test folder; `environment` prefixes the command
    // (e.g. "PATH=... ").
    int run_snakemake(std::string const& snakefile_path, std::string const& args,
                      std::string& output, std::string const& environment = "") {
        std::string const cmd = "cd '" + dir().string() + "' && " + environment + "snakemake -s '" +
                                snakefile_path + "' " + args + " > snakemake.log 2>&1";
        int const status = std::system(cmd.c_str());
        output = slurp(dir() / "snakemake.log");
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    // Runs the workflow on its default config, workflows/config.yaml (the bundled example, whose
    // data/ paths are seen from the repository root), with `config` added to this build's qmer
    // and outdir=out on the command line.
    int run_example(std::string const& args, std::string const& config, std::string& output) {
        std::filesystem::create_directory_symlink(QMER_DATA_DIR, dir() / "data");
        return run_snakemake(
            std::string(QMER_SOURCE_DIR) + "/workflows/Snakefile",
            args + " --config qmer=" + std::string(QMER_BINARY) + " outdir=out " + config, output);
    }
};

std::vector<std::vector<std::string>> rows(std::string const& text) {
    std::vector<std::vector<std::string>> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> fields;
        std::istringstream fs(line);
        std::string f;
        while (std::getline(fs, f, '\t')) fields.push_back(f);
        out.push_back(fields);
    }
    return out;
}

// The value of "key": N in a flat JSON text.
std::string json_number(std::string const& json, std::string const& key) {
    auto const at = json.find("\"" + key + "\": ");
    if (at == std::string::npos) return "";
    auto const start = at + key.size() + 4;
    return json.substr(start, json.find_first_of(",\n}", start) - start);
}

TEST_F(snakefile, runs_end_to_end_and_matches_a_direct_query) {
    std::string const data = QMER_DATA_DIR;
    write_config("  pairs:\n    r1: " + data + "/lambda_reads_1.fq.gz\n    r2: " + data +
                 "/lambda_reads_2.fq.gz\n  unrelated:\n    reads: " + data +
                 "/unrelated_reads.fq.gz\n");
    std::string log;
    ASSERT_EQ(snakemake("--cores 2", log), 0) << log;
    auto const report = rows(slurp(dir() / "out" / "qmer_report.tsv"));
    ASSERT_EQ(report.size(), 3u) << log;
    EXPECT_EQ(report[0][0], "sample");

    // The same queries run directly.
    auto const index = qmer({"index", "-o", "direct.qmer", data + "/lambda_virus.fa.gz"});
    ASSERT_EQ(index.exit_code, 0) << index.err;
    auto const pairs = qmer({"query", "--summary", "pairs.json", "-o", "/dev/null", "direct.qmer",
                             data + "/lambda_reads_1.fq.gz", data + "/lambda_reads_2.fq.gz"});
    ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
    auto const unrelated = qmer({"query", "--summary", "unrelated.json", "-o", "/dev/null",
                                 "direct.qmer", data + "/unrelated_reads.fq.gz"});
    ASSERT_EQ(unrelated.exit_code, 0) << unrelated.err;
    for (auto const& row : report) {
        if (row[0] == "sample") continue;
        std::string const json = slurp(dir() / (row[0] + ".json"));
        EXPECT_EQ(row[1], "lambda");
        EXPECT_EQ(row[2], json_number(json, "reads")) << row[0];
        EXPECT_EQ(row[3], json_number(json, "pairs")) << row[0];
        EXPECT_EQ(row[5], json_number(json, "matched")) << row[0];
        EXPECT_EQ(row[7], json_number(json, "kmers")) << row[0];
        EXPECT_EQ(row[8], json_number(json, "hits")) << row[0];
    }
    // The reads the index did not match, one folder per sample.
    EXPECT_TRUE(std::filesystem::exists(dir() / "out/clean/pairs/reads_1.fq.gz"));
    EXPECT_TRUE(std::filesystem::exists(dir() / "out/clean/pairs/reads_2.fq.gz"));
    EXPECT_TRUE(std::filesystem::exists(dir() / "out/clean/unrelated/reads.fq.gz"));

    // Nothing left to do on a second run.
    ASSERT_EQ(snakemake("--cores 2", log), 0) << log;
    EXPECT_NE(log.find("Nothing to be done"), std::string::npos) << log;
}

TEST_F(snakefile, dry_run_plans_index_query_and_report) {
    write_config("  unrelated:\n    reads: " + std::string(QMER_DATA_DIR) +
                 "/unrelated_reads.fq.gz\n");
    std::string log;
    ASSERT_EQ(snakemake("-n --cores 2", log), 0) << log;
    for (char const* rule : {"rule index:", "rule query:", "rule report:"})
        EXPECT_NE(log.find(rule), std::string::npos) << rule << "\n" << log;
    EXPECT_FALSE(std::filesystem::exists(dir() / "out"));
    // A config naming its own samples gets none of the example's.
    EXPECT_EQ(log.find("lambda_pairs"), std::string::npos) << log;
}

TEST_F(snakefile, config_keys_override_the_defaults_one_by_one) {
    std::string log;
    ASSERT_EQ(run_example("-n -p --cores 2", "threads=1", log), 0) << log;
    EXPECT_NE(log.find(std::string(QMER_BINARY) + " index -t 1 "), std::string::npos) << log;
    EXPECT_NE(log.find(std::string(QMER_BINARY) + " query -t 1 "), std::string::npos) << log;
    // The keys not given keep the defaults: the example's references and both its samples.
    for (char const* planned :
         {"out/index/lambda.qmer", "out/query/lambda_pairs.json", "out/query/unrelated.json"})
        EXPECT_NE(log.find(planned), std::string::npos) << planned << "\n" << log;

    // A config naming samples but no references does not borrow the example's references.
    write_file("samples_only.yaml", "samples:\n  s:\n    reads: data/unrelated_reads.fq.gz\n");
    EXPECT_NE(run_snakemake(std::string(QMER_SOURCE_DIR) + "/workflows/Snakefile",
                            "-n --cores 2 --configfile samples_only.yaml", log),
              0)
        << log;
    EXPECT_NE(log.find("the config has no 'references' entry"), std::string::npos) << log;
}

TEST_F(snakefile, qmer_is_found_on_path_else_in_the_checkouts_build_folder) {
    // A checkout of the workflow alone, and a PATH holding nothing but snakemake (and qmer, when
    // it is "installed"), so whatever qmer the machine has cannot interfere.
    namespace fs = std::filesystem;
    fs::create_directories(dir() / "checkout/workflows");
    fs::create_directories(dir() / "checkout/build/release");
    fs::create_directories(dir() / "bin");
    for (char const* file : {"Snakefile", "config.yaml"})
        fs::copy_file(fs::path(QMER_SOURCE_DIR) / "workflows" / file,
                      dir() / "checkout/workflows" / file);
    ASSERT_EQ(shell("ln -s \"$(command -v snakemake)\" bin/snakemake").exit_code, 0);
    fs::create_directory_symlink(QMER_DATA_DIR, dir() / "data");
    std::string const copied = (dir() / "checkout/workflows/Snakefile").string();
    std::string const path = "PATH='" + (dir() / "bin").string() + "' ";
    std::string log;

    fs::create_symlink(QMER_BINARY, dir() / "bin/qmer");
    ASSERT_EQ(run_snakemake(copied, "-n -p --cores 1", log, path), 0) << log;
    EXPECT_NE(log.find((dir() / "bin/qmer").string() + " index "), std::string::npos) << log;

    fs::remove(dir() / "bin/qmer");
    fs::create_symlink(QMER_BINARY, dir() / "checkout/build/release/qmer");
    ASSERT_EQ(run_snakemake(copied, "-n -p --cores 1", log, path), 0) << log;
    EXPECT_NE(log.find((dir() / "checkout/build/release/qmer").string() + " index "),
              std::string::npos)
        << log;

    fs::remove(dir() / "checkout/build/release/qmer");
    EXPECT_NE(run_snakemake(copied, "-n -p --cores 1", log, path), 0) << log;
    EXPECT_NE(log.find("no qmer on PATH"), std::string::npos) << log;
}

TEST_F(snakefile, broken_input_fails_its_rule_with_qmers_message) {
    write_file("broken.fq", "@r1\nACGTACGTACGTACGTACGTACGTACGTACGTACGT\n+\nIII\n");
    write_config("  broken:\n    reads: broken.fq\n");
    std::string log;
    EXPECT_NE(snakemake("--cores 2", log), 0) << log;
    std::string const rule_log = slurp(dir() / "out/logs/query/broken.log");
    EXPECT_NE(rule_log.find("qmer: error:"), std::string::npos) << rule_log;
    EXPECT_NE(rule_log.find("broken.fq"), std::string::npos) << rule_log;
    EXPECT_FALSE(std::filesystem::exists(dir() / "out/query/broken.tsv.gz"));
}

TEST_F(snakefile, multiqc_shows_the_categories_and_matched_fraction_of_each_sample) {
    namespace fs = std::filesystem;
    if (std::system("command -v multiqc > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "multiqc is not installed (scripts/install-deps installs it): the MultiQC "
                        "report is not checked";
    // The bundled example, with every output the workflow can write.
    std::string log;
    ASSERT_EQ(run_example("--cores 2", "write_unmatched=true", log), 0) << log;
    auto const status = shell("multiqc --no-ansi -f out -o mqc > multiqc.log 2>&1");
    ASSERT_EQ(status.exit_code, 0) << slurp(dir() / "multiqc.log");

    // qmer's two sections and nothing else: a file taken for another tool's (report.tsv was
    // QUAST's) would add that module's multiqc_<module>.txt.
    std::set<std::string> files;
    for (auto const& entry : fs::directory_iterator(dir() / "mqc/multiqc_data"))
        files.insert(entry.path().filename().string());
    EXPECT_EQ(files, (std::set<std::string>{"multiqc.log", "multiqc_citations.txt",
                                            "multiqc_data.json", "multiqc_general_stats.txt",
                                            "multiqc_qmer_categories.txt", "multiqc_sources.txt"}))
        << slurp(dir() / "multiqc.log");

    auto const bars = rows(slurp(dir() / "mqc/multiqc_data/multiqc_qmer_categories.txt"));
    auto const general = rows(slurp(dir() / "mqc/multiqc_data/multiqc_general_stats.txt"));
    ASSERT_EQ(bars.size(), 3u);
    ASSERT_EQ(general.size(), 3u);
    EXPECT_EQ(bars[0], (std::vector<std::string>{"Sample", "matched", "unmatched"}));
    ASSERT_EQ(general[0].size(), 2u);
    EXPECT_NE(general[0][1].find("qmer_matched_lambda"), std::string::npos) << general[0][1];
    for (std::string const sample : {"lambda_pairs", "unrelated"}) {
        std::string const json = slurp(dir() / "out/query" / (sample + ".json"));
        long const pairs = std::stol(json_number(json, "pairs"));
        long const units = pairs ? pairs : std::stol(json_number(json, "reads"));
        long const matched = std::stol(json_number(json, "matched"));
        auto const bar = std::find_if(bars.begin(), bars.end(),
                                      [&](auto const& row) { return row[0] == sample; });
        ASSERT_NE(bar, bars.end()) << sample;
        EXPECT_EQ(std::stol((*bar)[1]), matched) << sample;
        EXPECT_EQ(std::stol((*bar)[2]), units - matched) << sample;
        auto const column = std::find_if(general.begin(), general.end(),
                                         [&](auto const& row) { return row[0] == sample; });
        ASSERT_NE(column, general.end()) << sample;
        EXPECT_NEAR(std::stod((*column)[1]), 100.0 * matched / units, 0.01) << sample;
    }
    // The example's reads: ~98.8% of the lambda pairs match, under 1% of the unrelated reads.
    EXPECT_GT(std::stol(bars[1][1]), 9800);
    EXPECT_LT(std::stol(bars[2][1]), 10);
}

}  // namespace
