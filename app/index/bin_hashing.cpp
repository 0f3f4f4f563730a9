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
#pragma GCC diagnostic pop

bool has_avx512() noexcept {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

}  // namespace

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
