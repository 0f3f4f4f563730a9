// The sorted build of a counted first level from the references (app/index/sorted_bins.hpp):
// whatever the plan (one pass in memory, one pass through a scratch file, several passes, one per
// bucket at most) and the threads, the sink is handed every k-mer's fingerprint once, in
// increasing order, and nothing once it took less than it was given; with window marks, the
// overloaded windows' fingerprints are replaced by the crowded windows' plain ones in one pass,
// and left to the caller in several.

#include "app/index/sorted_bins.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/kmer/hash.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "reference_files.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;
using qmer::test::canonical_kmers;

constexpr unsigned k = 31;
constexpr uint64_t seed = 7;
constexpr unsigned window_bits = 8;
constexpr unsigned minimizer = qmer::locality_minimizer_length(k);
// 2^16 slots, 9 remainder bits: 25-bit fingerprints in 2^6 buckets, each holding 2^2 windows, so
// that every window is judged (the marks judge only windows inside one bucket).
constexpr qmer::qf::geometry g = qmer::qf::geometry::with_slots(uint64_t{1} << 16, 9);

using records = std::vector<std::pair<std::string, std::string>>;

// A reference of a long random record, one with N and lowercase bases, and one shorter than k.
records some_records() {
    std::string mixed = qmer::test::random_bases(3000, 2);
    mixed[1000] = 'N';
    mixed[1001] = 'n';
    std::transform(mixed.begin() + 2000, mixed.end(), mixed.begin() + 2000,
                   [](char c) { return static_cast<char>(c - 'A' + 'a'); });
    return {{"long", qmer::test::random_bases(20000, 1)},
            {"mixed", mixed},
            {"short", qmer::test::random_bases(k - 1, 3)}};
}

// What the sink was handed, and whether each call kept the order the contract promises.
struct collected {
    std::vector<uint64_t> fps;
    size_t calls = 0;
    size_t calls_after_refusal = 0;
    bool refused = false;
    bool increasing = true;
    size_t take_at_most = std::numeric_limits<size_t>::max();

    sorted_sink sink() {
        return [this](std::span<uint64_t const> given) -> size_t {
            ++calls;
            if (refused) ++calls_after_refusal;
            for (size_t i = 0; i < given.size(); ++i) {
                if (!fps.empty() && given[i] <= fps.back()) increasing = false;
                if (fps.size() == take_at_most) {
                    refused = true;
                    return i;
                }
                fps.push_back(given[i]);
            }
            return given.size();
        };
    }
};

// One run of build_from_sorted_bins over a reference file, on `threads` threads.
struct sorted_run {
    std::string path;
    records recs;
    reference_census census;

    explicit sorted_run(qmer::test::temp_folder const& dir, records r = some_records())
        : path((dir / "ref.fa").string()), recs(std::move(r)) {
        qmer::test::write_fasta(path, recs);
        for (auto const& [name, seq] : recs) {
            census.kmer_positions += canonical_kmers(seq, k).size();
            census.bases += seq.size();
            census.longest_record = std::max<uint64_t>(census.longest_record, seq.size());
        }
        census.distinct_estimate = census.kmer_positions + 1;
    }

    template <typename Hashing, typename Crowded>
    sorted_build_result run(collected& out, Hashing const& hashing, sorted_build_plan plan,
                            unsigned threads, std::string const& scratch, build_counts& counts,
                            window_marks* marks, Crowded&& crowded) const {
        reference_set const refs{{path}, {path}, k, false};
        progress_meter progress("test", true);
        // `threads` threads, even past the machine's cores.
        tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, threads);
        return build_from_sorted_bins(g, out.sink(), hashing, {refs, threads, progress}, counts,
                                      census, plan, scratch, marks, crowded);
    }
};

// The oracle of the plain scheme: each canonical k-mer's fingerprint, sorted, distinct.
std::vector<uint64_t> plain_fingerprints(records const& recs) {
    qmer::kmer_hasher const hasher{seed};
    std::set<uint64_t> fps;
    for (auto const& [name, seq] : recs)
        for (uint64_t c : canonical_kmers(seq, k)) fps.insert(g.fingerprint(hasher(c)));
    return {fps.begin(), fps.end()};
}

