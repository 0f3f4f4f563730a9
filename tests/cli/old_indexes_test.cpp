// Indexes written by older qmer versions (tests/data/old_indexes/README.md) load and answer
// exactly as the qmer that wrote them: the same per-read lines for the same reads. Format 3
// changed how the default filter's levels are stored (the rank-select layout), so formats 1 and 2
// take the copying load path; appending to one writes the current format and keeps every old hit.
// Format 5 changed the order of the external-locks filter's status bits: a format-4 external-locks
// index is converted as it loads. Format 6 added hash scheme 2, whose levels above the first read
// more window bits (core/qf/stored/level_windows.hpp): a format-5 minimizer-local index with
// several levels (scheme 1) reads every level as format 5 does, and appending to it keeps scheme 1.
// Format 7 changed the checksum's rule (io::index_checksum): a format-6 index is checked by its
// own. Format 8 changed it again (the header and the section parameters before the first section
// words are the first piece): a format-7 index is checked by format 7's. Format 9 added the
// minimizer gate, a section after the levels: a format-8 index has none and is answered without
// it, and an append to it writes none (its k-mers' bits were never set). Format 10 added the
// many-reference index (class ids beside the remainders, the reference catalog); a format-9 index
// (with its gate) answers as before, and an append to it keeps the gate.

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "io/index_file.hpp"

namespace qmer::test {
namespace {

std::filesystem::path old_index(std::string const& name) {
    return std::filesystem::path(QMER_SOURCE_DIR) / "tests/data/old_indexes" / name;
}

// The TSV without its # preamble.
std::string body(std::string const& tsv) {
    std::istringstream in(tsv);
    std::string line, out;
    while (std::getline(in, line))
        if (!line.starts_with('#')) out += line + "\n";
    return out;
}

class old_indexes : public cli_test, public ::testing::WithParamInterface<std::string> {
  protected:
    std::string gunzip(std::filesystem::path const& p) {
        EXPECT_EQ(shell("gzip -dc '" + p.string() + "' > unzipped.txt").exit_code, 0) << p;
        return slurp(dir() / "unzipped.txt");
    }
};

TEST_P(old_indexes, answer_as_the_qmer_that_wrote_them) {
    std::string const name = GetParam();
    auto const index = old_index(name + ".qmer");
    ASSERT_TRUE(std::filesystem::exists(index)) << index;
    auto const r =
        qmer({"query", "-q", "-o", "-", index.string(), data("lambda_reads_1.fq.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string const expected = gunzip(old_index(name + ".reads_1.tsv.gz"));
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(body(r.out), expected);
    // --quick makes the same calls.
    auto const quick = qmer({"query", "--quick", "-q", "-o", "-", index.string(),
                             data("lambda_reads_1.fq.gz").string()});
    ASSERT_EQ(quick.exit_code, 0) << quick.err;
    size_t matched = 0, quick_matched = 0;
    for (auto const& [text, count] :
         {std::pair{body(r.out), &matched}, {body(quick.out), &quick_matched}}) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) *count += line.ends_with("\t1");
    }
    EXPECT_EQ(quick_matched, matched);
}

// The kinds that grow (an external-locks index has a fixed size and refuses --append).
class old_growing_indexes : public old_indexes {};

TEST_P(old_growing_indexes, append_writes_the_current_format_and_keeps_every_hit) {
    std::string const name = GetParam();
    std::filesystem::copy_file(old_index(name + ".qmer"), dir() / "idx.qmer");
    write_file("extra.fa",
               ">extra\nACGTTGCATGCATGCAAAGGGCCCTTTAGGCTAGCTAGGATCCATGACGTAGCTAGGATTACA\n");
    auto const a = qmer({"index", "--append", "-q", "-o", "idx.qmer", "extra.fa"});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    auto const info = qmer({"info", "idx.qmer"});
    EXPECT_NE(info.out.find("format version: " + std::to_string(qmer::io::index_format_version)),
              std::string::npos)
        << info.out;
    // Appending keeps the old index's hash scheme: plain before format 4, scheme 1 (no level
    // window bits) in format 5, scheme 2 from format 6.
    if (name == "lambda_v6" || name == "lambda_v7" || name == "lambda_v8" || name == "lambda_v9") {
        EXPECT_NE(info.out.find("larger levels read more window bits"), std::string::npos)
            << info.out;
    } else if (name.find("_v5_") == std::string::npos) {
        EXPECT_NE(info.out.find("hash scheme:    plain"), std::string::npos) << info.out;
    } else {
        EXPECT_NE(info.out.find("hash scheme:    minimizer-local"), std::string::npos) << info.out;
        EXPECT_EQ(info.out.find("larger levels read more window bits"), std::string::npos)
            << info.out;
        EXPECT_NE(qmer({"info", "--json", "idx.qmer"}).out.find("\"level_window_bits\": 0"),
                  std::string::npos);
    }
    // Only an index that had a gate keeps one (an append sets its new k-mers' bits).
    EXPECT_EQ(info.out.find("minimizer gate") != std::string::npos, name == "lambda_v9")
        << info.out;
    auto const r =
        qmer({"query", "-q", "-o", "-", "idx.qmer", data("lambda_reads_1.fq.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Per read: the same k-mers, and hits never below the old index's (nothing was lost).
    std::istringstream now(body(r.out)), before(gunzip(old_index(name + ".reads_1.tsv.gz")));
    std::string a_line, b_line;
    size_t reads = 0;
    while (std::getline(before, b_line)) {
        ASSERT_TRUE(std::getline(now, a_line));
        if (b_line.starts_with("read_id")) {  // the column header
            EXPECT_EQ(a_line, b_line);
            continue;
        }
        std::istringstream as(a_line), bs(b_line);
        std::string an, bn;
        uint64_t ak, ah, bk, bh;
        as >> an >> ak >> ah;
        bs >> bn >> bk >> bh;
        ASSERT_EQ(an, bn);
        ASSERT_EQ(ak, bk) << an;
        ASSERT_GE(ah, bh) << an;
        ++reads;
    }
    EXPECT_EQ(reads, 10000u);
}

INSTANTIATE_TEST_SUITE_P(formats_1_to_8, old_indexes,
                         ::testing::Values("lambda_v1", "lambda_v2", "lambda_v2_levels",
                                           "lambda_v4_external_locks", "lambda_v5_local_levels",
                                           "lambda_v6", "lambda_v7", "lambda_v8", "lambda_v9"));
INSTANTIATE_TEST_SUITE_P(formats_1_2_5_to_8, old_growing_indexes,
                         ::testing::Values("lambda_v1", "lambda_v2", "lambda_v2_levels",
                                           "lambda_v5_local_levels", "lambda_v6", "lambda_v7",
                                           "lambda_v8", "lambda_v9"));

}  // namespace
}  // namespace qmer::test
