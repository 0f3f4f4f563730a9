#pragma once
// The filter kinds `qmer index --filter` offers: the one list of them. Each kind's codec
// (app/filters/kinds/<kind>.hpp) says everything about it; every list of kinds qmer shows or
// tests (names, --help, which kinds append, the visit, `qmer info`) is derived here from the
// codecs. Adding a kind: its file under kinds/, its line in filter_kind (app/filters/kind.hpp)
// and its #include below.
//
// The kind is chosen once per command: run_index and run_query call visit_filter_kind, which
// instantiates the whole pipeline for that filter type, so the hot loop calls the filter directly,
// never through a virtual call.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "app/filters/codec.hpp"
#include "app/filters/kinds/blocked_bloom.hpp"
#include "app/filters/kinds/bloom.hpp"
#include "app/filters/kinds/bounded_growing.hpp"
#include "app/filters/kinds/cuckoo.hpp"
#include "app/filters/kinds/expandable.hpp"
#include "app/filters/kinds/external_locks.hpp"
#include "app/filters/kinds/linear_probing.hpp"
#include "app/filters/kinds/locally_locked.hpp"
#include "core/error.hpp"
#include "core/qf/stored/levels.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

namespace detail {
template <typename Fn, size_t... I>
constexpr auto over_kinds(Fn&& fn, std::index_sequence<I...>) {
    return std::array{fn(std::integral_constant<filter_kind, static_cast<filter_kind>(I)>{})...};
}
// fn(std::integral_constant<filter_kind, K>{}) for every kind, in enum order, as an array.
template <typename Fn>
constexpr auto over_kinds(Fn&& fn) {
    return over_kinds(std::forward<Fn>(fn), std::make_index_sequence<filter_kind_count>{});
}
}  // namespace detail

inline constexpr auto filter_kind_names = detail::over_kinds(
    [](auto k) -> std::string_view { return filter_codec<decltype(k)::value>::name; });

inline constexpr auto filter_kind_appends =
    detail::over_kinds([](auto k) { return filter_codec<decltype(k)::value>::appends; });

inline std::string_view filter_kind_name(filter_kind k) {
    return filter_kind_names[static_cast<size_t>(k)];
}

// "a, b, c"; with `appending_only`, the kinds `qmer index --append` reopens.
inline std::string filter_kind_list(bool appending_only = false) {
    std::string out;
    for (size_t i = 0; i < filter_kind_count; ++i)
        if (!appending_only || filter_kind_appends[i])
            out += (out.empty() ? "" : ", ") + std::string(filter_kind_names[i]);
    return out;
}
inline std::string known_filter_names() {
    return filter_kind_list();
}

// The phrase --filter's help shows: every name, the default marked.
inline std::string filter_kind_help() {
    std::string out = "Filter: ";
    for (size_t i = 0; i < filter_kind_count; ++i) {
        out += (i ? ", " : "") + std::string(filter_kind_names[i]);
        if (static_cast<filter_kind>(i) == default_filter_kind) out += " (default)";
    }
    return out + " (see README, Filters)";
}

inline filter_kind parse_filter_kind(std::string const& name) {
    for (size_t i = 0; i < filter_kind_count; ++i)
        if (filter_kind_names[i] == name) return static_cast<filter_kind>(i);
    throw usage_error("unknown --filter '" + name + "' (known: " + known_filter_names() + ")");
}

// The smallest --fpr the kind can honour: 0 for every filter whose remainder or bit count follows
// --fpr; a kind whose FPR its fingerprints fix (cuckoo) says so with best_fpr().
inline double filter_kind_best_fpr(filter_kind k) {
    constexpr auto best = detail::over_kinds([](auto kind) {
        using codec = filter_codec<decltype(kind)::value>;
        if constexpr (requires { codec::best_fpr(); })
            return codec::best_fpr();
        else
            return 0.0;
    });
    return best[static_cast<size_t>(k)];
}

inline bool filter_kind_can_append(filter_kind k) {
    return filter_kind_appends[static_cast<size_t>(k)];
}

