#pragma once
// Kind `bounded-growing`: the locally locked QF with bounded growing (Maier, Sanders, Williger,
// SEA 2020, "Growing concurrently", end of section 3.2): starts sized for --expected (or 2^16
// slots) and doubles at 90% fill, giving one remainder bit per doubling. The fingerprint keeps its
// q + r bits, so the FPR n / 2^(q+r) grows linearly with n: it starts with 8 spare remainder bits,
// which keep --fpr up to ~256x --expected, and 8 doublings.

#include <algorithm>
#include <memory>

#include "app/filters/codec.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::bounded_growing> : codec_base<qf::locally_locked_filter> {
    static constexpr std::string_view name = "bounded-growing";
    static constexpr bool grows = true;
    static constexpr bool appends = true;

    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        auto g = plan_quotient_filter(plan.expected ? plan.expected : 1 << 16, plan.fpr, 0.9);
        // Leave remainder bits to give up: each doubling costs one.
        g.r = std::min(64u - g.q, g.r + 8);
        return std::make_unique<filter_type>(g.q, g.r, qf::growing_policy{true, 0.9});
    }

    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_locally_locked(sections);
    }
};

}  // namespace qmer::app
