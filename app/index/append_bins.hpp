#pragma once
// The new k-mers' hashes of a merge append (app/index/merge_append.hpp), in bins by their top
// bits: held in memory, or written to a scratch file as small per-thread buffers fill (as the
// spilled build does with fingerprints, app/index/sorted_build.hpp), so that an append of a host's
// references keeps to --max-memory. Each bin is sorted and made distinct once, then read back as
// often as the levels' writing needs. Bins hold consecutive ranges of the hash space, so bin after
// bin, each sorted, is every hash in order.

#include <tbb/cache_aligned_allocator.h>
#include <tbb/enumerable_thread_specific.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "io/spill_file.hpp"

namespace qmer::app {

class append_bins {
  public:
    // Each thread's buffer of a bin, when spilled, holds at least this many hashes (4 KiB: one
    // write each).
    static constexpr size_t min_buffer_values = 512;

    // bin_bits: the hash's top bits that choose its bin (0..16); file: the scratch file, or null
    // for bins in memory; buffer_values: each thread's buffer of a bin when spilled.
    append_bins(unsigned bin_bits, io::spill_file* file, size_t buffer_values);

    struct segment {
        uint64_t offset;
        uint64_t values;
    };
    // A reading thread's bins.
    struct thread_bins {
        std::vector<std::vector<uint64_t>> buffers;  // per bin: in memory, or until it fills
        std::vector<std::vector<segment>> written;   // per bin, what is in the file
    };
    // The calling thread's bins (a TLS lookup: take it once per sequence, not per hash).
    thread_bins& local() { return local_.local(); }

    // From the reading threads, `mine` the calling thread's: no shared write per hash, one atomic
    // reserve per buffer written.
    void add(thread_bins& mine, uint64_t h) {
        auto const bin = static_cast<uint32_t>(bin_bits_ == 0 ? 0 : h >> (64 - bin_bits_));
        auto& buffer = mine.buffers[bin];
        if (file_ != nullptr && buffer.capacity() == 0) buffer.reserve(buffer_values_);
        buffer.push_back(h);
        if (file_ != nullptr && buffer.size() == buffer_values_) flush(mine, bin);
    }

    // Once the reading has ended: every bin sorted and made distinct, bins in parallel;
    // `each(bin, hashes)` sees each bin's (from the thread that sorted it) and may remove some
    // (keeping the order): the bin keeps the rest. Ctrl-C is seen between bins.
    void sort_bins(std::function<void(uint32_t, std::vector<uint64_t>&)> const& each);

    // A bin's sorted, distinct hashes (after sort_bins) into `out`. Safe from several threads.
    void read(uint32_t bin, std::vector<uint64_t>& out) const;

    uint32_t bins() const noexcept { return uint32_t{1} << bin_bits_; }
    // The hashes sort_bins kept, over all bins.
    uint64_t distinct() const noexcept { return distinct_; }

  private:
    void flush(thread_bins& mine, uint32_t bin);

    unsigned bin_bits_;
    io::spill_file* file_;
    size_t buffer_values_;
    std::vector<std::vector<uint64_t>> sorted_;  // in memory: per bin, after sort_bins
    std::vector<segment> sorted_at_;             // in the file: per bin, after sort_bins
    uint64_t distinct_ = 0;
    tbb::enumerable_thread_specific<thread_bins, tbb::cache_aligned_allocator<thread_bins>,
                                    tbb::ets_key_per_instance>
        local_;
};

// LSD radix sort of 64-bit values that differ only in their low `bits` bits (a bin's hashes share
// its top bits), in passes of at most 14 bits, through a scratch buffer of the same size: 4
// passes for a bin's hashes where there are 2^8 bins or more. A digit every value shares moves
// nothing.
void radix_sort_hashes(std::vector<uint64_t>& a, std::vector<uint64_t>& scratch,
                       unsigned bits = 64);

// Sorted values kept for a later pass that reads them back, a slice at a time: in memory, or
// appended to a scratch file (one writer at a time).
class sorted_stash {
  public:
    explicit sorted_stash(io::spill_file* file) : file_(file) {}
    void put(std::span<uint64_t const> values);
    uint64_t size() const noexcept { return size_; }
    // Values [from, from + count) into `out` (replacing what it held), after the last put().
    // Safe from several threads.
    void read(uint64_t from, uint64_t count, std::vector<uint64_t>& out) const;

  private:
    struct part {
        uint64_t offset;
        uint64_t values;
        uint64_t first;  // the stash's values before it
    };
    io::spill_file* file_;
    std::vector<uint64_t> memory_;
    std::vector<part> parts_;
    uint64_t size_ = 0;
};

}  // namespace qmer::app
