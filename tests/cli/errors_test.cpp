// Bad input never crashes and never gives wrong output silently: every row of the README's error
// table, run through the real binary. Each case checks the exit code, that the message is one
// line naming the file (and record), and that no output appears under its final name.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <random>
#include <thread>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;

class errors : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", ">ref\nACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGC\n");
        ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    }
    // The one-line error contract.
    static void expect_error(cli_result const& r, int code, std::vector<std::string> fragments) {
        EXPECT_EQ(r.exit_code, code) << r.err;
        EXPECT_EQ(r.signal, 0);
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        for (auto const& f : fragments)
            EXPECT_NE(r.err.find(f), std::string::npos) << f << " in " << r.err;
    }
    void write_gz(std::string const& name, std::string const& content) {
        gzFile f = gzopen((dir() / name).c_str(), "wb");
        gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
        gzclose(f);
    }
    bool output_absent(std::string const& name) {
        for (auto const& e : std::filesystem::directory_iterator(dir()))
            if (e.path().filename().string().find(name) != std::string::npos) return false;
        return true;
    }
};

TEST_F(errors, missing_reads_file) {
    expect_error(qmer({"query", "-o", "out.tsv", "ref.qmer", "nope.fq"}), 3, {"nope.fq"});
    EXPECT_TRUE(output_absent("out.tsv"));
}

// -t 0 is refused in words, not with CLI11's 300-digit range.
TEST_F(errors, zero_threads_said_in_words) {
    for (char const* command : {"index", "query"}) {
        auto const r = std::string(command) == "index"
                           ? qmer({"index", "-t", "0", "-o", "x.qmer", "ref.fa"})
                           : qmer({"query", "-t", "0", "ref.qmer", "reads.fq"});
        expect_error(r, 2, {"--threads", "must be at least 1"});
        EXPECT_LT(r.err.size(), 200u) << r.err;
        auto const negative = std::string(command) == "index"
                                  ? qmer({"index", "-t", "-3", "-o", "x.qmer", "ref.fa"})
                                  : qmer({"query", "-t", "-3", "ref.qmer", "reads.fq"});
        EXPECT_EQ(negative.exit_code, 2) << negative.err;
        EXPECT_LT(negative.err.size(), 200u) << negative.err;
    }
    EXPECT_TRUE(output_absent("x.qmer"));
}

TEST_F(errors, missing_reference) {
    expect_error(qmer({"index", "-o", "x.qmer", "ref.fa", "nope.fa"}), 3, {"nope.fa"});
    EXPECT_TRUE(output_absent("x.qmer"));
}

TEST_F(errors, directory_as_input) {
    std::filesystem::create_directory(dir() / "folder");
    expect_error(qmer({"query", "ref.qmer", "folder"}), 3, {"folder"});
}

TEST_F(errors, unreadable_file) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their permissions";
    write_file("locked.fq", "@r\nACGT\n+\nIIII\n");
    ::chmod((dir() / "locked.fq").c_str(), 0);
    expect_error(qmer({"query", "ref.qmer", "locked.fq"}), 3, {"locked.fq"});
}

