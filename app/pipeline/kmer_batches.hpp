#pragma once
// The k-mer work of the parallel stage, shared by index and query: scan a sequence's canonical
// k-mers, hash them, and hand each to the filter a fixed number of k-mers after its table location
// was prefetched (ARCHITECTURE.md, performance rules: a filter larger than the cache is bound by
// memory latency; keeping a steady number of loads in flight overlaps their misses with each other
// and with the scanning and hashing of the k-mers behind them). Two ways: a ring, one k-mer in and
// one out (inserts), and groups, a group's k-mers hashed, then looked up (queries).

#include <array>
#include <concepts>
#include <cstdint>
#include <span>
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

// A filter with a deeper prefetch for hashes that arrive a window at a time
// (rank_select_table::prefetch_local).
template <typename Filter>
concept local_prefetching_filter = requires(Filter const& f, uint64_t h) {
    f.prefetch_local(h);
};

// Hashings whose consecutive hashes share a window of the table (local_kmer_hashing); any other,
// plain_kmer_hashing or a wrapper without the flag, is taken as uniform.
template <typename Hashing>
concept minimizer_local_hashing = requires {
    requires Hashing::minimizer_local;
};

// The prefetch of h's lookup, for hashes of `Hashing`.
template <typename Hashing, typename Filter>
[[gnu::always_inline]] inline void prefetch_lookup(Filter const& filter, uint64_t h) noexcept {
    if constexpr (minimizer_local_hashing<Hashing> && local_prefetching_filter<Filter>) {
        filter.prefetch_local(h);
    } else if constexpr (prefetching_filter<Filter>) {
        filter.prefetch(h);
    }
}

// A filter whose group count prefetches the lines of its later lookups itself, and wants only
// the first of them prefetched as the hashes are made (rank_select_levels: the first level it
// probes; each further level for the hashes that reach it).
template <typename Filter>
concept first_prefetching_filter = requires(Filter const& f, uint64_t h) {
    f.prefetch_first(h);
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

// A filter that answers a whole group of lookups in one call (rank_select_table::count_contained:
// its fields are then held in registers across the group, not reloaded for every lookup).
template <typename Filter>
concept group_counting_filter = requires(Filter const& f, std::span<uint64_t const> hashes) {
    { f.count_contained(hashes) } -> std::same_as<uint64_t>;
};

// How many of `hashes` a filter that no thread writes any more contains.
template <typename Filter>
uint64_t count_contained_read_only(Filter const& filter,
                                   std::span<uint64_t const> hashes) noexcept {
    if constexpr (group_counting_filter<Filter>) {
        return filter.count_contained(hashes);
    } else {
        uint64_t hits = 0;
        for (uint64_t const h : hashes) hits += contains_read_only(filter, h);
        return hits;
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
        prefetch_lookup<Hashing>(filter, h);
        ring[produced++ & ring_mask] = h;
        return produced - consumed < prefetch_distance || consume();
    });
    if (finished)
        while (consumed < produced && consume()) {
        }
    return consumed;
}

// Hashes and prefetches the k-mers of seq a group at a time, then hands the group to op in order:
// two tight loops rather than the ring's one, so the scan keeps its registers and its predictable
// branches, and the lookups of a group, independent of each other, overlap in the out-of-order
// window (bench/qf/LOOKUP_FILL.md has the instruction counts and timings). A group's first lookup
// comes a group's length after its prefetch, its last one as many lookups after it. An op that
// returns bool stops the walk with false (--quick, a read whose verdict is settled): its groups
// start at first_stop_group and double up to last_stop_group, so a read settled by its first
// k-mers has hashed few that it no longer needs, and one that is not (most of them absent) soon
// goes by whole groups. An op that takes a std::span<uint64_t const> is handed each group whole,
// in order (every k-mer looked up: count_contained_read_only), lookup_group k-mers at a time
// (64 rather than 32: the table's lines of about half a 150 bp read in flight at once; --quick's
// groups stop at 32, where 64 is no faster; bench/qf/LOOKUP_FILL.md has the runs). Returns the
// number of k-mers handed to op.
inline constexpr size_t lookup_group = 64;
inline constexpr size_t first_stop_group = 8;
inline constexpr size_t last_stop_group = 32;
static_assert(first_stop_group <= last_stop_group && last_stop_group <= lookup_group);

template <typename Filter, typename Hashing, typename Op>
uint64_t for_each_kmer_hash_grouped(Filter const& filter, Hashing const& hashing,
                                    std::string_view seq, Op&& op) {
    constexpr bool whole = std::is_invocable_v<Op&, std::span<uint64_t const>>;
    constexpr bool can_stop = [] {
        if constexpr (whole) {
            return false;
        } else {
            return std::is_same_v<std::invoke_result_t<Op&, uint64_t>, bool>;
        }
    }();
    std::array<uint64_t, lookup_group> group;
    size_t n = 0;
    size_t size = can_stop ? first_stop_group : lookup_group;
    uint64_t handed = 0;
    // Hands the group over; false when op asked to stop.
    auto hand_over = [&]() -> bool {
        if constexpr (whole) {
            if (n != 0) op(std::span<uint64_t const>(group.data(), n));
        } else {
            for (size_t i = 0; i < n; ++i) {
                if constexpr (can_stop) {
                    if (!op(group[i])) {
                        handed += i + 1;
                        return false;
                    }
                } else {
                    op(group[i]);
                }
            }
        }
        handed += n;
        n = 0;
        if constexpr (can_stop) size = size < last_stop_group ? 2 * size : last_stop_group;
        return true;
    };
    bool const finished = hashing.for_each(seq, [&](uint64_t h) {
        if constexpr (whole && first_prefetching_filter<Filter>) {
            filter.prefetch_first(h);
        } else {
            prefetch_lookup<Hashing>(filter, h);
        }
        group[n++] = h;
        if constexpr (can_stop) {
            return n < size || hand_over();
        } else {
            if (n == lookup_group) hand_over();
        }
    });
    if (finished) hand_over();
    return handed;
}

}  // namespace qmer::app
