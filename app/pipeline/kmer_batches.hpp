#pragma once
// The k-mer work of the parallel stage, shared by index and query: scan a sequence's canonical
// k-mers, hash them, and hand them to the filter in small groups whose table locations were
// prefetched first (DESIGN.md, performance rules: a filter larger than the cache is bound by memory
// latency; issuing the loads of a group together overlaps their misses).

#include <array>
#include <cstdint>
#include <string_view>

#include "core/kmer/hash.hpp"
#include "core/kmer/scanner.hpp"

namespace qmer::app {

inline constexpr size_t prefetch_group = 16;

template <typename Filter>
concept prefetching_filter = requires(Filter const& f, uint64_t h) {
    f.prefetch(h);
};

// contains() for a filter that no thread writes any more (a loaded index during a query): the
// locally locked filter then answers without read locks (contains_final).
template <typename Filter>
bool contains_read_only(Filter const& filter, uint64_t h) noexcept {
    if constexpr (requires { filter.contains_final(h); }) {
        return filter.contains_final(h);
    } else {
        return filter.contains(h);
    }
}

// Calls op(h) for the hash of every canonical k-mer of seq, in order, after prefetching groups of
// them. Returns the number of k-mers.
template <typename Filter, typename Op>
uint64_t for_each_kmer_hash(Filter const& filter, kmer_scanner const& scanner, kmer_hasher hasher,
                            std::string_view seq, Op&& op) {
    std::array<uint64_t, prefetch_group> hashes;
    size_t pending = 0;
    uint64_t count = 0;
    auto flush = [&] {
        for (size_t i = 0; i < pending; ++i) op(hashes[i]);
        pending = 0;
    };
    scanner.for_each(seq, [&](uint64_t canonical, size_t) {
        uint64_t const h = hasher(canonical);
        if constexpr (prefetching_filter<Filter>) filter.prefetch(h);
        hashes[pending++] = h;
        ++count;
        if (pending == prefetch_group) flush();
    });
    flush();
    return count;
}

}  // namespace qmer::app
