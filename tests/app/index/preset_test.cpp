#include "app/index/preset.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace {

using qmer::app::index_options;

TEST(preset, names_its_choices_and_refuses_others_naming_the_option) {
    EXPECT_EQ(qmer::app::preset_named("short").name, "short");
    EXPECT_EQ(qmer::app::preset_named("long").k, qmer::app::long_read_k);
    try {
        qmer::app::preset_named("medium");
        ADD_FAILURE() << "no error for --preset medium";
    } catch (qmer::usage_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("--preset medium"), std::string::npos) << what;
        EXPECT_NE(what.find("short, long"), std::string::npos) << what;
    }
}

TEST(preset, long_sets_k_unless_k_was_given) {
    index_options o;
    o.preset = "long";
    qmer::app::apply_preset(o);
    EXPECT_EQ(o.k, qmer::app::long_read_k);
    index_options given;
    given.preset = "long";
    given.k = 23;
    given.k_given = true;
    qmer::app::apply_preset(given);
    EXPECT_EQ(given.k, 23u);
}

TEST(preset, short_keeps_the_defaults_and_records_nothing) {
    index_options o;
    qmer::app::apply_preset(o);
    EXPECT_EQ(o.k, index_options{}.k);
    qmer::io::index_header header;
    qmer::app::record_preset(header, o);
    EXPECT_TRUE(header.preset.empty());
    EXPECT_LT(header.preset_min_containment, 0);
}

TEST(preset, long_records_its_rule) {
    index_options o;
    o.preset = "long";
    qmer::io::index_header header;
    qmer::app::record_preset(header, o);
    EXPECT_EQ(header.preset, "long");
    EXPECT_EQ(header.preset_min_containment, qmer::app::long_read_min_containment);
}

}  // namespace
