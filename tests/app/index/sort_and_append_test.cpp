// radix_sort (app/index/sort_and_append.hpp) sorts as std::sort does at every width the builds use
// (one to three digits), with repeats, one value, and values that share their digits.

#include "app/index/sort_and_append.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

TEST(radix_sort, sorts_as_std_sort_at_every_width) {
    std::mt19937_64 rng(20261126);
    for (unsigned bits = 0; bits <= 32; ++bits) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{1000}, size_t{200000}}) {
            std::vector<uint32_t> a(n);
            uint64_t const limit = uint64_t{1} << bits;
            for (auto& v : a) v = static_cast<uint32_t>(rng() % limit);
            for (size_t i = 0; i < n; i += 5) a[i] = a[i / 2];  // repeats
            std::vector<uint32_t> expected = a;
            std::sort(expected.begin(), expected.end());
            std::vector<uint32_t> scratch;
            qmer::app::radix_sort(a, scratch, bits);
            ASSERT_EQ(a, expected) << "bits " << bits << " n " << n;
        }
    }
}

TEST(radix_sort, values_that_share_digits_keep_their_order) {
    std::vector<uint32_t> a(5000, (1u << 30) | 12345u);
    for (size_t i = 0; i < a.size(); i += 7) a[i] = (1u << 30) | 99u;
    std::vector<uint32_t> expected = a;
    std::sort(expected.begin(), expected.end());
    std::vector<uint32_t> scratch;
    qmer::app::radix_sort(a, scratch, 31);
    EXPECT_EQ(a, expected);
}

}  // namespace