TEST_F(errors, empty_reads_are_an_empty_input) {
    write_file("empty.fq", "");
    auto const r = qmer({"query", "--summary", "s.json", "ref.qmer", "empty.fq"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(slurp(dir() / "s.json").find("\"reads\": 0"), std::string::npos);
}

TEST_F(errors, fastq_quality_length_differs) {
    write_file("bad.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGTACGT\n+\nIII\n");
    expect_error(qmer({"query", "-o", "out.tsv", "ref.qmer", "bad.fq"}), 3, {"bad.fq", "2"});
    EXPECT_TRUE(output_absent("out.tsv"));
}

TEST_F(errors, fastq_missing_plus_line) {
    write_file("bad.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\nIIII\n");
    expect_error(qmer({"query", "ref.qmer", "bad.fq"}), 3, {"bad.fq"});
}

TEST_F(errors, truncated_gzip) {
    std::string fq;
    std::mt19937 rng(1);
    for (int i = 0; i < 2000; ++i) {
        std::string seq(100, 'A');
        for (char& c : seq) c = "ACGT"[rng() % 4];
        fq += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(100, 'I') + "\n";
    }
    write_gz("reads.fq.gz", fq);
    std::filesystem::resize_file(dir() / "reads.fq.gz",
                                 std::filesystem::file_size(dir() / "reads.fq.gz") / 2);
    expect_error(qmer({"query", "-o", "out.tsv", "ref.qmer", "reads.fq.gz"}), 3, {"reads.fq.gz"});
    EXPECT_TRUE(output_absent("out.tsv"));
}

TEST_F(errors, binary_garbage) {
    std::string garbage(4096, '\0');
    std::mt19937 rng(2);
    for (char& c : garbage) c = static_cast<char>(rng());
    garbage[0] = '\x7f';
    write_file("garbage.bin", garbage);
    expect_error(qmer({"query", "ref.qmer", "garbage.bin"}), 3, {"garbage.bin"});
    expect_error(qmer({"index", "-o", "g.qmer", "garbage.bin"}), 3, {"garbage.bin"});
    EXPECT_TRUE(output_absent("g.qmer"));
}

TEST_F(errors, mates_out_of_step) {
    write_file("r1.fq", "@a/1\nACGT\n+\nIIII\n@b/1\nACGT\n+\nIIII\n");
    write_file("r2.fq", "@a/2\nACGT\n+\nIIII\n@c/2\nACGT\n+\nIIII\n");
    expect_error(qmer({"query", "-o", "out.tsv", "ref.qmer", "r1.fq", "r2.fq"}), 3, {"r2.fq"});
    write_file("short.fq", "@a/2\nACGT\n+\nIIII\n");
    expect_error(qmer({"query", "-o", "out.tsv", "ref.qmer", "r1.fq", "short.fq"}), 3,
                 {"short.fq"});
    EXPECT_TRUE(output_absent("out.tsv"));
}

TEST_F(errors, bad_parameters_are_usage_errors) {
    for (auto const& args : std::vector<std::vector<std::string>>{
             {"index", "-k", "0", "-o", "x.qmer", "ref.fa"},
             {"index", "-k", "33", "-o", "x.qmer", "ref.fa"},
             {"index", "--fpr", "0", "-o", "x.qmer", "ref.fa"},
             {"index", "--fpr", "1", "-o", "x.qmer", "ref.fa"},
             {"index", "--fpr", "-0.1", "-o", "x.qmer", "ref.fa"},
             {"index", "--fpr", "abc", "-o", "x.qmer", "ref.fa"},
             {"index", "-t", "0", "-o", "x.qmer", "ref.fa"},
             {"index", "-t", "-2", "-o", "x.qmer", "ref.fa"},
             {"index", "--filter", "nonsense", "-o", "x.qmer", "ref.fa"},
             {"query", "-t", "0", "ref.qmer", "ref.fa"},
             {"query", "--min-containment", "1.5", "ref.qmer", "ref.fa"},
             {"query", "ref.qmer", "a.fq", "b.fq", "c.fq"}}) {
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
    }
    EXPECT_TRUE(output_absent("x.qmer"));
}

TEST_F(errors, memory_limit_stops_the_build) {
    auto const r =
        qmer({"index", "--max-memory", "20K", "-o", "x.qmer", data("lambda_virus.fa.gz").string()});
    expect_error(r, 6, {"--max-memory", "memory limit"});
    EXPECT_TRUE(output_absent("x.qmer"));
    for (char const* bad : {"lots", "-5G", "0", "12Q"}) {
        auto const b = qmer({"index", "--max-memory", bad, "-o", "x.qmer", "ref.fa"});
        EXPECT_EQ(b.exit_code, 2) << bad << ": " << b.err;
    }
    EXPECT_EQ(qmer({"index", "--max-memory", "1G", "-o", "x.qmer", "ref.fa"}).exit_code, 0);
}

TEST_F(errors, damaged_indexes) {
    auto const size = std::filesystem::file_size(dir() / "ref.qmer");
    std::filesystem::copy_file(dir() / "ref.qmer", dir() / "cut.qmer");
    std::filesystem::resize_file(dir() / "cut.qmer", size - 9);
    expect_error(qmer({"query", "cut.qmer", "ref.fa"}), 4, {"cut.qmer", "truncated"});

    std::filesystem::copy_file(dir() / "ref.qmer", dir() / "flip.qmer");
    {
        std::fstream f(dir() / "flip.qmer", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size / 2));
        f.put('\x55');
    }
    expect_error(qmer({"info", "flip.qmer"}), 4, {"flip.qmer", "checksum"});

    std::filesystem::copy_file(dir() / "ref.qmer", dir() / "new.qmer");
    {
        std::fstream f(dir() / "new.qmer", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(8);
        char const v[4] = {99, 0, 0, 0};
        f.write(v, 4);
    }
    expect_error(qmer({"query", "new.qmer", "ref.fa"}), 4, {"new.qmer", "newer"});
    expect_error(qmer({"query", "ref.fa", "ref.fa"}), 4, {"ref.fa", "FASTA"});
}

TEST_F(errors, output_in_a_missing_folder) {
    expect_error(qmer({"index", "-o", "no/such/x.qmer", "ref.fa"}), 5, {"no/such/x.qmer"});
    expect_error(qmer({"query", "-o", "no/such/out.tsv", "ref.qmer", "ref.fa"}), 5,
                 {"no/such/out.tsv"});
}

TEST_F(errors, stdout_on_a_full_disk) {
    auto const r = shell("$QMER query ref.qmer ref.fa > /dev/full 2> err.txt");
    EXPECT_EQ(r.exit_code, 5);
    std::string const err = slurp(dir() / "err.txt");
    EXPECT_TRUE(err.starts_with("qmer: error: ")) << err;
}

TEST_F(errors, device_outputs_are_written_not_replaced) {
    auto const r =
        qmer({"query", "-o", "/dev/null", "--summary", "/dev/null", "ref.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is no longer a device";
    EXPECT_EQ(qmer({"query", "-o", "-", "ref.qmer", "ref.fa"}).exit_code, 0);
    // A named pipe is written through, not replaced by a rename.
    ASSERT_EQ(::mkfifo((dir() / "pipe").c_str(), 0600), 0);
    auto const p = shell(
        "cat pipe > from_pipe.txt 2> /dev/null & $QMER query -q -o pipe ref.qmer ref.fa; "
        "status=$?; wait; exit $status");
    EXPECT_EQ(p.exit_code, 0);
    EXPECT_NE(slurp(dir() / "from_pipe.txt").find("read_id\tkmers"), std::string::npos);
    ASSERT_EQ(::stat((dir() / "pipe").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(errors, interrupt_leaves_no_output) {
    // A reference large enough that indexing takes a while: ~60 Mbp of random sequence.
    {
        std::ofstream out(dir() / "big.fa");
        std::mt19937_64 rng(3);
        std::string line(100, 'A');
        out << ">big\n";
        for (int i = 0; i < 600000; ++i) {
            uint64_t x = 0;
            for (size_t j = 0; j < line.size(); ++j) {
                if (j % 32 == 0) x = rng();
                line[j] = "ACGT"[x & 3];
                x >>= 2;
            }
            out << line << '\n';
        }
    }
    for (int sig : {SIGINT, SIGTERM}) {
        pid_t const pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::chdir(dir().c_str());
            int const devnull = ::open("/dev/null", O_WRONLY);
            ::dup2(devnull, 2);
            ::execl(QMER_BINARY, "qmer", "index", "--filter", "bounded-growing", "-t", "2", "-o",
                    "big.qmer", "big.fa", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        ::kill(pid, sig);
        int status = 0;
        auto const sent = std::chrono::steady_clock::now();
        ::waitpid(pid, &status, 0);
        double const waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
        ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
        EXPECT_EQ(WEXITSTATUS(status), 130);
        EXPECT_LT(waited, 5.0) << "did not stop promptly";
        EXPECT_TRUE(output_absent("big.qmer")) << "a file named like the output was left";
    }
}

}  // namespace
