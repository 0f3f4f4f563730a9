// doc/qmer.1 kept in step with the command line: every subcommand `qmer --help` lists has its
// section in the man page, and each section describes exactly the long options that the
// subcommand's --help prints (an option added, renamed or removed fails here until the page
// follows). The general options (--help, --version) are described once, before the commands.
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
using option_set = std::set<std::string>;

// The long options in the name column of CLI11's help ("  -o,--output TEXT   Per-read TSV"): the
// first word of each indented line that starts with '-'.
option_set help_options(std::string const& help) {
    option_set out;
    std::istringstream in(help);
    std::string line;
    std::regex const option("^\\s+(-[^ ]+)");
    std::regex const long_name("--[a-z][a-z0-9-]*");
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, option)) continue;
        std::string const names = m[1];
        for (std::sregex_iterator it(names.begin(), names.end(), long_name), end; it != end; ++it)
            out.insert(it->str());
    }
    return out;
}

// The subcommands under "Subcommands:" in `qmer --help`.
std::set<std::string> help_subcommands(std::string const& help) {
    std::set<std::string> out;
    auto const at = help.find("\nSubcommands:\n");
    if (at == std::string::npos) return out;
    std::istringstream in(help.substr(at + 14));
    std::string line;
    while (std::getline(in, line) && !line.empty()) {
        std::istringstream words(line);
        std::string name;
        words >> name;
        out.insert(name);
    }
    return out;
}

// The man page's source, split into the general part (before .SH COMMANDS) and one part per
// ".SS \"qmer NAME ..." section.
struct man_page {
    std::string general;
    std::map<std::string, std::string> commands;
};

man_page split(std::string const& source) {
    man_page page;
    std::istringstream in(source);
    std::string line, *current = &page.general;
    std::string scratch;  // sections after the commands (.SH EXIT STATUS, ...)
    enum { before, commands, after } state = before;
    std::regex const command("^\\.SS \"qmer ([a-z]+)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (line == ".SH COMMANDS") {
            state = commands;
            current = &scratch;
        } else if (state == commands && std::regex_search(line, m, command)) {
            current = &page.commands[m[1]];
        } else if (state == commands && line.starts_with(".SH ")) {
            state = after;
            current = &scratch;
        }
        current->append(line).append("\n");
    }
    return page;
}

// The long options a part of the page describes: those on the line after each .TP (the tag),
// roff's "\-" read as '-'.
option_set man_options(std::string const& part) {
    option_set out;
    std::istringstream in(part);
    std::string line;
    std::regex const long_name("--[a-z][a-z0-9-]*");
    bool tag = false;
    while (std::getline(in, line)) {
        if (tag) {
            std::string plain = std::regex_replace(line, std::regex("\\\\-"), "-");
            for (std::sregex_iterator it(plain.begin(), plain.end(), long_name), end; it != end;
                 ++it)
                out.insert(it->str());
        }
        tag = line == ".TP";
    }
    return out;
}

TEST_F(cli_test, man_page_describes_exactly_the_options_of_each_subcommand) {
    auto const page = split(slurp(std::filesystem::path(QMER_SOURCE_DIR) / "doc/qmer.1"));
    auto const top = qmer({"--help"});
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_EQ(man_options(page.general), help_options(top.out));

    auto const subcommands = help_subcommands(top.out);
    ASSERT_EQ(subcommands, (std::set<std::string>{"index", "query", "merge", "info"})) << top.out;
    std::set<std::string> documented;
    for (auto const& [name, part] : page.commands) documented.insert(name);
    EXPECT_EQ(documented, subcommands);

    for (auto const& name : subcommands) {
        auto const help = qmer({name, "--help"});
        ASSERT_EQ(help.exit_code, 0) << help.err;
        auto options = help_options(help.out);
        options.erase("--help");  // described once, with the general options
        EXPECT_FALSE(options.empty()) << help.out;
        auto const part = page.commands.find(name);
        ASSERT_NE(part, page.commands.end()) << name;
        EXPECT_EQ(man_options(part->second), options) << "qmer " << name;
    }
}

}  // namespace

// Each example's prose and its commands are separate paragraphs: rendered, a line of prose never
// runs on into a command line (or the reverse) without a blank line between them.
TEST_F(cli_test, man_page_examples_render_as_separate_paragraphs) {
    if (shell("command -v man > /dev/null").exit_code != 0)
        GTEST_FAIL() << "man is not installed (scripts/install-deps installs man-db)";
    std::string const page = std::string(QMER_SOURCE_DIR) + "/doc/qmer.1";
    ASSERT_EQ(shell("MANWIDTH=100 man -l '" + page + "' > page.txt 2> warnings.txt").exit_code, 0);
    EXPECT_EQ(slurp(dir() / "warnings.txt"), "");
    std::string const text = slurp(dir() / "page.txt");
    auto const from = text.find("\nEXAMPLES\n");
    auto const to = text.find("\nSEE ALSO\n");
    ASSERT_NE(from, std::string::npos) << text;
    ASSERT_LT(from, to) << text;
    std::istringstream in(text.substr(from + 10, to - from - 10));
    // A command is indented further than the prose (.RS); a blank line separates paragraphs.
    enum { blank, prose, command } last = blank;
    int commands = 0;
    std::string line;
    while (std::getline(in, line)) {
        auto const indent = line.find_first_not_of(' ');
        auto const kind = indent == std::string::npos ? blank : indent > 7 ? command : prose;
        if (kind == command) ++commands;
        EXPECT_TRUE(last == blank || kind == blank || kind == last) << "runs on: " << line;
        last = kind;
    }
    EXPECT_GE(commands, 8);
}
