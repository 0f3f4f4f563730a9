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
#include "core/qf/expandable.hpp"
#include "core/qf/linear_probing.hpp"
#include "core/qf/locally_locked.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

enum class filter_kind {
    expandable,
    locally_locked,
    bounded_growing,
    linear_probing,
    external_locks,
    bloom,
    blocked_bloom,
    cuckoo
};

inline constexpr std::string_view filter_kind_names[] = {
    "expandable",     "locally-locked", "bounded-growing", "linear-probing",
    "external-locks", "bloom",          "blocked-bloom",   "cuckoo"};

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

// What `qmer index` asks of a new filter.
struct filter_plan {
    uint64_t expected = 0;   // distinct k-mers expected (0: unknown; fixed filters get a count)
    double fpr = 0.001;      // false-positive bound per k-mer
    bool cascading = false;  // expandable filter: cascading inserts
    double first_level_fill = 0.95;  // expandable filter: fill of a measured first level
    // `expected` was measured (a distinct-count estimate of the references), not guessed: a
    // growing filter may then start at the size it will end at.
    bool expected_measured = false;
};

// Save, load and params shared by every codec.
template <typename F>
struct codec_base {
    using filter_type = F;
    static void save(F const& f, io::index_writer& w) { save_filter(f, w); }
    static std::unique_ptr<F> load(io::index_file const& index) { return load_filter<F>(index); }
    static std::vector<uint64_t> params(F const& f) {
        std::vector<uint64_t> out;
        for (auto const& a : filter_state<F>::arrays(f))
            out.insert(out.end(), a.params.begin(), a.params.end());
        return out;
    }
};

// The default: the fully expandable QF (Maier, Sanders, Williger, SEA 2020, section 4) over locally
// locked levels. It needs no size up front (--expected only sets the first level), keeps its FPR
// under --fpr however much is inserted (Theorem 2), and can be reopened to append references.
template <>
struct filter_codec<filter_kind::expandable> : codec_base<qf::expandable_filter> {
    static constexpr bool grows = true;
    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        qf::expandable_options o;
        o.expected_elements = plan.expected;
        o.max_false_positive_rate = plan.fpr;
        o.cascading = plan.cascading;
        o.first_level_at_final_size = plan.expected_measured;
        o.first_level_fill = plan.first_level_fill;
        // A first level fuller than the levels' delta_grow raises delta_grow to its fill, so
        // Theorem 2's bound (which takes delta_grow as the most a level holds) covers it.
        o.grow_at = std::max(o.grow_at, plan.first_level_fill);
        return std::make_unique<filter_type>(o);
    }
};

// Quotient filter geometry for n elements at fill <= fill_limit: 2^q slots; r such that the FPR
// n / 2^(q+r) = fill * 2^-r stays <= fpr (section 2 of the SEA 2020 paper).
struct qf_geometry {
    unsigned q, r;
};
inline qf_geometry plan_quotient_filter(uint64_t n, double fpr, double fill_limit) {
    unsigned const q =
        std::max(6u, ceil_log2(static_cast<double>(std::max<uint64_t>(n, 1)) / fill_limit));
    double const fill = static_cast<double>(n) / std::ldexp(1.0, static_cast<int>(q));
    unsigned const r = std::max(1u, ceil_log2(std::max(fill, 1e-9) / fpr));
    if (q + r > 64)
        throw usage_error("--fpr " + std::to_string(fpr) + " is too small for " +
                          std::to_string(n) + " k-mers: q + r exceeds 64 bits");
    return {q, r};
}

// A fixed-size QF with status bits: --expected (or the k-mer positions counted in a first pass)
// at <= 90% fill. It answers `full` rather than grow.
template <typename F>
struct fixed_qf_codec : codec_base<F> {
    static constexpr bool grows = false;
    static std::unique_ptr<F> create(filter_plan const& plan) {
        auto const g = plan_quotient_filter(plan.expected, plan.fpr, 0.9);
        return std::make_unique<F>(g.q, g.r);
    }
};

// Bloom filters sized from (n, p) with the optimal number of probes. They never fill up, but
// past n their FPR rises above --fpr.
template <typename F>
struct bloom_codec : codec_base<F> {
    static constexpr bool grows = false;
    static std::unique_ptr<F> create(filter_plan const& plan) {
        return std::make_unique<F>(std::max<uint64_t>(plan.expected, 1), plan.fpr);
    }
};

// The locally locked QF (Maier, Sanders, Williger, SEA 2020, 3.2) at a fixed size.
template <>
struct filter_codec<filter_kind::locally_locked> : fixed_qf_codec<qf::locally_locked_filter> {};

