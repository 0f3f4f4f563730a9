#pragma once
// What every filter kind's codec (app/filters/kinds/) is built from: the plan `qmer index` sizes a
// new filter by, save/load through the index file (app/filters/persistence.hpp), and the sizing
// rules two or more kinds share.
//
// A codec, filter_codec<K>, is the one home of kind K: its CLI name and help phrase, its filter
// type, whether it grows and whether `qmer index --append` reopens it, how it is sized, and how
// `qmer info` names its saved parameters. `qmer index` builds, reopens and appends every kind
// through its codec: a kind with a build of its own has `build` and `append`, others are built and
// appended by inserts (app/index/insert_build.hpp) into the filter `create` makes or `open`
// reopens; a kind whose index a query reads in place has `open_in_place`. app/filters/registry.hpp
// derives every list of kinds from the codecs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "app/filters/description.hpp"
#include "app/filters/kind.hpp"
#include "app/filters/persistence.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

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

// The filter parameters an index header records: every array's, in order.
inline std::vector<uint64_t> header_params(std::span<filter_array const> arrays) {
    std::vector<uint64_t> out;
    for (auto const& a : arrays) out.insert(out.end(), a.params.begin(), a.params.end());
    return out;
}

// Save, load and params shared by every codec.
template <typename F>
struct codec_base {
    using filter_type = F;
    static void save(F const& f, io::index_writer& w) { save_filter(f, w); }
    static std::unique_ptr<F> load(io::index_file const& index) { return load_filter<F>(index); }
    // Reopened to append to (`qmer index --append`), for the kinds that append.
    static std::unique_ptr<F> open(io::index_file const& index) { return load_filter<F>(index); }
    static std::vector<uint64_t> params(F const& f) {
        return header_params(filter_sections<F>::arrays(f));
    }
};

// Smallest b with 2^b >= x (x >= 1).
inline unsigned ceil_log2(double x) {
    unsigned b = 0;
    while (std::ldexp(1.0, static_cast<int>(b)) < x) ++b;
    return b;
}

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
    static constexpr bool appends = false;
    static std::unique_ptr<F> create(filter_plan const& plan) {
        auto const g = plan_quotient_filter(plan.expected, plan.fpr, 0.9);
        return std::make_unique<F>(g.q, g.r);
    }
};

// A fixed-size QF saved as one array (q, r, size): its 2^q canonical slots and the `overflow`
// slots after them.
inline filter_description describe_fixed_quotient_filter(
    std::span<io::index_section_view const> sections, uint64_t overflow) {
    if (sections.size() != 1 || sections[0].params.size() != 3 || sections[0].params[0] >= 64)
        return {};
    auto const& p = sections[0].params;  // q, r, size
    return {{},
            {quotient_table(uint64_t{1} << p[0], (uint64_t{1} << p[0]) + overflow, p[1], p[2])}};
}

// The locally locked QF, growing or not: one array (q, r, total, size, growing, grow_at x 1e6).
inline filter_description describe_locally_locked(
    std::span<io::index_section_view const> sections) {
    if (sections.size() != 1 || sections[0].params.size() != 6 || sections[0].params[0] >= 64)
        return {};
    auto const& p = sections[0].params;
    filter_description d{{{"grows", p[4] ? "true" : "false"}},
                         {quotient_table(uint64_t{1} << p[0], p[2], p[1], p[3])}};
    if (p[4]) d.first.push_back({"grows_at_fill", number(static_cast<double>(p[5]) / 1e6)});
    return d;
}

// Bloom filters sized from (n, p) with the optimal number of probes. They never fill up, but
// past n their FPR rises above --fpr.
template <typename F>
struct bloom_codec : codec_base<F> {
    static constexpr bool grows = false;
    static constexpr bool appends = false;
    static std::unique_ptr<F> create(filter_plan const& plan) {
        return std::make_unique<F>(std::max<uint64_t>(plan.expected, 1), plan.fpr);
    }
    // One array (bits or blocks, probes, expected, fpr x 1e12, size).
    static filter_description describe_bloom(std::span<io::index_section_view const> sections,
                                             char const* first_dimension) {
        if (sections.size() != 1 || sections[0].params.size() != 5) return {};
        auto const& p = sections[0].params;
        return {{{first_dimension, std::to_string(p[0])},
                 {"probes", std::to_string(p[1])},
                 {"planned_kmers", std::to_string(p[2])},
                 {"planned_fpr", number(static_cast<double>(p[3]) / 1e12)},
                 {"kmers", std::to_string(p[4])}},
                {}};
    }
};

}  // namespace qmer::app
