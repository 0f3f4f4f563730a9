#pragma once
// The filter kinds `qmer index --filter` offers, and for each: its type, how it is sized from
// (--expected, --fpr), and whether it grows. The kind is chosen once per command: run_index and
// run_query call visit_filter_kind, which instantiates the whole pipeline for that filter type, so
// the hot loop calls the filter directly, never through a virtual call.

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "app/filters/persistence.hpp"
#include "core/error.hpp"
#include "core/qf/linear_probing.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

enum class filter_kind { linear_probing };

inline constexpr std::string_view filter_kind_names[] = {"linear-probing"};

inline std::string_view filter_kind_name(filter_kind k) {
    return filter_kind_names[static_cast<size_t>(k)];
}

inline std::string known_filter_names() {
    std::string out;
    for (auto n : filter_kind_names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

inline filter_kind parse_filter_kind(std::string const& name) {
    for (size_t i = 0; i < std::size(filter_kind_names); ++i)
        if (filter_kind_names[i] == name) return static_cast<filter_kind>(i);
    throw usage_error("unknown --filter '" + name + "' (known: " + known_filter_names() + ")");
}

// Smallest b with 2^b >= x (x >= 1).
inline unsigned ceil_log2(double x) {
    unsigned b = 0;
    while (std::ldexp(1.0, static_cast<int>(b)) < x) ++b;
    return b;
}

template <filter_kind Kind>
struct filter_codec;

// Lock-free linear probing QF (fixed size): 2^q slots for `expected` elements at <= 90% fill, and
// the fewest remainder bits whose Corollary 1 bound at that fill meets --fpr.
template <>
struct filter_codec<filter_kind::linear_probing> {
    using filter_type = qf::linear_probing;
    static constexpr bool grows = false;
    static std::unique_ptr<filter_type> create(uint64_t expected, double fpr) {
        unsigned const q =
            std::max(6u, ceil_log2(static_cast<double>(std::max<uint64_t>(expected, 1)) / 0.9));
        double const fill = static_cast<double>(expected) / std::ldexp(1.0, static_cast<int>(q));
        unsigned r = 1;
        while (r + 3 + q < 64 && filter_type::corollary1_fpr(r, fill) > fpr) ++r;
        return std::make_unique<filter_type>(q, r);
    }
    static std::vector<uint64_t> params(filter_type const& f) {
        return {f.quotient_bits(), f.remainder_bits()};
    }
    static void save(filter_type const& f, io::index_writer& w) { save_filter(f, w); }
    static std::unique_ptr<filter_type> load(io::index_file const& index) {
        return load_filter<filter_type>(index);
    }
};

inline bool filter_kind_can_append(filter_kind k) {
    (void)k;
    return false;
}

inline filter_kind filter_kind_of_index(io::index_file const& index) {
    for (size_t i = 0; i < std::size(filter_kind_names); ++i)
        if (filter_kind_names[i] == index.header().filter) return static_cast<filter_kind>(i);
    throw index_error("'" + index.path() + "': built with filter '" + index.header().filter +
                      "', which this qmer does not know (known: " + known_filter_names() + ")");
}

// Calls fn(std::integral_constant<filter_kind, K>{}) for the kind k.
template <typename Fn>
decltype(auto) visit_filter_kind(filter_kind k, Fn&& fn) {
    switch (k) {
        case filter_kind::linear_probing:
            return fn(std::integral_constant<filter_kind, filter_kind::linear_probing>{});
    }
    throw usage_error("unknown filter kind");
}

}  // namespace qmer::app
