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

#include "core/kmer/scanner.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/fingerprint.hpp"

namespace qmer::app {

// The n canonical k-mers of a run, in order, into `kmers`: its first k-mer's forward strand and
// the n - 1 bases that follow it (the last base lowest), as a super-k-mer record stores them.
inline void canonical_kmers(uint64_t first, uint64_t tail, unsigned n, unsigned k,
                            uint64_t* kmers) {
    uint64_t const kmask = kmer_mask(k);
    uint64_t const top = uint64_t{1} << (2 * (k - 1));
    uint64_t forward = first;
    uint64_t reverse = reverse_complement_unchecked(forward, k);
    kmers[0] = forward < reverse ? forward : reverse;
    for (unsigned i = 1; i < n; ++i) {
        uint64_t const code = (tail >> (2 * (n - 1 - i))) & 3;
        forward = ((forward << 2) | code) & kmask;
        reverse = (reverse >> 2) | ((3 - code) * top);
        kmers[i] = forward < reverse ? forward : reverse;
    }
}

// A run's n canonical k-mers (as canonical_kmers) into kmers[0, n) and `spread` into
// spreads[0, n), for the batch the fill hashes. The AVX-512 one makes eight k-mers at once, each
// from the run's two strands by its own shifts (no chain from k-mer to k-mer, no loop of n whose
// exit mispredicts once a run), and may write up to expand_slack entries past n.
using run_expander = void (*)(uint64_t first, uint64_t tail, unsigned n, unsigned k,
                              uint64_t spread, uint64_t* kmers, uint64_t* spreads);
inline constexpr size_t expand_slack = 8;
void expand_run_scalar(uint64_t first, uint64_t tail, unsigned n, unsigned k, uint64_t spread,
                       uint64_t* kmers, uint64_t* spreads);
// The AVX-512 expander where the CPU has it, else the scalar one.
run_expander run_expander_for_this_cpu() noexcept;

// Copies in[0, n) to `out` without the values equal to the one before them (in[0] compared with
// `last`, which becomes in[n - 1]); returns how many it wrote. `out` may be `in` itself or lie
// before it (the fill deduplicates a bin's sorted values in place): it writes only below
// out + n, and at each place after reading what was there. Sixteen at a time with AVX-512 where
// the CPU has it (the scalar loop's output pointer is a chain through every value).
size_t unique_copy(uint32_t const* in, size_t n, uint32_t& last, uint32_t* out);

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
