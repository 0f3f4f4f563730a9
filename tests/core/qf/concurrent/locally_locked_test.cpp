// Tests of core/qf/concurrent/locally_locked.hpp (single-threaded behaviour): the typed contract
// suite, and an exact oracle under random inserts and removes up to 95% fill, checked against the
// sequential reference filter fed the same operations (same table contents, same answers).

#include "core/qf/concurrent/locally_locked.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "core/qf/qf_makers.hpp"

namespace qmer::test {
namespace {

using qf::locally_locked_filter;
using qf::sequential_filter;

using ll_types = ::testing::Types<locally_locked_filter, odd_locally_locked>;
INSTANTIATE_TYPED_TEST_SUITE_P(locally_locked, filter_contract, ll_types);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(filter_concurrency);  // in the stress test

void run_oracle(unsigned q, unsigned r, uint64_t seed, int steps) {
    locally_locked_filter f(q, r);
    sequential_filter ref(q, r);
    std::set<uint64_t> oracle;
    std::vector<uint64_t> stored;
    std::mt19937_64 rng(seed);
    auto const g = f.geometry();
    size_t const target = static_cast<size_t>(0.95 * static_cast<double>(f.capacity()));
    for (int step = 0; step < steps; ++step) {
        bool const do_remove = !stored.empty() && (oracle.size() >= target || rng() % 3 == 0);
        if (do_remove) {
            size_t const i = rng() % stored.size();
            uint64_t const h = stored[i];
            ASSERT_TRUE(f.remove(h)) << "step " << step;
            ASSERT_TRUE(ref.remove(h));
            oracle.erase(g.fingerprint(h));
            stored[i] = stored.back();
            stored.pop_back();
            ASSERT_FALSE(f.remove(h)) << "step " << step;
        } else {
            uint64_t const h = rng();
            auto const res = f.insert(h);
            ASSERT_EQ(res, ref.insert(h)) << "step " << step;
            bool const fresh = oracle.insert(g.fingerprint(h)).second;
            ASSERT_EQ(res, fresh ? insert_result::inserted : insert_result::already_present);
            if (fresh) stored.push_back(h);
        }
        ASSERT_EQ(f.size(), oracle.size());
        if (step % 499 == 0 || step + 20 > steps) {
            // Same slots as the reference, word for word.
            auto const& rs = ref.slots();
            for (size_t w = 0; w < rs.group_count(); ++w)
                ASSERT_EQ(f.groups()[w].load(), rs.load_group(w))
                    << "group " << w << " step " << step;
            ASSERT_EQ(fingerprints_of(f), std::vector<uint64_t>(oracle.begin(), oracle.end()));
            for (uint64_t h : stored) ASSERT_TRUE(f.contains(h));
            // The lock-free query of a final table (nothing runs concurrently here) answers
            // exactly as the oracle does, holes left by removes included.
            for (uint64_t h : stored) ASSERT_TRUE(f.contains_final(h)) << "step " << step;
            for (int k = 0; k < 2000; ++k) {
                uint64_t const h = rng();
                ASSERT_EQ(f.contains(h), oracle.count(g.fingerprint(h)) == 1);
                ASSERT_EQ(f.contains_final(h), oracle.count(g.fingerprint(h)) == 1);
            }
        }
    }
}

TEST(locally_locked_oracle, short_fingerprints_many_collisions) {
    run_oracle(10, 4, 1, 20000);
}
TEST(locally_locked_oracle, thirteen_bit_remainders) {
    run_oracle(11, 13, 2, 20000);
}
TEST(locally_locked_oracle, one_remainder_bit) {
    run_oracle(9, 1, 3, 10000);
}
TEST(locally_locked_oracle, wide_slots_one_per_group) {
    run_oracle(9, 50, 4, 10000);
}

TEST(locally_locked, cascading_insert_only_into_an_empty_canonical_slot) {
    locally_locked_filter f(8, 10);
    uint64_t const a = uint64_t{5} << 56;                   // quotient 5
    uint64_t const b = (uint64_t{5} << 56) | (1ULL << 50);  // quotient 5, another remainder
    EXPECT_TRUE(f.canonical_slot_empty(a));
    EXPECT_TRUE(f.try_insert_into_empty_canonical(a));
    EXPECT_FALSE(f.canonical_slot_empty(a));
    EXPECT_FALSE(f.try_insert_into_empty_canonical(b));
    EXPECT_TRUE(f.contains(a));
    EXPECT_FALSE(f.contains(b));
    EXPECT_EQ(f.size(), 1u);
}

TEST(locally_locked, words_out_and_back_in) {
    locally_locked_filter f(12, 9);
    auto const keys = distinct_keys(3500, 21);
    for (uint64_t k : keys) f.insert(k);
    std::vector<uint64_t> words;
    for (auto const& w : f.groups()) words.push_back(w.load());
    locally_locked_filter g(12, 9, f.total_slots(), words, f.size());
    EXPECT_EQ(fingerprints_of(g), fingerprints_of(f));
    for (uint64_t k : keys) ASSERT_TRUE(g.contains(k));
    EXPECT_EQ(g.size(), f.size());
    EXPECT_THROW(locally_locked_filter(12, 9, f.total_slots(), std::span(words).first(3), 0),
                 std::invalid_argument);
}

}  // namespace
}  // namespace qmer::test

