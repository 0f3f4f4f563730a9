#pragma once
// The query-only form of a built quotient filter index: its levels, each a rank_select_table over
// the index file's mapped words (core/qf/stored/table.hpp), answered fullest level first. What
// `qmer query` answers from for the default filter: no copy of the index, no lock, no CAS, and a
// lookup cost that does not grow with the fill.
//
// Batched lookups (ARCHITECTURE.md, performance rules): prefetch(h) asks for every level's lines
// before any level is probed, so an absent k-mer's misses on k levels overlap instead of adding
// up (an index grown by --append or from stdin has several levels).
//
// Thread safety: immutable after construction; any number of threads may query it. The mapped
// words must outlive it.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "core/qf/stored/level_windows.hpp"
#include "core/qf/stored/table.hpp"

namespace qmer::qf {

class rank_select_levels {
  public:
    rank_select_levels() = default;
    // minimizer_local: the hashes asked about are minimizer-local (core/kmer/sequence_hashing.hpp),
    // so the levels count_contained prefetches get the deeper prefetch (prefetch_local). maps:
    // how each level reads a hash (core/qf/stored/level_windows.hpp), by level; none: the identity
    // (every index before format 6).
    explicit rank_select_levels(std::vector<rank_select_table> levels, bool minimizer_local = false,
                                std::vector<level_window_map> maps = {})
        : levels_(std::move(levels)),
          by_elements_(levels_.size()),
          maps_(std::move(maps)),
          local_(minimizer_local) {
        maps_.resize(levels_.size());
        // Fullest first: a present element is then found after the fewest levels (the newest
        // level of an appended index may hold only the few elements the append added).
        std::iota(by_elements_.begin(), by_elements_.end(), size_t{0});
        std::stable_sort(by_elements_.begin(), by_elements_.end(),
                         [&](size_t a, size_t b) { return levels_[a].size() > levels_[b].size(); });
    }

    template <typename Select = rank_select::broadword_select>
    bool contains(uint64_t h) const noexcept {
        for (size_t const j : by_elements_)
            if (levels_[j].template contains<Select>(maps_[j].apply(h))) return true;
        return false;
    }

    // How many of `hashes` some level contains: level by level rather than hash by hash, each
    // level's lookups over the hashes no fuller level holds, in order, through a
    // rank_select_group_lookup (a copy of the level's view in the caller's frame, whose fields
    // stay in registers across the group, and the run ends of the blocks looked up, decoded once
    // per block: consecutive hashes of a super-k-mer share them). Hash by hash, every lookup would
    // reload its level's fields and branch on the level's answer before the next level's; level by
    // level, the lookups of one level are independent of each other and overlap.
    //
    // The lines of the first level probed are the caller's to prefetch (prefetch_first, as the
    // hashes are made); each hash that level does not hold has its next level's lines asked for as
    // it is found missing, a group's worth of lookups before they are read. Prefetching every level
    // for every hash up front would spend the memory system on the levels a present hash never
    // reaches (most k-mers of mixed reads are found on the fullest level or the next;
    // bench/append/README.md).
    template <typename Select = rank_select::broadword_select>
    uint64_t count_contained(std::span<uint64_t const> hashes) const noexcept {
#if defined(__x86_64__)
        if constexpr (std::is_same_v<Select, rank_select::pdep_select>)
            return count_contained_bmi2(hashes);
        else
#endif
            return count_levels<Select>(hashes);
    }
    // The prefetch of h before count_contained: the first level it probes.
    [[gnu::always_inline]] void prefetch_first(uint64_t h) const noexcept {
        if (!by_elements_.empty()) prefetch_level(by_elements_.front(), h);
    }
    void prefetch(uint64_t h) const noexcept {
        for (size_t j = 0; j < levels_.size(); ++j) levels_[j].prefetch(maps_[j].apply(h));
    }
    // The deeper prefetch of minimizer-local hashes only on levels of at least
    // deep_prefetch_min_bytes: a smaller level mostly sits in the cache, where the extra lines
    // are instructions and miss buffers for nothing (bench/qf/LOOKUP_FILL.md, "How far E_b
    // lies").
    static constexpr size_t deep_prefetch_min_bytes = size_t{16} << 20;
    void prefetch_local(uint64_t h) const noexcept {
        for (size_t j = 0; j < levels_.size(); ++j)
            prefetch_deep_if_large(levels_[j], maps_[j].apply(h));
    }

