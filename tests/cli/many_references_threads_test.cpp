// A many-reference index is the same whatever the threads (app/index/many_reference_build.cpp:
// per-thread hash lists, per-thread class interners merged into one, a range of the hash per
// task): built with more threads than cores, it answers every read as a one-thread build does,
// and its references' counts are the same. Not a *_stress_test: under ThreadSanitizer, qmer's
// TBB pipelines report races between successive calls of one serial stage on two threads (its
// settling stage's writes), which oneTBB orders by atomics inside libtbb, where Debian's build is
// not instrumented: TSan cannot see that order, so it would refuse every pipeline. The build's
// own shared state (per-thread lists and interners, disjoint outputs per task) is checked here
// by its answers at 1, 8 and 32 threads, in the release and AddressSanitizer runs.

#include "cli/cli_fixture.hpp"
#include "sanitized.hpp"

namespace {

using qmer::test::cli_test;
using many_references_threads = cli_test;

// The part of `qmer info` that lists the references (names, groups, k-mers, unique k-mers).
std::string references_listed(std::string const& info) {
    auto const at = info.find("references:");
    return at == std::string::npos ? "" : info.substr(at);
}

std::string body(std::string const& tsv) {
    auto const at = tsv.find("read_id\t");
    return at == std::string::npos ? "" : tsv.substr(at);
}

TEST_F(many_references_threads, more_threads_than_cores_build_the_same_index) {
    // 12 references: 4 "species" of 3 "strains" (a shared random stretch and one of their own),
    // records long enough to be cut into pieces read by several threads at once.
    int const bases = QMER_TEST_SANITIZED ? 40000 : 200000;
    std::string sheet, reads;
    for (int sp = 0; sp < 4; ++sp) {
        std::string const shared = random_fasta(1, bases, 10 + static_cast<uint64_t>(sp));
        for (int st = 0; st < 3; ++st) {
            std::string name = std::to_string(sp);  // "s" + a temporary: GCC 12's false alarm
            name.insert(0, 1, 's').append(1, '_').append(std::to_string(st));
            std::string const own = random_fasta(2, bases / 4, 100 + 10 * sp + st);
            write_file(name + ".fa", shared + own);
            sheet += name + "\t" + name + ".fa\tsp" + std::to_string(sp) + "\n";
            std::string const seq = own.substr(own.find('\n') + 1, 3000);
            for (int i = 0; i < 20; ++i)
                reads += "@" + name + "." + std::to_string(i) + "\n" + seq.substr(i * 100, 100) +
                         "\n+\n" + std::string(100, 'I') + "\n";
        }
    }
    write_file("refs.tsv", sheet);
    write_file("reads.fq", reads);
    std::string first_info, first_tsv;
    for (char const* threads : {"1", "8", "32"}) {
        std::string const index = std::string("t") + threads + ".qmer";
        auto const built =
            qmer({"index", "-q", "-t", threads, "-o", index, "--references", "refs.tsv"});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        auto const info = qmer({"info", index});
        ASSERT_EQ(info.exit_code, 0) << info.err;
        auto const q = qmer(
            {"query", "-q", "-t", threads, "-o", std::string(threads) + ".tsv", index, "reads.fq"});
        ASSERT_EQ(q.exit_code, 0) << q.err;
        std::string const tsv = body(slurp(dir() / (std::string(threads) + ".tsv")));
        ASSERT_FALSE(tsv.empty());
        if (first_info.empty()) {
            first_info = references_listed(info.out);
            first_tsv = tsv;
            ASSERT_FALSE(first_info.empty()) << info.out;
            continue;
        }
        EXPECT_EQ(references_listed(info.out), first_info) << threads << " threads";
        EXPECT_EQ(tsv, first_tsv) << threads << " threads";
    }
    // Each read's own strain alone: its 70 k-mers of the strain's own sequence hold no other's.
    std::istringstream in(first_tsv);
    std::string line;
    std::getline(in, line);  // the header
    int rows = 0;
    while (std::getline(in, line)) {
        ++rows;
        std::string const id = line.substr(0, line.find('\t'));
        // GCC 12 warns (falsely) of "\t" + a temporary string: built by append instead.
        std::string category(1, '\t');
        category.append(id, 0, id.find('.')).push_back('\t');
        EXPECT_NE(line.find(category), std::string::npos) << line;
    }
    EXPECT_EQ(rows, 240);
}

}  // namespace
