#pragma once
// Moving a filter between memory and the index file: the filter's arrays (core/filter/filter.hpp,
// persistent_filter) become the index file's sections and back. Geometry a filter refuses is a
// damaged index, reported as index_error naming the file.

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

template <persistent_filter F>
void save_filter(F const& filter, io::index_writer& writer) {
    for (auto const& array : filter.arrays()) writer.add_section(array.params, array.words);
}

template <persistent_filter F>
std::unique_ptr<F> load_filter(io::index_file const& index) {
    std::vector<filter_array> arrays;
    arrays.reserve(index.sections().size());
    for (auto const& s : index.sections()) arrays.push_back({s.params, s.words});
    try {
        return F::from_arrays(arrays);
    } catch (std::invalid_argument const& e) {
        throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
    }
}

}  // namespace qmer::app
