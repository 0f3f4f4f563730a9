#pragma once
// filter_maker for the lock-free linear probing QF, shared by its contract test and its stress
// test.

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/linear_probing.hpp"

template <>
struct qmer::test::filter_maker<qmer::qf::linear_probing> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<qmer::qf::linear_probing> make(size_t capacity, double fpr) {
        unsigned q = 1;
        while ((size_t{1} << q) < capacity) ++q;
        double const compared = qmer::qf::detail::linear_probing_unsuccessful_probes(max_fill);
        int const stored = static_cast<int>(std::ceil(std::log2(compared / fpr)));
        return std::make_unique<qmer::qf::linear_probing>(
            q, static_cast<unsigned>(std::max(4, stored) - 3));
    }
    // The exact expectation for this table's clusters: at 95% fill one table's clustering strays
    // from Knuth's average by more than 20% (see linear_probing::table_fpr); Knuth's
    // formula is checked against the mean over tables in linear_probing_test.cpp.
    static double expected_fpr(qmer::qf::linear_probing const& f, size_t) { return f.table_fpr(); }
};
