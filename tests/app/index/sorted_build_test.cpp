// The sorted build (app/index/sorted_build.hpp): fingerprints gathered from many threads in
// several passes (slices of the bucket range), sorted and appended, give the expandable filter
// that inserts give, word for word; an estimate far too low stops level 0 where an insert would
// push level 1, and inserting every key again then leaves none out. The default path, a level
// written straight in the rank-select layout, saves what those filters save.

#include "app/index/sorted_build.hpp"

#include "app/filters/persistence.hpp"
#include "core/kmer/sequence_hashing.hpp"

#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

namespace {

using qmer::app::fingerprint_buckets;
using qmer::qf::expandable_filter;
using qmer::qf::expandable_options;
using qmer::qf::locally_locked_filter;

std::vector<uint64_t> keys_with_repeats(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> keys(n);
    for (auto& k : keys) k = rng();
    for (size_t i = 0; i < n; i += 3) keys[i] = keys[i / 2];  // ~1/3 repeats
    return keys;
}

std::unique_ptr<expandable_filter> counted_filter(uint64_t expected, double fpr = 0.001) {
    expandable_options o;
    o.expected_elements = expected;
    o.max_false_positive_rate = fpr;
    o.first_level_at_final_size = true;
    return std::make_unique<expandable_filter>(o);
}

// The concurrent table's append as the sorted build's sink (the path of a build in several passes).
qmer::app::sorted_sink sink_into(expandable_filter& f,
                                 locally_locked_filter::sorted_append_state& state) {
    return [&f, &state](std::span<uint64_t const> fps) { return f.append_sorted(fps, state); };
}

bool build_sorted(expandable_filter& f, std::vector<uint64_t> const& keys, unsigned passes) {
    auto const g = f.first_level_final_geometry();
    uint32_t const buckets = fingerprint_buckets::bucket_count(g);
    locally_locked_filter::sorted_append_state state;
    bool complete = true;
    for (unsigned p = 0; p < passes && complete; ++p) {
        fingerprint_buckets collected(g, buckets * p / passes, buckets * (p + 1) / passes);
        // Many tasks on a 2-core machine: several threads fill buckets of their own.
        tbb::parallel_for(tbb::blocked_range<size_t>(0, keys.size(), 997), [&](auto const& r) {
            for (size_t i = r.begin(); i != r.end(); ++i) collected.insert(keys[i]);
        });
        complete = collected.append_to(sink_into(f, state), 8);
    }
    return complete;
}

TEST(sorted_build, equals_the_inserted_filter_word_for_word) {
    auto const keys = keys_with_repeats(200000, 1);
    auto inserted = counted_filter(140000);
    for (uint64_t k : keys) inserted->insert(k);
    for (unsigned passes : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << passes << " passes");
        auto sorted = counted_filter(140000);
        EXPECT_TRUE(build_sorted(*sorted, keys, passes));
        EXPECT_EQ(sorted->size(), inserted->size());
        auto const a = inserted->arrays(), b = sorted->arrays();
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].params, b[i].params) << "array " << i;
            EXPECT_TRUE(std::equal(a[i].words.begin(), a[i].words.end(), b[i].words.begin(),
                                   b[i].words.end()))
                << "array " << i;
        }
        for (uint64_t k : keys) ASSERT_TRUE(sorted->contains(k));
    }
}

TEST(sorted_build, an_estimate_far_too_low_stops_level_0_for_inserts) {
    auto const keys = keys_with_repeats(100000, 2);
    auto f = counted_filter(20000);  // ~70,000 distinct keys
    ASSERT_FALSE(build_sorted(*f, keys, 2));
    // Level 0 stopped where an insert would have pushed level 1.
    EXPECT_EQ(f->levels(), 1u);
    EXPECT_EQ(f->size(),
              static_cast<size_t>(
                  0.9 * static_cast<double>(f->first_level_final_geometry().canonical_slots())));
    for (uint64_t k : keys) f->insert(k);  // what qmer index does then: every k-mer again
    EXPECT_GT(f->levels(), 1u);
    for (uint64_t k : keys) ASSERT_TRUE(f->contains(k));
}

