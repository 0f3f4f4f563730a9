// Every JSON qmer writes parses, whatever bytes the file names hold (JSON text is UTF-8: a
// Latin-1 or cut name is replaced by U+FFFD, app/query/report.cpp json_string).
#include <filesystem>
#include <string>

#include "cli/cli_fixture.hpp"

namespace {

class json_names : public qmer::test::cli_test {
  protected:
    // Parses `file` with Python's strict UTF-8 reading and its JSON parser; returns the value of
    // the Python expression `expr` over it (`j`), printed.
    std::string parsed(std::string const& file, std::string const& expr) {
        auto const r = shell(
            "python3 -c 'import json, sys; j = json.load(open(sys.argv[1], "
            "encoding=\"utf-8\", errors=\"strict\")); print(" +
            expr + ")' '" + file + "' > parsed.txt 2> parse_error.txt");
        EXPECT_EQ(r.exit_code, 0) << file << ": " << slurp(dir() / "parse_error.txt");
        return slurp(dir() / "parsed.txt");
    }
};

TEST_F(json_names, summaries_and_info_parse_with_names_that_are_not_utf8) {
    std::string const reads = "bad\xff.fq.gz";
    std::string const index = "idx\xe9.qmer";
    std::filesystem::copy_file(data("lambda_reads_1.fq.gz"), dir() / reads);
    auto r = qmer({"index", "-q", "-o", index, data("lambda_virus.fa.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = qmer({"query", "-q", "-o", "t.tsv", "--summary", "s.json", index, reads});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parsed("s.json", "j[\"inputs\"][0]"), "bad\xef\xbf\xbd.fq.gz\n");
    r = qmer({"info", "--json", index});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    write_file("info.json", r.out);
    EXPECT_EQ(parsed("info.json", "j[\"path\"]"), "idx\xef\xbf\xbd.qmer\n");
    r = qmer({"query", "-q", "-o", "p.tsv", "--summary", "p.json", "-x", "A=" + index, reads});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    parsed("p.json", "len(j)");
    r = qmer({"merge", "-o", "m.tsv", "--summary", "m.json", "p.tsv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    parsed("m.json", "len(j)");
}

}  // namespace
