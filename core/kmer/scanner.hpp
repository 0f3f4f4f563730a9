#pragma once
// Rolling canonical k-mer scanner (ARCHITECTURE.md, k-mer contract).
//
// A k-mer of length k (1 <= k <= 32) is packed into the low 2k bits of a uint64_t with the first
// base in the most significant position: "ACG" = 00 01 10 = 6. This is the order SeqAn3's
// views::kmer_hash uses, which the tests cross-check against. The canonical k-mer is the smaller,
// as an integer, of the k-mer and its reverse complement.
//
// The scanner keeps both strands as it walks the sequence, so each base costs O(1) whatever k is:
//   forward  <- ((forward << 2) | code) & mask           (the new base enters at the low end)
//   reverse  <- (reverse >> 2) | (complement << 2(k-1))  (its complement enters at the high end)
// Bases are 2-bit codes from core/kmer/encoding.hpp: A/C/G/T in either case. Every other byte (N,
// IUPAC codes, U, gaps, digits, whitespace, bytes >= 0x80) ends the current run of bases; it is
// never turned into a base, and the next k-mer starts only after k fresh bases.
//
// Thread safety: a kmer_scanner is immutable after construction; any number of threads may scan
// with the same one at once. Nothing here allocates.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/bounds.hpp"
#include "core/error.hpp"
#include "core/kmer/encoding.hpp"

namespace qmer {

// Throws usage_error unless min_k <= k <= max_k.
constexpr void check_k(unsigned k) {
    if (k < min_k || k > max_k) {
        throw usage_error("k must be between " + std::to_string(min_k) + " and " +
                          std::to_string(max_k) + ", not " + std::to_string(k));
    }
}

// The low 2k bits set. k = 32 is special-cased: 1 << 64 is undefined behaviour, not zero.
constexpr uint64_t kmer_mask(unsigned k) noexcept {
    return k >= 32 ? ~uint64_t{0} : (uint64_t{1} << (2 * k)) - 1;
}

// The reverse complement of a k-mer held in the low 2k bits (higher bits of `kmer` are ignored).
// Complement is bitwise NOT (A=0 <-> T=3, C=1 <-> G=2); reversal swaps the 2-bit groups within each
// byte, then the bytes, which reverses all 32 groups of the word; the k groups we want then sit at
// the top, so one shift right by 64 - 2k brings them down (and drops the complemented high bits).
// reverse_complement_unchecked: for a k known to be in 1..32 (a hot loop's).
constexpr uint64_t reverse_complement_unchecked(uint64_t kmer, unsigned k) noexcept {
    uint64_t x = ~kmer;
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
    x = __builtin_bswap64(x);
    return x >> (64 - 2 * k);
}

// Throws usage_error for k outside 1..32.
constexpr uint64_t reverse_complement(uint64_t kmer, unsigned k) {
    check_k(k);
    return reverse_complement_unchecked(kmer, k);
}

// The canonical form of a k-mer: min(kmer, reverse_complement(kmer)), both restricted to 2k bits.
constexpr uint64_t canonical(uint64_t kmer, unsigned k) {
    return std::min(kmer & kmer_mask(k), reverse_complement(kmer, k));
}

class kmer_scanner {
  public:
    // Throws usage_error for k outside 1..32.
    explicit kmer_scanner(unsigned k)
        : k_((check_k(k), k)), mask_(kmer_mask(k)), reverse_shift_(2 * (k - 1)) {}

    unsigned k() const noexcept { return k_; }
    uint64_t mask() const noexcept { return mask_; }

    // Calls f(canonical, position) for every k-mer of `seq` made of k consecutive bases, in order
    // of position (the 0-based index of the k-mer's first base in `seq`). If f returns bool,
    // returning false stops the scan (a query that only needs the first hit); for_each then returns
    // false. Returns true when the whole sequence was scanned.
    template <typename F>
    bool for_each(std::string_view seq, F&& f) const;

    // The number of k-mers for_each would report: sum over runs of bases of max(0, run - k + 1).
    size_t count(std::string_view seq) const noexcept;

