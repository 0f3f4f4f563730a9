#include "app/index/bin_hashing.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QMER_BIN_HASHING_AVX512 1
#endif

namespace qmer::app {
namespace {

#if defined(QMER_BIN_HASHING_AVX512)
// GCC 12 warns inside its own AVX-512 intrinsics (their _mm512_undefined pass-through operand,
// which an unmasked operation never reads): a false positive, silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Eight lanes of kmer_hasher::operator() (XXH3's rrmxmx), local_kmer_hashing's combine and
// qf::geometry::fingerprint, each step the scalar one's: the test in
// tests/app/index/bin_hashing_test.cpp pins the two equal on every geometry it draws.
__attribute__((target("avx512f,avx512dq"))) size_t offsets_avx512(local_kmer_hashing const& hashing,
                                                                  qf::geometry g, uint64_t first,
                                                                  uint64_t const* kmers,
                                                                  uint64_t const* spreads, size_t n,
                                                                  uint32_t* out) {
    unsigned const bits = hashing.window_bits();
    unsigned const extra_bits = hashing.extra_bits();
    uint64_t const extra_mask = (uint64_t{1} << extra_bits) - 1;
    uint64_t const space = g.fingerprint_space();
    __m512i const bitflip = _mm512_set1_epi64(static_cast<long long>(hashing.hasher().bitflip()));
    __m512i const multiplier = _mm512_set1_epi64(static_cast<long long>(kmer_hasher::multiplier));
    __m512i const eight = _mm512_set1_epi64(8);
    __m512i const top = _mm512_set1_epi64(static_cast<long long>(~(~uint64_t{0} >> bits)));
    __m512i const extra = _mm512_set1_epi64(static_cast<long long>(extra_mask));
    __m512i const own = _mm512_set1_epi64(static_cast<long long>(~extra_mask));
    __m128i const own_shift = _mm_cvtsi32_si128(static_cast<int>(bits));
    __m128i const extra_shift = _mm_cvtsi32_si128(static_cast<int>(64 - bits - extra_bits));
    __m512i const low32 = _mm512_set1_epi64(0xFFFFFFFFLL);
    __m512i const space_low = _mm512_set1_epi64(static_cast<long long>(space & 0xFFFFFFFFu));
    __m512i const space_high = _mm512_set1_epi64(static_cast<long long>(space >> 32));
    __m512i const base = _mm512_set1_epi64(static_cast<long long>(first));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i const kmer = _mm512_loadu_si512(kmers + i);
        __m512i h = _mm512_xor_si512(_mm512_ror_epi64(kmer, 32), bitflip);
        h = _mm512_xor_si512(h, _mm512_xor_si512(_mm512_rol_epi64(h, 49), _mm512_rol_epi64(h, 24)));
        h = _mm512_mullo_epi64(h, multiplier);
        h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64(h, 35), eight));
        h = _mm512_mullo_epi64(h, multiplier);
        h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 28));
        __m512i const spread = _mm512_loadu_si512(spreads + i);
        __m512i const local =
            _mm512_or_si512(_mm512_or_si512(_mm512_and_si512(spread, top),
                                            _mm512_and_si512(_mm512_srl_epi64(h, own_shift), own)),
                            _mm512_and_si512(_mm512_srl_epi64(spread, extra_shift), extra));
        // The high word of local * space from four 32 x 32-bit products (AVX-512 has no
        // 64 x 64 -> 128-bit multiply): the middle sum carries at most 2 bits into the top.
        __m512i const local_high = _mm512_srli_epi64(local, 32);
        __m512i const ll = _mm512_mul_epu32(local, space_low);
        __m512i const lh = _mm512_mul_epu32(local, space_high);
        __m512i const hl = _mm512_mul_epu32(local_high, space_low);
        __m512i const hh = _mm512_mul_epu32(local_high, space_high);
        __m512i const middle = _mm512_add_epi64(
            _mm512_srli_epi64(ll, 32),
            _mm512_add_epi64(_mm512_and_si512(lh, low32), _mm512_and_si512(hl, low32)));
        __m512i const fingerprint = _mm512_add_epi64(
            _mm512_add_epi64(hh, _mm512_srli_epi64(lh, 32)),
            _mm512_add_epi64(_mm512_srli_epi64(hl, 32), _mm512_srli_epi64(middle, 32)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                            _mm512_cvtepi64_epi32(_mm512_sub_epi64(fingerprint, base)));
    }
    return i;
}

