#pragma once
// Kind `linear-probing`: the lock-free linear probing QF (Maier, Sanders, Williger, SEA 2020,
// sections 2.1 and 3.1) at a fixed size: 2^q slots for --expected elements at <= 90% fill, and the
// fewest remainder bits whose Corollary 1 bound at that fill meets --fpr.

#include <algorithm>
#include <cmath>
#include <memory>

#include "app/filters/codec.hpp"
#include "core/qf/baseline/linear_probing.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::linear_probing> : codec_base<qf::linear_probing> {
    static constexpr std::string_view name = "linear-probing";
    static constexpr bool grows = false;
    static constexpr bool appends = false;

    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        uint64_t const expected = plan.expected;
        unsigned const q =
            std::max(6u, ceil_log2(static_cast<double>(std::max<uint64_t>(expected, 1)) / 0.9));
        double const fill = static_cast<double>(expected) / std::ldexp(1.0, static_cast<int>(q));
        unsigned r = 1;
        while (r + 3 + q < 64 && filter_type::corollary1_fpr(r, fill) > plan.fpr) ++r;
        return std::make_unique<filter_type>(q, r);
    }

    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_fixed_quotient_filter(sections, filter_type::overflow_slots);
    }
};

}  // namespace qmer::app
