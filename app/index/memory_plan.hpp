#pragma once
// How a `qmer index` build keeps to --max-memory (README, "Threads and memory"): what it holds
// besides its table, the least limit each route can keep to (a limit below it is refused before any
// k-mer is stored), and where the sorted builds keep their fingerprints or super-k-mers for a limit
// (in memory, in a scratch file, or the references read once per slice). Pure functions of sizes.

#include <cstddef>
#include <cstdint>
#include <string>

#include "app/index/reference_census.hpp"
#include "core/qf/fingerprint.hpp"

namespace qmer::app {

// The memory limit of a build, parsed once from --max-memory.
struct build_memory {
    uint64_t limit = ~uint64_t{0};
    bool given = true;  // --max-memory was given (else the limit is a share of the machine's)
};

// The build needs `need` bytes, more than the limit: a capacity_error saying so.
[[noreturn]] void memory_exceeded(uint64_t need, build_memory const& memory);

// A counted build whose least memory (its table, `table_bytes`, and what reading takes) is above
// the limit: refused before any k-mer is stored, with what it would need.
void require_least_memory(uint64_t least, uint64_t table_bytes, build_memory const& memory);

// A scratch file that would fill its folder's disk is refused once the references are counted,
// before their k-mers are gathered, not when the disk fills minutes later (a human-sized build
// writes gigabytes). Reading the references in slices instead would need no disk, but it
// builds with the plain hash (its crowded windows are known only at the end): not the index
// every other limit gives, and slower to query.
void require_scratch_room(std::string const& folder, uint64_t need, char const* why);

// Each thread's bin buffers in a spilled build take at most this (and at least 4 KiB per bin).
inline constexpr size_t max_spill_buffer_bytes_per_thread = size_t{32} << 20;

// What a build holds besides its table and its fingerprints: the process itself (code, thread
// pools, the sketch), the reading pipeline's batches (2 per thread, 4 MiB each) and the longest
// record, which is read whole: the parser's buffer and its copy in a batch, and part of another
// (200 Mbp in two records of 100 Mbp at -t 1, 2 and 4: 250-280 MB above the table and the
// scratch buffers; this gives 64 MiB + 2.5 x 100 MB + the batches).
inline constexpr uint64_t process_bytes = uint64_t{64} << 20;
uint64_t build_overhead_bytes(uint64_t longest_record, unsigned threads);

// What a build holds at its fullest besides its fingerprints (the buckets, or the scratch file's
// buffers and bins): the concurrent table is filled while the references are read, so it adds to
// the overhead; the level a rank_select_writer writes (`table_after_reading`) is made only once
// they have been read, with the process and the bins being sorted, the reading's batches and
// records gone (2.4 Gbp repetitive: 2.41 GiB peak for a 2.28 GiB index).
uint64_t build_held_bytes(uint64_t table_bytes, bool table_after_reading,
                          reference_census const& census, unsigned threads);

// The least --max-memory a counted build can keep to: its table (`table_bytes`: the level written
// in the rank-select layout, or the concurrent table where the bins cannot hold the
// fingerprints), the overhead, and the least a scratch-file build needs (4 KiB per bin and
// thread, and the bins being sorted), so that every limit it accepts gives the same index: the
// sorted build's, never the k-mer by k-mer inserts', which would stop level 0 at its growth fill
// and start a second level.
uint64_t least_build_memory(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                            reference_census const& census, unsigned threads);

// How the sorted build keeps its fingerprints (app/index/sorted_build.hpp).
struct sorted_build_plan {
    // 0: no sorted build (insert k-mer by k-mer, which needs no memory beyond the table).
    unsigned passes = 0;
    bool spill = false;  // one pass, the fingerprints in a scratch file (then passes == 1)
    size_t spill_buffer_bytes_per_thread = 0;
};

// Fingerprints stay in memory (one pass, no disk) while they take at most half of what the table
// and the overhead leave of the memory limit, and no more than the larger of the table's own
// size and 256 MiB, so that a build's peak stays near its index's size (the scratch file is about
// as fast: bench/scale/README.md); beyond that they go to a
// scratch file (one pass whatever the limit); where that does not fit either (fingerprints too
// long for the bins, or a limit too tight for the bins' buffers), the references are read once
// per slice that fits, and failing that k-mers are inserted one by one (no memory beyond the
// table).
sorted_build_plan plan_sorted_build(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                                    uint64_t max_memory, reference_census const& census,
                                    unsigned threads);

// How a build from super-k-mers (app/index/superkmer_bins.hpp) keeps to the memory limit: the
// records it keeps in memory (the rest go to the scratch file) and each thread's buffers. Records
// are held while the references are read and freed bin by bin as the level is written; the plan
// counts them whole beside the bins being sorted.
struct superkmer_plan {
    uint64_t least = 0;  // the least --max-memory it keeps to (records all in the file)
    uint64_t memory_budget = 0;
    size_t buffer_bytes_per_thread = 0;
    double expected_record_bytes = 0;  // on random sequence
};

// The most super-k-mer records a build keeps in memory, whatever the limit allows: what keeps its
// peak near the index's size, and at least 256 MiB. Where the level is buffered before it is
// written (output to stdout), the records may take the table's own size less what the reading
// holds beside them; where it goes straight into the index file (streamed_level), the level takes
// no memory, and the records may take 1.4x the table less the reading: fewer go through the
// scratch file (each byte there is written, read back and held twice in the page cache), and the
// peak stays under 1.5x the index.
inline constexpr double streamed_records_per_table_byte = 1.4;
uint64_t records_in_memory(uint64_t table_bytes, uint64_t longest_record, unsigned threads,
                           size_t buffer_bytes_per_thread, bool streamed_level);

superkmer_plan plan_superkmer_build(unsigned bin_bits, unsigned window_bits, uint64_t table_bytes,
                                    uint64_t max_memory, reference_census const& census, unsigned k,
                                    unsigned minimizer_length, unsigned threads,
                                    bool streamed_level);

}  // namespace qmer::app
