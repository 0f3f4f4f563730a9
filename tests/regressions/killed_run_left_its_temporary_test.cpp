// A run killed with SIGKILL (the OOM killer, a scheduler's time limit) must not leave a hidden
// temporary `.NAME.qmer-tmp-XXXXXX` beside each output (gigabytes for a host index). Outputs are
// files without a name (O_TMPFILE) until they are complete, so a killed run leaves nothing. Skipped
// where the test folder's file system refuses O_TMPFILE (there a named temporary is used, and
// removed by the next run: tests/io/output_file_test.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class killed_run : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        int const fd = ::open(dir().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) GTEST_SKIP() << "the test folder refuses O_TMPFILE: " << std::strerror(errno);
        ::close(fd);
        write_file("ref.fa", ">ref\n" + reference + "\n");
        std::string reads;
        // ~200 KB: more than the reader's first look at a pipe (64 KB).
        for (int i = 0; i < 2000; ++i)
            reads += "@r" + std::to_string(i) + "\n" + reference.substr(i % 20, 40) + "\n+\n" +
                     std::string(40, 'I') + "\n";
        write_file("reads.fq", reads);
        ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (auto const& e : std::filesystem::directory_iterator(dir()))
            out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

    std::string const reference = "ACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGCTTAGGC";
};

// SIGTERM too: that run removes its outputs itself (app/common/interrupt.hpp).
TEST_F(killed_run, sigkill_leaves_no_temporary) {
    auto const before = names();
    for (std::string const signal : {"KILL", "TERM"}) {
        // A query blocked on a pipe, its outputs open (each a file without a name: "(deleted)"
        // among its descriptors), is killed. The FIFO is made before anything goes to the
        // background.
        std::string const script =
            "mkfifo reads.pipe || exit 1; "
            "{ cat reads.fq; exec sleep 60; } > reads.pipe 2> /dev/null & feeder=$!; "
            "$QMER query -q -o out.tsv --summary s.json --matched m.fq.gz --unmatched u.FQ.ZST "
            "ref.qmer reads.pipe > /dev/null 2> err.txt & query=$!; "
            "opened=0; for i in $(seq 400); do "
            "  opened=$(ls -l /proc/$query/fd 2> /dev/null | grep -c '(deleted)'); "
            "  [ $opened -ge 4 ] && break; sleep 0.05; done; "
            "kill -" +
            signal +
            " $query; kill $feeder; wait $query; rm reads.pipe; "
            "[ $opened -ge 4 ] || { echo \"the query opened $opened outputs\" >> err.txt; exit 1; "
            "}";
        ASSERT_EQ(shell(script).exit_code, 0) << signal << ": " << slurp(dir() / "err.txt");
        std::filesystem::remove(dir() / "err.txt");
        EXPECT_EQ(names(), before) << "SIG" << signal << " left something in the run's folder";
    }
}

}  // namespace
