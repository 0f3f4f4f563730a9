#pragma once
// The k-mer work of the parallel stage, shared by index and query: scan a sequence's canonical
// k-mers, hash them, and hand each to the filter a fixed number of k-mers after its table location
// was prefetched (DESIGN.md, performance rules: a filter larger than the cache is bound by memory
// latency; keeping a steady number of loads in flight overlaps their misses with each other and
// with the scanning and hashing of the k-mers behind them).

#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "core/kmer/sequence_hashing.hpp"

namespace qmer::app {

// K-mers between a prefetch and its lookup. A core keeps ~10-12 L1 misses in flight (its fill
// buffers); a larger distance only makes prefetches wait for a free buffer.
inline constexpr size_t prefetch_distance = 8;
static_assert((prefetch_distance & (prefetch_distance - 1)) == 0, "a power of two (ring index)");

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

// Calls op(h) for the hash of every canonical k-mer of seq under `hashing` (a plain_kmer_hashing
// or local_kmer_hashing: core/kmer/sequence_hashing.hpp), in order, prefetch_distance k-mers after
// prefetching it. If op returns bool, false stops the walk (a read whose verdict is settled).
// Returns the number of k-mers handed to op.
template <typename Filter, typename Hashing, typename Op>
uint64_t for_each_kmer_hash(Filter const& filter, Hashing const& hashing, std::string_view seq,
                            Op&& op) {
    constexpr bool can_stop = std::is_same_v<std::invoke_result_t<Op&, uint64_t>, bool>;
    constexpr size_t ring_mask = prefetch_distance - 1;
    std::array<uint64_t, prefetch_distance> ring;
    uint64_t produced = 0, consumed = 0;
    // Hands the oldest pending hash to op; false when op asked to stop.
    auto consume = [&]() -> bool {
        uint64_t const h = ring[consumed++ & ring_mask];
        if constexpr (can_stop) {
            return op(h);
        } else {
            op(h);
            return true;
        }
    };
    bool const finished = hashing.for_each(seq, [&](uint64_t h) -> bool {
        if constexpr (prefetching_filter<Filter>) filter.prefetch(h);
        ring[produced++ & ring_mask] = h;
        return produced - consumed < prefetch_distance || consume();
    });
    if (finished)
        while (consumed < produced && consume()) {
        }
    return consumed;
}

}  // namespace qmer::app
