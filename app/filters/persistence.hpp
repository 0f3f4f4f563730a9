#pragma once
// Moving a filter between memory and the index file: the filter's arrays (core/filter/filter.hpp,
// filter_array) become the index file's sections and back. filter_state<F> adapts each filter's
// own API (arrays()/from_arrays() where a filter has them, its restore or word constructor
// otherwise). Geometry a filter refuses is a damaged index, reported as index_error naming the
// file.

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "core/qf/locally_locked.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

template <typename F>
struct filter_state {
    static std::vector<filter_array> arrays(F const& f) { return f.arrays(); }
    static std::unique_ptr<F> from_arrays(std::span<filter_array const> a) {
        return F::from_arrays(a);
    }
};

// The locally locked QF (with or without bounded growing): (q, r, total slots, size, growing,
// grow_at x 1e6) and the current table's groups.
template <>
struct filter_state<qf::locally_locked_filter> {
    static std::vector<filter_array> arrays(qf::locally_locked_filter const& f) {
        auto const g = f.geometry();
        return {{{g.quotient_bits, g.remainder_bits, f.total_slots(), f.size(),
                  f.policy().enabled ? 1u : 0u, static_cast<uint64_t>(f.policy().grow_at * 1e6)},
                 atomic_words(f.groups())}};
    }
    static std::unique_ptr<qf::locally_locked_filter> from_arrays(
        std::span<filter_array const> arrays) {
        if (arrays.size() != 1 || arrays[0].params.size() != 6)
            throw std::invalid_argument(
                "locally locked filter: expected one array of 6 parameters");
        auto const& p = arrays[0].params;
        if (p[0] > 48 || p[1] > 64)
            throw std::invalid_argument("locally locked filter: bad geometry");
        qf::growing_policy const policy{p[4] != 0, static_cast<double>(p[5]) / 1e6};
        return std::make_unique<qf::locally_locked_filter>(static_cast<unsigned>(p[0]),
                                                           static_cast<unsigned>(p[1]), p[2],
                                                           arrays[0].words, p[3], policy);
    }
};

template <typename F>
void save_filter(F const& filter, io::index_writer& writer) {
    for (auto const& array : filter_state<F>::arrays(filter))
        writer.add_section(array.params, array.words);
}

template <typename F>
std::unique_ptr<F> load_filter(io::index_file const& index) {
    std::vector<filter_array> arrays;
    arrays.reserve(index.sections().size());
    for (auto const& s : index.sections()) arrays.push_back({s.params, s.words});
    try {
        return filter_state<F>::from_arrays(arrays);
    } catch (std::invalid_argument const& e) {
        throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
    }
}

}  // namespace qmer::app
