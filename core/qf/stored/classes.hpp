#pragma once
// The classes of a many-reference index: each stored fingerprint carries one class id beside its
// remainder (rank_select_table's value bits), and class i is the set of references that hold a
// k-mer of that fingerprint. The sets are kept once, in a table, as Mantis keeps its colour
// classes beside a counting quotient filter (Pandey, Almodaresi, Bender, Ferdman, Johnson, Patro,
// "Mantis: A Fast, Small, and Exact Large-Scale Sequence-Search Index", Cell Systems 2018): on
// strain and species panels a few classes (a strain alone, every strain of a species, every
// reference) hold most k-mers, so the table is small beside the filter whatever the number of
// references. Ids are given by frequency, the most frequent class first, so the most frequent
// sets have the smallest ids (and an id's width is what the number of classes needs).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qmer::qf {

// Sets of reference ids (each sorted, without repeats), numbered 0 .. size() - 1.
class class_table {
  public:
    class_table() = default;
    // offsets: size() + 1 entries from 0, non-decreasing, the last members.size(); each class's
    // members sorted, strictly increasing, below `references`. Throws std::invalid_argument.
    class_table(std::vector<uint64_t> class_offsets, std::vector<uint32_t> member_ids,
                size_t references)
        : offsets_(std::move(class_offsets)), members_(std::move(member_ids)) {
        if (offsets_.empty() || offsets_.front() != 0 || offsets_.back() != members_.size())
            throw std::invalid_argument("class table: bad offsets");
        // Every class non-empty and in order before any is read: then each lies inside the
        // members (the last offset is their count).
        for (size_t i = 0; i + 1 < offsets_.size(); ++i)
            if (offsets_[i + 1] <= offsets_[i])
                throw std::invalid_argument("class table: an empty or reversed class");
        for (size_t i = 0; i + 1 < offsets_.size(); ++i) {
            auto const m = members(i);
            for (size_t j = 0; j < m.size(); ++j)
                if (m[j] >= references || (j > 0 && m[j] <= m[j - 1]))
                    throw std::invalid_argument("class table: members out of order or range");
        }
    }

    size_t size() const noexcept { return offsets_.size() - 1; }
    std::span<uint32_t const> members(size_t id) const noexcept {
        return {members_.data() + offsets_[id], members_.data() + offsets_[id + 1]};
    }
    std::vector<uint64_t> const& offsets() const noexcept { return offsets_; }
    std::vector<uint32_t> const& all_members() const noexcept { return members_; }

  private:
    std::vector<uint64_t> offsets_{0};
    std::vector<uint32_t> members_;
};

// Gives each distinct set of references an id, in the order the sets first come, and counts how
// often each is asked for. Not thread-safe: a build interns from one thread (the fingerprints'
// pass in order) or gives each thread its own and merges them (intern_all).
class class_interner {
  public:
    // The id of a sorted set without repeats (not empty).
    uint32_t intern(std::span<uint32_t const> set, uint64_t count = 1) {
        uint64_t const key = key_of(set);
        auto [it, end] = by_key_.equal_range(key);
        for (; it != end; ++it)
            if (std::ranges::equal(members(it->second), set)) {
                counts_[it->second] += count;
                return it->second;
            }
        auto const id = static_cast<uint32_t>(counts_.size());
        if (id == UINT32_MAX) throw std::length_error("class table: too many classes");
        members_.insert(members_.end(), set.begin(), set.end());
        offsets_.push_back(members_.size());
        counts_.push_back(count);
        by_key_.emplace(key, id);
        return id;
    }

    // The id of the union of classes a and b (two references' k-mers that share a fingerprint).
    uint32_t union_of(uint32_t a, uint32_t b, uint64_t count = 1) {
        if (a == b) {
            counts_[a] += count;
            return a;
        }
        scratch_.clear();
        std::ranges::set_union(members(a), members(b), std::back_inserter(scratch_));
        std::vector<uint32_t> const set = scratch_;  // intern may grow members_
        return intern(set, count);
    }

    // Counts `count` more uses of class id.
    void add(uint32_t id, uint64_t count = 1) noexcept { counts_[id] += count; }
    // Takes back `count` of the uses of class id (a fingerprint's class replaced by a union).
    void forget(uint32_t id, uint64_t count = 1) noexcept { counts_[id] -= count; }

    size_t size() const noexcept { return counts_.size(); }
    uint64_t count(uint32_t id) const noexcept { return counts_[id]; }
    std::span<uint32_t const> members(uint32_t id) const noexcept {
        return {members_.data() + offsets_[id], members_.data() + offsets_[id + 1]};
    }

    // New ids by frequency: renumbered[old] = new, the most used class 0, ties by old id; classes
    // no longer used (every use forgotten) get no new id (UINT32_MAX) and leave the table.
    // Returns the renumbering and the table in the new order.
    std::pair<std::vector<uint32_t>, class_table> by_frequency(size_t references) const {
        std::vector<uint32_t> order(size());
        std::iota(order.begin(), order.end(), 0u);
        std::ranges::stable_sort(order,
                                 [&](uint32_t a, uint32_t b) { return counts_[a] > counts_[b]; });
        std::vector<uint32_t> renumbered(size(), UINT32_MAX);
        std::vector<uint64_t> offsets{0};
        std::vector<uint32_t> ids;
        for (uint32_t const old : order) {
            if (counts_[old] == 0) break;
            renumbered[old] = static_cast<uint32_t>(offsets.size() - 1);
            auto const m = members(old);
            ids.insert(ids.end(), m.begin(), m.end());
            offsets.push_back(ids.size());
        }
        return {std::move(renumbered), class_table(std::move(offsets), std::move(ids), references)};
    }

  private:
    // A mix of the members in order (sets come sorted, so a set has one key; it only spreads
    // them over the map, equal keys are compared member by member).
    static uint64_t key_of(std::span<uint32_t const> set) noexcept {
        uint64_t key = set.size();
        for (uint32_t const m : set) {
            uint64_t z = m + 0x9e3779b97f4a7c15ULL + key;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            key = z ^ (z >> 31);
        }
        return key;
    }

    std::vector<uint64_t> offsets_{0};
    std::vector<uint32_t> members_;
    std::vector<uint64_t> counts_;
    std::unordered_multimap<uint64_t, uint32_t> by_key_;
    std::vector<uint32_t> scratch_;
};

// The bits a class id takes for `classes` classes: at least 1.
constexpr unsigned class_id_bits(size_t classes) noexcept {
    unsigned bits = 1;
    while (bits < 32 && (uint64_t{1} << bits) < classes) ++bits;
    return bits;
}

}  // namespace qmer::qf