// Every array of two filters, word for word.
void expect_same_words(expandable_filter const& a_filter, expandable_filter const& b_filter) {
    auto const a = a_filter.arrays(), b = b_filter.arrays();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].params, b[i].params) << "array " << i;
        EXPECT_TRUE(
            std::equal(a[i].words.begin(), a[i].words.end(), b[i].words.begin(), b[i].words.end()))
            << "array " << i;
    }
}

// What qmer index does by default: the buckets handed to a rank_select_writer, which writes level
// 0 straight in the layout the index stores, never making the concurrent table. Its index
// arrays (parameters and words) are those a filter built by inserts saves, and the stack's
// parameters are those the filter would have (plan_first_level).
struct written_build {
    expandable_filter::first_level_plan plan;
    qmer::app::written_first_level level;
    bool complete = true;
};

written_build build_written(expandable_options const& o, std::vector<uint64_t> const& keys) {
    written_build w{expandable_filter::plan_first_level(o), {}, true};
    w.level.plan = w.plan;
    qmer::qf::rank_select_writer writer(w.level.shape(), w.plan.room);
    auto keep = [&](std::span<uint64_t const> c) {
        w.level.words.insert(w.level.words.end(), c.begin(), c.end());
    };
    fingerprint_buckets collected(w.plan.g, 0, fingerprint_buckets::bucket_count(w.plan.g));
    tbb::parallel_for(tbb::blocked_range<size_t>(0, keys.size(), 997), [&](auto const& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) collected.insert(keys[i]);
    });
    w.complete = collected.append_to(
        [&](std::span<uint64_t const> fps) { return writer.append(fps, keep); }, 8);
    w.level.elements = writer.finish(keep);
    return w;
}

expandable_options counted_options(uint64_t expected) {
    expandable_options o;
    o.expected_elements = expected;
    o.max_false_positive_rate = 0.001;
    o.first_level_at_final_size = true;
    return o;
}

TEST(sorted_build, written_level_saves_what_the_inserted_filter_saves) {
    auto const keys = keys_with_repeats(200000, 1);
    auto inserted = counted_filter(140000);
    for (uint64_t k : keys) inserted->insert(k);
    auto const w = build_written(counted_options(140000), keys);
    ASSERT_TRUE(w.complete);
    EXPECT_EQ(w.level.elements, inserted->size());
    auto const saved = qmer::app::filter_sections<expandable_filter>::arrays(*inserted);
    auto const written = w.level.arrays();
    ASSERT_EQ(saved.size(), written.size());
    for (size_t i = 0; i < saved.size(); ++i) EXPECT_EQ(saved[i].params, written[i].params) << i;
    std::vector<uint64_t> saved_words;
    qmer::qf::write_rank_select(inserted->level(0), [&](std::span<uint64_t const> c) {
        saved_words.insert(saved_words.end(), c.begin(), c.end());
    });
    EXPECT_EQ(saved_words, w.level.words);
    qmer::qf::rank_select_table const t(w.level.shape(), w.level.words, w.level.elements);
    for (uint64_t k : keys) ASSERT_TRUE(t.contains(k));
}

