#pragma once
// The query-only form of a built quotient filter index: its levels, each a rank_select_table over
// the index file's mapped words (core/qf/rank_select.hpp), answered fullest level first. What
// `qmer query` answers from for the default filter: no copy of the index, no lock, no CAS, and a
// lookup cost that does not grow with the fill.
//
// Batched lookups (DESIGN.md, performance rules): prefetch(h) asks for every level's lines
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
#include <vector>

#include "core/qf/rank_select.hpp"

namespace qmer::qf {

class rank_select_levels {
  public:
    rank_select_levels() = default;
    explicit rank_select_levels(std::vector<rank_select_table> levels)
        : levels_(std::move(levels)), by_elements_(levels_.size()) {
        // Fullest first: a present element is then found after the fewest levels (the newest
        // level of an appended index may hold only the few elements the append added).
        std::iota(by_elements_.begin(), by_elements_.end(), size_t{0});
        std::stable_sort(by_elements_.begin(), by_elements_.end(),
                         [&](size_t a, size_t b) { return levels_[a].size() > levels_[b].size(); });
    }

    template <typename Select = rank_select::broadword_select>
    bool contains(uint64_t h) const noexcept {
        for (size_t const j : by_elements_)
            if (levels_[j].template contains<Select>(h)) return true;
        return false;
    }

    // How many of `hashes` some level contains: level by level rather than hash by hash, each
    // level's lookups over the hashes no fuller level holds, on a copy of the level's view in the
    // caller's frame (rank_select_table::count_contained says why the copy: its fields stay in
    // registers across the group). Hash by hash, every lookup reloaded its level's fields and
    // branched on the level's answer before the next level's; level by level, the lookups of
    // one level are independent of each other and overlap.
    template <typename Select = rank_select::broadword_select>
    uint64_t count_contained(std::span<uint64_t const> hashes) const noexcept {
        uint64_t hits = 0;
        std::array<uint64_t, pending_group> pending;
        while (!hashes.empty()) {
            size_t n = std::min(hashes.size(), pending_group);
            std::copy_n(hashes.begin(), n, pending.begin());
            hashes = hashes.subspan(n);
            for (size_t const j : by_elements_) {
                rank_select_table const view = levels_[j];
                size_t missed = 0;
                for (size_t i = 0; i < n; ++i) {
                    uint64_t const h = pending[i];
                    pending[missed] = h;
                    missed += !view.template contains<Select>(h);
                }
                hits += n - missed;
                n = missed;
                if (n == 0) break;
            }
        }
        return hits;
    }
    void prefetch(uint64_t h) const noexcept {
        for (auto const& level : levels_) level.prefetch(h);
    }
    // The deeper prefetch of minimizer-local hashes only on levels of at least
    // deep_prefetch_min_bytes: a smaller level mostly sits in the cache, where the extra lines
    // are instructions and miss buffers for nothing (bench/qf/LOOKUP_FILL.md, "How far E_b
    // lies").
    static constexpr size_t deep_prefetch_min_bytes = size_t{16} << 20;
    void prefetch_local(uint64_t h) const noexcept {
        for (auto const& level : levels_) {
            if (level.memory_bytes() >= deep_prefetch_min_bytes)
                level.prefetch_local(h);
            else
                level.prefetch(h);
        }
    }

    size_t levels() const noexcept { return levels_.size(); }
    rank_select_table const& level(size_t j) const { return levels_.at(j); }
    size_t size() const noexcept { return sum(&rank_select_table::size); }
    size_t capacity() const noexcept { return sum(&rank_select_table::capacity); }
    size_t memory_bytes() const noexcept { return sum(&rank_select_table::memory_bytes); }
    // 1 - prod_j (1 - p_j): a false positive needs a match on some level.
    double false_positive_rate() const noexcept {
        double log_miss = 0;
        for (auto const& l : levels_) log_miss += std::log1p(-l.false_positive_rate());
        return -std::expm1(log_miss);
    }

  private:
    size_t sum(size_t (rank_select_table::*of)() const noexcept) const noexcept {
        size_t n = 0;
        for (auto const& l : levels_) n += (l.*of)();
        return n;
    }

    // The most hashes count_contained keeps pending at once (a query's lookup group is 64).
    static constexpr size_t pending_group = 64;

    std::vector<rank_select_table> levels_;
    std::vector<size_t> by_elements_;  // level indexes, most elements first
};

}  // namespace qmer::qf
