// The prefetch ring of the parallel stage (app/pipeline/kmer_batches.hpp): every k-mer's hash is
// handed to the operation once, in sequence order, prefetch_distance k-mers after its prefetch;
// an operation that returns false stops the walk at once, and the count says how many it saw.

#include "app/pipeline/kmer_batches.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
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

TEST(prefetch_ring, hands_every_hash_once_in_order_after_its_prefetch) {
    qmer::plain_kmer_hashing const hashing(21, 7);
    // Shorter than the ring, exactly its length, longer; with an N that splits the k-mers.
    for (size_t length :
         std::vector<size_t>{0, 5, 21, 21 + prefetch_distance - 1, 28, 29, 150, 1000}) {
        std::string seq = random_bases(length, static_cast<unsigned>(length));
        if (length > 60) seq[40] = 'N';
        recording_filter filter;
        std::vector<uint64_t> seen;
        std::vector<size_t> prefetched_before;  // prefetches made when each hash was handed over
        uint64_t const count = for_each_kmer_hash(filter, hashing, seq, [&](uint64_t h) {
            seen.push_back(h);
            prefetched_before.push_back(filter.prefetched.size());
        });
        auto const expected = direct(hashing, seq);
        EXPECT_EQ(seen, expected) << length;
        EXPECT_EQ(count, expected.size()) << length;
        EXPECT_EQ(filter.prefetched, expected) << length;
        // Hash i is handed over once hash i + distance - 1 is prefetched (or the sequence ended).
        for (size_t i = 0; i < seen.size(); ++i)
            EXPECT_EQ(prefetched_before[i], std::min(expected.size(), i + prefetch_distance))
                << length << " " << i;
    }
}

TEST(prefetch_ring, false_stops_at_once_and_counts_what_was_handed_over) {
    qmer::plain_kmer_hashing const hashing(21, 7);
    std::string const seq = random_bases(300, 3);
    auto const expected = direct(hashing, seq);
    for (size_t stop_after : {size_t{1}, size_t{3}, prefetch_distance, prefetch_distance + 1,
                              size_t{100}, expected.size()}) {
        recording_filter filter;
        std::vector<uint64_t> seen;
        uint64_t const count = for_each_kmer_hash(filter, hashing, seq, [&](uint64_t h) {
            seen.push_back(h);
            return seen.size() < stop_after;
        });
        EXPECT_EQ(count, stop_after);
        ASSERT_EQ(seen.size(), stop_after);
        EXPECT_TRUE(std::equal(seen.begin(), seen.end(), expected.begin()));
        // No prefetch runs further ahead than the ring holds.
        EXPECT_LE(filter.prefetched.size(), stop_after + prefetch_distance);
    }
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
}

}  // namespace
