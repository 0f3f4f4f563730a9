// The one list of filter kinds (app/filters/registry.hpp): every list qmer shows comes from the
// codecs, so a kind's name, --help, --append and `qmer info` cannot drift apart.

#include "app/filters/registry.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "app/index/options.hpp"

namespace {

using namespace qmer::app;

TEST(registry, names_are_distinct_and_parse_back_to_their_kinds) {
    std::set<std::string_view> const distinct(filter_kind_names.begin(), filter_kind_names.end());
    EXPECT_EQ(distinct.size(), filter_kind_count);
    for (size_t i = 0; i < filter_kind_count; ++i) {
        auto const kind = static_cast<filter_kind>(i);
        EXPECT_EQ(parse_filter_kind(std::string(filter_kind_name(kind))), kind);
    }
    EXPECT_THROW(parse_filter_kind("bloomier"), qmer::usage_error);
}

TEST(registry, visit_reaches_the_codec_of_the_kind_asked_for) {
    for (size_t i = 0; i < filter_kind_count; ++i) {
        auto const kind = static_cast<filter_kind>(i);
        std::string_view const visited =
            visit_filter_kind(kind, [](auto k) { return filter_codec<decltype(k)::value>::name; });
        EXPECT_EQ(visited, filter_kind_name(kind));
        size_t calls = 0;
        visit_filter_kind(kind, [&](auto) { ++calls; });  // a void visitor
        EXPECT_EQ(calls, 1u);
    }
    EXPECT_THROW(visit_filter_kind(static_cast<filter_kind>(filter_kind_count), [](auto) {}),
                 qmer::usage_error);
}

TEST(registry, only_growing_kinds_append) {
    for (size_t i = 0; i < filter_kind_count; ++i) {
        auto const kind = static_cast<filter_kind>(i);
        bool const grows =
            visit_filter_kind(kind, [](auto k) { return filter_codec<decltype(k)::value>::grows; });
        EXPECT_EQ(filter_kind_can_append(kind), grows) << filter_kind_name(kind);
    }
    EXPECT_EQ(filter_kind_list(true), "expandable, bounded-growing");
}

TEST(registry, help_names_every_kind_and_marks_the_default) {
    std::string const help = filter_kind_help();
    for (auto name : filter_kind_names) EXPECT_NE(help.find(name), std::string::npos) << name;
    EXPECT_NE(help.find(std::string(filter_kind_name(default_filter_kind)) + " (default)"),
              std::string::npos)
        << help;
    EXPECT_EQ(index_options{}.filter, filter_kind_name(default_filter_kind));
}

// The README's Filters section and the man page name every kind the registry offers.
TEST(registry, readme_and_man_page_name_every_kind) {
    auto read = [](std::filesystem::path const& p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    std::filesystem::path const root = QMER_SOURCE_DIR;
    std::string const readme = read(root / "README.md");
    std::string const man = read(root / "doc" / "qmer.1");
    ASSERT_FALSE(readme.empty());
    ASSERT_FALSE(man.empty());
    for (auto name : filter_kind_names) {
        std::string quoted(1, '`');  // (built stepwise: GCC 12 warns about "`" + std::string)
        quoted.append(name).push_back('`');
        EXPECT_NE(readme.find(quoted), std::string::npos) << name;
        std::string escaped;  // roff writes a hyphen as \-
        for (char c : name) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(man.find("\\fB" + escaped + "\\fR"), std::string::npos) << name;
    }
}

}  // namespace
