#pragma once
// The merge append of the default filter (qmer index --append onto an index in the rank-select
// layout).

#include <cstdint>
#include <optional>
#include <string>

#include "app/index/build_report.hpp"
#include "app/index/memory_plan.hpp"
#include "app/index/reference_reading.hpp"
#include "core/qf/stored/level_windows.hpp"
#include "core/qf/stored/levels.hpp"
#include "core/qf/stored/minimizer_gate.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// --append by a sorted merge (an append should not insert k-mer by k-mer, which is slow and slower
// still into a minimizer-local index, whose windows crowd clusters: bench/append/README.md): the
// references' k-mer hashes are gathered into bins by their top bits (app/index/append_bins.hpp:
// in memory where they fit beside the index, else in a scratch file in the --temp-dir folder),
// each bin sorted, made distinct and rid of the k-mers some level holds, and the levels written
// as one sequential pass each, bin after bin (rank_select::rank_select_writer): the top level
// merged with its stored fingerprints (at the smallest size it passes through that holds them, or
// its final size, filled to its room), and where it has no room for them all, one new level holding
// the rest: at the smallest size of its place that holds it, down to 2^-16 of its final size (an
// early top level, core/qf/concurrent/expandable.hpp: a few k-mers onto a host-sized index take
// a level their size, not a quarter of the first level), or past its final size sized for it
// (expandable_filter::plan_sized_level: the slots it needs at --fill, the remainder bits of the
// level's place in the stack); the levels below the top copied word for word. Taken when the index
// is the default filter in the rank-select layout without cascading inserts, the references can be
// read (files) and the index is a file (its header is rewritten once the levels' counts are known).
// Otherwise, or when a level does not fit its slots, it returns nothing and writes nothing, and the
// caller appends k-mer by k-mer.
//
// Bins in hash order are in fingerprint order for every level: a level reads a hash through its
// window map (core/qf/stored/level_windows.hpp), which keeps the hash's top B bits and permutes
// only bits below them, and a fingerprint is monotone in what it is taken of; so bins of the top
// b <= B bits (any b where the maps are the identity) need sorting only within themselves. Where
// B is small (an index whose first level has few slots) the bins are few and large, and the
// scratch file's way may not fit the memory limit: a capacity_error says so.
//
// One sized level rather than the levels the filter would push one by one (level i with 2^i
// times level 0's slots and R0 + i remainder bits): an index grown 64x that way has 7 levels, more
// bits per k-mer, and each absent k-mer is looked up in all 7 (bench/append/README.md has the
// queries' cost); with one sized level it has 2, about the bits per k-mer of a one-level index.
// Theorem 2's bound holds as for the pushed levels
// (core/qf/concurrent/expandable.hpp, "Sized levels"). Which new k-mer goes to the top and which to
// the new level does not matter to a query (it looks in every level); each level's k-mers must only
// be spread over its whole table: each goes where a mix of its hash ranks it, the lowest ranks to
// the top. The ranks are counted in a histogram of cells as the bins are sorted, and the top takes
// the cells below the last boundary its room allows (a cell's worth fewer than its room, at most):
// a rule of the ranks alone, so that the index is the same file whatever the threads, the bins,
// and whether they were in memory or in the scratch file.
//
// Hashes, not fingerprints, are gathered: the new level's fingerprint space (its slots times
// 2^(R0 + i)) is no power-of-two multiple of the top's, so one level's fingerprint cannot be had
// from the other's. The index it writes holds the same k-mers as the inserts' (up to which k-mers
// share a fingerprint with one already stored: both store a fingerprint once per level), in
// fewer levels, and loads, queries and appends alike. Returns the elements of the new index and
// the levels it added, or nothing; counts.scratch_bytes says what went through the scratch file.
struct sorted_append {
    uint64_t elements = 0;      // of the whole index
    unsigned added_levels = 0;  // pushed by the append
};

// What the merge append needs besides the index, its levels and the references.
struct merge_settings {
    double fill = 0.95;  // --fill: how full a level sized for the new k-mers ends
    build_memory memory;
    std::string scratch_folder = ".";  // --temp-dir, else the index's folder
    std::string output;                // the index, replaced by the new one
    build_origin origin;
    unsigned bin_bits = 0;  // the bins' hash bits, 0: chosen from the references' size (tests)
    // The top level's stored fingerprints per part of its merge, about (0: the default; tests
    // take a few to write many parts).
    uint64_t top_part_elements = 0;
};

// How the new hashes keep to the memory limit (pure function of sizes).
struct append_memory {
    bool in_memory = false;      // the bins fit in memory beside the index with room to spare, and
                                 // take no more than the larger of the index and 256 MiB
    uint64_t least_spilled = 0;  // the least limit the scratch file's way keeps to
    size_t buffer_values = 0;    // spilled: each thread's buffer of a bin, in hashes
};
// `positions`: the references' k-mer positions (estimated from their sizes); `index_bytes`: the
// index, mapped while the append runs; `bin_bits`: the bins' hash bits.
append_memory plan_append_memory(uint64_t positions, uint64_t index_bytes, unsigned threads,
                                 unsigned bin_bits, uint64_t limit);
// What an append holds of the index while it runs (plan_append_memory's `index_bytes`): the file,
// mapped, and a copy of its minimizer gate, which takes the new k-mers' bits (2^B x 32 bits: 256
// MiB for a host).
uint64_t append_index_bytes(io::index_file const& existing,
                            std::optional<qf::minimizer_gate> const& gate);
// The bins' hash bits for `positions` positions: `wanted` (0: from the positions), at most what
// the levels' window maps keep in order (B, or any where they are the identity).
unsigned append_bin_bits(uint64_t positions, qf::level_windows windows, unsigned wanted);

// `levels`: the index's levels read in place (filter_codec<expandable>::open_in_place), and its
// minimizer gate where it has one (gate_in_place: the new index keeps it, with the new k-mers'
// bits; core/qf/stored/minimizer_gate.hpp). The
// references must be files (read_from names scratch copies of the others). Throws
// capacity_error, before any k-mer is read, when not even the scratch file's way fits the memory
// limit, and output_error when the scratch folder has no room for it.
std::optional<sorted_append> append_by_merge(qf::rank_select_levels const& levels,
                                             std::optional<qf::minimizer_gate> const& stored_gate,
                                             io::index_file const& existing,
                                             reference_pass const& pass,
                                             merge_settings const& settings, build_counts& counts);

}  // namespace qmer::app
