#pragma once
// Kind `external-locks`: the baseline of Maier, Sanders, Williger (SEA 2020, section 5), the
// sequential 3-bit layout behind one mutex per 4096 slots, at a fixed size.

#include "app/filters/codec.hpp"
#include "core/qf/baseline/external_locks.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::external_locks> : fixed_qf_codec<qf::external_locks_filter> {
    static constexpr std::string_view name = "external-locks";
    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_fixed_quotient_filter(sections, qf::external_locks_filter::overflow_slots);
    }
};

}  // namespace qmer::app
