// The workflow's split panel run through a real SLURM cluster: one node on this machine
// (tests/workflows/one_node_slurm.sh starts munged, slurmctld and slurmd in the test's folder),
// driven by the profile the README documents (workflows/profiles/slurm). SLURM runs every qmer
// job, and the report is the local run's, byte for byte. Skipped, with the reason, where SLURM
// cannot start (not root, slurm-wlm or munge missing, daemons that do not come up).
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
namespace fs = std::filesystem;

std::string const cluster_script =
    std::string(QMER_SOURCE_DIR) + "/tests/workflows/one_node_slurm.sh";

// Stops the cluster's daemons when the test ends, however it ends, before the folder holding
// their state goes.
class running_cluster {
  public:
    explicit running_cluster(fs::path folder) : folder_(std::move(folder)) {}
    running_cluster(running_cluster const&) = delete;
    running_cluster& operator=(running_cluster const&) = delete;
    ~running_cluster() {
        std::string const stop = "bash '" + cluster_script + "' stop '" + folder_.string() + "'";
        [[maybe_unused]] int const status = std::system(stop.c_str());
    }

  private:
    fs::path folder_;
};

class slurm_workflow : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        if (std::system("command -v snakemake > /dev/null 2>&1") != 0)
            GTEST_FAIL() << "snakemake is not installed (scripts/install-deps installs it)";
        if (::geteuid() != 0)
            GTEST_SKIP() << "SLURM cannot start: not root (slurmd runs jobs as their submitter)";
        fs::create_directory(dir() / "cluster");
        // Whatever start did, stop undoes it: the guard exists before the daemons do.
        cluster_.emplace(dir() / "cluster");
        auto const started = shell("bash '" + cluster_script + "' start cluster 2> start.log");
        if (started.exit_code != 0)
            GTEST_SKIP() << "SLURM cannot start here:\n" << slurp(dir() / "start.log");
    }

    void TearDown() override {
        cluster_.reset();
        cli_test::TearDown();
    }

    // Runs the workflow on config.yaml with `args`; `environment` prefixes the command.
    int snakemake(std::string const& args, std::string& log, std::string const& environment = "") {
        std::string const cmd = "cd '" + dir().string() + "' && " + environment + "snakemake -s '" +
                                std::string(QMER_SOURCE_DIR) +
                                "/workflows/Snakefile' --configfile config.yaml " + args +
                                " > snakemake.log 2>&1";
        int const status = std::system(cmd.c_str());
        log = slurp(dir() / "snakemake.log");
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

  private:
    std::optional<running_cluster> cluster_;
};

TEST_F(slurm_workflow, split_panel_runs_as_slurm_jobs_with_the_local_runs_report) {
    std::string const d = QMER_DATA_DIR;
    // Two indexes x two samples, a thread per job: the one node runs two jobs at once.
    write_file("config.yaml", "qmer: " + std::string(QMER_BINARY) +
                                  "\nthreads: 1\npanel_split: true\nreferences:\n  lambda: " + d +
                                  "/lambda_virus.fa.gz\n  plasmid: " + d +
                                  "/plasmid_pWM5.embl\nsamples:\n  pairs:\n    r1: " + d +
                                  "/lambda_reads_1.fq.gz\n    r2: " + d +
                                  "/lambda_reads_2.fq.gz\n  unrelated: " + d +
                                  "/unrelated_reads.fq.gz\n");
    std::string log;
    ASSERT_EQ(snakemake("--cores 2 --config outdir=local", log), 0) << log;

    // The README's profile as it stands. CI=true makes Snakemake ask for job states every
    // second instead of every ten: the same run, sooner.
    std::string const environment =
        "SLURM_CONF='" + (dir() / "cluster/slurm.conf").string() + "' CI=true ";
    std::string const profile = std::string(QMER_SOURCE_DIR) + "/workflows/profiles/slurm";
    ASSERT_EQ(snakemake("--profile '" + profile + "' --config outdir=slurm", log, environment), 0)
        << log << "\n--- slurmctld.log\n"
        << slurp(dir() / "cluster/slurmctld.log");

    for (char const* file : {"qmer_report.tsv", "panel_report.tsv", "qmer_categories_mqc.json",
                             "qmer_general_stats_mqc.json"}) {
        EXPECT_FALSE(slurp(dir() / "local" / file).empty()) << file;
        EXPECT_EQ(slurp(dir() / "local" / file), slurp(dir() / "slurm" / file)) << file;
    }

    // Every qmer job went through SLURM (2 indexes, 2 x 2 parts, 2 merges), and the controller
    // saw each end with status 0; the reports ran locally.
    std::set<std::string> job_ids;
    std::regex const submitted(R"(Submitted job \d+ with external jobid '(\d+)')");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), submitted);
         it != std::sregex_iterator(); ++it)
        job_ids.insert((*it)[1]);
    EXPECT_EQ(job_ids.size(), 8u) << log;
    std::string const controller = slurp(dir() / "cluster/slurmctld.log");
    for (auto const& id : job_ids)
        EXPECT_NE(controller.find("_job_complete: JobId=" + id + " WEXITSTATUS 0"),
                  std::string::npos)
            << "job " << id << "\n"
            << controller;
    // Each job's own log, named by the profile: rule and SLURM job id.
    std::multiset<std::string> logged_ids;
    std::regex const job_log(R"((index|query_part|merge)-(\d+)\.log)");
    std::smatch m;
    for (auto const& entry : fs::directory_iterator(dir() / "logs/slurm")) {
        std::string const name = entry.path().filename().string();
        if (std::regex_match(name, m, job_log)) logged_ids.insert(m[2]);
    }
    EXPECT_EQ(logged_ids, std::multiset<std::string>(job_ids.begin(), job_ids.end()));

    // A second run through the cluster has nothing to do.
    ASSERT_EQ(snakemake("--profile '" + profile + "' --config outdir=slurm", log, environment), 0)
        << log;
    EXPECT_NE(log.find("Nothing to be done"), std::string::npos) << log;
}

}  // namespace
