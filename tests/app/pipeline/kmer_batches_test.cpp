// The prefetch ring and the lookup groups of the parallel stage (app/pipeline/kmer_batches.hpp):
// every k-mer's hash is handed to the operation once, in sequence order, after its prefetch (the
// ring: prefetch_distance k-mers after it; the groups: once its whole group is prefetched); an
// operation that returns false stops the ring's walk at once, and the count says how many it saw.

#include "app/pipeline/kmer_batches.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace qmer::app;

// Records what the ring asks of a filter.
struct recording_filter {
    mutable std::vector<uint64_t> prefetched;
    void prefetch(uint64_t h) const { prefetched.push_back(h); }
    bool contains(uint64_t) const { return true; }
};

std::string random_bases(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s;
    for (size_t i = 0; i < n; ++i) s += "ACGT"[rng() % 4];
    return s;
}

// The hashes a plain walk gives, for comparison.
std::vector<uint64_t> direct(qmer::plain_kmer_hashing const& hashing, std::string_view seq) {
    std::vector<uint64_t> out;
    hashing.for_each(seq, [&](uint64_t h) { out.push_back(h); });
    return out;
}

// Walks the k-mers of sequences of `lengths` (an N splitting the longer ones) with `walk` (one of
// the two walks of kmer_batches.hpp), and checks that every hash is handed over once, in order,
// after its prefetch and after exactly `ready(i, n)` prefetches (n: the sequence's k-mers).
template <typename Walk, typename Ready>
void check_hands_every_hash_once(std::vector<size_t> const& lengths, Walk walk, Ready ready) {
    qmer::plain_kmer_hashing const hashing(21, 7);
    for (size_t length : lengths) {
        std::string seq = random_bases(length, static_cast<unsigned>(length));
        if (length > 60) seq[40] = 'N';
        recording_filter filter;
        std::vector<uint64_t> seen;
        std::vector<size_t> prefetched_before;  // prefetches made when each hash was handed over
        uint64_t const count = walk(filter, hashing, seq, [&](uint64_t h) {
            seen.push_back(h);
            prefetched_before.push_back(filter.prefetched.size());
        });
        auto const expected = direct(hashing, seq);
        EXPECT_EQ(seen, expected) << length;
        EXPECT_EQ(count, expected.size()) << length;
        EXPECT_EQ(filter.prefetched, expected) << length;
        for (size_t i = 0; i < seen.size(); ++i)
            EXPECT_EQ(prefetched_before[i], ready(i, expected.size())) << length << " " << i;
    }
}

TEST(prefetch_ring, hands_every_hash_once_in_order_after_its_prefetch) {
    // Shorter than the ring, exactly its length, longer. Hash i is handed over once hash
    // i + distance - 1 is prefetched (or the sequence ended).
    check_hands_every_hash_once(
        {0, 5, 21, 21 + prefetch_distance - 1, 28, 29, 150, 1000},
        [](auto const&... args) { return for_each_kmer_hash(args...); },
        [](size_t i, size_t n) { return std::min(n, i + prefetch_distance); });
}

// Stops `walk` with false after `stop_after` hashes, and checks that it stopped at once, counted
// what it handed over, and prefetched at most `ahead(stop_after)` hashes.
template <typename Walk, typename Ahead>
void check_false_stops_at_once(Walk walk, Ahead ahead) {
    qmer::plain_kmer_hashing const hashing(21, 7);
    std::string const seq = random_bases(300, 3);
    auto const expected = direct(hashing, seq);
    for (size_t stop_after : {size_t{1}, size_t{3}, prefetch_distance, prefetch_distance + 1,
                              size_t{23}, size_t{24}, size_t{25}, size_t{100}, expected.size()}) {
        recording_filter filter;
        std::vector<uint64_t> seen;
        uint64_t const count = walk(filter, hashing, seq, [&](uint64_t h) {
            seen.push_back(h);
            return seen.size() < stop_after;
        });
        EXPECT_EQ(count, stop_after);
        ASSERT_EQ(seen.size(), stop_after);
        EXPECT_TRUE(std::equal(seen.begin(), seen.end(), expected.begin()));
        EXPECT_LE(filter.prefetched.size(), std::min(expected.size(), ahead(stop_after)))
            << stop_after;
    }
}

TEST(prefetch_ring, false_stops_at_once_and_counts_what_was_handed_over) {
    // No prefetch runs further ahead than the ring holds.
    check_false_stops_at_once([](auto const&... args) { return for_each_kmer_hash(args...); },
                              [](size_t stop_after) { return stop_after + prefetch_distance; });
}

