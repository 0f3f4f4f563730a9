#pragma once
// The counted build of the default filter: its first level sized from the reference census and
// filled by a sorted build, minimizer-local unless --plain-hash or k is too short
// (core/kmer/sequence_hashing.hpp). Where super-k-mer bins hold the level, from them (those a
// counting read gathered, or a read of its own); else from fingerprint buckets; where neither
// fits the memory limit, k-mer by k-mer into the concurrent filter.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/filters/persistence.hpp"
#include "app/index/build_report.hpp"
#include "app/index/memory_plan.hpp"
#include "app/index/reference_census.hpp"
#include "app/index/reference_reading.hpp"
#include "app/index/superkmer_bins.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// What a counted build made: usually its one level, written straight in the rank-select layout
// the index stores (no concurrent table is ever made); the concurrent filter when the build read
// the references in several passes, inserted k-mers one by one, or filled level 0 (an estimate far
// too low).
struct counted_build {
    std::optional<written_first_level> level;
    std::unique_ptr<qf::expandable_filter> filter;
    // The index file the level was streamed into as it was made (to a regular file): its header
    // still needs the final counts (finish_header, index_writer::rewrite).
    std::unique_ptr<io::index_writer> streamed;
};

// What the counted build needs besides the references and the census.
struct counted_build_settings {
    uint64_t seed = 0;
    bool plain_hash = false;
    build_memory memory;
    std::string output;          // the index file (the level streams into it where it can)
    std::string scratch_folder;  // the sorted build's scratch files
    build_origin origin;         // for the header of a streamed index
};

// Whether the level can go straight into the index file `output` (io::index_writer's rewritten
// header): a regular file, not stdout or a device.
bool streams_level(std::string const& output);

// Builds the first level of `options` from the references; `make_filter` makes the empty
// concurrent filter of `options`, where one is needed. Records the hash scheme in `header`.
// `gathered`: the super-k-mers a counting read gathered, if any (used where they fit the table;
// else the counts start over).
counted_build build_counted(
    qf::expandable_options const& options,
    std::function<std::unique_ptr<qf::expandable_filter>()> const& make_filter,
    io::index_header& header, reference_pass const& pass, counted_build_settings const& settings,
    build_counts& counts, reference_census const& census, std::unique_ptr<superkmer_bins> gathered);

}  // namespace qmer::app
