#pragma once
// The hashes of a sequence's canonical k-mers a block of positions at a time, written to an array
// in order: exactly the hashes plain_kmer_hashing::for_each and local_kmer_hashing::for_each give
// (core/kmer/sequence_hashing.hpp), for a caller bound by hashing rather than by a table's cache
// misses. The query uses it for the groups of a read under the minimizer gate
// (app/pipeline/gated_lookups.hpp), which skip most lookups and so wait on hashing: an absent read
// takes ~0.85x its CPU time with it. It does not pay where every k-mer is looked up (a read with
// hits: 1.03-1.2x, the rolling scan's hashing runs in the shadow of the misses in flight), so
// those keep the rolling scan (bench/kmer/README.md). tests/core/kmer/batch_hashing_test.cpp pins
// every path equal to for_each_tagged.
//
// Why not the rolling scan: its strands and its sliding minimum carry a dependency from each base
// to the next, so a core runs its ~40 instructions per k-mer one k-mer after the other. Here every
// step is a pass over a block whose elements do not depend on each other, run 8 lanes wide:
//   1. the block's bases (at most window_bases) are encoded (A/C/G/T in either case to 0-3, all
//      else marked bad) and packed 32 to a word, twice: the first base on top (the forward
//      strand's order) and at the bottom (its complement, negated, is the reverse strand's);
//   2. the k-mer starting at offset 32j + r is two shifted words of each packing, for 8 r at once
//      (shift counts per lane, no per-base loop); its m-mers likewise;
//   3. the minimizer of the k-mer at p, min(hm[p .. p + w - 1]), from doubling minima: after the
//      passes t[i] = min(t[i], t[i + s]) for s = 1, 2, 4, ... up to P, the largest power of two
//      not above w, it is min(t[p], t[p + w - P]). The scanner's minimum is the same value: the
//      minimizer is the smallest hash over the window, and equal hashes are the same m-mer
//      (minimizer_hash is a bijection), so no tie needs breaking;
//   4. a k-mer is kept unless a bad base lies in its k bases (the same doubling over the bad
//      bits), and the kept hashes are packed to the output in order.
// The block's fixed work (encoding and packing 128 bases) is shared by up to 64 k-mers.
//
// Two paths, chosen once (best_simd_level(), kept by the caller), never per k-mer: AVX-512 (F,
// DQ, BW, VL), and the rolling scan over the block's bases elsewhere. No AVX2 path: the same
// passes compiled for AVX2 were slower than the rolling scan (bench/kmer/README.md). AVX2 has no
// 64-bit multiply, and the hashes take five per k-mer (two in kmer_hasher, two in
// minimizer_spread, one in minimizer_hash), each built from three 32 x 32-bit multiplies and
// ~5 shifts and adds; nor an unsigned 64-bit minimum (a sign flip and a compare), a compress, or
// 64-bit rotates.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/kmer/minimizer.hpp"
#include "core/kmer/scanner.hpp"
#include "core/kmer/sequence_hashing.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QMER_BATCH_HASHING_X86 1
#endif