// An estimate far too low with the writer: it stops where level 0 would push level 1, the
// concurrent filter takes back what it wrote (refill_first_level), and every key inserted again
// gives the filter the concurrent path gives, word for word.
TEST(sorted_build, written_level_0_that_filled_up_is_refilled_for_inserts) {
    auto const keys = keys_with_repeats(100000, 2);
    auto const w = build_written(counted_options(20000), keys);  // ~70,000 distinct keys
    ASSERT_FALSE(w.complete);
    auto refilled = counted_filter(20000);
    qmer::app::refill_first_level(
        *refilled, qmer::qf::rank_select_table(w.level.shape(), w.level.words, w.level.elements));
    EXPECT_EQ(refilled->size(), w.plan.room);
    auto concurrent = counted_filter(20000);
    ASSERT_FALSE(build_sorted(*concurrent, keys, 1));
    for (uint64_t k : keys) {
        refilled->insert(k);
        concurrent->insert(k);
    }
    EXPECT_GT(refilled->levels(), 1u);
    for (uint64_t k : keys) ASSERT_TRUE(refilled->contains(k));
    expect_same_words(*refilled, *concurrent);
}

template <typename Collector>
bool collect_and_append(Collector& collected, std::vector<uint64_t> const& keys,
                        expandable_filter& f) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, keys.size(), 997), [&](auto const& r) {
        for (size_t i = r.begin(); i != r.end(); ++i) collected.insert(keys[i]);
    });
    locally_locked_filter::sorted_append_state state;
    return collected.append_to(sink_into(f, state), 8);
}

// The scratch-file build: the same table, word for word, and the same overloaded windows as the
// in-memory buckets, whether a bin holds one bucket (37-bit fingerprints at 0.001 are not reached
// here: 29 bits) or many (~40 bits at 1e-6: 2^4 buckets per bin), with buffers far smaller than a
// bin so that each bin is read back from many places in the file.
TEST(sorted_build, spilled_bins_give_the_table_and_marks_of_buckets_in_memory) {
    using qmer::app::spilled_fingerprint_buckets;
    using qmer::app::window_marks;
    auto keys = keys_with_repeats(200000, 3);
    for (double fpr : {0.001, 1e-6}) {
        SCOPED_TRACE(testing::Message() << "fpr " << fpr);
        auto in_memory = counted_filter(150000, fpr);  // ~140,000 distinct keys
        auto spilled = counted_filter(150000, fpr);
        auto const g = in_memory->first_level_final_geometry();
        ASSERT_TRUE(spilled_fingerprint_buckets::supports(g)) << g.fingerprint_bits();
        unsigned const bits = qmer::locality_window_bits(g.canonical_slots());
        ASSERT_GT(bits, 2u);
        // Two windows made dense enough to be marked, as a repeat's minimizer makes them.
        std::mt19937_64 rng(4);
        std::vector<uint64_t> all = keys;
        for (uint64_t w : {uint64_t{5}, uint64_t{1} << (bits - 1)})
            for (int i = 0; i < 3000; ++i) all.push_back((w << (64 - bits)) | (rng() >> bits));
        double const threshold = qmer::overload_threshold(g.canonical_slots(), bits);

        window_marks marks_in_memory(g, bits, threshold), marks_spilled(g, bits, threshold);
        fingerprint_buckets buckets(g, 0, fingerprint_buckets::bucket_count(g), 0,
                                    &marks_in_memory);
        ASSERT_TRUE(collect_and_append(buckets, all, *in_memory));
        qmer::io::spill_file file(std::filesystem::temp_directory_path().string());
        spilled_fingerprint_buckets bins(g, file, 1 << 12, &marks_spilled);
        ASSERT_TRUE(collect_and_append(bins, all, *spilled));

        // (At 1e-6 the buckets are finer than the windows, so no window is judged: the same
        // in both.)
        if (fpr == 0.001) {
            EXPECT_GE(marks_in_memory.marked.load(), 2u);
        }
        EXPECT_EQ(marks_spilled.marked.load(), marks_in_memory.marked.load());
        EXPECT_EQ(marks_spilled.dropped.load(), marks_in_memory.dropped.load());
        EXPECT_EQ(marks_spilled.bits, marks_in_memory.bits);
        EXPECT_GT(file.size(), all.size() * sizeof(uint32_t) - 1);  // every position went there
        EXPECT_EQ(spilled->size(), in_memory->size());
        expect_same_words(*in_memory, *spilled);
    }
}

