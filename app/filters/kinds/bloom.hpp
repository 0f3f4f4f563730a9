#pragma once
// Kind `bloom`: the lock-free Bloom filter over an atomic bit set (README, "Filters"), sized from
// (--expected, --fpr) with the optimal number of probes.

#include "app/filters/codec.hpp"
#include "core/bloom/bloom_filter.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::bloom> : bloom_codec<bloom_filter> {
    static constexpr std::string_view name = "bloom";
    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_bloom(sections, "bits");
    }
};

}  // namespace qmer::app
