#pragma once
// The sorted build of a counted first level (qmer index). Instead of one
// concurrent insert per k-mer (locking, shifting and a run search each; its cost per k-mer is in
// the README, "Limitations"), the k-mers' fingerprints are gathered into buckets by their top bits
// while the references are read, each bucket is sorted and deduplicated in cache, and the buckets
// are handed in order to a sorted_sink, one sequential pass: usually a rank_select_writer, which
// writes the first level straight in the layout the index stores and queries. KMC and Jellyfish
// count the same way (bins, then sort); a quotient filter's layout is the sorted order itself.
//
// Memory: 4 bytes per k-mer position (the fingerprint below its bucket bits) when they fit the
// budget (fingerprint_buckets). When they do not, spilled_fingerprint_buckets writes them to an
// unnamed scratch file in bins of consecutive buckets as small per-thread buffers fill, and reads
// each bin back when its turn to be appended comes (KMC's approach: bins on disk, then sorted in
// memory): one pass over the references whatever the limit, its memory the buffers and a few bins.
// Both append the same fingerprints in the same order, so the table is the same either way.

#include <tbb/enumerable_thread_specific.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "app/common/progress.hpp"
#include "app/index/sort_and_append.hpp"
#include "core/filter/filter.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {

// The windows of the minimizer-local hash scheme that a sorted build marks as overloaded
// (core/kmer/sequence_hashing.hpp): each bucket's fingerprints arrive sorted and deduplicated, so
// a window's distinct fingerprints are counted exactly; a window with more than `threshold` of them
// is marked and its fingerprints are dropped from the append (its k-mers go in again with the
// plain hash). Only windows that lie inside one bucket are judged (a window is 2^-window_bits of
// the hash space, a bucket 2^-bucket_bits of it; windows are the finer for every table above
// ~64 k slots).
//
// The build marks every bucket first (stage mark), reads the k-mers of marked windows again
// into a second, sorted collection of their plain hashes, then appends each bucket with its
// marked fingerprints dropped (stage drop) merged with that bucket's plain ones: one sorted
// append, where inserting those k-mers one by one into the nearly full table would cost most of
// the build (each insert shifts a long cluster; bench/MEASUREMENTS.md, "Sorted build"). Stage
// mark_and_drop does both in one call (a build read in several passes, whose marks are complete
// only at the end).
struct window_marks {
    enum class stage { mark_and_drop, mark, drop };

    window_marks(qf::geometry table, unsigned bits_of_window, double most_fingerprints)
        : g(table),
          window_bits(bits_of_window),
          threshold(most_fingerprints),
          bits(((uint64_t{1} << bits_of_window) + 63) / 64, 0) {}

    qf::geometry g;  // the table the fingerprints are taken in
    unsigned window_bits;
    double threshold;
    std::vector<uint64_t> bits;  // set with atomic OR from the gathering threads
    std::atomic<uint64_t> marked{0};
    std::atomic<uint64_t> dropped{0};  // fingerprints taken out of the append
    stage now = stage::mark_and_drop;  // set between the build's phases, never during one

    // For one bucket's sorted fingerprints [lo, hi): marks its overloaded windows (stages mark
    // and mark_and_drop) and removes the fingerprints that only hashes of marked windows can
    // have (stages drop and mark_and_drop).
    void filter_bucket(std::vector<uint64_t>& fps, uint64_t lo, uint64_t hi);

    // Stage mark without sorting: for the fingerprints base + v of `values` (unsorted, repeats
    // allowed, every one in [base, base + 2^value_bits)), marks exactly the windows that
    // filter_bucket would mark given the range's buckets (`bucket_low_bits`: fingerprint bits
    // below a bucket's number) sorted and deduplicated. A window holds at most as many distinct
    // fingerprints as positions, so a histogram of the positions over cells of at most a quarter
    // window rules out nearly every window at once; only the few whose cells hold more than the
    // threshold have their fingerprints sorted and counted.
    // Declines (false, nothing marked) when the windows it would count exactly hold more than
    // `most_candidate_share` of the positions: the caller then sorts the whole range.
    bool mark_unsorted(std::span<uint32_t const> values, uint64_t base, unsigned value_bits,
                       unsigned bucket_low_bits,
                       double most_candidate_share = std::numeric_limits<double>::infinity());