// A bin crowded by repeats (the windows counted exactly would hold most of its positions) is
// sorted, deduplicated and written back instead: the same marks and table as the buckets in
// memory, and a scratch file smaller than the positions.
TEST(sorted_build, spilled_bins_crowded_by_repeats_give_the_marks_of_buckets_in_memory) {
    using qmer::app::spilled_fingerprint_buckets;
    using qmer::app::window_marks;
    auto in_memory = counted_filter(60000);
    auto spilled = counted_filter(60000);
    auto const g = in_memory->first_level_final_geometry();
    unsigned const bits = qmer::locality_window_bits(g.canonical_slots());
    double const threshold = qmer::overload_threshold(g.canonical_slots(), bits);
    std::mt19937_64 rng(11);
    std::vector<uint64_t> all;
    // Every window of the table: some over the threshold, some with positions over it but few
    // distinct fingerprints (each hash 8 times), the rest light.
    for (uint64_t w = 0; w < (uint64_t{1} << bits); ++w) {
        auto const kind = w % 3;
        size_t const distinct = kind == 0   ? static_cast<size_t>(2 * threshold)
                                : kind == 1 ? static_cast<size_t>(threshold / 2)
                                            : 10;
        size_t const copies = kind == 1 ? 8 : 1;
        for (size_t i = 0; i < distinct; ++i) {
            uint64_t const h = (w << (64 - bits)) | (rng() >> bits);
            for (size_t c = 0; c < copies; ++c) all.push_back(h);
        }
    }
    std::shuffle(all.begin(), all.end(), rng);
    window_marks marks_in_memory(g, bits, threshold), marks_spilled(g, bits, threshold);
    for (auto* m : {&marks_in_memory, &marks_spilled}) m->now = window_marks::stage::mark;
    fingerprint_buckets buckets(g, 0, fingerprint_buckets::bucket_count(g), 0, &marks_in_memory);
    qmer::io::spill_file file(std::filesystem::temp_directory_path().string());
    spilled_fingerprint_buckets bins(g, file, 1 << 12, &marks_spilled);
    for (uint64_t h : all) {
        buckets.insert(h);
        bins.insert(h);
    }
    buckets.sort_and_mark(8);
    bins.sort_and_mark(8);
    EXPECT_GT(marks_in_memory.marked.load(), 0u);
    EXPECT_EQ(marks_spilled.marked.load(), marks_in_memory.marked.load());
    EXPECT_EQ(marks_spilled.bits, marks_in_memory.bits);
    // Bins were written back (sorted, deduplicated): the file holds more than the positions.
    EXPECT_GT(file.size(), all.size() * sizeof(uint32_t));
    for (auto* m : {&marks_in_memory, &marks_spilled}) m->now = window_marks::stage::drop;
    locally_locked_filter::sorted_append_state s1, s2;
    ASSERT_TRUE(buckets.append_to(sink_into(*in_memory, s1), 8));
    ASSERT_TRUE(bins.append_to(sink_into(*spilled, s2), 8));
    EXPECT_EQ(marks_spilled.dropped.load(), marks_in_memory.dropped.load());
    EXPECT_EQ(spilled->size(), in_memory->size());
    expect_same_words(*in_memory, *spilled);
}