sorted_build_plan in_memory(unsigned passes) {
    return {passes, false, 0};
}
sorted_build_plan spilled() {
    return {1, true, 4096};
}

auto const no_crowded = [](auto&) { FAIL() << "crowded() called without marks"; };

TEST(sorted_bins, every_plan_and_thread_count_hands_the_sink_every_fingerprint_once_in_order) {
    qmer::test::temp_folder const dir;
    sorted_run const input(dir);
    std::vector<uint64_t> const expected = plain_fingerprints(input.recs);
    ASSERT_GT(expected.size(), 20000u);
    qmer::plain_kmer_hashing const hashing(k, seed);
    uint32_t const buckets = fingerprint_buckets::bucket_count(g);
    ASSERT_EQ(buckets, 64u);
    struct plan_case {
        char const* name;
        sorted_build_plan plan;
    };
    // One pass per bucket is the finest slicing: each pass hands the sink a single bucket.
    for (plan_case const& c :
         {plan_case{"one pass", in_memory(1)}, plan_case{"three passes", in_memory(3)},
          plan_case{"a pass per bucket", in_memory(buckets)},
          plan_case{"scratch file", spilled()}}) {
        for (unsigned threads : {1u, 3u}) {
            SCOPED_TRACE(testing::Message() << c.name << ", " << threads << " threads");
            collected out;
            build_counts counts;
            sorted_build_result const result = input.run(
                out, hashing, c.plan, threads, dir.path().string(), counts, nullptr, no_crowded);
            EXPECT_TRUE(result.complete);
            EXPECT_FALSE(result.crowded_done);
            EXPECT_TRUE(out.increasing);
            EXPECT_EQ(out.fps, expected);
            // The first pass's counts are the build's, whatever the passes.
            EXPECT_EQ(counts.kmers.load(), input.census.kmer_positions);
            EXPECT_EQ(counts.records, 3u);
            EXPECT_EQ(counts.bases, input.census.bases);
            EXPECT_EQ(counts.longest_record, 20000u);
            EXPECT_EQ(counts.passes, c.plan.passes > 1 ? c.plan.passes : 0u);
            // Every position went through the scratch file, 4 bytes each, and only there.
            EXPECT_EQ(counts.scratch_bytes, c.plan.spill
                                                ? spilled_fingerprint_buckets::least_file_bytes(
                                                      input.census.kmer_positions)
                                                : 0u);
        }
    }
}

TEST(sorted_bins, a_sink_that_fills_up_ends_the_build_incomplete_and_is_handed_nothing_more) {
    qmer::test::temp_folder const dir;
    sorted_run const input(dir);
    std::vector<uint64_t> const expected = plain_fingerprints(input.recs);
    qmer::plain_kmer_hashing const hashing(k, seed);
    for (sorted_build_plan plan : {in_memory(1), in_memory(3), spilled()}) {
        SCOPED_TRACE(testing::Message() << plan.passes << " passes, spill " << plan.spill);
        collected out;
        out.take_at_most = expected.size() / 5;  // inside the first of three passes
        build_counts counts;
        sorted_build_result const result =
            input.run(out, hashing, plan, 2, dir.path().string(), counts, nullptr, no_crowded);
        EXPECT_FALSE(result.complete);
        EXPECT_TRUE(out.refused);
        EXPECT_EQ(out.calls_after_refusal, 0u);
        // What it took: the smallest fingerprints, as a level filled in order holds them.
        ASSERT_EQ(out.fps.size(), out.take_at_most);
        EXPECT_TRUE(std::equal(out.fps.begin(), out.fps.end(), expected.begin()));
    }
}

