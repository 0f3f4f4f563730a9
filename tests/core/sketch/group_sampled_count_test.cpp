#include "core/sketch/group_sampled_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <thread>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/kmer/minimizer.hpp"

namespace {

using qmer::sketch::group_sampled_count;

// Items of groups (a group's hash: minimizer_spread(g), which sizes that depend on g do not
// follow): group g has size_of(g) distinct items; each is added `copies` times, as the
// build adds a k-mer (by its hash) under its minimizer's spread. Returns the exact distinct count.
uint64_t add_groups(group_sampled_count& count, uint64_t groups,
                    std::function<uint64_t(uint64_t)> const& size_of, unsigned copies = 1) {
    qmer::kmer_hasher const hasher{777};
    uint64_t distinct = 0;
    for (uint64_t g = 0; g < groups; ++g) {
        uint64_t const n = size_of(g);
        distinct += n;
        unsigned const stratum = group_sampled_count::stratum_of(qmer::minimizer_spread(g));
        if (stratum == group_sampled_count::not_sampled) continue;
        for (unsigned c = 0; c < copies; ++c)
            for (uint64_t i = 0; i < n; ++i) count.add(stratum, hasher((g << 24) | i));
    }
    return distinct;
}

// Nothing sampled: the estimate is 0 and its error unknown (a caller must not trust it).
TEST(group_sampled_count, empty_estimates_zero_with_an_unknown_error) {
    group_sampled_count const count;
    EXPECT_EQ(count.estimate(), 0.0);
    EXPECT_EQ(count.standard_error(), std::numeric_limits<double>::infinity());
}

TEST(group_sampled_count, samples_one_group_in_eight_over_every_stratum) {
    std::vector<unsigned> per_stratum(group_sampled_count::strata, 0);
    unsigned sampled = 0;
    constexpr unsigned groups = 1 << 20;
    for (uint64_t g = 0; g < groups; ++g) {
        unsigned const s = group_sampled_count::stratum_of(qmer::minimizer_spread(g));
        if (s == group_sampled_count::not_sampled) continue;
        ASSERT_LT(s, group_sampled_count::strata);
        ++sampled;
        ++per_stratum[s];
    }
    EXPECT_NEAR(sampled, groups / 8.0, 0.01 * groups / 8);
    for (unsigned n : per_stratum) EXPECT_NEAR(n, sampled / 32.0, 0.05 * sampled / 32);
}

// Many small groups (random sequence: ~6.5 k-mers a minimizer): the sample's error is the
// sketches' own, about 0.4%, and the estimate is within 4 of it.
TEST(group_sampled_count, many_small_groups_estimate_within_four_standard_errors) {
    group_sampled_count count;
    uint64_t const distinct = add_groups(count, 400'000, [](uint64_t g) { return 1 + g % 12; });
    double const se = count.standard_error();
    EXPECT_LT(se, 0.007);
    EXPECT_GT(se, 0.003);
    EXPECT_NEAR(count.estimate(), static_cast<double>(distinct),
                4 * se * static_cast<double>(distinct));
}

// A few huge groups (the copies of a few repeat units under their minimizers) hold most items: the
// sample holds two or three of them or none, and the error it reports says so (tens of percent),
// which a build's margin then covers. A standard error from the sketches alone (0.4%) would put
// the exact count far outside 4 of them.
TEST(group_sampled_count, lumpy_groups_report_their_sampling_error) {
    group_sampled_count count;
    uint64_t const distinct =
        add_groups(count, 50'020, [](uint64_t g) -> uint64_t { return g < 20 ? 100'000 : 6; });
    double const se = count.standard_error();
    EXPECT_GT(se, 0.1);
    EXPECT_NEAR(count.estimate(), static_cast<double>(distinct),
                4 * se * static_cast<double>(distinct));
}

TEST(group_sampled_count, repeated_items_do_not_change_the_estimate) {
    group_sampled_count once, thrice;
    auto const size_of = [](uint64_t g) { return 1 + g % 9; };
    add_groups(once, 100'000, size_of, 1);
    add_groups(thrice, 100'000, size_of, 3);
    EXPECT_EQ(once.estimate(), thrice.estimate());
    EXPECT_EQ(once.standard_error(), thrice.standard_error());
}

// More threads than cores, each adding an interleaved part: the same registers, hence the same
// estimate, as one thread adding everything.
TEST(group_sampled_count, concurrent_adds_equal_sequential_adds) {
    constexpr uint64_t groups = 200'000;
    auto const size_of = [](uint64_t g) { return 1 + g % 11; };
    group_sampled_count sequential, concurrent;
    add_groups(sequential, groups, size_of);
    qmer::kmer_hasher const hasher{777};
    std::vector<std::thread> threads;
    constexpr unsigned workers = 16;
    for (unsigned t = 0; t < workers; ++t)
        threads.emplace_back([&, t] {
            for (uint64_t g = t; g < groups; g += workers) {
                unsigned const s = group_sampled_count::stratum_of(qmer::minimizer_spread(g));
                if (s == group_sampled_count::not_sampled) continue;
                for (uint64_t i = 0; i < size_of(g); ++i) concurrent.add(s, hasher((g << 24) | i));
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(sequential.estimate(), concurrent.estimate());
}

}  // namespace
