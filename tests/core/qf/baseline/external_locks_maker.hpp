#pragma once
// filter_maker for the externally locked QF, shared by its contract test and its stress test.

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/external_locks.hpp"

template <>
struct qmer::test::filter_maker<qmer::qf::external_locks_filter> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<qmer::qf::external_locks_filter> make(size_t capacity, double fpr) {
        unsigned q = 1;
        while ((size_t{1} << q) < capacity) ++q;
        int const r = static_cast<int>(std::ceil(std::log2(max_fill / fpr)));
        return std::make_unique<qmer::qf::external_locks_filter>(
            q, static_cast<unsigned>(std::max(1, r)));
    }
    static double expected_fpr(qmer::qf::external_locks_filter const& f, size_t n) {
        return qmer::qf::external_locks_filter::expected_fpr(f.quotient_bits(), f.remainder_bits(),
                                                             n);
    }
};