  private:
    unsigned k_;
    uint64_t mask_;
    unsigned reverse_shift_;  // where a new base's complement enters the reverse strand: 2(k - 1)
};

template <typename F>
bool kmer_scanner::for_each(std::string_view seq, F&& f) const {
    using result_t = std::invoke_result_t<F&, uint64_t, size_t>;
    constexpr bool can_stop = std::is_same_v<result_t, bool>;

    // Locals, not members, in the loops: the callback may write through references the compiler
    // cannot tell apart from *this, which would make it reload the members on every base.
    unsigned const k = k_;
    uint64_t const mask = mask_;
    // The complement (3 - code) enters the reverse strand at bit 2(k - 1). A 4-entry table of the
    // shifted complements costs one load; a shift by a register is three micro-ops on x86-64
    // without BMI2 (and GCC turns a multiply by a power of two back into that shift).
    uint64_t const top = uint64_t{1} << reverse_shift_;
    uint64_t const complement_at_top[4] = {3 * top, 2 * top, top, 0};
    char const* const begin = seq.data();
    char const* const end = begin + seq.size();
    char const* p = begin;
    uint64_t forward = 0;
    uint64_t reverse = 0;
    // Two phases per run of bases, so that the steady loop, where nearly all the time goes, tests
    // nothing per base but "is it a base": no run-length counter, no "is the k-mer full yet".
    // Stale bits from before a run break need no clearing: the forward strand is masked to 2k bits
    // and the reverse strand shifted right 2 bits per base, so after the k bases a k-mer needs,
    // nothing older is left in either.
    while (p != end) {
        // Fill: the first k - 1 bases of a run (none for k = 1).
        unsigned filled = 0;
        while (filled + 1 < k && p != end) {
            uint8_t const code = encode_base(*p++);
            if (code == invalid_base) [[unlikely]] {
                filled = 0;
                continue;
            }
            forward = (forward << 2) | code;
            reverse = (reverse >> 2) | complement_at_top[code];
            ++filled;
        }
        if (filled + 1 < k) return true;  // the sequence ended inside a run shorter than k

        // Steady: every further base completes a k-mer, until the run ends.
        while (p != end) {
            uint8_t const code = encode_base(*p++);
            if (code == invalid_base) [[unlikely]]
                break;
            forward = ((forward << 2) + code) & mask;  // + not |: one lea
            reverse = (reverse >> 2) | complement_at_top[code];
            uint64_t const canon = forward < reverse ? forward : reverse;
            // p is one past the k-mer's last base.
            size_t const pos = static_cast<size_t>(p - begin) - k;
            if constexpr (can_stop) {
                if (!f(canon, pos)) return false;
            } else {
                f(canon, pos);
            }
        }
    }
    return true;
}

inline size_t kmer_scanner::count(std::string_view seq) const noexcept {
    // Branch-free: the run length drops to zero on a non-base and each base ending a run of at
    // least k bases ends one k-mer.
    size_t run = 0;
    size_t total = 0;
    for (char c : seq) {
        size_t const is_base = encode_base(c) != invalid_base;
        run = (run + 1) * is_base;
        total += run >= k_;
    }
    return total;
}

// Whether seq holds at least one k-mer (k bases in a row): stops at the first, so a reference's
// check costs its first k bases, not a scan.
inline bool holds_a_kmer(std::string_view seq, unsigned k) noexcept {
    size_t run = 0;
    for (char c : seq) {
        run = encode_base(c) != invalid_base ? run + 1 : 0;
        if (run >= k) return true;
    }
    return false;
}

// Convenience forms for a one-off k (they validate k on every call; hot loops keep a kmer_scanner).
template <typename F>
bool for_each_canonical_kmer(std::string_view seq, unsigned k, F&& f) {
    return kmer_scanner(k).for_each(seq, std::forward<F>(f));
}

inline size_t count_valid_kmers(std::string_view seq, unsigned k) {
    return kmer_scanner(k).count(seq);
}

}  // namespace qmer
