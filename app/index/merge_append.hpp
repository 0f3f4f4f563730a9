#pragma once
// The merge append of the default filter (qmer index --append onto an index in the rank-select
// layout).

#include <cstdint>
#include <optional>
#include <string>

#include "app/index/build_report.hpp"
#include "app/index/reference_reading.hpp"
#include "core/qf/stored/levels.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// --append by a sorted merge (an append should not insert k-mer by k-mer, which is slow and slower
// still into a minimizer-local index, whose windows crowd clusters: bench/append/README.md): the
// hashes of the new k-mers that no level holds are gathered, sorted and made distinct, and written
// as one sequential pass per level (rank_select::rank_select_writer): the top level merged with its
// stored fingerprints (at the smallest size it passes through that holds them, or its final size,
// filled to its room), and where it has no room for them all, one new level holding the rest: at
// the smallest size an ordinary pushed level passes through that holds it, or past its final size
// sized for it (expandable_filter::plan_sized_level: the slots it needs at --fill, the remainder
// bits of the level's place in the stack); the levels below the top copied word for word. Taken
// when the index is the default filter in the rank-select layout without cascading inserts, the
// references can be read (files) and their hashes fit in memory. Otherwise, or when a level does
// not fit its slots, it returns nothing and writes nothing, and the caller appends k-mer by k-mer.
//
// One sized level rather than the levels the filter would push one by one (level i with 2^i
// times level 0's slots and R0 + i remainder bits): an index grown 64x that way has 7 levels, more
// bits per k-mer, and each absent k-mer is looked up in all 7 (bench/append/README.md has the
// queries' cost); with one sized level it has 2, about the bits per k-mer of a one-level index.
// Theorem 2's bound holds as for the pushed levels
// (core/qf/concurrent/expandable.hpp, "Sized levels"). Which new k-mer goes to the top and which to
// the new level does not matter to a query (it looks in every level); each level's k-mers must only
// be spread over its whole table: each goes where a mix of its hash ranks it, the lowest ranks to
// the top.
//
// Hashes, not fingerprints, are gathered: the new level's fingerprint space (its slots times
// 2^(R0 + i)) is no power-of-two multiple of the top's, so one level's fingerprint cannot be had
// from the other's. The index it writes holds the same k-mers as the inserts' (up to which k-mers
// share a fingerprint with one already stored: both store a fingerprint once per level), in
// fewer levels, and loads, queries and appends alike. Returns the elements of the new index and
// the levels it added, or nothing.
struct sorted_append {
    uint64_t elements = 0;      // of the whole index
    unsigned added_levels = 0;  // pushed by the append
};

// What the merge append needs besides the index, its levels and the references.
struct merge_settings {
    double fill = 0.95;         // --fill: how full a level sized for the new k-mers ends
    uint64_t memory_limit = 0;  // the gathered hashes and the index take at most half
    std::string output;         // the index, replaced by the new one
    build_origin origin;
};

// `levels`: the index's levels read in place (filter_codec<expandable>::open_in_place). The
// references must be files (read_from names scratch copies of the others).
std::optional<sorted_append> append_by_merge(qf::rank_select_levels const& levels,
                                             io::index_file const& existing,
                                             reference_pass const& pass,
                                             merge_settings const& settings, build_counts& counts);

}  // namespace qmer::app