namespace qmer {

enum class simd_level { scalar, avx512 };

constexpr char const* simd_level_name(simd_level level) noexcept {
    switch (level) {
        case simd_level::avx512:
            return "avx512";
        default:
            return "scalar";
    }
}

// Whether this CPU runs the given path.
inline bool simd_level_supported(simd_level level) noexcept {
#if defined(QMER_BATCH_HASHING_X86)
    switch (level) {
        case simd_level::avx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
        default:
            return true;
    }
#else
    return level == simd_level::scalar;
#endif
}

// The widest path this CPU runs.
inline simd_level best_simd_level() noexcept {
    return simd_level_supported(simd_level::avx512) ? simd_level::avx512 : simd_level::scalar;
}

namespace detail::batch {

// K-mer starts per block, and the bases a block reads: the k-mers of 64 starts and the m-mers of
// 96 (64 + w - 1 <= 95) end by base 126.
inline constexpr size_t block_kmers = 64;
inline constexpr size_t block_mmers = 96;
inline constexpr size_t window_bases = 128;
inline constexpr size_t window_words = window_bases / 32;
// Room past the last element the doubling passes read (t[i + s], s < 32).
inline constexpr size_t slack = 32;

// What a block needs of the hashing, copied into locals (a store to the output could otherwise
// alias a hashing's members, and every pass would reload them).
struct recipe {
    unsigned k = 0;
    unsigned m = 0;  // 0: the plain scheme
    uint64_t minimizer_seed = 0;
    kmer_hasher hasher;
    unsigned window_bits = 1;
    unsigned extra_bits = 0;
    uint64_t const* marks = nullptr;  // the overloaded windows, or null for none
};

// The 32 2-bit groups of x in reverse order.
[[gnu::always_inline]] inline uint64_t reverse_groups(uint64_t x) noexcept {
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return __builtin_bswap64(x);
}

// in[i] = op over in[i .. i + span - 1] for i < n, from the passes described above (op: the
// minimum). in and scratch hold `total` elements, in is overwritten; a pass leaves its
// last s elements as they were, so after the pass of step s element i is exact (op over its 2s
// elements) for i < total - 2s + 1, which covers every element read while n + span <= total + 1.
template <typename T, typename Op>
[[gnu::always_inline]] inline void window_reduce(T* in, T* scratch, size_t total, size_t n,
                                                 unsigned span, Op op) {
    unsigned s = 1;
    T* a = in;
    T* b = scratch;
    while (2 * s <= span) {
        for (size_t i = 0; i + s < total; ++i) b[i] = op(a[i], a[i + s]);
        for (size_t i = total - s; i < total; ++i) b[i] = a[i];
        T* const t = a;
        a = b;
        b = t;
        s *= 2;
    }
    for (size_t i = 0; i < n; ++i) in[i] = op(a[i], a[i + span - s]);
}

#if defined(QMER_BATCH_HASHING_X86)
// GCC 12 warns inside its own AVX-512 intrinsics (their _mm512_undefined pass-through operand,
// which an unmasked operation never reads): a false positive, silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define QMER_AVX512_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,bmi,bmi2")))

// The k-mers (width k) starting at bases 8g .. 8g + 7 of a block, both strands from the packed
// words (step 2 above: low[j] gives the reverse strand, high[j] the forward one).
QMER_AVX512_TARGET inline __m512i canonical8_avx512(uint64_t const* low, uint64_t const* high,
                                                    size_t g, __m128i forward_shift, __m512i mask) {
    size_t const j = g / 4;
    __m512i const s = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(16 * (g % 4))),
                                       _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14));
    __m512i const rest = _mm512_sub_epi64(_mm512_set1_epi64(64), s);  // 64: the shift gives 0
    __m512i const from_low = _mm512_or_si512(
        _mm512_srlv_epi64(_mm512_set1_epi64(static_cast<long long>(low[j])), s),
        _mm512_sllv_epi64(_mm512_set1_epi64(static_cast<long long>(low[j + 1])), rest));
    __m512i const from_high = _mm512_or_si512(
        _mm512_sllv_epi64(_mm512_set1_epi64(static_cast<long long>(high[j])), s),
        _mm512_srlv_epi64(_mm512_set1_epi64(static_cast<long long>(high[j + 1])), rest));
    __m512i const forward = _mm512_srl_epi64(from_high, forward_shift);
    __m512i const reverse = _mm512_andnot_si512(from_low, mask);
    return _mm512_min_epu64(forward, reverse);
}

// kmer_hasher::operator(), 8 lanes.
QMER_AVX512_TARGET inline __m512i kmer_hash8_avx512(__m512i x, __m512i bitflip) {
    __m512i const multiplier = _mm512_set1_epi64(static_cast<long long>(kmer_hasher::multiplier));
    __m512i h = _mm512_xor_si512(_mm512_ror_epi64(x, 32), bitflip);
    h = _mm512_xor_si512(h, _mm512_xor_si512(_mm512_rol_epi64(h, 49), _mm512_rol_epi64(h, 24)));
    h = _mm512_mullo_epi64(h, multiplier);
    h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64(h, 35), _mm512_set1_epi64(8)));
    h = _mm512_mullo_epi64(h, multiplier);
    return _mm512_xor_si512(h, _mm512_srli_epi64(h, 28));
}

