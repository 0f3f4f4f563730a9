#pragma once
// The filter contract of ARCHITECTURE.md: every filter stores 64-bit hashes of canonical k-mers and
// offers
//   insert(h)   -> inserted | already_present | full
//   contains(h) -> bool, never false for an inserted h (no false negatives), from any thread
//   size(), capacity(), memory_bytes(), false_positive_rate()
// insert and contains are safe to call concurrently; once insert(h) returns in one thread, every
// contains(h) that starts later in any thread returns true. The filter kind is a template parameter
// chosen once per command (app/), never a virtual call per k-mer.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace qmer {

enum class insert_result : uint8_t {
    inserted,         // the filter did not hold h (or its fingerprint) before
    already_present,  // h's fingerprint was already stored: nothing changed
    full,             // fixed-capacity filter with no room left; h was not stored
};

template <typename F>
concept amq_filter = requires(F f, F const cf, uint64_t h) {
    { f.insert(h) } -> std::same_as<insert_result>;
    { cf.contains(h) } -> std::same_as<bool>;
    { cf.size() } -> std::convertible_to<size_t>;
    { cf.capacity() } -> std::convertible_to<size_t>;
    { cf.memory_bytes() } -> std::convertible_to<size_t>;
    { cf.false_positive_rate() } -> std::convertible_to<double>;
};

// A filter's state as plain arrays, for the index file: core/ does no I/O, so a filter hands out
// its geometry and raw words and is rebuilt from them; io/ decides how they are stored.
struct filter_array {
    std::vector<uint64_t> params;     // geometry (e.g. q, r, element count)
    std::span<uint64_t const> words;  // a view of the filter's own memory
};

// Filters that an index can hold. arrays() is called when no insert runs (after the pipeline has
// joined), so reading the atomic words as plain words races with nothing. from_arrays() copies
// the words and throws std::invalid_argument when the arrays do not describe a valid filter.
template <typename F>
concept persistent_filter = requires(F const& f, std::span<filter_array const> arrays) {
    { f.arrays() } -> std::same_as<std::vector<filter_array>>;
    { F::from_arrays(arrays) } -> std::same_as<std::unique_ptr<F>>;
};

// The words of an array of 64-bit atomics, for arrays(). std::atomic<uint64_t> is lock-free and
// has the size and alignment of uint64_t on every platform qmer builds for (checked below).
template <typename Atomic>
std::span<uint64_t const> atomic_words(std::span<Atomic const> words) noexcept {
    static_assert(sizeof(Atomic) == sizeof(uint64_t) && alignof(Atomic) == alignof(uint64_t));
    static_assert(Atomic::is_always_lock_free);
    return {reinterpret_cast<uint64_t const*>(words.data()), words.size()};
}

}  // namespace qmer
