#pragma once
// filter_maker for both Bloom filters, shared by their contract test and their stress test.

#include <memory>

#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/filter/contract_suite.hpp"

template <>
struct qmer::test::filter_maker<qmer::bloom_filter> {
    static constexpr bool fixed_capacity = false;  // never `full`
    static constexpr double max_fill = 1.0;        // fill to the n it was sized for
    static std::unique_ptr<qmer::bloom_filter> make(size_t capacity, double fpr) {
        return std::make_unique<qmer::bloom_filter>(capacity, fpr);
    }
    static double expected_fpr(qmer::bloom_filter const& f, size_t n) { return f.fpr_after(n); }
};

template <>
struct qmer::test::filter_maker<qmer::blocked_bloom_filter> {
    static constexpr bool fixed_capacity = false;
    static constexpr double max_fill = 1.0;
    static std::unique_ptr<qmer::blocked_bloom_filter> make(size_t capacity, double fpr) {
        return std::make_unique<qmer::blocked_bloom_filter>(capacity, fpr);
    }
    static double expected_fpr(qmer::blocked_bloom_filter const& f, size_t n) {
        return f.fpr_after(n);
    }
};
