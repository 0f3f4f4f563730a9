// Issue 18, item 3: the smaller holes a new user hit, one test each, named after the hole.
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;

class issue18 : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", ">ref\n" + reference + "\n");
        std::string reads;
        // 2,000 reads, ~200 KB: more than the reader's first look at a pipe (64 KB).
        for (int i = 0; i < 2000; ++i)
            reads += "@r" + std::to_string(i) + "\n" + reference.substr(i % 20, 40) + "\n+\n" +
                     std::string(40, 'I') + "\n";
        write_file("reads.fq", reads);
    }
    static size_t lines(std::string const& s) { return std::count(s.begin(), s.end(), '\n'); }
    static bool has(std::string const& s, std::string const& what) {
        return s.find(what) != std::string::npos;
    }
    std::vector<std::string> hidden_temporaries() const {
        std::vector<std::string> out;
        for (auto const& e : std::filesystem::directory_iterator(dir()))
            if (has(e.path().filename().string(), ".qmer-tmp-"))
                out.push_back(e.path().filename().string());
        return out;
    }

    std::string const reference = "ACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGCTTAGGC";
};

// `--expected 1000000000000` ended in std::invalid_argument and exit 1.
TEST_F(issue18, oversized_expected_ended_in_invalid_argument) {
    for (std::string const filter : {"expandable", "locally-locked", "linear-probing", "bloom"}) {
        for (std::string const expected :
             {"70000000000", "1000000000000", "18446744073709551615"}) {
            auto const r = qmer(
                {"index", "--filter", filter, "--expected", expected, "-o", "x.qmer", "ref.fa"});
            EXPECT_EQ(r.exit_code, 2) << filter << " " << expected << ": " << r.err;
            EXPECT_TRUE(r.err.starts_with("qmer: error: --expected " + expected)) << r.err;
            EXPECT_EQ(lines(r.err), 1u) << r.err;
        }
    }
    // Within the bound but beyond memory: the memory limit's error (exit 6), before allocating.
    auto const r = qmer({"index", "--filter", "locally-locked", "--expected", "60000000000",
                         "--max-memory", "1G", "-o", "x.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 6) << r.err;
    EXPECT_TRUE(has(r.err, "the index needs")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
}

// Found while naming every bound: `-t 100000000` asked for 2e8 batches in flight and ran out of
// memory (or was killed) instead of starting; the bound is max_threads (app/common/threads.hpp).
TEST_F(issue18, huge_thread_count_ran_out_of_memory) {
    ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    for (auto const& args : std::vector<std::vector<std::string>>{
             {"index", "-t", "100000000", "-o", "x.qmer", "ref.fa"},
             {"query", "-t", "1025", "-o", "out.tsv", "ref.qmer", "reads.fq"}}) {
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: -t ")) << r.err;
        EXPECT_EQ(lines(r.err), 1u) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
    EXPECT_FALSE(std::filesystem::exists(dir() / "out.tsv"));
    EXPECT_EQ(
        qmer({"query", "-q", "-t", "1024", "-o", "out.tsv", "ref.qmer", "reads.fq"}).exit_code, 0);
}

// `qmer index --filter cuckoo` failed with the default --fpr 0.001, which it cannot honour.
TEST_F(issue18, cuckoo_refused_the_default_fpr) {
    auto r = qmer({"index", "-q", "--filter", "cuckoo", "-k", "15", "-o", "c.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(has(r.err, "--filter cuckoo") && has(r.err, "0.00195312")) << r.err;
    auto const info = qmer({"info", "c.qmer"});
    EXPECT_TRUE(has(info.out, "fpr bound:      0.00195312")) << info.out;
    r = qmer({"query", "c.qmer", "reads.fq"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // An --fpr the user asked for is still refused, not changed.
    r = qmer({"index", "--filter", "cuckoo", "--fpr", "0.001", "-o", "d.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "d.qmer"));
}

// xz, bzip2 and zstd files were "not a sequence file: it starts with byte 0xfd".
TEST_F(issue18, xz_bzip2_zstd_called_not_a_sequence_file) {
    ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    for (std::string const tool : {"xz", "bzip2", "zstd"}) {
        if (shell("command -v " + tool + " > /dev/null").exit_code != 0) {
            ADD_FAILURE() << tool << " is not installed (scripts/install-deps installs it)";
            continue;
        }
        ASSERT_EQ(shell(tool + " -c reads.fq > reads.fq.z 2> /dev/null").exit_code, 0);
        for (auto const& as_stdin : {false, true}) {
            auto const r = as_stdin ? qmer({"query", "ref.qmer", "-"}, "reads.fq.z")
                                    : qmer({"query", "ref.qmer", "reads.fq.z"});
            EXPECT_EQ(r.exit_code, 3) << r.err;
            EXPECT_EQ(lines(r.err), 1u) << r.err;
            EXPECT_TRUE(has(r.err, tool + "-compressed")) << r.err;
            EXPECT_TRUE(has(r.err, tool + " -dc ")) << r.err;
            EXPECT_TRUE(has(r.err, "| qmer ... -")) << r.err;
        }
        // The fix the message gives works.
        EXPECT_EQ(shell(tool + " -dc reads.fq.z | $QMER query -q -o out.tsv ref.qmer -").exit_code,
                  0);
    }
}

// `qmer info` printed `parameters 3553718635695981905,50343,...`.
TEST_F(issue18, info_printed_the_parameters_as_raw_integers) {
    ASSERT_EQ(qmer({"index", "-k", "15", "--seed", "7", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    auto const text = qmer({"info", "ref.qmer"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    for (auto const* name : {"levels 1", "level 0:", "slots ", "remainder bits 11", "fill ",
                             "hash seed:      7", "layout rank-select"})
        EXPECT_TRUE(has(text.out, name)) << name << " in\n" << text.out;
    EXPECT_FALSE(has(text.out, "3553718635695981905")) << text.out;
    auto const json = qmer({"info", "--json", "ref.qmer"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_TRUE(has(json.out, "\"filter_parameters\": {\"levels\": 1")) << json.out;
    EXPECT_TRUE(has(json.out, "\"remainder_bits\": 11")) << json.out;
    for (std::string const filter : {"locally-locked", "linear-probing", "bloom", "cuckoo"}) {
        ASSERT_EQ(qmer({"index", "-q", "--filter", filter, "-k", "15", "-o", "f.qmer", "ref.fa"})
                      .exit_code,
                  0);
        auto const r = qmer({"info", "f.qmer"});
        EXPECT_TRUE(has(r.out, filter == "bloom" ? "probes" : "slots")) << r.out;
        EXPECT_FALSE(has(r.out, "does not name")) << r.out;
    }
}

// A run killed with SIGKILL leaves its hidden temporary; the next run into the same output removes
// it (no live writer holds its lock, and it is older than 10 s) and succeeds. A temporary that a
// live run is writing is left alone, and so is a young one.
TEST_F(issue18, sigkill_left_its_temporary_behind) {
    ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    // A query blocked on a pipe holds its outputs' temporaries open; then it is killed.
    std::string const start_blocked =
        // (mkfifo before '&': inside the background list, the query could start before the
        // FIFO existed and fail with "cannot open", about one run in three under load)
        "mkfifo reads.pipe; { cat reads.fq; exec sleep 60; } > reads.pipe 2> /dev/null & "
        "feeder=$!; "
        "$QMER query -q -o out.tsv --summary s.json ref.qmer reads.pipe > /dev/null 2>&1 & "
        "query=$!; "
        "for i in $(seq 200); do [ $(ls -a | grep -c qmer-tmp) = 2 ] && break; sleep 0.05; done; ";
    ASSERT_EQ(
        shell(start_blocked + "kill -9 $query; wait $query; kill $feeder; rm reads.pipe").exit_code,
        0);
    auto const left = hidden_temporaries();
    ASSERT_EQ(left.size(), 2u) << "the killed run should have left two temporaries";

    // Young leftovers stay (they might be between a writer's close and its rename).
    auto r = qmer({"query", "-q", "-o", "out.tsv", "--summary", "s.json", "ref.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(hidden_temporaries().size(), 2u);
    // Aged past 10 s, the next run removes them.
    ASSERT_EQ(shell("touch -d '1 minute ago' .*.qmer-tmp-*").exit_code, 0);
    r = qmer({"query", "-q", "-o", "out.tsv", "--summary", "s.json", "ref.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(hidden_temporaries().empty());
    EXPECT_TRUE(has(slurp(dir() / "out.tsv"), "\nr1999\t")) << "a whole TSV under the final name";

    // A live writer's temporary, however old, is kept: the lock says someone is writing it.
    ASSERT_EQ(shell(start_blocked + "touch -d '1 minute ago' .out.tsv.qmer-tmp-*; "
                                    "$QMER query -q -o out.tsv ref.qmer reads.fq; status=$?; "
                                    "n=$(ls -a | grep -c qmer-tmp); "
                                    "kill $query $feeder; wait $query; rm reads.pipe; "
                                    "[ $status = 0 ] && [ $n = 2 ]")
                  .exit_code,
              0);
    EXPECT_TRUE(hidden_temporaries().empty()) << "SIGTERM removes its own temporaries";
}

}  // namespace
