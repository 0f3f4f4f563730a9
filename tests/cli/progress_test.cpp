// A build shows its phases on a terminal (what it reads of how much, and how long is left), and
// nothing but the closing line when stderr is a file, a pipe or a log.
#include <algorithm>
#include <cstdlib>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class progress : public cli_test {};

TEST_F(progress, a_build_on_a_terminal_shows_its_phases_and_a_log_gets_one_line) {
    // 2 Mbp of random sequence in 40 records: several updates per phase.
    write_file("ref.fa", random_fasta(40, 50000, 7));

    // script(1) gives qmer a pseudo-terminal; its output is what the terminal received.
    if (std::system("command -v script > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "script(1) (util-linux) is not installed";
    std::string const cmd = "cd '" + dir().string() + "' && script -qec \"'" +
                            std::string(QMER_BINARY) +
                            "' index -t 2 -o tty.qmer ref.fa\" /dev/null > tty.txt 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir() / "tty.txt");
    std::string const tty = slurp(dir() / "tty.txt");
    for (char const* phase : {"counting k-mers: ", "reading k-mers: ", " of 2.00 Mbp (",
                              "filling the table", "writing the index"})
        EXPECT_NE(tty.find(phase), std::string::npos) << phase << " not in:\n" << tty;
    EXPECT_NE(tty.find('\r'), std::string::npos);

    auto const logged = qmer({"index", "-t", "2", "-o", "log.qmer", "ref.fa"});
    ASSERT_EQ(logged.exit_code, 0) << logged.err;
    EXPECT_EQ(logged.err.find('\r'), std::string::npos) << logged.err;
    EXPECT_EQ(std::count(logged.err.begin(), logged.err.end(), '\n'), 1) << logged.err;
    EXPECT_EQ(logged.err.rfind("[qmer index] 40 records, 2.00 Mbp in ", 0), 0u) << logged.err;
}

// --timings: after the closing line, one line per phase with its wall and CPU time and the cores
// it kept busy (the scaling model of bench/scaling reads them), in the order the phases ran;
// --quiet silences them too.
TEST_F(progress, timings_give_each_phase_its_wall_and_cpu_time) {
    write_file("ref.fa", random_fasta(40, 50000, 7));
    auto const r = qmer({"index", "-t", "2", "--timings", "-o", "t.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.rfind("[qmer index] 40 records, 2.00 Mbp in ", 0), 0u) << r.err;
    size_t at = 0;
    for (char const* phase : {"setting up:", "reading k-mers:", "writing the index:"}) {
        size_t const found = r.err.find(std::string("[qmer index] ") + phase, at);
        ASSERT_NE(found, std::string::npos) << phase << " (in order) not in:\n" << r.err;
        size_t const eol = r.err.find('\n', found);
        std::string const line = r.err.substr(found, eol - found);
        EXPECT_NE(line.find(" s wall "), std::string::npos) << line;
        EXPECT_NE(line.find(" s CPU "), std::string::npos) << line;
        EXPECT_NE(line.find(" cores"), std::string::npos) << line;
        at = eol;
    }
    auto const quiet = qmer({"index", "-q", "--timings", "-o", "q.qmer", "ref.fa"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err, "");
}

}  // namespace
