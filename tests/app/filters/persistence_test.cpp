// Every filter kind survives the index file (app/filters/persistence.hpp through the registry's
// codecs): sized as `qmer index` sizes it, filled, saved, read back; the loaded filter holds every
// key, the same count, and answers every probe as the saved one did (false positives included).

#include "app/filters/registry.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "temp_folder.hpp"

namespace {

using namespace qmer::app;

uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// The index files of this test: one folder, removed when the test program ends.
std::filesystem::path scratch(std::string const& name) {
    static qmer::test::temp_folder const folder("qmer-persistence-test");
    return folder / name;
}

template <filter_kind Kind>
void round_trip() {
    using codec = filter_codec<Kind>;
    std::string const name(filter_kind_name(Kind));
    SCOPED_TRACE(name);
    size_t const n = 20000;
    auto filter = codec::create({.expected = n, .fpr = Kind == filter_kind::cuckoo ? 0.002 : 0.01});
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(mix(i));
    for (uint64_t k : keys) ASSERT_NE(filter->insert(k), qmer::insert_result::full);
    std::vector<bool> answers;
    for (size_t i = 0; i < 50000; ++i) answers.push_back(filter->contains(mix(n + i)));

    auto const path = scratch(name + ".qmer");
    qmer::io::index_header header;
    header.filter = name;
    header.fpr = 0.01;
    header.elements = filter->size();
    {
        qmer::io::index_writer writer(path.string(), header);
        codec::save(*filter, writer);
        writer.commit();
    }
    qmer::io::index_file const index(path.string());
    EXPECT_EQ(filter_kind_of_index(index), Kind);
    auto const loaded = codec::load(index);
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(loaded->size(), filter->size());
    for (uint64_t k : keys) ASSERT_TRUE(loaded->contains(k));
    size_t differ = 0;
    for (size_t i = 0; i < answers.size(); ++i)
        differ += loaded->contains(mix(n + i)) != answers[i];
    EXPECT_EQ(differ, 0u);
    std::filesystem::remove(path);
}

TEST(persistence, every_filter_kind_round_trips) {
    for (size_t i = 0; i < std::size(filter_kind_names); ++i)
        visit_filter_kind(static_cast<filter_kind>(i),
                          [](auto kind) { round_trip<decltype(kind)::value>(); });
}

TEST(persistence, a_refused_geometry_is_a_damaged_index) {
    auto const path = scratch("damaged.qmer");
    qmer::io::index_header header;
    header.filter = "locally-locked";
    {
        qmer::io::index_writer writer(path.string(), header);
        std::vector<uint64_t> const params{qmer::qf::max_quotient_bits + 1, 8, 0, 0, 0, 0};
        std::vector<uint64_t> const words(4);
        writer.add_section(params, words);
        writer.commit();
    }
    qmer::io::index_file const index(path.string());
    EXPECT_THROW(filter_codec<filter_kind::locally_locked>::load(index), qmer::index_error);
    std::filesystem::remove(path);
}

// A Bloom filter's saved size must match its words exactly (a blocked filter's block is 8 words;
// checking one word per block would let a crafted file allocate 8x its words before restore()
// refused).
TEST(persistence, bloom_sizes_that_do_not_match_their_words_are_damaged_indexes) {
    auto const path = scratch("bloom.qmer");
    auto write = [&](char const* filter, uint64_t first_dimension, size_t words) {
        qmer::io::index_header header;
        header.filter = filter;
        qmer::io::index_writer writer(path.string(), header);
        std::vector<uint64_t> const params{first_dimension, 3, 100, 10000000000, 0};
        writer.add_section(params, std::vector<uint64_t>(words));
        writer.commit();
    };
    write("blocked-bloom", 64, 64);  // 64 blocks need 512 words
    {
        qmer::io::index_file const index(path.string());
        EXPECT_THROW(filter_codec<filter_kind::blocked_bloom>::load(index), qmer::index_error);
    }
    write("blocked-bloom", 8, 64);  // 8 blocks, 64 words: loads
    {
        qmer::io::index_file const index(path.string());
        EXPECT_NE(filter_codec<filter_kind::blocked_bloom>::load(index), nullptr);
    }
    write("bloom", 64 * 64 + 1, 64);  // one bit past the words
    {
        qmer::io::index_file const index(path.string());
        EXPECT_THROW(filter_codec<filter_kind::bloom>::load(index), qmer::index_error);
    }
    write("bloom", 64 * 62 + 1, 64);  // needs 63 words: one word too many
    {
        qmer::io::index_file const index(path.string());
        EXPECT_THROW(filter_codec<filter_kind::bloom>::load(index), qmer::index_error);
    }
    std::filesystem::remove(path);
}

// Sizing: a fixed quotient filter gets 2^q >= n / fill slots and the fewest remainder bits r with
// fill * 2^-r <= fpr.
TEST(sizing, quotient_filter_geometry_meets_the_fpr_at_its_fill) {
    for (uint64_t n : {1ull, 1000ull, 48502ull, 1ull << 20, 5576083ull}) {
        for (double fpr : {0.01, 0.001, 1e-6}) {
            auto const g = plan_quotient_filter(n, fpr, 0.9);
            double const slots = std::ldexp(1.0, static_cast<int>(g.q));
            EXPECT_GE(g.q, 6u);
            EXPECT_GE(slots * 0.9, static_cast<double>(n)) << n;
            if (g.q > 6) {
                EXPECT_LT(slots / 2 * 0.9, static_cast<double>(n)) << n;
            }
            double const fill = static_cast<double>(n) / slots;
            EXPECT_LE(fill * std::ldexp(1.0, -static_cast<int>(g.r)), fpr) << n << " " << fpr;
            if (g.r > 1) {
                EXPECT_GT(fill * std::ldexp(1.0, -static_cast<int>(g.r - 1)), fpr)
                    << n << " " << fpr;
            }
        }
    }
    EXPECT_THROW(plan_quotient_filter(uint64_t{1} << 36, 1e-12, 0.9), qmer::usage_error);
}

TEST(sizing, the_cuckoo_filter_refuses_an_fpr_below_its_fingerprints) {
    double const best = filter_kind_best_fpr(filter_kind::cuckoo);
    EXPECT_NEAR(best, 8.0 / 4096, 1e-12);
    EXPECT_EQ(filter_kind_best_fpr(filter_kind::expandable), 0.0);
    EXPECT_THROW(filter_codec<filter_kind::cuckoo>::create({.expected = 100, .fpr = best / 2}),
                 qmer::usage_error);
}

}  // namespace
