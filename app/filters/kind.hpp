#pragma once
// The filter kinds, by name in code. Everything about a kind lives in its codec
// (app/filters/kinds/<kind>.hpp); app/filters/registry.hpp derives the lists.

#include <cstddef>

namespace qmer::app {

// In the order --help and the README list them; the first is the default.
enum class filter_kind {
    expandable,
    locally_locked,
    bounded_growing,
    linear_probing,
    external_locks,
    bloom,
    blocked_bloom,
    cuckoo,
};
inline constexpr size_t filter_kind_count = static_cast<size_t>(filter_kind::cuckoo) + 1;
inline constexpr filter_kind default_filter_kind = filter_kind::expandable;

template <filter_kind Kind>
struct filter_codec;

}  // namespace qmer::app