namespace qmer::test {
namespace {

// append_sorted (the sorted build): the same set appended in increasing fingerprint order, in
// several calls and with repeats, gives the table insert() gives, word for word, for a power of
// two and an odd slot count; a table too small stops the append where the overflow area ends.
void expect_sorted_append_equals_inserts(qf::geometry g, size_t n) {
    SCOPED_TRACE(testing::Message()
                 << "slots " << g.canonical_slots() << " r " << g.remainder_bits);
    qf::locally_locked_filter inserted(g), appended(g);
    auto const keys = distinct_keys(n, 71);
    std::vector<uint64_t> fps;
    for (uint64_t k : keys) {
        ASSERT_NE(inserted.insert(k), insert_result::full);
        fps.push_back(g.fingerprint(k));
        if (fps.size() % 5 == 0) fps.push_back(g.fingerprint(k));  // a repeat
    }
    std::sort(fps.begin(), fps.end());
    qf::locally_locked_filter::sorted_append_state state;
    std::span<uint64_t const> all(fps);
    size_t const third = fps.size() / 3;
    EXPECT_EQ(appended.append_sorted(all.first(third), state), third);
    EXPECT_EQ(appended.append_sorted(all.subspan(third), state), fps.size() - third);
    EXPECT_EQ(appended.size(), inserted.size());
    auto const a = inserted.groups(), b = appended.groups();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].load(), b[i].load()) << "word " << i;
    for (uint64_t k : keys) ASSERT_TRUE(appended.contains_final(k));
}

TEST(locally_locked_sorted_append, equals_inserts_word_for_word) {
    expect_sorted_append_equals_inserts({12, 10}, 3900);                            // 95% of 2^12
    expect_sorted_append_equals_inserts(qf::geometry::with_slots(5000, 11), 4700);  // 94%
    expect_sorted_append_equals_inserts(qf::geometry::with_slots(5000, 3), 4000);   // collisions
}

TEST(locally_locked_sorted_append, stops_where_the_overflow_area_ends) {
    qf::geometry const g = qf::geometry::with_slots(1000, 10);
    qf::locally_locked_filter f(g);  // 1000 + 79 slots
    auto const keys = distinct_keys(3000, 72);
    std::vector<uint64_t> fps;
    for (uint64_t k : keys) fps.push_back(g.fingerprint(k));
    std::sort(fps.begin(), fps.end());
    fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
    qf::locally_locked_filter::sorted_append_state state;
    size_t const used = f.append_sorted(fps, state);
    EXPECT_LT(used, fps.size());
    EXPECT_EQ(f.size(), used);
    EXPECT_LE(f.size(), f.total_slots());
    for (size_t i = 0; i < used; ++i) ASSERT_TRUE(f.contains(g.hash_of_fingerprint(fps[i])));
}

}  // namespace
}  // namespace qmer::test
