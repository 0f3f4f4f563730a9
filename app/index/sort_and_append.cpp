#include "app/index/sort_and_append.hpp"

#include <utility>

namespace qmer::app {
namespace {

// LSD radix sort of a[0, n) (values below 2^bits, bits <= 39) through tmp[0, n), with `count` the
// digits' counters: returns which of the two holds the result.
uint32_t* lsd_sort(uint32_t* a, uint32_t* tmp, size_t n, unsigned bits,
                   std::vector<uint32_t>& count) {
    if (bits == 0 || n < 2) return a;
    unsigned const passes = (bits + 12) / 13;  // 32-bit values in digits of at most 13 bits
    unsigned const digit = (bits + passes - 1) / passes;
    size_t const radix = size_t{1} << digit;
    uint32_t const mask = static_cast<uint32_t>(radix - 1);
    count.assign(3 * radix, 0);
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
    // Three LSD passes over a whole bin (~31 bits) beat a first MSD split into parts of 26 bits
    // sorted in cache (bench/MEASUREMENTS.md, "Sorted build").
    std::vector<uint32_t> count;
    if (lsd_sort(a.data(), scratch.data(), a.size(), bits, count) != a.data()) a.swap(scratch);
}

}  // namespace qmer::app
