#pragma once
// The reference census of `qmer index`: what a first read of the references measures before a
// filter is sized (their distinct k-mers, k-mer positions, bases, longest record), from a
// HyperLogLog sketch of every k-mer, or, for large default builds, from a sampled count taken in
// the same read that gathers their super-k-mers into bins (count_and_gather).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "app/index/reference_reading.hpp"
#include "app/index/superkmer_bins.hpp"

namespace qmer::app {

// What the distinct-count pass measured.
struct reference_census {
    uint64_t distinct_estimate = 0;  // raised by 3 standard errors
    uint64_t kmer_positions = 0;
    uint64_t bases = 0;
    uint64_t longest_record = 0;
};

// What a counting read measured: the distinct estimate raised by 3 standard errors, so that level
// 0 holds every k-mer but about 1 time in 1000, and never above the k-mer positions read, which
// bound it (on random sequence nearly every k-mer is distinct: the margin only made the table
// larger). Sketch: a hyperloglog or a group_sampled_count.
template <typename Sketch>
reference_census census_of(Sketch const& sketch, build_counts const& counts) {
    uint64_t const positions = counts.kmers.load();
    auto const raised =
        static_cast<uint64_t>(std::ceil(sketch.estimate() * (1 + 3 * sketch.standard_error())));
    return {std::min(raised, positions) + 1, positions, counts.bases, counts.longest_record};
}

// The references' distinct k-mers, counted in a first pass (a HyperLogLog sketch of their plain
// hashes under `seed`), with their positions, bases and longest record.
reference_census count_references(reference_pass const& pass, uint64_t seed);

// The k-mer positions of the references: an upper bound of their distinct k-mers, which sizes a
// filter that cannot grow (--filter `filter`) when no --expected was given. Stdin, which cannot be
// read twice, is refused.
uint64_t count_kmer_positions(reference_set const& refs, std::string_view filter);

// Whether a default build counts and gathers in one read: minimizer-local and references this
// large (k-mer positions guessed from the files' sizes); smaller ones are counted first (a second
// read costs them little, and a table of fewer than ~2^17 slots has fewer windows than the
// gathering bins).
inline constexpr uint64_t gather_while_counting_from = uint64_t{1} << 23;
bool gathers_while_counting(reference_set const& refs, bool plain_hash);

// The bins of a read that gathers before the table is sized: as few as the table the files' sizes
// allow fits (a bin's fingerprints relative to its first in 31 bits), at least 2^10: each thread
// writes to every bin's buffer, and more of them (TLB and cache misses on each record) slow the
// reading (bench/index/README.md, "Gathering bins"). A table no larger than that guess fits them if
// its windows are no finer than the bins (from ~2^15 slots).
unsigned gathering_bin_bits(unsigned guessed_fingerprint_bits) noexcept;

// The largest relative standard error of the one read's sampled count that sizes the table
// (a margin of 3 of them); beyond it every k-mer is counted again from the bins. Random and
// repetitive references give well under half of it (bench/index/README.md, "The sampled count").
inline constexpr double most_sampled_count_error = 0.01;

// Where count_and_gather keeps what it gathers, and what it may take.
struct gathering {
    uint64_t seed = 0;
    uint64_t memory_limit = 0;
    std::string scratch_folder;
    bool streamed_level = false;  // the level will go straight into the index file
    // The first level's size in bytes for a distinct count (0: no such level).
    std::function<uint64_t(uint64_t)> table_bytes_for;
    unsigned guessed_fingerprint_bits = 64;  // of the table the files' sizes call for
};

// The one read of a large default build (KMC reads its input once): the distinct k-mers are
// counted (from those of one minimizer in eight, core/sketch/group_sampled_count.hpp) while their
// super-k-mers go into `gathered`'s bins. The table is sized only at the end, so records stay in
// memory while they take less than the first level that the count so far calls for (less what the
// reading holds, and at least 256 MiB; the count only grows), which keeps the peak near the
// index's size as a build counted first does; the rest goes to the scratch file.
reference_census count_and_gather(reference_pass const& pass, gathering const& how,
                                  build_counts& counts, std::unique_ptr<superkmer_bins>& gathered);

}  // namespace qmer::app
