// --max-memory sizes (app/common/memory_limit.hpp): units are powers of 1024, case and a B/iB
// suffix do not matter, and anything that is not a positive finite size is a usage error.

#include "app/common/memory_limit.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace {

using qmer::app::memory_limit;
using qmer::app::parse_memory_size;

TEST(memory_size, bytes_and_binary_units) {
    EXPECT_EQ(parse_memory_size("4096"), 4096u);
    EXPECT_EQ(parse_memory_size("1K"), 1024u);
    EXPECT_EQ(parse_memory_size("500M"), 500u << 20);
    EXPECT_EQ(parse_memory_size("16G"), uint64_t{16} << 30);
    EXPECT_EQ(parse_memory_size("1.5T"), uint64_t{3} << 39);
    EXPECT_EQ(parse_memory_size("0.5K"), 512u);
}

TEST(memory_size, case_and_suffixes_do_not_matter) {
    for (char const* text : {"2g", "2G", "2GB", "2gb", "2GiB", "2gib"})
        EXPECT_EQ(parse_memory_size(text), uint64_t{2} << 30) << text;
}

TEST(memory_size, what_is_not_a_size_is_a_usage_error) {
    for (char const* text : {"", "G", "0", "0G", "-1G", "12X", "abc", "1e400", "1GG", "16 G"})
        EXPECT_THROW(parse_memory_size(text), qmer::usage_error) << "'" << text << "'";
}

TEST(memory_size, the_message_names_the_option_and_the_text) {
    try {
        parse_memory_size("lots");
        FAIL() << "no error";
    } catch (qmer::usage_error const& e) {
        EXPECT_EQ(std::string(e.what()), "--max-memory 'lots' is not a size (examples: 16G, 500M)");
    }
}

TEST(memory_limit, a_given_size_is_the_limit_and_the_default_a_share_of_the_machine) {
    EXPECT_EQ(memory_limit("3G"), uint64_t{3} << 30);
    uint64_t const available = qmer::app::available_memory_bytes();
    ASSERT_GT(available, 0u);
    uint64_t const limit = memory_limit("");
    EXPECT_LE(limit, available);
    EXPECT_NEAR(static_cast<double>(limit),
                static_cast<double>(available) * qmer::app::default_memory_share,
                static_cast<double>(available) * 1e-9 + 1);
}

}  // namespace

namespace {

// What the machine can still give is some of what it has, and what a limit allows at all.
TEST(memory_room, free_memory_is_within_the_memory_available) {
    uint64_t const total = qmer::app::available_memory_bytes();
    uint64_t const free = qmer::app::free_memory_bytes();
    EXPECT_GT(free, 0u);
    EXPECT_LE(free, total);
    // The default build limit is a share of what is available, whatever is free now.
    EXPECT_EQ(memory_limit(""),
              static_cast<uint64_t>(static_cast<double>(total) * qmer::app::default_memory_share));
}

}  // namespace