// Crowded windows in one pass: marking every bucket first, then appending each with its marked
// fingerprints dropped and merged with a sorted collection of the crowded k-mers' plain hashes
// gives, word for word, the table of the straightforward way (mark and drop while appending, then
// insert those hashes one by one), from buckets in memory and from the scratch file.
TEST(sorted_build, crowded_windows_merged_into_the_append_give_the_inserted_table) {
    using qmer::app::spilled_fingerprint_buckets;
    using qmer::app::window_marks;
    auto const keys = keys_with_repeats(200000, 7);
    auto reference = counted_filter(170000);
    auto const g = reference->first_level_final_geometry();
    unsigned const bits = qmer::locality_window_bits(g.canonical_slots());
    double const threshold = qmer::overload_threshold(g.canonical_slots(), bits);
    std::mt19937_64 rng(8);
    std::vector<uint64_t> local = keys, plain;
    for (uint64_t w : {uint64_t{9}, uint64_t{1} << (bits - 2), (uint64_t{3} << (bits - 2)) + 5}) {
        for (int i = 0; i < 3000; ++i) {
            local.push_back((w << (64 - bits)) | (rng() >> bits));
            plain.push_back(rng());  // the same k-mers' plain hashes land anywhere
        }
    }

    window_marks old_marks(g, bits, threshold);
    fingerprint_buckets old_way(g, 0, fingerprint_buckets::bucket_count(g), 0, &old_marks);
    ASSERT_TRUE(collect_and_append(old_way, local, *reference));
    ASSERT_EQ(old_marks.marked.load(), 3u);
    for (uint64_t h : plain) reference->insert(h);

    auto merge_build = [&](auto& collected, auto& plain_collected, window_marks& marks,
                           expandable_filter& f) {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, local.size(), 997), [&](auto const& r) {
            for (size_t i = r.begin(); i != r.end(); ++i) collected.insert(local[i]);
        });
        marks.now = window_marks::stage::mark;
        collected.sort_and_mark(8);
        marks.now = window_marks::stage::drop;
        for (uint64_t h : plain) plain_collected.insert(h);
        locally_locked_filter::sorted_append_state state;
        return collected.append_to(sink_into(f, state), 8, nullptr, &plain_collected);
    };
    {
        SCOPED_TRACE("buckets in memory");
        auto f = counted_filter(170000);
        window_marks marks(g, bits, threshold);
        fingerprint_buckets collected(g, 0, fingerprint_buckets::bucket_count(g), 0, &marks);
        fingerprint_buckets plain_collected(g, 0, fingerprint_buckets::bucket_count(g));
        ASSERT_TRUE(merge_build(collected, plain_collected, marks, *f));
        EXPECT_EQ(marks.bits, old_marks.bits);
        EXPECT_EQ(marks.dropped.load(), old_marks.dropped.load());
        expect_same_words(*reference, *f);
    }
    {
        SCOPED_TRACE("scratch file");
        auto f = counted_filter(170000);
        window_marks marks(g, bits, threshold);
        qmer::io::spill_file file(std::filesystem::temp_directory_path().string());
        spilled_fingerprint_buckets collected(g, file, 1 << 12, &marks);
        spilled_fingerprint_buckets plain_collected(g, file, 1 << 12);
        ASSERT_TRUE(merge_build(collected, plain_collected, marks, *f));
        EXPECT_EQ(marks.bits, old_marks.bits);
        expect_same_words(*reference, *f);
    }
}

TEST(sorted_build, spilled_bins_give_the_inserted_filter_word_for_word) {
    using qmer::app::spilled_fingerprint_buckets;
    auto const keys = keys_with_repeats(200000, 5);
    auto inserted = counted_filter(140000);
    for (uint64_t k : keys) inserted->insert(k);
    auto spilled = counted_filter(140000);
    qmer::io::spill_file file(std::filesystem::temp_directory_path().string());
    spilled_fingerprint_buckets bins(spilled->first_level_final_geometry(), file, 1 << 12);
    ASSERT_TRUE(collect_and_append(bins, keys, *spilled));
    expect_same_words(*inserted, *spilled);
    for (uint64_t k : keys) ASSERT_TRUE(spilled->contains(k));
}

