#pragma once
// Kind `blocked-bloom`: the cache-blocked Bloom filter (Putze, Sanders, Singler, "Cache-, hash- and
// space-efficient Bloom filters", WEA 2007): every probe of a key in one cache-line block; sized
// as `bloom` is.

#include "app/filters/codec.hpp"
#include "core/bloom/blocked_bloom_filter.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::blocked_bloom> : bloom_codec<blocked_bloom_filter> {
    static constexpr std::string_view name = "blocked-bloom";
    static filter_description describe(std::span<io::index_section_view const> sections) {
        return describe_bloom(sections, "blocks");
    }
};

}  // namespace qmer::app
