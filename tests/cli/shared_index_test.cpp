// Queries that share a machine share an index (app/query/run.cpp, private_copy_fits): a query
// reads the default index into private memory only when no other query is answering from it and
// the copy fits the memory left; otherwise it answers from the shared mapping, as --mmap does,
// and says so. Six queries of one 4 GiB index on a 23 GiB node each made a private copy and the
// OOM killer ended one.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::tsv_body;

class shared_index : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", random_fasta(4, 500000, 11));
        auto r = qmer({"index", "-q", "-o", "ref.qmer", "ref.fa"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        // Reads: pieces of the reference, and random ones.
        std::string const ref = slurp(dir() / "ref.fa");
        std::string reads;
        for (int i = 0; i < 4000; ++i) {
            size_t const at = 4 + static_cast<size_t>(i) * 97;
            reads += "@r" + std::to_string(i) + "\n" + ref.substr(at, 100) + "\n+\n" +
                     std::string(100, 'I') + "\n";
        }
        write_file("reads.fq", reads);
        r = qmer({"query", "-q", "-t", "1", "-o", "alone.tsv", "ref.qmer", "reads.fq"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        ASSERT_EQ(r.err, "");  // alone, with memory to spare: a private copy, nothing said
    }
};

// Eight queries of one index at once, each held open on a named pipe until all have loaded it (a
// pipe's first 500 reads, more than the 64 KiB block a reader waits for before the index is
// opened): exactly one reads it into private memory, seven share the mapping, and all eight answer
// alike.
TEST_F(shared_index, eight_queries_at_once_make_one_private_copy) {
    std::string script = "set -u; pids=(); ";
    for (int i = 0; i < 8; ++i) {
        std::string const n = std::to_string(i);
        script += "mkfifo in" + n + ".pipe; { head -n 2000 reads.fq; while [ ! -e go ]; do " +
                  "sleep 0.02; done; tail -n +2001 reads.fq; } > in" + n + ".pipe & " +
                  "$QMER query -t 1 -o out" + n + ".tsv ref.qmer in" + n + ".pipe 2> err" + n +
                  ".txt & pids+=($!); ";
    }
    // Every query has made its choice once it holds the index's lock (a descriptor of ref.qmer)
    // or has said it shares the mapping; only then may the first of them end.
    script +=
        "for t in $(seq 1000); do n=0; for i in $(seq 0 7); do "
        "{ ls -l /proc/${pids[$i]}/fd 2> /dev/null | grep -q ref.qmer || "
        "grep -q 'shared mapping' err$i.txt; } && n=$((n + 1)); done; "
        "[ $n = 8 ] && break; sleep 0.02; done; touch go; status=0; "
        "for p in ${pids[@]}; do wait $p || status=1; done; wait; exit $status";
    write_file("eight.sh", script);
    ASSERT_EQ(shell("bash eight.sh").exit_code, 0);
    int shared = 0;
    std::string const alone = tsv_body(slurp(dir() / "alone.tsv"));
    for (int i = 0; i < 8; ++i) {
        std::string const err = slurp(dir() / ("err" + std::to_string(i) + ".txt"));
        if (err.find("answered from the shared mapping, as with --mmap: another qmer is "
                     "answering from it") != std::string::npos)
            ++shared;
        else
            EXPECT_EQ(err.find("note"), std::string::npos) << err;
        EXPECT_EQ(tsv_body(slurp(dir() / ("out" + std::to_string(i) + ".tsv"))), alone) << i;
    }
    EXPECT_EQ(shared, 7);
}

// A query in a cgroup whose limit leaves no room for a private copy maps the index instead of
// being killed (as root, where a cgroup can be made; skipped with the reason otherwise).
TEST_F(shared_index, a_copy_that_would_not_fit_is_not_made) {
    if (::geteuid() != 0) GTEST_SKIP() << "making a cgroup needs root";
    namespace fs = std::filesystem;
    std::string const name = "qmer-test-" + std::to_string(::getpid());
    fs::path group;
    std::string limit_file;
    if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {  // v2
        group = fs::path("/sys/fs/cgroup") / name;
        limit_file = "memory.max";
    } else if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {  // v1
        group = fs::path("/sys/fs/cgroup/memory") / name;
        limit_file = "memory.limit_in_bytes";
    } else {
        GTEST_SKIP() << "no cgroup memory controller mounted";
    }
    std::error_code ec;
    if (!fs::create_directory(group, ec) || !fs::exists(group / limit_file))
        GTEST_SKIP() << "cannot make a cgroup with a memory limit at " << group;
    // The limit is the copy's need itself (the index's bytes and the 64 MiB margin,
    // private_copy_fits): once the query holds any memory of its own, what is left is less than
    // that, so it must map; and every byte up to the need is room for the query to run in. A
    // fixed 48 MiB left a sanitized qmer (shadow memory, ASan's quarantine of freed blocks) too
    // little once two tests ran at once, and the kernel killed it (exit 137). Under ASan the
    // quarantine is kept small as well, so what the query holds is its own working set.
    uint64_t const need = fs::file_size(dir() / "ref.qmer") + (uint64_t{64} << 20);
    { std::ofstream(group / limit_file) << need; }
    auto const r = shell("sh -c 'echo $$ > " + (group / "cgroup.procs").string() +
                         " && ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:quarantine_size_mb=8\" exec "
                         "\"$QMER\" query -t 1 -o capped.tsv ref.qmer reads.fq' 2> err.txt");
    // Killed by the kernel's OOM killer (137): say how much the group held at most, so a
    // failure tells whether the limit or a leak is to blame.
    if (r.exit_code == 137)
        ADD_FAILURE() << "killed at a limit of " << need << " bytes; the group's peak: "
                      << slurp(group / (limit_file == "memory.max" ? "memory.peak"
                                                                   : "memory.max_usage_in_bytes"));
    fs::remove(group, ec);
    ASSERT_EQ(r.exit_code, 0) << slurp(dir() / "err.txt");
    EXPECT_NE(slurp(dir() / "err.txt")
                  .find("answered from the shared mapping, as with --mmap: a private copy would "
                        "not fit the memory left"),
              std::string::npos)
        << slurp(dir() / "err.txt");
    EXPECT_EQ(tsv_body(slurp(dir() / "capped.tsv")), tsv_body(slurp(dir() / "alone.tsv")));
}

}  // namespace
