#include "app/index/sorted_units.hpp"

#include <cstring>
#include <utility>

namespace qmer::app {
namespace {

// Below this many bits, two LSD passes of at most 13-bit digits sort a part whose counters stay in
// L1; above it radix_sort splits the values by their top bits first.
constexpr unsigned lsd_bits = 26;

// LSD radix sort of a[0, n) (values below 2^bits, bits <= 39) through tmp[0, n): returns which of
// the two holds the result.
uint32_t* lsd_sort(uint32_t* a, uint32_t* tmp, size_t n, unsigned bits) {
    if (bits == 0 || n < 2) return a;
    constexpr unsigned most_passes = 3;  // 32-bit values in digits of at most 13 bits
    unsigned const passes = (bits + 12) / 13;
    unsigned const digit = (bits + passes - 1) / passes;
    size_t const radix = size_t{1} << digit;
    uint32_t const mask = static_cast<uint32_t>(radix - 1);
    std::vector<uint32_t> count(most_passes * radix, 0);
    uint32_t* const c0 = count.data();
    uint32_t* const c1 = c0 + radix;
    uint32_t* const c2 = c1 + radix;
    unsigned const s1 = digit, s2 = 2 * digit;
    if (passes == 1) {
        for (size_t i = 0; i < n; ++i) ++c0[a[i] & mask];
    } else if (passes == 2) {
        for (size_t i = 0; i < n; ++i) {
            ++c0[a[i] & mask];
            ++c1[(a[i] >> s1) & mask];
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            ++c0[a[i] & mask];
            ++c1[(a[i] >> s1) & mask];
            ++c2[(a[i] >> s2) & mask];
        }
    }
    for (unsigned pass = 0; pass < passes; ++pass) {
        uint32_t* const c = c0 + pass * radix;
        unsigned const shift = pass * digit;
        if (c[(a[0] >> shift) & mask] == n) continue;  // one digit value: order kept
        uint32_t sum = 0;
        for (size_t d = 0; d < radix; ++d) sum += std::exchange(c[d], sum);
        for (size_t i = 0; i < n; ++i) tmp[c[(a[i] >> shift) & mask]++] = a[i];
        std::swap(a, tmp);
    }
    return a;
}

}  // namespace

void radix_sort(std::vector<uint32_t>& a, std::vector<uint32_t>& scratch, unsigned bits) {
    if (bits == 0 || a.size() < 2) return;
    scratch.resize(a.size());
    if (bits <= lsd_bits) {
        if (lsd_sort(a.data(), scratch.data(), a.size(), bits) != a.data()) a.swap(scratch);
        return;
    }
    // Wider values (a spilled bin's, ~31 bits): one MSD pass by the top bits into parts of
    // lsd_bits (few destinations, each written in sequence), then each part sorted alone while
    // it sits in cache: three LSD passes over the whole array scattered into 2^11 places of a
    // multi-megabyte buffer, out of cache, took twice as long.
    unsigned const top = bits - lsd_bits;
    size_t const parts = size_t{1} << top;
    std::vector<size_t> start(parts + 1, 0);
    for (uint32_t v : a) ++start[(v >> lsd_bits) + 1];
    for (size_t p = 0; p < parts; ++p) start[p + 1] += start[p];
    {
        std::vector<size_t> at(start.begin(), start.end() - 1);
        for (uint32_t v : a) scratch[at[v >> lsd_bits]++] = v;
    }
    // Each part, now in scratch, sorted by its low bits; the results gathered back into a.
    for (size_t p = 0; p < parts; ++p) {
        size_t const n = start[p + 1] - start[p];
        uint32_t* const in = scratch.data() + start[p];
        uint32_t* const out = a.data() + start[p];
        uint32_t const* const sorted = lsd_sort(in, out, n, lsd_bits);
        if (sorted != out && n != 0) std::memcpy(out, sorted, n * sizeof(uint32_t));
    }
}

}  // namespace qmer::app