TEST(sorted_build, passes_follow_the_budget) {
    EXPECT_EQ(qmer::app::plan_passes(1000, 1 << 20), 1u);
    EXPECT_EQ(qmer::app::plan_passes(100'000'000, uint64_t{1} << 30), 1u);
    EXPECT_EQ(qmer::app::plan_passes(1'000'000'000, uint64_t{1} << 30), 5u);
}

}  // namespace

namespace {

using qmer::app::window_marks;

// 1000 slots at r = 8 in 16 windows of 62.5 slots (threshold 156.25 distinct fingerprints).
struct marked_table {
    qmer::qf::geometry g = qmer::qf::geometry::with_slots(1000, 8);
    unsigned bits = 4;
    window_marks marks{g, bits, qmer::overload_threshold(1000, 4)};
    std::vector<uint64_t> hashes;

    // n distinct-ish hashes uniform within window w.
    void add_window(uint64_t w, size_t n, uint64_t seed) {
        std::mt19937_64 rng(seed);
        for (size_t i = 0; i < n; ++i) hashes.push_back((w << 60) | (rng() >> 4));
    }
    std::vector<uint64_t> sorted_fingerprints() const {
        std::vector<uint64_t> fps;
        for (uint64_t h : hashes) fps.push_back(g.fingerprint(h));
        std::sort(fps.begin(), fps.end());
        fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
        return fps;
    }
    bool marked(uint64_t w) const { return (marks.bits[w / 64] >> (w % 64)) & 1; }
};

// The property the query relies on: a hash of an unmarked window keeps its fingerprint.
void expect_unmarked_windows_kept(marked_table const& t, std::vector<uint64_t> const& kept) {
    for (uint64_t h : t.hashes) {
        if (!t.marked(h >> 60)) {
            EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), t.g.fingerprint(h))) << h;
        }
    }
}

TEST(window_marks, marks_windows_over_the_threshold_and_drops_only_their_fingerprints) {
    marked_table t;
    t.add_window(3, 400, 1);   // ~400 distinct of 62.5 * 256 = 16000: overloaded
    t.add_window(4, 100, 2);   // under
    t.add_window(5, 150, 3);   // under (threshold 156.25)
    t.add_window(15, 300, 4);  // the last window: overloaded
    auto fps = t.sorted_fingerprints();
    size_t const before = fps.size();
    t.marks.filter_bucket(fps, 0, t.g.fingerprint_space());
    EXPECT_TRUE(t.marked(3));
    EXPECT_FALSE(t.marked(4));
    EXPECT_FALSE(t.marked(5));
    EXPECT_TRUE(t.marked(15));
    EXPECT_EQ(t.marks.marked.load(), 2u);
    EXPECT_EQ(before - fps.size(), t.marks.dropped.load());
    EXPECT_GT(t.marks.dropped.load(), 600u);
    expect_unmarked_windows_kept(t, fps);
    EXPECT_TRUE(std::is_sorted(fps.begin(), fps.end()));
}

// A window cut by the bucket's bounds is not judged: its count there is partial.
TEST(window_marks, a_window_across_buckets_is_never_marked) {
    marked_table t;
    t.add_window(3, 400, 1);
    auto fps = t.sorted_fingerprints();
    uint64_t const middle = t.g.fingerprint((uint64_t{3} << 60) | (uint64_t{1} << 59));
    std::vector<uint64_t> low(fps.begin(), std::lower_bound(fps.begin(), fps.end(), middle));
    size_t const n = low.size();
    t.marks.filter_bucket(low, 0, middle);
    EXPECT_FALSE(t.marked(3));
    EXPECT_EQ(low.size(), n);
}

// Windows whose boundary falls inside a fingerprint (62.5 slots each): the shared fingerprint
// stays when its other window is not marked.
TEST(window_marks, a_fingerprint_shared_with_an_unmarked_window_stays) {
    marked_table t;
    t.add_window(2, 3000, 5);  // overloaded, and dense enough to use its boundary fingerprints
    t.add_window(3, 50, 6);
    // The hashes next to the boundary between windows 2 and 3.
    for (uint64_t d = 1; d < 64; ++d) {
        t.hashes.push_back((uint64_t{3} << 60) - d);
        t.hashes.push_back((uint64_t{3} << 60) + d - 1);
    }
    auto fps = t.sorted_fingerprints();
    t.marks.filter_bucket(fps, 0, t.g.fingerprint_space());
    EXPECT_TRUE(t.marked(2));
    EXPECT_FALSE(t.marked(3));
    expect_unmarked_windows_kept(t, fps);
}