// The locally locked QF with bounded growing (the SEA 2020 paper, "Growing concurrently"): starts
// sized for
// --expected (or 2^16 slots) and doubles at 90% fill, giving one remainder bit per doubling. The
// fingerprint keeps its q + r bits, so the FPR n / 2^(q+r) grows linearly with n: it starts with 8
// spare remainder bits, which keep --fpr up to ~256x --expected, and 8 doublings.
template <>
struct filter_codec<filter_kind::bounded_growing> : codec_base<qf::locally_locked_filter> {
    static constexpr bool grows = true;
    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        auto g = plan_quotient_filter(plan.expected ? plan.expected : 1 << 16, plan.fpr, 0.9);
        // Leave remainder bits to give up: each doubling costs one.
        g.r = std::min(64u - g.q, g.r + 8);
        return std::make_unique<filter_type>(g.q, g.r, qf::growing_policy{true, 0.9});
    }
};

// Lock-free linear probing QF (fixed size): 2^q slots for `expected` elements at <= 90% fill, and
// the fewest remainder bits whose Corollary 1 bound at that fill meets --fpr.
template <>
struct filter_codec<filter_kind::linear_probing> : codec_base<qf::linear_probing> {
    static constexpr bool grows = false;
    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        uint64_t const expected = plan.expected;
        unsigned const q =
            std::max(6u, ceil_log2(static_cast<double>(std::max<uint64_t>(expected, 1)) / 0.9));
        double const fill = static_cast<double>(expected) / std::ldexp(1.0, static_cast<int>(q));
        unsigned r = 1;
        while (r + 3 + q < 64 && filter_type::corollary1_fpr(r, fill) > plan.fpr) ++r;
        return std::make_unique<filter_type>(q, r);
    }
};

// The paper's baseline: the sequential 3-bit layout behind one mutex per 4096 slots.
template <>
struct filter_codec<filter_kind::external_locks> : fixed_qf_codec<qf::externally_locked> {};

// The lock-free Bloom filter over an atomic bit set, and its cache-blocked variant.
template <>
struct filter_codec<filter_kind::bloom> : bloom_codec<bloom_filter> {};
template <>
struct filter_codec<filter_kind::blocked_bloom> : bloom_codec<blocked_bloom_filter> {};

// The lock-free cuckoo filter: 12-bit fingerprints in buckets of 4, so its FPR is fixed by the
// fingerprint width (~0.2% at 95% load, 8 / 2^12): a smaller --fpr cannot be honoured.
template <>
struct filter_codec<filter_kind::cuckoo> : codec_base<cuckoo_filter> {
    static constexpr bool grows = false;
    // The smallest --fpr it can honour: 2 buckets of 4 fingerprints of 12 bits, 8 / 4096.
    static constexpr double best_fpr() {
        return 2.0 * filter_type::slots_per_bucket /
               static_cast<double>(uint64_t{1} << filter_type::fingerprint_bits);
    }
    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        uint64_t const expected = plan.expected;
        double const fpr = plan.fpr;
        double const floor = best_fpr();
        if (fpr < floor)
            throw usage_error(
                "--filter cuckoo stores 12-bit fingerprints: its false-positive rate "
                "is about " +
                std::to_string(floor) + ", above --fpr " + std::to_string(fpr) +
                " (use --fpr 0.002 or another filter)");
        return std::make_unique<filter_type>(
            static_cast<size_t>(static_cast<double>(std::max<uint64_t>(expected, 1)) / 0.9));
    }
};

// The smallest --fpr the kind can honour: 0 for every filter whose remainder or bit count follows
// --fpr; the cuckoo filter's is fixed by its fingerprints.
inline double filter_kind_best_fpr(filter_kind k) {
    return k == filter_kind::cuckoo ? filter_codec<filter_kind::cuckoo>::best_fpr() : 0.0;
}

inline bool filter_kind_can_append(filter_kind k) {
    return k == filter_kind::expandable || k == filter_kind::bounded_growing;
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
        case filter_kind::expandable:
            return fn(std::integral_constant<filter_kind, filter_kind::expandable>{});
        case filter_kind::locally_locked:
            return fn(std::integral_constant<filter_kind, filter_kind::locally_locked>{});
        case filter_kind::bounded_growing:
            return fn(std::integral_constant<filter_kind, filter_kind::bounded_growing>{});
        case filter_kind::linear_probing:
            return fn(std::integral_constant<filter_kind, filter_kind::linear_probing>{});
        case filter_kind::external_locks:
            return fn(std::integral_constant<filter_kind, filter_kind::external_locks>{});
        case filter_kind::bloom:
            return fn(std::integral_constant<filter_kind, filter_kind::bloom>{});
        case filter_kind::blocked_bloom:
            return fn(std::integral_constant<filter_kind, filter_kind::blocked_bloom>{});
        case filter_kind::cuckoo:
            return fn(std::integral_constant<filter_kind, filter_kind::cuckoo>{});
    }
    throw usage_error("unknown filter kind");
}

}  // namespace qmer::app