__attribute__((target("avx512f,avx512dq"))) void expand_run_avx512(uint64_t first, uint64_t tail,
                                                                   unsigned n, unsigned k,
                                                                   uint64_t spread, uint64_t* kmers,
                                                                   uint64_t* spreads) {
    // K-mer i of the run: its forward strand is the first k-mer shifted up by i bases, the tail's
    // first i bases below; its reverse strand is the first k-mer's shifted down by i bases, the
    // reverse complement of those i bases on top (the tail's reverse complement's lowest i).
    uint64_t const tail_reverse = n == 1 ? 0 : reverse_complement_unchecked(tail, n - 1);
    __m512i const forward0 = _mm512_set1_epi64(static_cast<long long>(first));
    __m512i const reverse0 =
        _mm512_set1_epi64(static_cast<long long>(reverse_complement_unchecked(first, k)));
    __m512i const tail_v = _mm512_set1_epi64(static_cast<long long>(tail));
    __m512i const tail_reverse_v = _mm512_set1_epi64(static_cast<long long>(tail_reverse));
    __m512i const kmask = _mm512_set1_epi64(static_cast<long long>(kmer_mask(k)));
    __m512i const ones = _mm512_set1_epi64(-1);
    __m512i const spread_v = _mm512_set1_epi64(static_cast<long long>(spread));
    __m512i const two_k = _mm512_set1_epi64(2 * k);
    __m512i const two_last = _mm512_set1_epi64(2 * (static_cast<long long>(n) - 1));
    __m512i shift = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);  // 2i for the lanes' i
    __m512i const step = _mm512_set1_epi64(16);
    for (unsigned i = 0; i < n; i += 8) {
        // Lanes past n compute garbage (shift counts past 63 give 0), stored in the slack.
        __m512i const forward = _mm512_and_si512(
            _mm512_or_si512(_mm512_sllv_epi64(forward0, shift),
                            _mm512_srlv_epi64(tail_v, _mm512_sub_epi64(two_last, shift))),
            kmask);
        __m512i const low_bases =
            _mm512_andnot_si512(_mm512_sllv_epi64(ones, shift), tail_reverse_v);
        __m512i const reverse =
            _mm512_or_si512(_mm512_srlv_epi64(reverse0, shift),
                            _mm512_sllv_epi64(low_bases, _mm512_sub_epi64(two_k, shift)));
        _mm512_storeu_si512(kmers + i, _mm512_min_epu64(forward, reverse));
        _mm512_storeu_si512(spreads + i, spread_v);
        shift = _mm512_add_epi64(shift, step);
    }
}
// Lane j is kept where it differs from lane j - 1 (lane 0: the previous vector's last); the kept
// lanes are packed in a register and stored whole, 16 lanes at `out + written` (compress straight
// to memory is microcoded on AMD's Zen 4), which never passes the lanes just read.
__attribute__((target("avx512f"))) size_t unique_copy_avx512(uint32_t const* in, size_t n,
                                                             uint32_t& last, uint32_t* out,
                                                             size_t& written) {
    __m512i previous = _mm512_set1_epi32(static_cast<int>(last));
    size_t i = 0, o = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i const x = _mm512_loadu_si512(in + i);
        __mmask16 const keep = _mm512_cmpneq_epu32_mask(x, _mm512_alignr_epi32(x, previous, 15));
        last = in[i + 15];
        _mm512_storeu_si512(out + o, _mm512_maskz_compress_epi32(keep, x));
        o += static_cast<size_t>(__builtin_popcount(keep));
        previous = x;
    }
    written = o;
    return i;
}
#pragma GCC diagnostic pop

bool has_avx512() noexcept {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

}  // namespace

void expand_run_scalar(uint64_t first, uint64_t tail, unsigned n, unsigned k, uint64_t spread,
                       uint64_t* kmers, uint64_t* spreads) {
    canonical_kmers(first, tail, n, k, kmers);
    for (unsigned i = 0; i < n; ++i) spreads[i] = spread;
}

run_expander run_expander_for_this_cpu() noexcept {
#if defined(QMER_BIN_HASHING_AVX512)
    if (has_avx512()) return expand_run_avx512;
#endif
    return expand_run_scalar;
}

size_t unique_copy(uint32_t const* in, size_t n, uint32_t& last, uint32_t* out) {
    size_t i = 0, o = 0;
#if defined(QMER_BIN_HASHING_AVX512)
    if (has_avx512()) i = unique_copy_avx512(in, n, last, out, o);
#endif
    // Written before it is known to be new (no branch); the output moves past it only if it is.
    for (; i < n; ++i) {
        uint32_t const x = in[i];
        out[o] = x;
        o += x != last;
        last = x;
    }
    return o;
}

void local_fingerprint_offsets_scalar(local_kmer_hashing const& hashing, qf::geometry g,
                                      uint64_t first, uint64_t const* kmers,
                                      uint64_t const* spreads, size_t n, uint32_t* out) {
    for (size_t i = 0; i < n; ++i)
        out[i] =
            static_cast<uint32_t>(g.fingerprint(hashing.local_hash(kmers[i], spreads[i])) - first);
}

bool local_fingerprint_offsets_vectorized() noexcept {
#if defined(QMER_BIN_HASHING_AVX512)
    return has_avx512();
#else
    return false;
#endif
}

void local_fingerprint_offsets(local_kmer_hashing const& hashing, qf::geometry g, uint64_t first,
                               uint64_t const* kmers, uint64_t const* spreads, size_t n,
                               uint32_t* out) {
    size_t done = 0;
#if defined(QMER_BIN_HASHING_AVX512)
    if (has_avx512()) done = offsets_avx512(hashing, g, first, kmers, spreads, n, out);
#endif
    local_fingerprint_offsets_scalar(hashing, g, first, kmers + done, spreads + done, n - done,
                                     out + done);
}

}  // namespace qmer::app