TEST(sorted_bins, a_reference_without_a_kmer_is_an_error_naming_it_unless_allowed) {
    qmer::test::temp_folder const dir;
    records const too_short{{"a", qmer::test::random_bases(k - 1, 4)}, {"b", "NNNNNNNNNN"}};
    sorted_run const input(dir, too_short);
    qmer::plain_kmer_hashing const hashing(k, seed);
    for (sorted_build_plan plan : {in_memory(1), in_memory(2), spilled()}) {
        collected out;
        build_counts counts;
        try {
            (void)input.run(out, hashing, plan, 2, dir.path().string(), counts, nullptr,
                            no_crowded);
            ADD_FAILURE() << "no error for a reference without a k-mer";
        } catch (qmer::input_error const& e) {
            EXPECT_NE(std::string(e.what()).find(input.path), std::string::npos) << e.what();
        }
    }
    // Allowed: the build completes and hands the sink nothing.
    reference_set const refs{{input.path}, {input.path}, k, true};
    progress_meter progress("test", true);
    collected out;
    build_counts counts;
    sorted_build_result const result =
        build_from_sorted_bins(g, out.sink(), hashing, {refs, 2, progress}, counts, input.census,
                               in_memory(1), dir.path().string(), nullptr, no_crowded);
    EXPECT_TRUE(result.complete);
    EXPECT_TRUE(out.fps.empty());
    EXPECT_EQ(counts.kmers.load(), 0u);
    EXPECT_EQ(counts.records, 2u);
}

