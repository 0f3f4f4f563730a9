#pragma once
// The filter contract of DESIGN.md: every filter stores 64-bit hashes of canonical k-mers and
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

}  // namespace qmer