inline filter_kind filter_kind_of_index(io::index_file const& index) {
    for (size_t i = 0; i < filter_kind_count; ++i)
        if (filter_kind_names[i] == index.header().filter) return static_cast<filter_kind>(i);
    throw index_error("'" + index.path() + "': built with filter '" + index.header().filter +
                      "', which this qmer does not know (known: " + known_filter_names() + ")");
}

// Calls fn(std::integral_constant<filter_kind, K>{}) for the kind k and returns what it returns:
// one indirect call per command, through a table with one entry per kind.
template <typename Fn>
decltype(auto) visit_filter_kind(filter_kind k, Fn&& fn) {
    using result = decltype(fn(std::integral_constant<filter_kind, filter_kind{}>{}));
    auto const i = static_cast<size_t>(k);
    if (i >= filter_kind_count) throw usage_error("unknown filter kind");
    return [&]<size_t... I>(std::index_sequence<I...>)->result {
        using entry = result (*)(Fn&);
        constexpr entry table[] = {[](Fn& f) -> result {
            return f(std::integral_constant<filter_kind, static_cast<filter_kind>(I)>{});
        }...};
        return table[i](fn);
    }
    (std::make_index_sequence<filter_kind_count>{});
}

// read(codec) for the codec of the index's kind (filter_codec<kind>{}, whose static members it
// calls), or nothing for an index of no kind this qmer knows.
template <typename T, typename Read>
std::optional<T> read_with_codec(io::index_file const& index, Read&& read) {
    for (size_t i = 0; i < filter_kind_count; ++i)
        if (filter_kind_names[i] == index.header().filter)
            return visit_filter_kind(static_cast<filter_kind>(i), [&](auto k) -> std::optional<T> {
                return read(filter_codec<decltype(k)::value>{});
            });
    return std::nullopt;
}

// The index's levels read in place, for queries: from its kind's codec (open_in_place); empty
// for a kind that has none, or an index of a layout that cannot be read in place. Throws
// index_error naming the file when that layout is damaged.
inline std::optional<qf::rank_select_levels> rank_select_levels_of(io::index_file const& index) {
    return read_with_codec<qf::rank_select_levels>(
        index, [&](auto codec) -> std::optional<qf::rank_select_levels> {
            if constexpr (requires { codec.open_in_place(index); })
                return codec.open_in_place(index);
            else
                return std::nullopt;
        });
}

// The index's minimizer gate read in place (core/qf/stored/minimizer_gate.hpp), for queries: none
// for a kind or an index without one. Throws index_error naming the file when it is damaged.
inline std::optional<qf::minimizer_gate> minimizer_gate_of(io::index_file const& index) {
    return read_with_codec<qf::minimizer_gate>(
        index, [&](auto codec) -> std::optional<qf::minimizer_gate> {
            if constexpr (requires { codec.gate_in_place(index); })
                return codec.gate_in_place(index);
            else
                return std::nullopt;
        });
}

// A many-reference index's catalog (io/reference_catalog.hpp), read from its kind's codec: none
// for a plain index. Throws index_error naming the file when it is damaged.
inline std::optional<io::reference_catalog> reference_catalog_of(io::index_file const& index) {
    return read_with_codec<io::reference_catalog>(
        index, [&](auto codec) -> std::optional<io::reference_catalog> {
            if constexpr (requires { codec.catalog_in_place(index); })
                return codec.catalog_in_place(index);
            else
                return std::nullopt;
        });
}

// `qmer info`'s names for the index's saved parameters, from its kind's codec; empty for a kind
// this qmer does not know or parameters of a shape it does not know (`qmer info --json` still
// lists them raw).
inline filter_description describe_filter(io::index_file const& index) {
    for (size_t i = 0; i < filter_kind_count; ++i)
        if (filter_kind_names[i] == index.header().filter)
            return visit_filter_kind(static_cast<filter_kind>(i), [&](auto k) {
                return filter_codec<decltype(k)::value>::describe(index.sections());
            });
    return {};
}

}  // namespace qmer::app
