#pragma once
// The minimizer gate: a first-stage test that turns away most k-mers of a read absent from a
// minimizer-local index before any table lookup, one super-k-mer at a time (bench/query/
// SUPERKMER_GATE.md has the measurements that chose it).
//
// A minimizer-local hash (core/kmer/sequence_hashing.hpp, scheme minimizer_local_levels) carries
// its minimizer's spread in two places: the window (its top B bits) and, at its bottom, the
// spread's next bits. The gate gives every window of the index's first level `bits_per_window`
// bits and sets, for every k-mer stored, the bit its hash's low bits name in its window: a bit per
// distinct minimizer (up to collisions), so a window of 32-64 slots holding ~5-9 super-k-mers'
// minimizers has ~15-25% of its 32 bits set. A read's k-mer whose bit is clear was never stored,
// and neither was any k-mer of its super-k-mer (they share the window and the bit): exact, no
// false negative, and each k-mer's test reads the word its super-k-mer's first k-mer already
// brought into the cache.
//
// The k-mers of overloaded windows are hashed plainly (their top bits are no window): they set
// no bit, and a query passes them without the test (the hashing tags them). Every level of an
// expandable index reads the same hash (its window map moves bits below the top B only), so one
// gate serves them all.
//
// Stored as a section of its own after the levels (format 9; app/filters/persistence.hpp):
// params {gate_tag, B, bits_per_window}, words 2^B * bits_per_window / 64. A writer that adds
// k-mers without setting their bits must drop the section (an index without one is answered
// without the test).
//
// Thread safety: minimizer_gate is a read-only view; gate_bits::set is safe from several threads
// (a relaxed fetch_or, taken only when the bit is clear).

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace qmer::qf {

// Bits per window: 32 (0.65 bits per k-mer at the default fill) turn away ~80% of absent k-mers
// (bench/query/SUPERKMER_GATE.md); the hash's low 5 bits choose the bit.
inline constexpr unsigned gate_bits_per_window = 32;
// The section's first parameter ("QGATE001" little-endian).
inline constexpr uint64_t gate_tag = 0x3130304554414751ULL;

// The bit of hash h in a gate of 2^window_bits windows.
[[gnu::always_inline]] inline uint64_t gate_bit_of(uint64_t h, unsigned window_bits) noexcept {
    return ((h >> (64 - window_bits)) * gate_bits_per_window) | (h & (gate_bits_per_window - 1));
}

inline uint64_t gate_words(unsigned window_bits) noexcept {
    return ((uint64_t{1} << window_bits) * gate_bits_per_window + 63) / 64;
}

class minimizer_gate {
  public:
    // words: gate_words(window_bits) of them; throws std::invalid_argument otherwise.
    minimizer_gate(std::span<uint64_t const> words, unsigned window_bits)
        : words_(words.data()), window_bits_(window_bits) {
        if (window_bits < 1 || window_bits > 40 || words.size() != gate_words(window_bits))
            throw std::invalid_argument("minimizer gate: word count does not match its windows");
    }
    // Whether some stored k-mer could have hash h (false: none has).
    [[gnu::always_inline]] bool passes(uint64_t h) const noexcept {
        uint64_t const b = gate_bit_of(h, window_bits_);
        return (words_[b / 64] >> (b % 64)) & 1;
    }
    [[gnu::always_inline]] void prefetch(uint64_t h) const noexcept {
        __builtin_prefetch(words_ + gate_bit_of(h, window_bits_) / 64);
    }
    unsigned window_bits() const noexcept { return window_bits_; }

    // The section's parameters for a gate of 2^window_bits windows.
    static std::vector<uint64_t> params(unsigned window_bits) {
        return {gate_tag, window_bits, gate_bits_per_window};
    }
    // Whether params are a gate section's (of this layout); throws std::invalid_argument for a
    // gate section whose layout this code does not read.
    static bool is_gate(std::span<uint64_t const> params) {
        if (params.empty() || params[0] != gate_tag) return false;
        if (params.size() != 3 || params[2] != gate_bits_per_window || params[1] < 1 ||
            params[1] > 40)
            throw std::invalid_argument("minimizer gate: bad parameters");
        return true;
    }

  private:
    uint64_t const* words_;
    unsigned window_bits_;
};

// A gate being made: bits set as k-mers are stored.
class gate_bits {
  public:
    explicit gate_bits(unsigned window_bits)
        : words_(gate_words(window_bits)), window_bits_(window_bits) {}
    // From any thread. A writer of a range of windows (a bin) mostly finds its bits set already
    // by earlier records of the same minimizer: read first, write only a clear bit.
    void set(uint64_t h) noexcept {
        uint64_t const b = gate_bit_of(h, window_bits_);
        uint64_t const mask = uint64_t{1} << (b % 64);
        std::atomic_ref<uint64_t> word(words_[b / 64]);
        if ((word.load(std::memory_order_relaxed) & mask) == 0)
            word.fetch_or(mask, std::memory_order_relaxed);
    }
    // Every bit of `other` (a gate of the same windows) set here too.
    void merge(std::span<uint64_t const> other) {
        if (other.size() != words_.size())
            throw std::invalid_argument("minimizer gate: merging gates of other windows");
        for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other[i];
    }
    std::vector<uint64_t> const& words() const noexcept { return words_; }
    std::vector<uint64_t> take() noexcept { return std::move(words_); }
    unsigned window_bits() const noexcept { return window_bits_; }

  private:
    std::vector<uint64_t> words_;
    unsigned window_bits_;
};

}  // namespace qmer::qf