// minimizer_spread, 8 lanes.
QMER_AVX512_TARGET inline __m512i spread8_avx512(__m512i x) {
    x = _mm512_add_epi64(x, _mm512_set1_epi64(0x2545F4914F6CDD1DLL));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0xBF58476D1CE4E5B9ULL)));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x94D049BB133111EBULL)));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

// The steps above with AVX-512 instructions: 64 bases encoded by a few byte operations, the
// codes packed by two multiply-adds, 8 k-mers (m-mers, hashes) a vector, the kept lanes packed by
// vpcompressq in a register and stored under a mask of their count (vpcompressq straight to
// memory is microcoded on AMD's Zen 4).
template <bool Local, typename Each>
QMER_AVX512_TARGET size_t hash_block_avx512(recipe const& r, char const* bases, size_t size,
                                            size_t count, uint64_t* out, uint64_t& plain,
                                            Each& each) {
    alignas(64) char text[window_bases];
    std::memset(text, 'N', window_bases);
    std::memcpy(text, bases, size < window_bases ? size : window_bases);
    // 1. Codes via the letters' low nibbles (a 1, c 3, g 7, t 4), and the bad bases' bits.
    __m512i const nibble_codes =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 1, 3, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0));
    uint64_t low[window_words + 1], high[window_words + 1];
    uint64_t bad[2];
    for (size_t half = 0; half < 2; ++half) {
        __m512i const lower =
            _mm512_or_si512(_mm512_load_si512(text + 64 * half), _mm512_set1_epi8(0x20));
        __mmask64 const good = _mm512_cmpeq_epi8_mask(lower, _mm512_set1_epi8('a')) |
                               _mm512_cmpeq_epi8_mask(lower, _mm512_set1_epi8('c')) |
                               _mm512_cmpeq_epi8_mask(lower, _mm512_set1_epi8('g')) |
                               _mm512_cmpeq_epi8_mask(lower, _mm512_set1_epi8('t'));
        bad[half] = ~static_cast<uint64_t>(good);
        __m512i const codes =
            _mm512_shuffle_epi8(nibble_codes, _mm512_and_si512(lower, _mm512_set1_epi8(0x0F)));
        // Pairs, then quads, of codes, the first on the bottom: 4 bases a byte, 64 in 16 bytes.
        __m512i const pairs = _mm512_maddubs_epi16(codes, _mm512_set1_epi16(0x0401));
        __m512i const quads = _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x00100001));
        __m128i const packed = _mm512_cvtepi32_epi8(quads);
        low[2 * half] = static_cast<uint64_t>(_mm_cvtsi128_si64(packed));
        low[2 * half + 1] = static_cast<uint64_t>(_mm_extract_epi64(packed, 1));
    }
    for (size_t j = 0; j < window_words; ++j) high[j] = reverse_groups(low[j]);
    low[window_words] = high[window_words] = 0;
    // The k-mers holding a bad base: bit p of `spoilt` for the k bases from p (p < 64).
    unsigned const k = r.k;
    __extension__ using uint128 = unsigned __int128;
    uint128 spoilt = (static_cast<uint128>(bad[1]) << 64) | bad[0];
    unsigned s = 1;
    for (; 2 * s <= k; s *= 2) spoilt |= spoilt >> s;
    spoilt |= spoilt >> (k - s);
    uint64_t const kept =
        ~static_cast<uint64_t>(spoilt) & (count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1);

    // 2. K-mers, m-mers' hashes; 3. minimizers; the hashes.
    __m128i const kmer_shift = _mm_cvtsi32_si128(static_cast<int>(64 - 2 * k));
    __m512i const kmask = _mm512_set1_epi64(static_cast<long long>(kmer_mask(k)));
    __m512i const bitflip = _mm512_set1_epi64(static_cast<long long>(r.hasher.bitflip()));
    alignas(64) uint64_t minima[block_mmers + slack];
    alignas(64) uint64_t scratch[block_mmers + slack];
    if constexpr (Local) {
        unsigned const m = r.m;
        __m128i const mmer_shift = _mm_cvtsi32_si128(static_cast<int>(64 - 2 * m));
        __m512i const mmask = _mm512_set1_epi64(static_cast<long long>(kmer_mask(m)));
        // minimizer_hash (core/kmer/minimizer.hpp): (m-mer ^ its salt of the seed) * odd.
        __m512i const salt = _mm512_set1_epi64(static_cast<long long>(
            r.minimizer_seed * 0x9E3779B97F4A7C15ULL + 0x5851F42D4C957F2DULL));
        __m512i const odd = _mm512_set1_epi64(static_cast<long long>(0xD6E8FEB86659FD93ULL));
        // Only the m-mers of the k-mers asked for (count + w - 1 of them, in vectors of 8), so
        // that a small block costs less.
        unsigned const w = k - m + 1;
        size_t const mmers = (count + w - 1 + 7) / 8 * 8;
        for (size_t g = 0; g < mmers / 8; ++g) {
            __m512i const mmer = canonical8_avx512(low, high, g, mmer_shift, mmask);
            _mm512_store_si512(minima + 8 * g,
                               _mm512_mullo_epi64(_mm512_xor_si512(mmer, salt), odd));
        }
        for (size_t i = mmers; i < mmers + slack; ++i) minima[i] = ~uint64_t{0};
        window_reduce(minima, scratch, mmers + slack, (count + 7) / 8 * 8, w,
                      [](uint64_t a, uint64_t b) { return a < b ? a : b; });
    }
    unsigned const bits = r.window_bits;
    __m128i const window_shift = _mm_cvtsi32_si128(static_cast<int>(64 - bits));
    __m128i const own_shift = _mm_cvtsi32_si128(static_cast<int>(bits));
    __m128i const extra_shift = _mm_cvtsi32_si128(static_cast<int>(64 - bits - r.extra_bits));
    uint64_t const extra_mask = (uint64_t{1} << r.extra_bits) - 1;
    __m512i const top = _mm512_set1_epi64(static_cast<long long>(~(~uint64_t{0} >> bits)));
    __m512i const extra = _mm512_set1_epi64(static_cast<long long>(extra_mask));
    __m512i const own_bits = _mm512_set1_epi64(static_cast<long long>(~extra_mask));
    size_t n = 0;
    for (size_t g = 0; g * 8 < count; ++g) {
        __m512i const own =
            kmer_hash8_avx512(canonical8_avx512(low, high, g, kmer_shift, kmask), bitflip);
        __m512i h = own;
        __mmask8 marked = 0;
        if constexpr (Local) {
            // sequence_hashing.hpp's combine, or the plain hash in an overloaded window.
            __m512i const spread = spread8_avx512(_mm512_load_si512(minima + 8 * g));
            h = _mm512_or_si512(
                _mm512_or_si512(_mm512_and_si512(spread, top),
                                _mm512_and_si512(_mm512_srl_epi64(own, own_shift), own_bits)),
                _mm512_and_si512(_mm512_srl_epi64(spread, extra_shift), extra));
            if (r.marks != nullptr) {
                __m512i const window = _mm512_srl_epi64(spread, window_shift);
                __m512i const words =
                    _mm512_i64gather_epi64(_mm512_srli_epi64(window, 6), r.marks, 8);
                marked = _mm512_test_epi64_mask(
                    _mm512_srlv_epi64(words, _mm512_and_si512(window, _mm512_set1_epi64(63))),
                    _mm512_set1_epi64(1));
                h = _mm512_mask_mov_epi64(h, marked, own);
            }
        }
        auto const lanes = static_cast<__mmask8>(kept >> (8 * g));
        _mm512_mask_storeu_epi64(out + n,
                                 static_cast<__mmask8>((1u << __builtin_popcount(lanes)) - 1),
                                 _mm512_maskz_compress_epi64(lanes, h));
        size_t const made = n + static_cast<size_t>(__builtin_popcount(lanes));
        if constexpr (Local) plain |= uint64_t{_pext_u32(marked, lanes)} << n;
        for (; n < made; ++n) each(out[n]);
    }
    return n;
}
#undef QMER_AVX512_TARGET
#pragma GCC diagnostic pop
#endif

}  // namespace detail::batch