TEST(sorted_bins, a_missing_reference_is_an_input_error_naming_it) {
    qmer::test::temp_folder const dir;
    std::string const missing = (dir / "absent.fa").string();
    reference_set const refs{{missing}, {missing}, k, false};
    progress_meter progress("test", true);
    collected out;
    build_counts counts;
    try {
        (void)build_from_sorted_bins(g, out.sink(), qmer::plain_kmer_hashing(k, seed),
                                     {refs, 2, progress}, counts, reference_census{}, in_memory(1),
                                     dir.path().string(), nullptr, no_crowded);
        ADD_FAILURE() << "no error for a missing reference";
    } catch (qmer::input_error const& e) {
        EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    EXPECT_TRUE(out.fps.empty());
}

// The minimizer-local oracle: each k-mer's local hash (the scheme's own, without marks) and plain
// hash, the windows whose distinct local fingerprints exceed `threshold`, and the fingerprints a
// one-pass build appends: the unmarked windows' local ones and the marked windows' plain ones.
struct local_oracle {
    std::vector<uint64_t> marked_bits = std::vector<uint64_t>(((1u << window_bits) + 63) / 64, 0);
    uint64_t marked = 0;
    std::vector<uint64_t> one_pass;  // with the crowded windows' plain fingerprints
    std::vector<uint64_t> unmarked;  // without them (several passes)

    local_oracle(records const& recs, double threshold) {
        qmer::local_kmer_hashing const local(k, seed, minimizer, window_bits, {});
        qmer::kmer_hasher const hasher{seed};
        std::vector<std::pair<uint64_t, uint64_t>> hashes;  // local, plain
        for (auto const& [name, seq] : recs) {
            std::vector<uint64_t> const kmers = canonical_kmers(seq, k);
            size_t i = 0;
            local.for_each(seq, [&](uint64_t h) {
                hashes.emplace_back(h, i < kmers.size() ? hasher(kmers[i]) : 0);
                ++i;
            });
            EXPECT_EQ(i, kmers.size());
        }
        unsigned const shift = g.fingerprint_bits() - window_bits;
        std::map<uint64_t, std::set<uint64_t>> per_window;
        for (auto const& [h, plain] : hashes) {
            uint64_t const fp = g.fingerprint(h);
            per_window[fp >> shift].insert(fp);
        }
        for (auto const& [w, fps] : per_window)
            if (static_cast<double>(fps.size()) > threshold) {
                marked_bits[w / 64] |= uint64_t{1} << (w % 64);
                ++marked;
            }
        std::set<uint64_t> kept, crowded;
        for (auto const& [h, plain] : hashes) {
            uint64_t const w = g.fingerprint(h) >> shift;
            if ((marked_bits[w / 64] >> (w % 64)) & 1)
                crowded.insert(g.fingerprint(plain));
            else
                kept.insert(g.fingerprint(h));
        }
        unmarked.assign(kept.begin(), kept.end());
        kept.insert(crowded.begin(), crowded.end());
        one_pass.assign(kept.begin(), kept.end());
    }
};

TEST(sorted_bins, crowded_windows_are_replaced_by_their_plain_kmers_in_one_pass) {
    qmer::test::temp_folder const dir;
    sorted_run const input(dir);
    double const threshold = 100;  // ~90 k-mer positions a window: a few windows above it
    local_oracle const oracle(input.recs, threshold);
    ASSERT_GT(oracle.marked, 0u);
    ASSERT_LT(oracle.marked, 128u);
    qmer::local_kmer_hashing const hashing(k, seed, minimizer, window_bits, {});
    for (sorted_build_plan plan : {in_memory(1), spilled()}) {
        for (unsigned threads : {1u, 3u}) {
            SCOPED_TRACE(testing::Message()
                         << (plan.spill ? "scratch file, " : "in memory, ") << threads);
            window_marks marks(g, window_bits, threshold);
            size_t crowded_calls = 0;
            // What the caller does (app/index/counted_build.cpp): the marked windows' k-mers,
            // hashed plainly, into the collection it is handed.
            auto crowded = [&](auto& plain) {
                ++crowded_calls;
                EXPECT_EQ(marks.now, window_marks::stage::drop);
                qmer::local_kmer_hashing const marked(k, seed, minimizer, window_bits, marks.bits);
                for (auto const& [name, seq] : input.recs)
                    marked.for_each_overloaded(seq, [&](uint64_t h) { (void)plain.insert(h); });
            };
            collected out;
            build_counts counts;
            sorted_build_result const result = input.run(
                out, hashing, plan, threads, dir.path().string(), counts, &marks, crowded);
            EXPECT_TRUE(result.complete);
            EXPECT_TRUE(result.crowded_done);
            EXPECT_EQ(crowded_calls, 1u);
            EXPECT_EQ(marks.now, window_marks::stage::drop);
            EXPECT_EQ(marks.marked.load(), oracle.marked);
            EXPECT_EQ(marks.bits, oracle.marked_bits);
            EXPECT_TRUE(out.increasing);
            EXPECT_EQ(out.fps, oracle.one_pass);
            EXPECT_EQ(counts.kmers.load(), input.census.kmer_positions);
        }
    }
}

TEST(sorted_bins, no_crowded_window_appends_the_local_fingerprints_without_a_second_read) {
    qmer::test::temp_folder const dir;
    sorted_run const input(dir);
    double const threshold = std::numeric_limits<double>::infinity();
    local_oracle const oracle(input.recs, threshold);
    ASSERT_EQ(oracle.marked, 0u);
    qmer::local_kmer_hashing const hashing(k, seed, minimizer, window_bits, {});
    for (sorted_build_plan plan : {in_memory(1), spilled()}) {
        window_marks marks(g, window_bits, threshold);
        size_t crowded_calls = 0;
        collected out;
        build_counts counts;
        sorted_build_result const result =
            input.run(out, hashing, plan, 2, dir.path().string(), counts, &marks,
                      [&](auto&) { ++crowded_calls; });
        EXPECT_TRUE(result.complete);
        EXPECT_TRUE(result.crowded_done);
        EXPECT_EQ(crowded_calls, 0u);
        EXPECT_EQ(out.fps, oracle.unmarked);
        EXPECT_EQ(out.fps, oracle.one_pass);
    }
}

// Several passes: each window is marked in the pass of its bucket, its fingerprints dropped, and
// its k-mers left to the caller (crowded_done false), the marks those of one pass.
TEST(sorted_bins, several_passes_mark_the_same_windows_and_leave_their_kmers_to_the_caller) {
    qmer::test::temp_folder const dir;
    sorted_run const input(dir);
    double const threshold = 100;
    local_oracle const oracle(input.recs, threshold);
    ASSERT_GT(oracle.marked, 0u);
    qmer::local_kmer_hashing const hashing(k, seed, minimizer, window_bits, {});
    for (unsigned threads : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << threads << " threads");
        window_marks marks(g, window_bits, threshold);
        size_t crowded_calls = 0;
        collected out;
        build_counts counts;
        sorted_build_result const result =
            input.run(out, hashing, in_memory(3), threads, dir.path().string(), counts, &marks,
                      [&](auto&) { ++crowded_calls; });
        EXPECT_TRUE(result.complete);
        EXPECT_FALSE(result.crowded_done);
        EXPECT_EQ(crowded_calls, 0u);
        EXPECT_EQ(marks.bits, oracle.marked_bits);
        EXPECT_EQ(out.fps, oracle.unmarked);
        EXPECT_EQ(counts.passes, 3u);
    }
}

}  // namespace
