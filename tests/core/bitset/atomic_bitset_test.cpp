// Single-threaded semantics of qmer::atomic_bitset against std::vector<bool> as the oracle, and the
// raw word round trip the index file uses.
#include "core/bitset/atomic_bitset.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace {

TEST(atomic_bitset, starts_clear_and_sets_clears_flips_single_bits) {
    qmer::atomic_bitset b(130);  // three words, the last one partial
    EXPECT_EQ(b.size(), 130u);
    EXPECT_EQ(b.word_count(), 3u);
    for (size_t i = 0; i < b.size(); ++i) ASSERT_FALSE(b.get(i));
    b.set(0);
    b.set(63);
    b.set(64);
    b.set(129);
    EXPECT_TRUE(b.get(0) && b.get(63) && b.get(64) && b.get(129));
    EXPECT_FALSE(b.get(1) || b.get(62) || b.get(65) || b.get(128));
    EXPECT_EQ(b.count(), 4u);
    b.clear(63);
    EXPECT_FALSE(b.get(63));
    EXPECT_TRUE(b.get(0));
    b.flip(63);
    b.flip(64);
    EXPECT_TRUE(b.get(63));
    EXPECT_FALSE(b.get(64));
    EXPECT_EQ(b.load_word(0), (uint64_t{1} << 63) | 1);
}

TEST(atomic_bitset, test_and_set_returns_the_previous_value) {
    qmer::atomic_bitset b(100);
    EXPECT_FALSE(b.test_and_set(77));
    EXPECT_TRUE(b.test_and_set(77));
    EXPECT_TRUE(b.get(77));
    EXPECT_EQ(b.fetch_or_word(1, 0b101), uint64_t{1} << (77 - 64));
    EXPECT_EQ(b.load_word(1), (uint64_t{1} << 13) | 0b101);
}

TEST(atomic_bitset, random_operations_match_vector_bool) {
    size_t const n = 1000;
    qmer::atomic_bitset b(n);
    std::vector<bool> oracle(n);
    uint64_t x = 12345;
    for (int step = 0; step < 100000; ++step) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t const i = x % n;
        switch ((x >> 32) % 5) {
            case 0:
                b.set(i), oracle[i] = true;
                break;
            case 1:
                b.clear(i), oracle[i] = false;
                break;
            case 2:
                b.flip(i), oracle[i] = !oracle[i];
                break;
            case 3:
                ASSERT_EQ(b.test_and_set(i), oracle[i]);
                oracle[i] = true;
                break;
            default:
                ASSERT_EQ(b.get(i), oracle[i]) << i;
        }
    }
    size_t ones = 0;
    for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(b.get(i), oracle[i]) << i;
        ones += oracle[i];
    }
    EXPECT_EQ(b.count(), ones);
}

TEST(atomic_bitset, raw_words_round_trip_and_reject_bits_past_the_end) {
    qmer::atomic_bitset b(200);
    for (size_t i = 0; i < 200; i += 7) b.set(i);
    std::vector<uint64_t> words(b.word_count());
    b.copy_words_to(words);
    qmer::atomic_bitset c(200);
    c.copy_words_from(words);
    for (size_t i = 0; i < 200; ++i) ASSERT_EQ(c.get(i), i % 7 == 0) << i;
    words.back() |= uint64_t{1} << 63;  // bit 255 of a 200-bit set
    EXPECT_THROW(c.copy_words_from(words), std::invalid_argument);
    std::vector<uint64_t> wrong(2);
    EXPECT_THROW(c.copy_words_from(wrong), std::invalid_argument);
}

TEST(atomic_word_array, is_zeroed_aligned_and_movable) {
    qmer::atomic_word_array small(10);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
    qmer::atomic_word_array big((size_t{4} << 20) / 8);  // 4 MiB: 2 MiB aligned for huge pages
    EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % (size_t{2} << 20), 0u);
    for (size_t i = 0; i < big.size(); i += 4097) ASSERT_EQ(big[i].load(), 0u);
    big[5].store(9);
    qmer::atomic_word_array moved(std::move(big));
    EXPECT_EQ(moved[5].load(), 9u);
    EXPECT_EQ(big.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is defined
    EXPECT_EQ(qmer::atomic_word_array(0).size(), 0u);
}

}  // namespace
