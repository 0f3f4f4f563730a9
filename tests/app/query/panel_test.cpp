// app/query/panel.hpp: index names, -x values and categories.
#include "app/query/panel.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace {

using namespace qmer::app;

TEST(panel, index_spec_name_defaults_to_the_file_name_without_qmer) {
    EXPECT_EQ(parse_index_spec("idx/human.qmer").name, "human");
    EXPECT_EQ(parse_index_spec("idx/human.qmer").path, "idx/human.qmer");
    EXPECT_EQ(parse_index_spec("phix").name, "phix");
    EXPECT_EQ(parse_index_spec("a.b.qmer").name, "a.b");
    auto const named = parse_index_spec("host=idx/GRCh38 v2.qmer");
    EXPECT_EQ(named.name, "host");
    EXPECT_EQ(named.path, "idx/GRCh38 v2.qmer");
    // Only the first '=' splits: a file name holding one takes a NAME= in front.
    auto const path_with_eq = parse_index_spec("n=./x=y.qmer");
    EXPECT_EQ(path_with_eq.name, "n");
    EXPECT_EQ(path_with_eq.path, "./x=y.qmer");
}

TEST(panel, names_that_would_break_columns_or_files_are_refused) {
    for (char const* bad : {"none=a.qmer", "multiple=a.qmer", "dir/x y.qmer", "dir/.qmer",
                            "-x=a.qmer", "a=", "dir/x=y.qmer", "", "dir/a\tb.qmer"})
        EXPECT_THROW(parse_index_spec(bad), qmer::usage_error) << bad;
    EXPECT_TRUE(valid_index_name("GRCh38.p14_v-2"));
    EXPECT_FALSE(valid_index_name("none"));
    EXPECT_FALSE(valid_index_name(".hidden"));
    EXPECT_FALSE(valid_index_name("a:b"));
}

TEST(panel, two_indexes_under_one_name_are_refused) {
    EXPECT_NO_THROW(parse_panel({"a/x.qmer", "y=a/x.qmer"}));
    try {
        parse_panel({"a/x.qmer", "b/x.qmer"});
        FAIL() << "no error";
    } catch (qmer::usage_error const& e) {
        EXPECT_STREQ(e.what(),
                     "two indexes are named 'x' (-x 'a/x.qmer' and -x 'b/x.qmer'): name them "
                     "with -x NAME=FILE");
    }
}

TEST(panel, categories) {
    std::vector<index_spec> const panel{{"A", "a"}, {"B", "b"}};
    EXPECT_EQ(category_of(0, 0, 2), 3u);
    EXPECT_EQ(category_of(1, 1, 2), 1u);
    EXPECT_EQ(category_of(2, 1, 2), 2u);
    EXPECT_EQ(category_name(0, panel), "A");
    EXPECT_EQ(category_name(2, panel), "multiple");
    EXPECT_EQ(category_name(3, panel), "none");
}

}  // namespace
