// The command line itself: version, help, subcommands, usage errors and exit codes.
#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
using main_cli = cli_test;

TEST_F(main_cli, version_prints_name_and_version) {
    auto const r = qmer({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, std::string("qmer ") + QMER_VERSION + "\n");
}

TEST_F(main_cli, help_lists_every_subcommand) {
    auto const r = qmer({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (char const* cmd : {"index", "query", "info"})
        EXPECT_NE(r.out.find(cmd), std::string::npos);
}

TEST_F(main_cli, subcommand_help_shows_examples) {
    auto const r = qmer({"index", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Examples:"), std::string::npos);
}

TEST_F(main_cli, no_subcommand_is_a_usage_error) {
    auto const r = qmer({});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("qmer: error:"), std::string::npos);
    EXPECT_TRUE(r.out.empty());
}

TEST_F(main_cli, unknown_option_is_a_usage_error_on_one_line) {
    auto const r = qmer({"index", "--no-such-option", "-o", "x.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(main_cli, k_out_of_range_is_refused) {
    for (char const* k : {"0", "33", "-1", "abc"}) {
        auto const r = qmer({"index", "-k", k, "-o", "x.qmer", "ref.fa"});
        EXPECT_EQ(r.exit_code, 2) << "k = " << k;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
    }
}

}  // namespace