// A hashing (plain_kmer_hashing or local_kmer_hashing) run a block at a time on one path. The
// hashing (and its overloaded-window bitmap) must outlive it.
class batch_kmer_hashing {
  public:
    static constexpr size_t block_kmers = detail::batch::block_kmers;

    batch_kmer_hashing(plain_kmer_hashing const& hashing, simd_level level)
        : plain_(&hashing), level_(level) {
        recipe_.k = hashing.k();
        recipe_.hasher = hashing.hasher();
    }
    batch_kmer_hashing(local_kmer_hashing const& hashing, simd_level level)
        : local_(&hashing), level_(level) {
        recipe_.k = hashing.k();
        recipe_.m = hashing.scanner().m();
        recipe_.minimizer_seed = hashing.scanner().seed();
        recipe_.hasher = hashing.hasher();
        recipe_.window_bits = hashing.window_bits();
        recipe_.extra_bits = hashing.extra_bits();
        recipe_.marks = hashing.overloaded().empty() ? nullptr : hashing.overloaded().data();
    }

    unsigned k() const noexcept { return recipe_.k; }
    simd_level level() const noexcept { return level_; }

    // The hashes of the k-mers of seq starting at offsets first .. first + count - 1 that lie
    // within seq and hold k bases, in order, into out (room for count); returns how many.
    // count <= block_kmers. each(h) is called for every hash soon after it is made, in order (a
    // caller's prefetch: spread over the block's work, not in a burst after it).
    template <typename Each>
    size_t hash_block(std::string_view seq, size_t first, size_t count, uint64_t* out,
                      Each&& each) const {
        uint64_t plain = 0;
        return hash_block(seq, first, count, out, plain, each);
    }
    // The same, also setting bit i of `plain` (cleared first) where out[i] is a plain hash (an
    // overloaded window's k-mer: for_each_tagged's flag).
    template <typename Each>
    size_t hash_block(std::string_view seq, size_t first, size_t count, uint64_t* out,
                      uint64_t& plain, Each&& each) const {
        plain = 0;
        size_t const k = recipe_.k;
        if (seq.size() < k || first > seq.size() - k) return 0;
        size_t const starts = seq.size() - k + 1 - first;
        if (count > starts) count = starts;
        if (count == 0) return 0;
        return dispatch(seq.data() + first, seq.size() - first, count, out, plain, each);
    }
    size_t hash_block(std::string_view seq, size_t first, size_t count, uint64_t* out) const {
        return hash_block(seq, first, count, out, [](uint64_t) {});
    }