// The scratch-file build marks its bins unsorted (mark_unsorted): it must mark exactly the
// windows that filter_bucket marks from the same fingerprints sorted bucket by bucket. Loads
// around the threshold, windows whose positions are over it while their distinct fingerprints
// are not (every hash twice), windows cut by bucket bounds (buckets finer than windows), a
// power-of-two table and one that is not.
TEST(window_marks, marking_unsorted_bins_marks_what_sorted_buckets_mark) {
    struct shape {
        uint64_t slots;
        unsigned r, bucket_low, bin_low;
    };
    for (shape const s : {shape{65536, 11, 21, 23}, shape{100000, 9, 20, 22},
                          shape{100000, 9, 13, 16}, shape{65536, 11, 27, 27}}) {
        auto const g = qmer::qf::geometry::with_slots(s.slots, s.r);
        unsigned const bits = qmer::locality_window_bits(s.slots);
        double const threshold = qmer::overload_threshold(s.slots, bits);
        SCOPED_TRACE(testing::Message() << s.slots << " slots, r " << s.r << ", buckets below bit "
                                        << s.bucket_low << ", bins below bit " << s.bin_low);
        std::mt19937_64 rng(s.slots + s.bucket_low);
        std::uniform_real_distribution<double> load(0.5, 1.5);
        std::vector<uint64_t> fps;
        for (uint64_t w = 0; w < (uint64_t{1} << bits); ++w) {
            auto const n = static_cast<size_t>(threshold * load(rng));
            bool const twice = rng() % 4 == 0;
            for (size_t i = 0; i < n; ++i) {
                uint64_t const fp = g.fingerprint((w << (64 - bits)) | (rng() >> bits));
                fps.push_back(fp);
                if (twice) fps.push_back(fp);
            }
        }
        std::shuffle(fps.begin(), fps.end(), rng);

        window_marks sorted_marks(g, bits, threshold), unsorted_marks(g, bits, threshold);
        sorted_marks.now = unsorted_marks.now = window_marks::stage::mark;
        std::vector<uint64_t> all = fps;
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        uint64_t const space = g.fingerprint_space();
        for (uint64_t lo = 0; lo < space; lo += uint64_t{1} << s.bucket_low) {
            uint64_t const hi = lo + (uint64_t{1} << s.bucket_low);
            std::vector<uint64_t> bucket(std::lower_bound(all.begin(), all.end(), lo),
                                         std::lower_bound(all.begin(), all.end(), hi));
            sorted_marks.filter_bucket(bucket, lo, hi);
        }
        for (uint64_t base = 0; base < space; base += uint64_t{1} << s.bin_low) {
            std::vector<uint32_t> values;
            for (uint64_t fp : fps)
                if (fp >= base && fp - base < (uint64_t{1} << s.bin_low))
                    values.push_back(static_cast<uint32_t>(fp - base));
            unsorted_marks.mark_unsorted(values, base, s.bin_low, s.bucket_low);
        }
        EXPECT_EQ(unsorted_marks.marked.load(), sorted_marks.marked.load());
        EXPECT_EQ(unsorted_marks.bits, sorted_marks.bits);
        if (s.bucket_low >= 20) {  // buckets wider than windows: some are judged, and marked
            EXPECT_GT(sorted_marks.marked.load(), 0u);
            EXPECT_LT(sorted_marks.marked.load(), uint64_t{1} << bits);
        }
    }
}

}  // namespace
