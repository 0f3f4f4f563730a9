// app/index/reference_sheet.hpp: -r NAME=FILE values, reference sheets and the checks made on
// them together: every refusal names where the bad value was given ("-r VALUE" or "SHEET:LINE").

#include "app/index/reference_sheet.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;

std::string write(qmer::test::temp_folder const& dir, std::string const& name,
                  std::string const& text) {
    std::string const path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// The message of the error `call` throws as Error; "" (and a failure) when it throws none.
template <typename Error, typename Call>
std::string message_of(Call&& call) {
    try {
        call();
    } catch (Error const& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

// Runs in `folder` while it lives, then back where it was, however the test ends.
struct working_folder {
    explicit working_folder(std::filesystem::path const& folder) {
        std::filesystem::current_path(folder);
    }
    ~working_folder() {
        std::error_code ignored;
        std::filesystem::current_path(previous, ignored);
    }
    std::filesystem::path previous = std::filesystem::current_path();
};

std::string sheet_error(std::string const& sheet) {
    return message_of<qmer::input_error>([&] { read_reference_sheet(sheet); });
}

TEST(reference_sheet, r_values_in_order) {
    auto const refs = parse_named_references({"ecoli=genomes/e coli.fa.gz", "phix=/data/x=y.gb"});
    ASSERT_EQ(refs.size(), 2u);
    EXPECT_EQ(refs[0].name, "ecoli");
    EXPECT_EQ(refs[0].group, "");
    EXPECT_EQ(refs[0].path, "genomes/e coli.fa.gz");
    EXPECT_EQ(refs[0].origin, "-r ecoli=genomes/e coli.fa.gz");
    // Only the first '=' splits: the file's name may hold more.
    EXPECT_EQ(refs[1].name, "phix");
    EXPECT_EQ(refs[1].path, "/data/x=y.gb");
    EXPECT_TRUE(parse_named_references({}).empty());
}

TEST(reference_sheet, bad_r_values_are_refused_naming_them) {
    EXPECT_EQ(message_of<qmer::usage_error>([] {
                  parse_named_references({"a=x.fa", "x.fa"});
              }),
              "-r 'x.fa': expected NAME=FILE (a reference under a name)");
    EXPECT_EQ(message_of<qmer::usage_error>([] { parse_named_references({"a b=x.fa"}); }),
              "-r 'a b=x.fa': 'a b' cannot name a reference (letters, digits, '.', '_', '-'; not "
              "starting with '.' or '-'; not 'none', 'ambiguous' or 'multiple'; at most 200 "
              "characters)");
    EXPECT_EQ(message_of<qmer::usage_error>([] { parse_named_references({"a="}); }),
              "-r 'a=': no file after '='");
    for (char const* bad : {"=x.fa", "none=x.fa", "ambiguous=x.fa", "multiple=x.fa", ".a=x.fa",
                            "-a=x.fa", "a/b=x.fa", "a\tb=x.fa"})
        EXPECT_THROW(parse_named_references({bad}), qmer::usage_error) << bad;
}

TEST(reference_sheet, reserved_and_unsafe_names) {
    EXPECT_TRUE(valid_reference_name("GRCh38.p14_v-2"));
    EXPECT_TRUE(valid_reference_name("_x"));
    EXPECT_TRUE(valid_reference_name("Ambiguous"));  // categories are compared exactly
    EXPECT_TRUE(valid_reference_name(std::string(200, 'a')));
    EXPECT_FALSE(valid_reference_name(std::string(201, 'a')));
    for (char const* bad :
         {"", "none", "multiple", "ambiguous", ".hidden", "-x", "a:b", "a b", "a/b", "é"})
        EXPECT_FALSE(valid_reference_name(bad)) << bad;
}

TEST(reference_sheet, comments_blank_lines_crlf_groups_and_paths) {
    qmer::test::temp_folder dir;
    std::filesystem::create_directory(dir / "sheets");
    std::string const sheet = write(dir, "sheets/refs.tsv",
                                    "# name\tfile\tgroup\r\n"
                                    "\r\n"
                                    "ecoli_k12\tgenomes/k12.fa.gz\tEcoli\r\n"
                                    "\n"
                                    "ecoli_o157\t/abs/o157.gb\tEcoli\n"
                                    "phix\tphix.fa\n"
                                    "lambda\tlambda.fa\t\n"
                                    "#last\tline\n");
    auto const refs = read_reference_sheet(sheet);
    ASSERT_EQ(refs.size(), 4u);
    auto const folder = dir / "sheets";
    EXPECT_EQ(refs[0].name, "ecoli_k12");
    EXPECT_EQ(refs[0].group, "Ecoli");  // no '\r' left on the last field
    EXPECT_EQ(refs[0].path, (folder / "genomes/k12.fa.gz").string());
    EXPECT_EQ(refs[0].origin, sheet + ":3");
    EXPECT_EQ(refs[1].path, "/abs/o157.gb");
    EXPECT_EQ(refs[1].group, "Ecoli");
    EXPECT_EQ(refs[1].origin, sheet + ":5");
    EXPECT_EQ(refs[2].name, "phix");
    EXPECT_EQ(refs[2].group, "");
    EXPECT_EQ(refs[2].path, (folder / "phix.fa").string());
    EXPECT_EQ(refs[3].name, "lambda");
    EXPECT_EQ(refs[3].group, "");  // an empty group cell is no group
    EXPECT_EQ(refs[3].origin, sheet + ":7");
}

TEST(reference_sheet, a_sheet_in_the_working_folder_keeps_relative_paths) {
    qmer::test::temp_folder dir;
    write(dir, "refs.tsv", "a\tx.fa\n");
    working_folder const in(dir.path());
    auto const refs = read_reference_sheet("refs.tsv");
    ASSERT_EQ(refs.size(), 1u);
    EXPECT_EQ(refs[0].path, "x.fa");
    EXPECT_EQ(refs[0].origin, "refs.tsv:1");
}

TEST(reference_sheet, a_byte_order_mark_is_not_part_of_the_first_name) {
    qmer::test::temp_folder dir;
    auto const refs = read_reference_sheet(write(dir, "s.tsv",
                                                 "\xEF\xBB\xBF"
                                                 "a\tx.fa\n"));
    ASSERT_EQ(refs.size(), 1u);
    EXPECT_EQ(refs[0].name, "a");
}

TEST(reference_sheet, each_bad_line_is_refused_naming_sheet_and_line) {
    qmer::test::temp_folder dir;
    std::string const head = "# refs\nok\tok.fa\n";  // the bad line is line 3
    auto bad = [&](std::string const& line) {
        return sheet_error(write(dir, "s.tsv", head + line + "\nlater\tl.fa\n"));
    };
    std::string const at = (dir / "s.tsv").string() + ":3: ";
    std::string const rule =
        " (letters, digits, '.', '_', '-'; not starting with '.' or '-'; not 'none', 'ambiguous' "
        "or 'multiple'; at most 200 characters)";
    std::string const fields =
        " field(s) where 2 or 3 tab-separated fields are expected (NAME<TAB>FILE or "
        "NAME<TAB>FILE<TAB>GROUP)";
    EXPECT_EQ(bad("ecoli e.fa"), at + "1" + fields);
    EXPECT_EQ(bad("a\tb\tc\td"), at + "4" + fields);
    EXPECT_EQ(bad("a b\te.fa"), at + "'a b' cannot name a reference" + rule);
    EXPECT_EQ(bad("\te.fa"), at + "'' cannot name a reference" + rule);
    EXPECT_EQ(bad("ambiguous\te.fa"), at + "'ambiguous' cannot name a reference" + rule);
    EXPECT_EQ(bad("a\te.fa\tE. coli"), at + "'E. coli' cannot name a group" + rule);
    EXPECT_EQ(bad("a\te.fa\tnone"), at + "'none' cannot name a group" + rule);
    EXPECT_EQ(bad("a\t\tg"), at + "the file (second field) is empty");
    EXPECT_EQ(bad("a\t-"), at + "'-' (standard input) cannot be in a sheet; write ./- for a file "
                                "named '-'");
    // A CRLF line is judged without its '\r'.
    EXPECT_EQ(bad("a\t\r"), at + "the file (second field) is empty");
}

TEST(reference_sheet, an_unreadable_or_empty_sheet_is_refused) {
    qmer::test::temp_folder dir;
    std::string const missing = (dir / "missing.tsv").string();
    EXPECT_EQ(sheet_error(missing), "'" + missing + "': cannot read it");
    EXPECT_EQ(sheet_error(dir.path().string()), "'" + dir.path().string() + "': cannot read it");
    std::string const empty_message =
        "': holds no reference (one a line: NAME<TAB>FILE or NAME<TAB>FILE<TAB>GROUP)";
    std::string const empty = write(dir, "empty.tsv", "");
    EXPECT_EQ(sheet_error(empty), "'" + empty + empty_message);
    std::string const comments = write(dir, "comments.tsv", "# nothing yet\r\n\r\n\n");
    EXPECT_EQ(sheet_error(comments), "'" + comments + empty_message);
}

TEST(reference_sheet, collect_puts_the_sheet_first_then_the_r_values) {
    qmer::test::temp_folder dir;
    std::string const sheet = write(dir, "s.tsv", "a\ta.fa\tG\nb\tb.fa\tG\n");
    auto const refs = collect_references(sheet, {"c=c.fa"});
    ASSERT_EQ(refs.size(), 3u);
    EXPECT_EQ(refs[0].name, "a");
    EXPECT_EQ(refs[1].name, "b");
    EXPECT_EQ(refs[2].name, "c");
    EXPECT_EQ(refs[2].origin, "-r c=c.fa");
    EXPECT_EQ(collect_references("", {"c=c.fa"}).size(), 1u);
    EXPECT_TRUE(collect_references("", {}).empty());
}

TEST(reference_sheet, a_name_given_twice_is_refused_naming_both_origins) {
    qmer::test::temp_folder dir;
    std::string const sheet = write(dir, "s.tsv", "a\ta.fa\nphix\tphix.fa\n");
    EXPECT_EQ(message_of<qmer::usage_error>([&] { collect_references(sheet, {"phix=p.fa"}); }),
              "two references are named 'phix' (" + sheet + ":2 and -r phix=p.fa)");
    std::string const twice = write(dir, "twice.tsv", "a\ta.fa\n#\na\tb.fa\n");
    EXPECT_EQ(message_of<qmer::usage_error>([&] { collect_references(twice, {}); }),
              "two references are named 'a' (" + twice + ":1 and " + twice + ":3)");
    EXPECT_EQ(message_of<qmer::usage_error>([] {
                  collect_references("", {"a=x", "a=y"});
              }),
              "two references are named 'a' (-r a=x and -r a=y)");
}

TEST(reference_sheet, a_group_named_like_a_reference_is_refused) {
    qmer::test::temp_folder dir;
    std::string const sheet = write(dir, "s.tsv", "k12\tk12.fa\tecoli\n");
    EXPECT_EQ(message_of<qmer::usage_error>([&] { collect_references(sheet, {"ecoli=e.fa"}); }),
              "group 'ecoli' (" + sheet +
                  ":1) has the name of a reference (-r ecoli=e.fa): the "
                  "query's best column may name either, so they must differ");
    std::string const own = write(dir, "own.tsv", "x\tx.fa\tx\n");
    EXPECT_THROW(collect_references(own, {}), qmer::usage_error);
}

TEST(reference_sheet, more_than_max_references_are_refused) {
    qmer::test::temp_folder dir;
    std::string text;
    for (size_t i = 0; i < max_references; ++i)
        text.append("r").append(std::to_string(i)).append("\tf.fa\n");
    std::string const sheet = write(dir, "s.tsv", text);
    EXPECT_EQ(collect_references(sheet, {}).size(), max_references);
    EXPECT_EQ(message_of<qmer::usage_error>([&] { collect_references(sheet, {"one=more.fa"}); }),
              "65537 references, more than the 65536 one index can take");
}

}  // namespace
