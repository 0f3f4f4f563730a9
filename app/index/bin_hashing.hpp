#pragma once
// A bin's k-mers to their fingerprints, a batch at a time (the fill of
// app/index/superkmer_bins.hpp).
//
// The fill expands each record into its canonical k-mers and then hashed each one inside the
// record's loop: a loop of a few k-mers (~6.5 on random sequence) whose exit mispredicts once a
// record, with three multiplies a k-mer in a chain the next record's could not overlap. Here the
// records' k-mers are gathered first (with their minimizer's spread), and one long loop hashes
// them: eight at a time with AVX-512 where the CPU has it (chosen at run time: the build assumes
// x86-64-v2 only), else one at a time with the scalar functions themselves.

#include <cstddef>
#include <cstdint>

#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/fingerprint.hpp"

namespace qmer::app {

// out[i] = g.fingerprint(hashing.local_hash(kmers[i], spreads[i])) - first, truncated to 32 bits,
// for i < n (the fill's offsets from its bin's first fingerprint).
void local_fingerprint_offsets(local_kmer_hashing const& hashing, qf::geometry g, uint64_t first,
                               uint64_t const* kmers, uint64_t const* spreads, size_t n,
                               uint32_t* out);

// The same one k-mer at a time, with the scalar functions: what the batch must equal (tests),
// and the path of a CPU without AVX-512.
void local_fingerprint_offsets_scalar(local_kmer_hashing const& hashing, qf::geometry g,
                                      uint64_t first, uint64_t const* kmers,
                                      uint64_t const* spreads, size_t n, uint32_t* out);

// Whether local_fingerprint_offsets runs eight lanes at a time on this CPU.
bool local_fingerprint_offsets_vectorized() noexcept;

}  // namespace qmer::app