    size_t levels() const noexcept {
        return levels_.size();
    }
    rank_select_table const& level(size_t j) const {
        return levels_.at(j);
    }
    // How level j reads a hash: its lookups are level(j).contains(level_map(j).apply(h)).
    level_window_map const& level_map(size_t j) const {
        return maps_.at(j);
    }
    size_t size() const noexcept {
        return sum(&rank_select_table::size);
    }
    size_t capacity() const noexcept {
        return sum(&rank_select_table::capacity);
    }
    size_t memory_bytes() const noexcept {
        return sum(&rank_select_table::memory_bytes);
    }
    // 1 - prod_j (1 - p_j): a false positive needs a match on some level.
    double false_positive_rate() const noexcept {
        double log_miss = 0;
        for (auto const& l : levels_) log_miss += std::log1p(-l.false_positive_rate());
        return -std::expm1(log_miss);
    }

  private:
    // count_contained's loop. Each level's lookups of the pending hashes in a loop of their own,
    // instantiated for a level that reads the hash as it is (level 0, and every level of older
    // indexes) and one that maps it, and for the last level probed, which prefetches no next one:
    // the fullest level, which answers most lookups, then costs what a one-level index's do.
    template <typename Select>
    [[gnu::always_inline]] uint64_t count_levels(std::span<uint64_t const> hashes) const noexcept {
        uint64_t hits = 0;
        std::array<uint64_t, pending_group> pending;
        size_t const levels = by_elements_.size();
        while (!hashes.empty()) {
            size_t n = std::min(hashes.size(), pending_group);
            std::copy_n(hashes.begin(), n, pending.begin());
            hashes = hashes.subspan(n);
            for (size_t at = 0; at < levels; ++at) {
                size_t const j = by_elements_[at];
                bool const identity = maps_[j].moved == 0;
                bool const last = at + 1 == levels;
                size_t const next = last ? 0 : by_elements_[at + 1];
                size_t missed;
                if (identity && last)
                    missed = lookup_level<Select, true, true>(j, next, pending.data(), n);
                else if (identity)
                    missed = lookup_level<Select, true, false>(j, next, pending.data(), n);
                else if (last)
                    missed = lookup_level<Select, false, true>(j, next, pending.data(), n);
                else
                    missed = lookup_level<Select, false, false>(j, next, pending.data(), n);
                hits += n - missed;
                n = missed;
                if (n == 0) break;
            }
        }
        return hits;
    }
    // Level j's lookups of pending[0, n): those it does not hold are moved to the front, their
    // count returned, and their lines on level `next` prefetched (unless Last).
    template <typename Select, bool Identity, bool Last>
    [[gnu::always_inline]] size_t lookup_level(size_t j, size_t next, uint64_t* pending,
                                               size_t n) const noexcept {
        rank_select_group_lookup<Select> lookup(levels_[j]);
        level_window_map const map = maps_[j];
        size_t missed = 0;
        for (size_t i = 0; i < n; ++i) {
            uint64_t const h = pending[i];
            pending[missed] = h;
            bool const found = lookup.contains(Identity ? h : map.apply(h));
            if constexpr (!Last)
                if (!found) prefetch_level(next, h);
            missed += !found;
        }
        return missed;
    }
#if defined(__x86_64__)
    // As rank_select_table::count_contained_bmi2: BMI2's shifts in the whole loop.
    [[gnu::target("bmi2"), gnu::noinline]] uint64_t count_contained_bmi2(
        std::span<uint64_t const> hashes) const noexcept {
        return count_levels<rank_select::pdep_select>(hashes);
    }
#endif

    [[gnu::always_inline]] static void prefetch_deep_if_large(rank_select_table const& level,
                                                              uint64_t h) noexcept {
        if (level.memory_bytes() >= deep_prefetch_min_bytes)
            level.prefetch_local(h);
        else
            level.prefetch(h);
    }
    // Level j's lines for h, deeper for minimizer-local hashes (see prefetch_local).
    [[gnu::always_inline]] void prefetch_level(size_t j, uint64_t h) const noexcept {
        rank_select_table const& level = levels_[j];
        uint64_t const t = maps_[j].apply(h);
        if (local_)
            prefetch_deep_if_large(level, t);
        else
            level.prefetch(t);
    }

    size_t sum(size_t (rank_select_table::*of)() const noexcept) const noexcept {
        size_t n = 0;
        for (auto const& l : levels_) n += (l.*of)();
        return n;
    }

    // The most hashes count_contained keeps pending at once (a query's lookup group is 64).
    static constexpr size_t pending_group = 64;

    std::vector<rank_select_table> levels_;
    std::vector<size_t> by_elements_;     // level indexes, most elements first
    std::vector<level_window_map> maps_;  // by level index
    bool local_ = false;                  // minimizer-local hashes (the deeper prefetch)
};

}  // namespace qmer::qf
