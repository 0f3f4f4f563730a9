#pragma once
// filter_maker specialisations (tests/core/filter/contract_suite.hpp) for the quotient filters of
// core/qf/baseline/sequential.hpp and core/qf/concurrent/locally_locked.hpp, and helpers shared by
// their tests.
//
// Geometry from (capacity, fpr): q = ceil(log2(capacity)) canonical slots, r = ceil(log2(1/fpr))
// remainder bits; the odd_* makers take a slot count that is no power of two (5/4 of the capacity,
// core/qf/fingerprint.hpp). Expected FPR (section 2): a false positive needs an equal fingerprint,
// one of M = m 2^r, so n / M for n stored fingerprints (1 - (1 - 1/M)^n exactly).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/filter/contract_suite.hpp"
#include "core/qf/baseline/sequential.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace qmer::test {

inline unsigned qf_quotient_bits(size_t capacity) {
    unsigned q = 1;
    while ((size_t{1} << q) < capacity) ++q;
    return q;
}
inline unsigned qf_remainder_bits(double fpr) {
    return std::max(1u, static_cast<unsigned>(std::ceil(std::log2(1.0 / fpr))));
}
inline double qf_expected_fpr(qf::geometry const& g, size_t n) {
    return -std::expm1(static_cast<double>(n) *
                       std::log1p(-1.0 / static_cast<double>(g.fingerprint_space())));
}
// A slot count of about 5/4 capacity, a multiple of 8 and no power of two.
inline qf::geometry qf_odd_geometry(size_t capacity, unsigned remainder_bits) {
    uint64_t m = (capacity + capacity / 4) / 8 * 8 + 8;
    if ((m & (m - 1)) == 0) m += 8;
    return qf::geometry::with_slots(m, remainder_bits);
}

template <>
struct filter_maker<qf::sequential_filter> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<qf::sequential_filter> make(size_t capacity, double fpr) {
        return std::make_unique<qf::sequential_filter>(qf_quotient_bits(capacity),
                                                       qf_remainder_bits(fpr));
    }
    static double expected_fpr(qf::sequential_filter const& f, size_t n) {
        return qf_expected_fpr(f.geometry(), n);
    }
};

// The fixed-size locally locked filter (growing off).
template <>
struct filter_maker<qf::locally_locked_filter> {
    static constexpr bool fixed_capacity = true;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<qf::locally_locked_filter> make(size_t capacity, double fpr) {
        return std::make_unique<qf::locally_locked_filter>(qf_quotient_bits(capacity),
                                                           qf_remainder_bits(fpr));
    }
    static double expected_fpr(qf::locally_locked_filter const& f, size_t n) {
        return qf_expected_fpr(f.geometry(), n);
    }
};

// The locally locked filter with bounded growing (delta_grow = 0.9) and one spare remainder bit:
// the contract suite's 95% fill makes it double once. Its FPR is that of its q + r bits.
struct growing_locally_locked : qf::locally_locked_filter {
    growing_locally_locked(unsigned q, unsigned r)
        : qf::locally_locked_filter(q, r, qf::growing_policy{true, 0.9}) {}
};
template <>
struct filter_maker<growing_locally_locked> {
    static constexpr bool fixed_capacity = false;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<growing_locally_locked> make(size_t capacity, double fpr) {
        return std::make_unique<growing_locally_locked>(qf_quotient_bits(capacity),
                                                        qf_remainder_bits(fpr) + 1);
    }
    static double expected_fpr(growing_locally_locked const& f, size_t n) {
        return qf_expected_fpr(f.geometry(), n);
    }
};

// The locally locked filter over a slot count that is no power of two, fixed-size or with bounded
// growing (each doubling keeps the fingerprint); the growing one gets a spare remainder bit.
template <bool Growing>
struct odd_locally_locked_filter : qf::locally_locked_filter {
    odd_locally_locked_filter(size_t capacity, double fpr)
        : qf::locally_locked_filter(qf_odd_geometry(capacity, qf_remainder_bits(fpr) + Growing),
                                    qf::growing_policy{Growing, 0.9}) {}
};
using odd_locally_locked = odd_locally_locked_filter<false>;
using odd_growing_locally_locked = odd_locally_locked_filter<true>;

template <bool Growing>
struct filter_maker<odd_locally_locked_filter<Growing>> {
    using filter = odd_locally_locked_filter<Growing>;
    static constexpr bool fixed_capacity = !Growing;
    static constexpr double max_fill = 0.95;
    static std::unique_ptr<filter> make(size_t capacity, double fpr) {
        return std::make_unique<filter>(capacity, fpr);
    }
    static double expected_fpr(filter const& f, size_t n) {
        return qf_expected_fpr(f.geometry(), n);
    }
};

// All stored fingerprints of a filter with for_each_fingerprint, in visiting order.
template <typename F>
std::vector<uint64_t> fingerprints_of(F const& f) {
    std::vector<uint64_t> out;
    f.for_each_fingerprint([&](uint64_t fp) { out.push_back(fp); });
    return out;
}

}  // namespace qmer::test
