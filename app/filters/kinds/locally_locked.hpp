#pragma once
// Kind `locally-locked`: the concurrent QF with local locking (Maier, Sanders, Williger, SEA 2020,
// section 3.2, Algorithm 1) at a fixed size.

#include "app/filters/codec.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::locally_locked> : fixed_qf_codec<qf::locally_locked_filter> {
    static constexpr std::string_view name = "locally-locked";
    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_locally_locked(sections);
    }
};

}  // namespace qmer::app
