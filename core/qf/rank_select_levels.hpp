#pragma once
// The query-only form of a built quotient filter index: its levels, each a rank_select_table over
// the index file's mapped words (core/qf/rank_select.hpp), answered newest level first. What
// `qmer query` answers from for the default filter: no copy of the index, no lock, no CAS, and a
// lookup cost that does not grow with the fill.
//
// Batched lookups (DESIGN.md, performance rules): prefetch(h) asks for every level's lines
// before any level is probed, so an absent k-mer's misses on k levels overlap instead of adding
// up (an index grown by --append or from stdin has several levels).
//
// Thread safety: immutable after construction; any number of threads may query it. The mapped
// words must outlive it.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/qf/rank_select.hpp"

namespace qmer::qf {

class rank_select_levels {
  public:
    rank_select_levels() = default;
    explicit rank_select_levels(std::vector<rank_select_table> levels)
        : levels_(std::move(levels)) {}

    template <typename Select = rank_select::broadword_select>
    bool contains(uint64_t h) const noexcept {
        // Newest first: the top level holds about half of the elements.
        for (size_t j = levels_.size(); j-- > 0;)
            if (levels_[j].template contains<Select>(h)) return true;
        return false;
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

    std::vector<rank_select_table> levels_;
};

}  // namespace qmer::qf
