// The insert build's checks (app/index/insert_build.hpp) before any table is made: the least
// memory a plan takes (a kind may take less up front: the default kind's first level it did not
// count, 1/8), a plan the filter has no geometry for said as a usage error naming the kind, and a
// fixed filter that fills up stopping the reading with an error.

#include "app/index/insert_build.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "app/filters/registry.hpp"
#include "core/error.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;

TEST(insert_build, a_plan_above_the_memory_limit_is_refused_before_the_table_is_made) {
    // 100 M k-mers at --fpr 0.001: at least 10 bits each, 125 MB.
    filter_plan plan{.expected = 100'000'000, .fpr = 0.001};
    build_memory const limit{.limit = 100'000'000, .given = true};
    EXPECT_THROW(require_memory_for_plan<filter_codec<filter_kind::bloom>>(plan, limit),
                 qmer::capacity_error);
    // The default kind starts a first level it did not count at 1/8 of --expected.
    EXPECT_NO_THROW(require_memory_for_plan<filter_codec<filter_kind::expandable>>(plan, limit));
    plan.expected_measured = true;
    EXPECT_THROW(require_memory_for_plan<filter_codec<filter_kind::expandable>>(plan, limit),
                 qmer::capacity_error);
}

TEST(insert_build, a_plan_without_a_geometry_is_a_usage_error_naming_the_kind) {
    filter_plan const plan{.expected = 1000, .fpr = 0.01};
    try {
        planned("locally-locked", plan,
                []() -> int { throw std::invalid_argument("q too large"); });
        FAIL() << "no error";
    } catch (qmer::usage_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("--filter locally-locked cannot be planned for 1000 k-mers"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("q too large"), std::string::npos) << what;
    }
    EXPECT_THROW(planned("bloom", plan, []() -> int { throw std::bad_alloc(); }),
                 qmer::capacity_error);
    EXPECT_EQ(planned("bloom", plan, [] { return 7; }), 7);
}

TEST(insert_build, a_fixed_filter_that_fills_up_stops_with_an_error_naming_it) {
    qmer::test::temp_folder const dir;
    std::string const path = (dir / "a.fa").string();
    std::mt19937_64 rng(3);
    std::string seq(200000, 'A');
    for (auto& c : seq) c = "ACGT"[rng() % 4];
    std::ofstream(path) << ">a\n" << seq << "\n";
    // Planned for 1000 k-mers: a table of 2^11 slots, full long before 200 k.
    auto filter = filter_codec<filter_kind::locally_locked>::create({.expected = 1000});
    reference_set const refs{{path}, {path}, 31, false};
    progress_meter progress("test", true);
    build_counts counts;
    try {
        insert_into_filter(*filter, qmer::plain_kmer_hashing(31, 0), {refs, 1, progress}, counts,
                           {}, "locally-locked");
        FAIL() << "no error";
    } catch (qmer::capacity_error const& e) {
        EXPECT_NE(std::string(e.what()).find("the locally-locked filter is full after"),
                  std::string::npos)
            << e.what();
    }
}

TEST(insert_build, a_filter_that_outgrows_the_limit_stops_the_reading) {
    qmer::test::temp_folder const dir;
    std::string const path = (dir / "a.fa").string();
    std::ofstream(path) << ">a\n" << std::string(1000, 'A') << "C\n";
    auto filter = filter_codec<filter_kind::bloom>::create({.expected = 100000});
    reference_set const refs{{path}, {path}, 31, false};
    progress_meter progress("test", true);
    build_counts counts;
    EXPECT_THROW(insert_into_filter(*filter, qmer::plain_kmer_hashing(31, 0), {refs, 1, progress},
                                    counts, {.limit = 1000, .given = true}, "bloom"),
                 qmer::capacity_error);
}

}  // namespace
