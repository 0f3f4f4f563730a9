// Regression (found by fuzz/index_damage_fuzz on crafted files): an expandable index whose checksum
// is valid but whose level 0 table has status bits no filter writes (a lock state, or runs that
// contradict the occupied bits) would make `qmer index --append` spin forever (with --filter
// locally-locked, queries too) if the loaders checked only the tables' geometry. Loading checks
// every quotient filter table's contents (core/qf/table_check.hpp): such a file is a damaged index,
// exit code 4, naming the file, before any insert or query.
//
// The finding (fuzz/findings/crafted_locally_locked_query_hang.bin) is an edit script of the
// index_damage targets: fuzz/index_damage.hpp rebuilds the index it edits, and the test runs the
// real binary on the result with a time limit, so a hang fails the test instead of blocking it.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "crafted_index_fixture.hpp"

namespace {

class crafted_locally_locked_query_hang : public qmer::test::cli_test {
  protected:
    // The finding's bytes as a file in the test folder.
    void write_finding(std::string const& name) {
        qmer::test::write_crafted_finding("crafted_locally_locked_query_hang.bin", dir() / name);
    }

    // `qmer ARGS` under timeout(1), so that a hang fails the test; stderr goes to err.txt.
    qmer::test::cli_result run_limited(std::string const& args) {
        auto r = shell("timeout -k 5 60 \"$QMER\" " + args + " > out.txt 2> err.txt");
        r.err = slurp(dir() / "err.txt");
        return r;
    }

    static void expect_damaged_index(qmer::test::cli_result const& r) {
        // timeout(1) exits 124 after its TERM, 137 after its KILL (a spinning qmer never gets to
        // its interrupt check).
        EXPECT_TRUE(r.exit_code != 124 && r.exit_code != 137) << "timed out: still hangs";
        EXPECT_EQ(r.exit_code, 4) << r.err;
        EXPECT_EQ(r.signal, 0);
        EXPECT_NE(r.err.find("qmer: error: 'crafted.qmer': damaged index"), std::string::npos)
            << r.err;
        // One line.
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    }
};

// Since index format 3 the finding edits level words in the rank-select layout, which an append
// turns back into the concurrent table through a checked pass (thaw_rank_select: fingerprints in
// order, every run closed): whatever the edit, the concurrent table is consistent, so the append
// either refuses the file as damaged, leaving it as it was, or appends to it; it never hangs.
// (Crafted concurrent-layout tables, as formats 1 and 2 store them, are refused by
// core/qf/table_check.hpp: tests/regressions/crafted_quotient_table_test.cpp.)
TEST_F(crafted_locally_locked_query_hang, append_never_hangs) {
    write_finding("crafted.qmer");
    auto const before = slurp(dir() / "crafted.qmer");
    write_file("ref.fa", ">r\nACGTTGCATGCATGCAAAGGGCCCTTTAGGCTAGCTAGGATCCATGACGTAGCTAG\n");
    auto const r = run_limited("index --append -q -k 21 --seed 42 -t 2 -o crafted.qmer ref.fa");
    EXPECT_TRUE(r.exit_code != 124 && r.exit_code != 137) << "timed out: still hangs";
    EXPECT_EQ(r.signal, 0);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.exit_code << " " << r.err;
    if (r.exit_code == 4) {
        expect_damaged_index(r);
        EXPECT_EQ(slurp(dir() / "crafted.qmer"), before);  // a refused index is left as it was
    }
    // No temporary is left behind either way.
    for (auto const& e : std::filesystem::directory_iterator(dir()))
        EXPECT_EQ(e.path().filename().string().find(".qmer-tmp-"), std::string::npos) << e.path();
}

// Since index format 3 the finding edits an expandable index whose levels are in the rank-select
// layout, which a query answers in place without reading every word first
// (core/qf/stored/table.hpp): its scans are bounded, so crafted words may change answers but can
// neither hang nor crash it. The query either answers or refuses the file as damaged.
TEST_F(crafted_locally_locked_query_hang, query_never_hangs) {
    write_finding("crafted.qmer");
    write_file("reads.fq",
               "@a\nACGTTGCATGCATGCAAAGGGCCCTTTAGG\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n");
    auto const r = run_limited("query -q -t 2 crafted.qmer reads.fq");
    EXPECT_TRUE(r.exit_code != 124 && r.exit_code != 137) << "timed out: still hangs";
    EXPECT_EQ(r.signal, 0);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.exit_code << " " << r.err;
    if (r.exit_code == 4) expect_damaged_index(r);
}

}  // namespace