TEST(lookup_groups, false_stops_at_once_after_groups_that_double) {
    // Groups of 8, 16, then 32: a walk stopped at hash i has prefetched the groups up to i's.
    auto end_of_group = [](size_t stop_after) {
        size_t end = 0;
        for (size_t size = first_stop_group; end < stop_after;
             size = std::min(2 * size, last_stop_group))
            end += size;
        return end;
    };
    EXPECT_EQ(end_of_group(1), 8u);
    EXPECT_EQ(end_of_group(9), 24u);
    EXPECT_EQ(end_of_group(25), 56u);
    EXPECT_EQ(end_of_group(57), 88u);
    check_false_stops_at_once(
        [](auto const&... args) { return for_each_kmer_hash_grouped(args...); }, end_of_group);
    // And exactly those: every hash of the stopped walk's group was prefetched before it was
    // handed over.
    qmer::plain_kmer_hashing const hashing(21, 7);
    std::string const seq = random_bases(300, 4);
    size_t const n = direct(hashing, seq).size();
    recording_filter filter;
    std::vector<size_t> prefetched_before;
    for_each_kmer_hash_grouped(filter, hashing, seq, [&](uint64_t) {
        prefetched_before.push_back(filter.prefetched.size());
        return true;
    });
    ASSERT_EQ(prefetched_before.size(), n);
    for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(prefetched_before[i], std::min(n, end_of_group(i + 1))) << i;
}

TEST(lookup_groups, hand_every_hash_once_in_order_after_its_whole_group_is_prefetched) {
    // No k-mer, fewer than a group, exactly one, one more, several. Hash i is handed over once
    // its group, the lookup_group hashes from i - i % lookup_group, is prefetched (the last
    // group: once the sequence ended).
    check_hands_every_hash_once(
        {0, 5, 21, 21 + lookup_group - 2, 21 + lookup_group - 1, 21 + lookup_group, 150, 1000},
        [](auto const&... args) { return for_each_kmer_hash_grouped(args...); },
        [](size_t i, size_t n) { return std::min(n, (i / lookup_group + 1) * lookup_group); });
}

TEST(lookup_groups, a_group_op_is_handed_every_hash_once_in_order_in_whole_groups) {
    qmer::plain_kmer_hashing const hashing(21, 7);
    for (size_t length : {size_t{0}, size_t{5}, size_t{21}, 21 + lookup_group - 1,
                          21 + lookup_group, size_t{150}, size_t{1000}}) {
        std::string seq = random_bases(length, static_cast<unsigned>(length));
        if (length > 60) seq[40] = 'N';
        recording_filter filter;
        std::vector<uint64_t> seen;
        std::vector<size_t> sizes;
        uint64_t const count =
            for_each_kmer_hash_grouped(filter, hashing, seq, [&](std::span<uint64_t const> g) {
                // The whole group is prefetched before it is handed over.
                EXPECT_EQ(filter.prefetched.size(), seen.size() + g.size()) << length;
                seen.insert(seen.end(), g.begin(), g.end());
                sizes.push_back(g.size());
            });
        auto const expected = direct(hashing, seq);
        EXPECT_EQ(seen, expected) << length;
        EXPECT_EQ(count, expected.size()) << length;
        // Full groups, then the rest; no empty group.
        for (size_t i = 0; i < sizes.size(); ++i) {
            EXPECT_GT(sizes[i], 0u) << length;
            if (i + 1 < sizes.size()) {
                EXPECT_EQ(sizes[i], lookup_group) << length;
            }
        }
    }
}

TEST(lookup_groups, count_contained_read_only_counts_what_contains_answers) {
    struct odd_filter {  // contains the odd hashes; no group method: counted one by one
        bool contains(uint64_t h) const { return h & 1; }
    } const filter;
    std::vector<uint64_t> const hashes = {1, 2, 3, 5, 8, 13, 21, 34};
    EXPECT_EQ(count_contained_read_only(filter, hashes), 5u);
    EXPECT_EQ(count_contained_read_only(filter, std::span<uint64_t const>{}), 0u);
}

TEST(prefetch_ring, a_filter_without_prefetch_is_walked_the_same) {
    struct plain_filter {
        bool contains(uint64_t) const { return false; }
    } const filter;
    qmer::plain_kmer_hashing const hashing(31, 1);
    std::string const seq = random_bases(500, 9);
    std::vector<uint64_t> seen;
    for_each_kmer_hash(filter, hashing, seq, [&](uint64_t h) { seen.push_back(h); });
    EXPECT_EQ(seen, direct(hashing, seq));
    std::vector<uint64_t> grouped;
    for_each_kmer_hash_grouped(filter, hashing, seq, [&](uint64_t h) { grouped.push_back(h); });
    EXPECT_EQ(grouped, direct(hashing, seq));
}

}  // namespace