    // The fingerprint of window w's last hash (all ones for the last window): a multiplication
    // per window instead of a 128-bit division per fingerprint (the window of its smallest
    // hash), a visible share of a build.
    uint64_t last_fingerprint(uint64_t window) const noexcept {
        unsigned const shift = 64 - window_bits;
        return window == (~uint64_t{0}) >> shift ? ~uint64_t{0}
                                                 : g.fingerprint(((window + 1) << shift) - 1);
    }

    // Read in stage drop only: the marks were all set in stage mark, which the build's phases
    // separate from it (a pipeline's end joins its threads), so a plain read sees them.
    bool is_marked(uint64_t window) const noexcept {
        return (bits[window / 64] >> (window % 64)) & 1;
    }
};

// Fingerprints of one pass, bucketed by their top bits. insert() is called from the reading
// pipeline's threads: each thread fills buckets of its own (no sharing, no atomics).
class fingerprint_buckets {
  public:
    // g: the geometry the fingerprints are taken in; the pass keeps buckets [first, last). Each
    // thread's buckets start with room for reserve_per_bucket fingerprints (growing a vector
    // copies it and, at its peak, holds twice its size). Every pass over g has the same buckets
    // (sorted_build.cpp: the window marks depend on them).
    fingerprint_buckets(qf::geometry g, uint32_t first, uint32_t last,
                        size_t reserve_per_bucket = 0, window_marks* marks = nullptr);

    // Whether this layout can hold g's fingerprints (the part below the bucket bits in 32 bits
    // with at most 2^20 buckets: fingerprints of up to 52 bits).
    static bool supports(qf::geometry g) noexcept;
    static uint32_t bucket_count(qf::geometry g) noexcept;

    insert_result insert(uint64_t h) {
        uint64_t const fp = g_.fingerprint(h);
        uint32_t const b = static_cast<uint32_t>(fp >> low_bits_);
        if (b >= first_ && b < last_)
            local_.local()[b - first_].push_back(static_cast<uint32_t>(fp & low_mask_));
        return insert_result::inserted;
    }
    size_t memory_bytes() const noexcept { return 0; }  // budgeted up front (see plan_passes)
    size_t size() const noexcept { return 0; }

    // Sorts and deduplicates every bucket (in parallel, each in cache) and hands them in order to
    // `sink` (a counted first level, holding only earlier passes' buckets). False if the level
    // filled up (an estimate far too low) before all of them went in: the caller must then
    // insert every k-mer again the ordinary way (inserts of what level 0 holds answer
    // already_present). Frees the buckets as it goes.
    // `progress`, if given, advances by the share of the buckets appended. With `plain`, each
    // bucket goes in merged with plain's (the crowded windows' k-mers, window_marks).
    bool append_to(sorted_sink const& sink, unsigned threads, progress_meter* progress = nullptr,
                   fingerprint_buckets* plain = nullptr);
    // Sorts and deduplicates every bucket in place (what append_to will read) and, with marks,
    // marks its windows (stage mark): the first half of a build with crowded windows.
    void sort_and_mark(unsigned threads, progress_meter* progress = nullptr);

  private:
    std::vector<uint64_t> gather(uint32_t bucket);
    bool sorted_ = false;  // every bucket is one sorted, deduplicated part (sort_and_mark)

    qf::geometry g_;
    window_marks* marks_ = nullptr;
    unsigned low_bits_ = 0;
    uint64_t low_mask_ = 0;
    uint32_t first_ = 0, last_ = 0;
    // ets_key_per_instance: local() is a native TLS lookup; the default hashes the thread id on
    // every call, a visible share of the build.
    tbb::enumerable_thread_specific<
        std::vector<std::vector<uint32_t>>,
        tbb::cache_aligned_allocator<std::vector<std::vector<uint32_t>>>, tbb::ets_key_per_instance>
        local_;
};

// fingerprint_buckets' collection, written to disk: the k-mers' fingerprints go to bins of
// consecutive buckets (at most 2^12 bins; a fingerprint's part below its bin bits in 32 bits), each
// thread's bin buffer is appended to the scratch file when it fills, and append_to() reads bin
// after bin back, sorts it and appends its buckets in order, exactly as fingerprint_buckets does.
class spilled_fingerprint_buckets {
  public:
    // g: the geometry the fingerprints are taken in (supports(g) must hold); `file` receives the
    // bins; each thread's buffers take about `buffer_bytes_per_thread`.
    spilled_fingerprint_buckets(qf::geometry g, io::spill_file& file,
                                size_t buffer_bytes_per_thread, window_marks* marks = nullptr);

