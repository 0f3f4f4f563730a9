#pragma once
// Kind `expandable`, the default: the fully expandable QF (Maier, Sanders, Williger, "Concurrent
// Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 4) over locally locked
// levels. It needs no size up front (--expected only sets the first level), keeps its FPR under
// --fpr however much is inserted (Theorem 2), and can be reopened to append references.

#include <algorithm>
#include <bit>
#include <memory>
#include <string>

#include "app/filters/codec.hpp"
#include "core/qf/expandable.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::expandable> : codec_base<qf::expandable_filter> {
    static constexpr std::string_view name = "expandable";
    static constexpr bool grows = true;
    static constexpr bool appends = true;

    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        return std::make_unique<filter_type>(options(plan));
    }

    // The filter's options for a plan (also what qmer index's sorted build plans a counted first
    // level from, before or instead of making the filter).
    static qf::expandable_options options(filter_plan const& plan) {
        qf::expandable_options o;
        o.expected_elements = plan.expected;
        o.max_false_positive_rate = plan.fpr;
        o.cascading = plan.cascading;
        o.first_level_at_final_size = plan.expected_measured;
        o.first_level_fill = plan.first_level_fill;
        // A first level fuller than the levels' delta_grow raises delta_grow to its fill, so
        // Theorem 2's bound (which takes delta_grow as the most a level holds) covers it.
        o.grow_at = std::max(o.grow_at, plan.first_level_fill);
        return o;
    }

    // The stack (tag, expected, p, delta_grow, cascading, levels, Q0, R0[, m0]), then per level
    // (q, r, total, size[, canonical[, layout tag]]).
    static filter_description describe(std::span<io::index_section_view const> sections) {
        if (sections.empty() || sections[0].params.size() < 8) return {};
        auto const& p = sections[0].params;
        filter_description d;
        d.first = {{"levels", std::to_string(p[5])},
                   {"fpr_bound", number(std::bit_cast<double>(p[2]))},
                   {"grows_at_fill", number(std::bit_cast<double>(p[3]))},
                   {"cascading", p[4] ? "true" : "false"},
                   {"first_level_remainder_bits", std::to_string(p[7])}};
        for (size_t j = 1; j < sections.size(); ++j) {
            auto const& l = sections[j].params;
            if (l.size() < 4 || l[0] >= 64) continue;
            uint64_t const canonical = l.size() >= 5 ? l[4] : uint64_t{1} << l[0];
            d.second.push_back(quotient_table(canonical, l[2], l[1], l[3]));
            d.second.back().push_back(
                {"layout", l.size() == 6 ? "\"rank-select\"" : "\"concurrent\""});
        }
        return d;
    }
};

}  // namespace qmer::app
