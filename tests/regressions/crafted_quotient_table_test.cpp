// Regression (found by fuzz/index_damage_fuzz on crafted files): the quotient filters must not load
// whatever words an index file with a valid checksum holds. A slot in a lock state makes `--append`
// (and, for `--filter locally-locked`, every query) wait forever for a lock no thread holds; a
// shifted slot 0 sends the externally locked filter's left scan below the table; a run that begins
// before its canonical slot makes the locally locked insert write below its buffer.
// core/qf/table_check.hpp checks each saved table before a filter adopts it, and
// app/filters/persistence.hpp reports a table it refuses as a damaged index.
//
// Tested here: tables written by the filters themselves (full, grown, after removes) pass; each
// kind of impossible table is refused with a reason naming the slot; and the loaders refuse such
// files as index_error ("damaged index"), for every filter whose table has status bits.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "app/filters/persistence.hpp"
#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "core/qf/baseline/external_locks.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/table_check.hpp"
#include "crafted_index_fixture.hpp"
#include "fuzz/index_damage.hpp"
#include "io/index_file.hpp"

namespace {

using qmer::qf::check_table;
using qmer::qf::table_shape;

using qmer::fuzz::splitmix64;

std::vector<uint64_t> words_of(std::span<std::atomic<uint64_t> const> groups) {
    auto const w = qmer::atomic_words(groups);
    return {w.begin(), w.end()};
}

// ---------------------------------------------------------------------------------------------
// Tables the filters write pass.

TEST(crafted_quotient_table, tables_the_filters_write_pass) {
    // Locally locked, filled to 90% of its canonical slots, then a quarter removed (remove()
    // rebuilds clusters: the other way a table changes).
    qmer::qf::locally_locked_filter ll(10, 8);
    std::vector<uint64_t> stored;
    for (uint64_t i = 0; stored.size() < 920; ++i)
        if (ll.insert(splitmix64(i)) == qmer::insert_result::inserted)
            stored.push_back(splitmix64(i));
    table_shape const ll_shape{8, uint64_t{1} << 10, ll.total_slots()};
    EXPECT_EQ(check_table(words_of(ll.groups()), ll_shape), "");
    for (size_t i = 0; i < stored.size(); i += 4) ASSERT_TRUE(ll.remove(stored[i]));
    EXPECT_EQ(check_table(words_of(ll.groups()), ll_shape), "");

    // Bounded growing, after several doublings.
    qmer::qf::locally_locked_filter grown(6, 12, {true, 0.9});
    for (uint64_t i = 0; i < 2000; ++i) grown.insert(splitmix64(i + 7));
    ASSERT_GT(grown.growths(), 2u);
    auto const g = grown.geometry();
    EXPECT_EQ(check_table(words_of(grown.groups()),
                          {g.remainder_bits, g.canonical_slots(), grown.total_slots()}),
              "");

    // Every level of an expandable filter that pushed levels.
    qmer::qf::expandable_filter ex(1000, 0.001);
    for (uint64_t i = 0; i < 20000; ++i) ex.insert(splitmix64(i + 11));
    ASSERT_GT(ex.levels(), 1u);
    auto const arrays = ex.arrays();
    for (size_t j = 1; j < arrays.size(); ++j) {
        auto const& p = arrays[j].params;
        EXPECT_EQ(check_table(arrays[j].words, {static_cast<unsigned>(p[1]), p[4], p[2]}), "")
            << "level " << j - 1;
    }

    // Externally locked (a fixed overflow area of 256 slots).
    qmer::qf::external_locks_filter el(10, 8);
    for (uint64_t i = 0; i < 920; ++i) el.insert(splitmix64(i + 13));
    EXPECT_EQ(check_table(words_of(el.slots().groups()),
                          {8, uint64_t{1} << 10, (uint64_t{1} << 10) + 256}),
              "");
}

// ---------------------------------------------------------------------------------------------
// Hand-made tables: r = 5 (8-bit slots, 8 to a word), 16 canonical slots + 8 overflow slots.

constexpr table_shape small{5, 16, 24};

// Slot values are written as (remainder, "OCS" status digits: occupied, continuation, shifted).
struct slot {
    size_t at;
    uint64_t remainder;
    char const* ocs;
};
std::vector<uint64_t> table(std::vector<slot> const& slots) {
    std::vector<uint64_t> words(3, 0);
    for (auto const& s : slots) {
        uint64_t v = s.remainder << 3;
        if (s.ocs[0] == '1') v |= qmer::qf::status::occupied;
        if (s.ocs[1] == '1') v |= qmer::qf::status::continuation;
        if (s.ocs[2] == '1') v |= qmer::qf::status::shifted;
        words[s.at / 8] |= v << (s.at % 8 * 8);
    }
    return words;
}

// Quotient 2 holds remainders 3 and 5, quotient 3 holds 1: a cluster start at 2, a continuation
// at 3 (occupied: quotient 3 has a run), quotient 3's run starting at 4 (shifted).
std::vector<slot> const consistent = {{2, 3, "100"}, {3, 5, "111"}, {4, 1, "001"}};

TEST(crafted_quotient_table, a_consistent_table_passes) {
    EXPECT_EQ(check_table(table(consistent), small), "");
}

void expect_refused(std::vector<slot> const& slots, std::string const& reason) {
    std::string const why = check_table(table(slots), small);
    EXPECT_NE(why.find(reason), std::string::npos) << "got: '" << why << "'";
}

TEST(crafted_quotient_table, lock_states_are_refused) {
    // The finding: a read lock (010, a locked cluster start) and a write lock (110, a locked
    // empty slot), which waited forever for their holders.
    expect_refused({{2, 3, "010"}, {3, 5, "111"}, {4, 1, "001"}}, "slot 2 has status 010");
    expect_refused({{2, 3, "100"}, {3, 5, "111"}, {4, 1, "001"}, {5, 0, "110"}},
                   "slot 5 has status 110");
    // A read lock after a cluster start (a lock where an element belongs).
    expect_refused({{2, 3, "100"}, {3, 5, "010"}}, "slot 3 has status 010");
}

TEST(crafted_quotient_table, shifted_element_without_predecessor_is_refused) {
    expect_refused({{0, 1, "001"}}, "slot 0 holds a shifted element");
    expect_refused({{0, 1, "011"}}, "slot 0 holds a shifted element");
    expect_refused({{2, 3, "100"}, {4, 1, "001"}}, "slot 4 holds a shifted element");
}

TEST(crafted_quotient_table, missing_run_is_refused) {
    // Quotient 3 is occupied but its run is gone.
    expect_refused({{2, 3, "100"}, {3, 5, "111"}}, "has 2 occupied slots but 1 runs");
}

TEST(crafted_quotient_table, run_before_its_canonical_slot_is_refused) {
    // The second run begins at 3, but the only other occupied slot is 4.
    expect_refused({{2, 3, "100"}, {3, 1, "001"}, {4, 2, "111"}},
                   "slot 3 begins a run with no occupied slot before it");
}

TEST(crafted_quotient_table, runs_past_the_end_are_refused) {
    // Quotient 14's run fills the table to its last slot, and quotient 15's run never begins.
    std::vector<slot> s = {{14, 1, "100"}, {15, 2, "111"}};
    for (size_t i = 16; i < 24; ++i) s.push_back({i, i - 13, "011"});
    expect_refused(s, "runs past the end of the table");
}

TEST(crafted_quotient_table, occupied_overflow_slot_is_refused) {
    expect_refused({{15, 1, "100"}, {16, 2, "101"}}, "slot 16 in the overflow area");
}

TEST(crafted_quotient_table, unsorted_run_is_refused) {
    expect_refused({{2, 5, "100"}, {3, 3, "011"}}, "run holding slot 3 is not sorted");
    expect_refused({{2, 5, "100"}, {3, 5, "011"}}, "run holding slot 3 is not sorted");
}

TEST(crafted_quotient_table, stray_bits_and_word_count_are_refused) {
    auto words = table(consistent);
    words[2] |= uint64_t{1} << 56;  // slot 23's shifted bit (8-bit slots fill the word)
    EXPECT_EQ(check_table(words, small),
              "slot 23 holds a shifted element with no element before it");
    // 9-bit slots (r = 6): 7 to a word, bit 63 is padding.
    std::vector<uint64_t> padded(4, 0);
    padded[1] = uint64_t{1} << 63;
    EXPECT_NE(check_table(padded, {6, 16, 24}).find("past the last slot"), std::string::npos);
    // Slots past the end of the table in the last word (24 slots of 9 bits: 3 in the last word).
    padded[1] = 0;
    padded[3] = uint64_t{1} << 27;
    EXPECT_NE(check_table(padded, {6, 16, 24}).find("past the last slot"), std::string::npos);
    words.pop_back();
    EXPECT_EQ(check_table(words, small), "the word count does not match the slot count");
}

// ---------------------------------------------------------------------------------------------
// check_table answers from a word-at-a-time pass (detail::consistent) and, only when that fails,
// finds the reason slot by slot (detail::explain). Both must agree on every table: real tables of
// every slot width (narrow and 64-bit slots take the slot-by-slot path in both), damaged in a few
// random bits or slots.

template <typename MakeWords>
void compare_passes(unsigned r, table_shape shape, MakeWords make_words) {
    std::vector<uint64_t> const original = make_words();
    ASSERT_EQ(check_table(original, shape), "") << "r = " << r;
    unsigned const w = r + 3, spg = 64 / w;
    uint64_t state = r * 1000003u + 17;
    auto next = [&] { return state = splitmix64(state); };
    size_t refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<uint64_t> words = original;
        int const edits = 1 + static_cast<int>(next() % 3);
        for (int e = 0; e < edits; ++e) {
            uint64_t const v = next();
            size_t const g = (v >> 8) % words.size();
            if (v & 1) {
                words[g] ^= uint64_t{1} << (v >> 40) % 64;  // one bit anywhere
            } else {
                // One slot's status bits set to any combination.
                unsigned const k = static_cast<unsigned>((v >> 24) % spg);
                words[g] &= ~(uint64_t{7} << (k * w));
                words[g] |= ((v >> 4) & 7) << (k * w);
            }
        }
        bool const fast = qmer::qf::detail::consistent(words, shape);
        std::string const why = qmer::qf::detail::explain(words, shape);
        ASSERT_EQ(fast, why.empty()) << "r = " << r << ", trial " << trial << ": " << why;
        refused += fast ? 0 : 1;
    }
    EXPECT_GT(refused, 1000u) << "r = " << r;  // the damage is mostly caught, not mostly harmless
}