    // Whether the bins can hold g's fingerprints (their part below the bin bits in 32 bits).
    static bool supports(qf::geometry g) noexcept;
    // What the collection holds in memory, at most, besides the file's pages: `threads` threads'
    // buffers and the bins being sorted, for `kmer_positions` positions.
    static uint64_t memory_bytes(qf::geometry g, uint64_t kmer_positions, unsigned threads,
                                 size_t buffer_bytes_per_thread) noexcept;
    // The least the scratch file takes for `kmer_positions` positions: 4 bytes each (more where
    // crowded windows' plain hashes, or bins crowded by repeats written back sorted, follow them).
    static constexpr uint64_t least_file_bytes(uint64_t kmer_positions) noexcept {
        return kmer_positions * sizeof(uint32_t);
    }

    insert_result insert(uint64_t h) {
        uint64_t const fp = g_.fingerprint(h);
        auto& mine = local_.local();
        uint32_t const bin = static_cast<uint32_t>(fp >> bin_shift_);
        auto& buffer = mine.buffers[bin];
        if (buffer.capacity() == 0) buffer.reserve(buffer_values_);
        buffer.push_back(static_cast<uint32_t>(fp & bin_mask_));
        if (buffer.size() == buffer_values_) flush(mine, bin);
        return insert_result::inserted;
    }
    size_t memory_bytes() const noexcept { return 0; }  // budgeted up front (see memory_bytes())
    size_t size() const noexcept { return 0; }

    // As fingerprint_buckets::append_to, for every bucket; reads the bins back from the file.
    bool append_to(sorted_sink const& sink, unsigned threads, progress_meter* progress = nullptr,
                   spilled_fingerprint_buckets* plain = nullptr);
    // Stage mark of fingerprint_buckets::sort_and_mark, mostly without its sort: each bin is
    // read back and its windows marked (window_marks::mark_unsorted); such bins stay in the file
    // as they are, and append_to sorts each once (writing every bin back sorted doubled the
    // scratch file and cost a large share of a build). A bin whose candidate windows
    // hold more than max_candidate_share of its positions (repeats) is sorted, deduplicated,
    // marked and written back as one piece: it then costs one sort, and the fill
    // reads it smaller.
    void sort_and_mark(unsigned threads, progress_meter* progress = nullptr);
    static constexpr double max_candidate_share = 0.25;

  private:
    struct segment {
        uint64_t offset;
        uint32_t values;
    };
    struct thread_bins {
        std::vector<std::vector<uint32_t>> buffers;  // per bin, until it fills
        std::vector<std::vector<segment>> written;   // per bin, what is in the file
    };
    void flush(thread_bins& mine, uint32_t bin);
    void flush_all();
    // A bin's values; `release` forgets where they were (the bin is read for the last time).
    std::vector<uint32_t> read_bin(uint32_t bin, bool release);
    std::vector<uint64_t> sorted_bin(uint32_t bin);
    std::vector<uint8_t> sorted_bins_;  // per bin: written back sorted (sort_and_mark)
    // The fingerprints of a bin's sorted values, bucket by bucket (window_marks applied).
    std::vector<uint64_t> bin_fingerprints(uint32_t bin, std::vector<uint32_t> const& values);

    qf::geometry g_;
    io::spill_file& file_;
    window_marks* marks_ = nullptr;
    unsigned bin_shift_ = 0;  // fingerprint bits below the bin number
    uint64_t bin_mask_ = 0;
    uint32_t bins_ = 0;
    unsigned low_bits_ = 0;  // fingerprint bits below the bucket number (fingerprint_buckets')
    size_t buffer_values_ = 0;
    tbb::enumerable_thread_specific<thread_bins, tbb::cache_aligned_allocator<thread_bins>,
                                    tbb::ets_key_per_instance>
        local_;
};

// Level 0 of `filter` (a counted first level, empty) refilled with what a rank_select_writer
// wrote of it: a build whose level 0 filled up (an estimate far too low) goes on inserting k-mers
// one by one into the concurrent table. Throws std::logic_error if level 0 does not take it all.
void refill_first_level(qf::expandable_filter& filter, qf::rank_select_table const& written);

// What plan_passes() counts per k-mer position: 4 bytes, +25% for uneven buckets.
inline constexpr unsigned bucket_bytes_per_position = 5;

// Passes over the references (1..64) so that one pass's buckets (4 bytes per k-mer position, with
// slack for uneven buckets) fit `budget_bytes`.
unsigned plan_passes(uint64_t kmer_positions, uint64_t budget_bytes);

}  // namespace qmer::app