    // Every hash of seq, appended to out.
    void hash_all(std::string_view seq, std::vector<uint64_t>& out) const {
        uint64_t block[block_kmers];
        for (size_t first = 0; first + recipe_.k <= seq.size(); first += block_kmers) {
            size_t const n = hash_block(seq, first, block_kmers, block);
            out.insert(out.end(), block, block + n);
        }
    }

  private:
    template <typename Each>
    size_t dispatch(char const* bases, size_t size, size_t count, uint64_t* out, uint64_t& plain,
                    Each& each) const {
#if defined(QMER_BATCH_HASHING_X86)
        if (level_ == simd_level::avx512)
            return local_ != nullptr ? detail::batch::hash_block_avx512<true>(
                                           recipe_, bases, size, count, out, plain, each)
                                     : detail::batch::hash_block_avx512<false>(
                                           recipe_, bases, size, count, out, plain, each);
#endif
        // The k-mers starting at the count offsets: the rolling scan over their bases.
        std::string_view const part(bases, std::min(size, count + recipe_.k - 1));
        size_t n = 0;
        auto put = [&](uint64_t h) {
            out[n++] = h;
            each(h);
        };
        if (local_ != nullptr)
            local_->for_each_tagged(part, [&](uint64_t h, bool overloaded) {
                plain |= uint64_t{overloaded} << n;
                put(h);
            });
        else
            plain_->for_each(part, put);
        return n;
    }

    local_kmer_hashing const* local_ = nullptr;
    plain_kmer_hashing const* plain_ = nullptr;
    detail::batch::recipe recipe_;
    simd_level level_;
};

}  // namespace qmer
