// How the command line tells a user how to use it: a subcommand given alone prints its help on
// stderr (exit 2), a missing positional is named as the synopsis names it, and no message shows
// CLI11's internal names of the positionals.
#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;
using qmer::test::cli_test;
using usage = cli_test;

std::vector<std::string> const subcommands{"index", "query", "merge", "info"};

// The internal names of the positionals (app/cli.cpp) as CLI11 shows them: in its messages, in
// the usage line and in the list of positionals. ("--output is required" names an option as the
// user types it, and "references" or "tables" in prose are words.)
void expect_no_internal_name(std::string const& text) {
    for (char const* internal : {"index_and_reads", "references is required", "tables is required",
                                 "index is required", "] references", "] tables", "] index\n",
                                 "(1x)", "\n  references ", "\n  tables ", "\n  index "})
        EXPECT_EQ(text.find(internal), std::string::npos) << internal << " in\n" << text;
}

// One line, exit 2, the given fragments in it.
void expect_usage_error(cli_result const& r, std::vector<std::string> const& fragments) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (auto const& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << f << r.err;
    expect_no_internal_name(r.err);
}

TEST_F(usage, a_subcommand_alone_prints_its_help_on_stderr) {
    for (auto const& name : subcommands) {
        auto const alone = qmer({name});
        auto const help = qmer({name, "--help"});
        EXPECT_EQ(alone.exit_code, 2) << name << ": " << alone.err;
        EXPECT_TRUE(alone.out.empty()) << name << ": " << alone.out;
        ASSERT_EQ(help.exit_code, 0) << name;
        EXPECT_EQ(alone.err, help.out) << name;
        EXPECT_TRUE(alone.err.find("Usage: qmer " + name + " [OPTIONS]") != std::string::npos)
            << alone.err;
        expect_no_internal_name(alone.err);
    }
}

TEST_F(usage, the_usage_line_is_the_synopsis) {
    auto const contains = [](std::string const& text, std::string const& part) {
        return text.find(part) != std::string::npos;
    };
    EXPECT_TRUE(contains(qmer({"index", "--help"}).out,
                         "Usage: qmer index [OPTIONS] -o INDEX REFERENCE...\n"));
    auto const query = qmer({"query", "--help"}).out;
    EXPECT_TRUE(contains(query,
                         "Usage: qmer query [OPTIONS] INDEX READS [READS2]\n"
                         "       qmer query [OPTIONS] -x [NAME=]INDEX [-x [NAME=]INDEX]... READS "
                         "[READS2]\n"))
        << query;
    EXPECT_TRUE(contains(query, "\n  [INDEX] READS [READS2] TEXT REQUIRED")) << query;
    EXPECT_TRUE(contains(qmer({"merge", "--help"}).out, "Usage: qmer merge [OPTIONS] TABLE...\n"));
    EXPECT_TRUE(contains(qmer({"info", "--help"}).out, "Usage: qmer info [OPTIONS] INDEX\n"));
}

TEST_F(usage, a_missing_positional_is_named_with_the_synopsis) {
    expect_usage_error(qmer({"index", "-o", "x.qmer"}),
                       {"missing REFERENCE", "qmer index [OPTIONS] -o INDEX REFERENCE...",
                        "run 'qmer index --help'"});
    expect_usage_error(qmer({"query", "-t", "2"}),
                       {"missing [INDEX] READS [READS2]", "qmer query [OPTIONS] INDEX READS",
                        " or qmer query [OPTIONS] -x", "run 'qmer query --help'"});
    expect_usage_error(qmer({"query", "-x", "a.qmer"}), {"missing [INDEX] READS"});
    expect_usage_error(qmer({"merge", "-o", "x.tsv"}),
                       {"missing TABLE", "qmer merge [OPTIONS] TABLE...", "'qmer merge --help'"});
    expect_usage_error(qmer({"info", "--json"}),
                       {"missing INDEX", "qmer info [OPTIONS] INDEX", "'qmer info --help'"});
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.tsv"));
}

TEST_F(usage, other_refusals_point_to_the_subcommands_help) {
    expect_usage_error(qmer({"index", "ref.fa"}), {"--output", "run 'qmer index --help'"});
    expect_usage_error(qmer({"query", "--no-such-option", "a.qmer", "r.fq"}),
                       {"--no-such-option", "run 'qmer query --help'"});
    expect_usage_error(qmer({"info", "a.qmer", "b.qmer"}), {"b.qmer", "run 'qmer info --help'"});
    expect_usage_error(qmer({}), {"run 'qmer --help'"});
}

}  // namespace