TEST(crafted_quotient_table, word_and_slot_passes_agree) {
    for (unsigned r : {1u, 2u, 3u, 4u, 5u, 8u, 11u, 13u, 20u, 29u, 40u, 55u, 61u}) {
        unsigned const q = std::min(8u, 63 - r);
        uint64_t const n = (uint64_t{1} << q) * 85 / 100;
        compare_passes(r, {r, uint64_t{1} << q, (uint64_t{1} << q) + qmer::qf::overflow_slots(q)},
                       [&] {
                           qmer::qf::locally_locked_filter f(q, r);
                           for (uint64_t i = 0; i < n; ++i) f.insert(splitmix64(i * 3 + r));
                           return words_of(f.groups());
                       });
        compare_passes(r, {r, uint64_t{1} << q, (uint64_t{1} << q) + 256}, [&] {
            qmer::qf::external_locks_filter f(q, r);
            for (uint64_t i = 0; i < n; ++i) f.insert(splitmix64(i * 5 + r));
            return words_of(f.slots().groups());
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Through the loaders: a table with a lock state in an index file whose checksum is valid.

class crafted_quotient_table_file : public qmer::test::crafted_index_test {};

// Sets the status of the first cluster start (status 100) of `words` to `status` (3 bits in
// the sequential layout); returns its slot. (filter_array.words is a view of the filter's memory:
// the tests edit a copy and point the array at it.)
size_t lock_first_cluster_start(std::vector<uint64_t>& words, unsigned slot_bits, uint64_t status) {
    unsigned const spg = 64 / slot_bits;
    for (size_t i = 0; i < words.size() * spg; ++i) {
        unsigned const shift = static_cast<unsigned>(i % spg) * slot_bits;
        uint64_t& w = words[i / spg];
        if (((w >> shift) & 7) == qmer::qf::status::cluster_start) {
            w = (w & ~(uint64_t{7} << shift)) | (status << shift);
            return i;
        }
    }
    ADD_FAILURE() << "no cluster start";
    return 0;
}

TEST_F(crafted_quotient_table_file, locally_locked_read_lock) {
    qmer::qf::locally_locked_filter f(8, 8);
    for (uint64_t i = 0; i < 100; ++i) f.insert(splitmix64(i));
    auto arrays = qmer::app::filter_sections<qmer::qf::locally_locked_filter>::arrays(f);
    std::vector<uint64_t> words(arrays[0].words.begin(), arrays[0].words.end());
    size_t const at = lock_first_cluster_start(words, 11, qmer::qf::status::read_lock);
    arrays[0].words = words;
    expect_damaged<qmer::qf::locally_locked_filter>(
        arrays, "locally locked filter: slot " + std::to_string(at) + " has status 010",
        "a read lock");
}

TEST_F(crafted_quotient_table_file, expandable_write_lock) {
    qmer::qf::expandable_filter f(1000, 0.01);
    for (uint64_t i = 0; i < 100; ++i) f.insert(splitmix64(i));
    auto arrays = f.arrays();
    unsigned const slot_bits = static_cast<unsigned>(arrays[1].params[1]) + 3;
    std::vector<uint64_t> words(arrays[1].words.begin(), arrays[1].words.end());
    size_t const at = lock_first_cluster_start(words, slot_bits, qmer::qf::status::write_lock);
    arrays[1].words = words;
    expect_damaged<qmer::qf::expandable_filter>(
        arrays, "expandable filter level 0: slot " + std::to_string(at) + " has status 110",
        "a write lock");
}

TEST_F(crafted_quotient_table_file, externally_locked_shifted_slot_zero) {
    qmer::qf::external_locks_filter f(8, 8);
    for (uint64_t i = 0; i < 100; ++i) f.insert(splitmix64(i));
    auto arrays = qmer::app::filter_sections<qmer::qf::external_locks_filter>::arrays(f);
    // Slot 0 made a shifted run start.
    std::vector<uint64_t> words(arrays[0].words.begin(), arrays[0].words.end());
    words[0] = (words[0] & ~uint64_t{0x7ff}) | (uint64_t{9} << 3) | qmer::qf::status::shifted;
    arrays[0].words = words;
    expect_damaged<qmer::qf::external_locks_filter>(
        arrays, "externally locked filter: slot 0 holds a shifted element", "a shifted slot 0");
}

TEST_F(crafted_quotient_table_file, growing_parameters) {
    qmer::qf::locally_locked_filter f(8, 8, {true, 0.9});
    auto arrays = qmer::app::filter_sections<qmer::qf::locally_locked_filter>::arrays(f);
    arrays[0].params[5] = 1;  // grow at a fill of 1e-6: a doubling at every insert
    expect_damaged<qmer::qf::locally_locked_filter>(arrays, "bad growing parameters",
                                                    "grow_at 1e-6");
}

}  // namespace
