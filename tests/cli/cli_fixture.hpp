#pragma once
// Runs the real qmer binary in a fresh temporary folder and captures stdout, stderr and the exit
// status (the Raptor cli_test pattern). Each test gets its own folder, removed afterwards.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace qmer::test {

struct cli_result {
    int exit_code = -1;  // -1 when the process died by a signal
    int signal = 0;
    std::string out;
    std::string err;
};

class cli_test : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string templ = (std::filesystem::temp_directory_path() / "qmer-cli-XXXXXX").string();
        ASSERT_NE(::mkdtemp(templ.data()), nullptr);
        dir_ = templ;
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    std::filesystem::path const& dir() const { return dir_; }
    static std::filesystem::path data(std::string const& name) {
        return std::filesystem::path(QMER_DATA_DIR) / name;
    }

    // Runs `qmer ARGS` with the test folder as working directory; `stdin_file` (relative to it) may
    // feed standard input.
    cli_result qmer(std::vector<std::string> const& args, std::string const& stdin_file = "") {
        std::string cmd = "cd '" + dir_.string() + "' && '" + std::string(QMER_BINARY) + "'";
        for (auto const& a : args) cmd += " '" + a + "'";
        cmd += " > stdout.txt 2> stderr.txt";
        cmd += stdin_file.empty() ? " < /dev/null" : " < '" + stdin_file + "'";
        int const status = std::system(cmd.c_str());
        cli_result r;
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
        r.out = slurp(dir_ / "stdout.txt");
        r.err = slurp(dir_ / "stderr.txt");
        std::filesystem::remove(dir_ / "stdout.txt");
        std::filesystem::remove(dir_ / "stderr.txt");
        return r;
    }

    // Runs a shell command line in the test folder; `$QMER` names the binary. Returns the status
    // as cli_result (stdout/stderr are whatever the command line redirects them to).
    cli_result shell(std::string const& command_line) {
        std::string const cmd = "cd '" + dir_.string() + "' && export QMER='" +
                                std::string(QMER_BINARY) + "' && { " + command_line + "\n}";
        int const status = std::system(cmd.c_str());
        cli_result r;
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
        return r;
    }

    // FASTA of `records` records of `bases` uniform random bases each (a 64-bit LCG from seed):
    // references of any size without data files.
    static std::string random_fasta(int records, int bases, uint64_t seed) {
        std::string fa;
        for (int r = 0; r < records; ++r) {
            fa += ">r" + std::to_string(r) + "\n";
            for (int i = 0; i < bases; ++i) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                fa += "ACGT"[seed >> 62];
            }
            fa += "\n";
        }
        return fa;
    }

    static std::string slurp(std::filesystem::path const& p) {
        std::ifstream in(p, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    void write_file(std::string const& name, std::string const& content) const {
        std::ofstream(dir_ / name, std::ios::binary) << content;
    }

  private:
    std::filesystem::path dir_;
};

// A TSV report without its '#' lines (they name the index and the reads files).
inline std::string tsv_body(std::string const& tsv) {
    std::istringstream in(tsv);
    std::string line, body;
    while (std::getline(in, line))
        if (!line.starts_with("#")) body += line + "\n";
    return body;
}

}  // namespace qmer::test
