// The reference census (app/index/reference_census.hpp): the k-mer positions, bases and longest
// record of the references exactly, their distinct k-mers raised by 3 standard errors and never
// above the positions, the same whatever the threads; which builds count and gather in one read;
// and the errors of references that hold no k-mer, cannot be opened, cannot be read twice, or
// would need more scratch room than their folder has.

#include "app/index/reference_census.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "io/spill_file.hpp"
#include "reference_files.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;
using qmer::test::canonical_kmers;
using qmer::test::random_bases;
using records = std::vector<std::pair<std::string, std::string>>;

constexpr unsigned k = 31;
constexpr uint64_t seed = 5;

// A sketch whose estimate and error the test sets.
struct fixed_sketch {
    double value;
    double error;
    double estimate() const noexcept { return value; }
    double standard_error() const noexcept { return error; }
};

build_counts counted(uint64_t kmers, uint64_t bases, uint64_t longest) {
    // build_counts cannot be copied or moved (its atomic): made in place.
    return {{kmers}, 0, bases, 0, 0, longest};
}

TEST(census_of, raises_the_estimate_by_3_errors_never_above_the_positions_plus_one) {
    // 1000 * (1 + 3 * 0.25) = 1750, exact in binary; the census adds one.
    reference_census c = census_of(fixed_sketch{1000, 0.25}, counted(5000, 6000, 700));
    EXPECT_EQ(c.distinct_estimate, 1751u);
    EXPECT_EQ(c.kmer_positions, 5000u);
    EXPECT_EQ(c.bases, 6000u);
    EXPECT_EQ(c.longest_record, 700u);
    // The positions bound the distinct k-mers.
    EXPECT_EQ(census_of(fixed_sketch{1000, 0.25}, counted(1200, 1300, 1300)).distinct_estimate,
              1201u);
    // A fractional estimate is rounded up.
    EXPECT_EQ(census_of(fixed_sketch{10.1, 0}, counted(50, 80, 80)).distinct_estimate, 12u);
    // No k-mer: a census of one, never zero (a table is sized from it).
    EXPECT_EQ(census_of(fixed_sketch{0, 0.01}, counted(0, 0, 0)).distinct_estimate, 1u);
    EXPECT_EQ(census_of(fixed_sketch{3, 0.01}, counted(0, 10, 10)).distinct_estimate, 1u);
}

struct reference_files {
    qmer::test::temp_folder dir;
    std::vector<std::string> paths;
    uint64_t positions = 0, bases = 0, longest = 0;
    std::vector<uint64_t> kmers;  // every position's canonical k-mer

    uint64_t distinct() const {
        std::vector<uint64_t> d = kmers;
        std::sort(d.begin(), d.end());
        return static_cast<uint64_t>(std::unique(d.begin(), d.end()) - d.begin());
    }

    std::string add(std::string const& name, records const& recs) {
        paths.push_back((dir / name).string());
        qmer::test::write_fasta(paths.back(), recs);
        for (auto const& [n, seq] : recs) {
            auto const found = canonical_kmers(seq, k);
            positions += found.size();
            kmers.insert(kmers.end(), found.begin(), found.end());
            bases += seq.size();
            longest = std::max<uint64_t>(longest, seq.size());
        }
        return paths.back();
    }
    reference_set set(bool allow_empty = false) const { return {paths, paths, k, allow_empty}; }
};

reference_census census_on(reference_set const& refs, unsigned threads) {
    progress_meter progress("test", true);
    // `threads` threads, even past the machine's cores.
    tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, threads);
    return count_references({refs, threads, progress}, seed);
}

void expect_same(reference_census const& a, reference_census const& b) {
    EXPECT_EQ(a.distinct_estimate, b.distinct_estimate);
    EXPECT_EQ(a.kmer_positions, b.kmer_positions);
    EXPECT_EQ(a.bases, b.bases);
    EXPECT_EQ(a.longest_record, b.longest_record);
}

TEST(count_references, counts_positions_bases_and_the_longest_record_exactly_on_any_threads) {
    reference_files refs;
    std::string mixed = random_bases(4000, 2);
    mixed.replace(1500, 3, "NnN");
    refs.add("a.fa", {{"long", random_bases(30000, 1)}, {"mixed", mixed}});
    refs.add("b.fa", {{"short", random_bases(k - 1, 3)}, {"one", random_bases(k, 4)}});
    reference_census const one = census_on(refs.set(), 1);
    EXPECT_EQ(one.kmer_positions, refs.positions);
    EXPECT_EQ(one.bases, refs.bases);
    EXPECT_EQ(one.longest_record, 30000u);
    // Random 31-mers are distinct: the raised estimate is capped at the positions.
    ASSERT_EQ(refs.distinct(), refs.positions);
    EXPECT_EQ(one.distinct_estimate, refs.positions + 1);
    expect_same(census_on(refs.set(), 3), one);
}

TEST(count_references, a_repetitive_reference_is_counted_by_its_distinct_kmers) {
    reference_files refs;
    std::string repeat;
    std::string const unit = random_bases(40, 6);
    for (int i = 0; i < 300; ++i) repeat += unit;
    refs.add("repeat.fa", {{"tandem", repeat}, {"random", random_bases(2000, 7)}});
    uint64_t const d = refs.distinct();
    ASSERT_LT(d, refs.positions / 4);
    reference_census const one = census_on(refs.set(), 1);
    EXPECT_EQ(one.kmer_positions, refs.positions);
    // HyperLogLog at 0.81%, raised by 3 of them: at least the distinct k-mers, at most ~3% more.
    EXPECT_GE(one.distinct_estimate, d + 1);
    EXPECT_LE(one.distinct_estimate, static_cast<uint64_t>(std::ceil(1.03 * d)) + 2);
    expect_same(census_on(refs.set(), 3), one);
}

TEST(count_references, a_reference_without_a_kmer_is_an_input_error_naming_it) {
    reference_files refs;
    refs.add("good.fa", {{"a", random_bases(500, 8)}});
    std::string const bad = refs.add("bad.fa", {{"n", std::string(100, 'N')}, {"s", "ACGT"}});
    try {
        (void)census_on(refs.set(), 2);
        ADD_FAILURE() << "no error";
    } catch (qmer::input_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find(bad), std::string::npos) << what;
        EXPECT_EQ(what.find(refs.paths[0]), std::string::npos) << what;
    }
    // Allowed: counted as it is.
    reference_census const c = census_on(refs.set(true), 2);
    EXPECT_EQ(c.kmer_positions, 500 - k + 1);
    EXPECT_EQ(c.bases, 604u);
}

TEST(count_references, an_empty_reference_allowed_gives_a_census_of_one) {
    reference_files refs;
    std::ofstream(refs.dir / "empty.fa").flush();
    refs.paths.push_back((refs.dir / "empty.fa").string());
    reference_census const c = census_on(refs.set(true), 2);
    EXPECT_EQ(c.distinct_estimate, 1u);
    EXPECT_EQ(c.kmer_positions, 0u);
    EXPECT_EQ(c.bases, 0u);
    EXPECT_THROW((void)census_on(refs.set(false), 2), qmer::input_error);
}

TEST(count_references, a_missing_reference_is_an_input_error_naming_it) {
    reference_files refs;
    refs.add("good.fa", {{"a", random_bases(500, 8)}});
    refs.paths.push_back((refs.dir / "absent.fa").string());
    try {
        (void)census_on(refs.set(), 2);
        ADD_FAILURE() << "no error";
    } catch (qmer::input_error const& e) {
        EXPECT_NE(std::string(e.what()).find(refs.paths[1]), std::string::npos) << e.what();
    }
}

TEST(count_kmer_positions, counts_every_kmer_position_of_every_reference) {
    reference_files refs;
    std::string mixed = random_bases(3000, 9);
    mixed[100] = 'N';
    mixed[2999 - k] = '-';
    refs.add("a.fa", {{"mixed", mixed}, {"exact", random_bases(k, 10)}});
    refs.add("b.fa", {{"short", random_bases(k - 1, 11)}, {"more", random_bases(700, 12)}});
    EXPECT_EQ(count_kmer_positions(refs.set(), "bloom"), refs.positions);
    // By hand: runs of 100, 2867 and 31 bases in `mixed`, then k bases, none, and 700 bases.
    EXPECT_EQ(refs.positions, 70u + 2837u + 1u + 1u + 0u + 670u);
}

TEST(count_kmer_positions, refuses_stdin_and_references_without_a_kmer) {
    reference_files refs;
    refs.add("a.fa", {{"a", random_bases(100, 13)}});
    reference_set with_stdin = refs.set();
    with_stdin.names.push_back("-");
    with_stdin.paths.push_back("-");
    try {
        (void)count_kmer_positions(with_stdin, "cuckoo");
        ADD_FAILURE() << "no error";
    } catch (qmer::usage_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("--filter cuckoo"), std::string::npos) << what;
        EXPECT_NE(what.find("--expected"), std::string::npos) << what;
    }
    std::string const bad = refs.add("short.fa", {{"s", random_bases(k - 1, 14)}});
    try {
        (void)count_kmer_positions(refs.set(), "bloom");
        ADD_FAILURE() << "no error";
    } catch (qmer::input_error const& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_EQ(count_kmer_positions(refs.set(true), "bloom"), 100 - k + 1);
}

// A file of `bytes` bytes that reads as zeros (sparse: no disk taken), starting with `magic`.
std::string sized_file(qmer::test::temp_folder const& dir, std::string const& name, uint64_t bytes,
                       std::string const& magic = "") {
    std::string const path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << magic;
    std::filesystem::resize_file(path, bytes);
    return path;
}

TEST(gathers_while_counting, only_minimizer_local_references_of_2_to_the_23_bytes_or_more) {
    qmer::test::temp_folder const dir;
    uint64_t const from = gather_while_counting_from;
    ASSERT_EQ(from, uint64_t{1} << 23);
    auto refs_of = [&](std::vector<std::string> paths, unsigned kmer = k) {
        return reference_set{paths, paths, kmer, false};
    };
    std::string const below = sized_file(dir, "below.fa", from - 1);
    std::string const at = sized_file(dir, "at.fa", from);
    EXPECT_FALSE(gathers_while_counting(refs_of({below}), false));
    EXPECT_TRUE(gathers_while_counting(refs_of({at}), false));
    EXPECT_FALSE(gathers_while_counting(refs_of({at}), true));  // --plain-hash
    // k below 16 has no minimizer-local scheme.
    EXPECT_FALSE(gathers_while_counting(refs_of({at}, 15), false));
    EXPECT_TRUE(gathers_while_counting(refs_of({at}, 16), false));
    // The files' sizes add up; stdin counts nothing.
    std::string const one = sized_file(dir, "one.fa", from / 2);
    std::string const other = sized_file(dir, "other.fa", from / 2);
    EXPECT_TRUE(gathers_while_counting(refs_of({one, other}), false));
    EXPECT_FALSE(gathers_while_counting(refs_of({one, "-"}), false));
    // A gzip file counts 4 times its size.
    std::string const gz = sized_file(dir, "ref.fa.gz", from / 4, "\x1f\x8b");
    std::string const gz_below = sized_file(dir, "below.fa.gz", from / 4 - 1, "\x1f\x8b");
    EXPECT_TRUE(gathers_while_counting(refs_of({gz}), false));
    EXPECT_FALSE(gathers_while_counting(refs_of({gz_below}), false));
}

TEST(gathering_bin_bits, the_fingerprint_bits_above_31_between_10_and_12) {
    EXPECT_EQ(gathering_bin_bits(0), 10u);
    EXPECT_EQ(gathering_bin_bits(31), 10u);
    EXPECT_EQ(gathering_bin_bits(41), 10u);
    EXPECT_EQ(gathering_bin_bits(42), 11u);
    EXPECT_EQ(gathering_bin_bits(43), 12u);
    EXPECT_EQ(gathering_bin_bits(44), 12u);
    EXPECT_EQ(gathering_bin_bits(64), 12u);
}

gathering gathering_in(std::string const& folder, uint64_t memory_limit) {
    return {.seed = seed,
            .memory_limit = memory_limit,
            .scratch_folder = folder,
            .streamed_level = false,
            .table_bytes_for = [](uint64_t distinct) { return 2 * distinct; },
            .guessed_fingerprint_bits = 42};
}

TEST(count_and_gather, measures_what_count_references_measures_and_keeps_the_bins) {
    reference_files refs;
    std::string repeat;
    std::string const unit = random_bases(60, 15);
    for (int i = 0; i < 100; ++i) repeat += unit;
    refs.add("a.fa", {{"random", random_bases(40000, 16)}, {"tandem", repeat}});
    refs.add("b.fa", {{"short", random_bases(k - 1, 17)}, {"more", random_bases(5000, 18)}});
    uint64_t const d = refs.distinct();
    std::optional<reference_census> first;
    for (unsigned threads : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << threads << " threads");
        progress_meter progress("test", true);
        build_counts counts;
        std::unique_ptr<superkmer_bins> gathered;
        // `threads` threads, even past the machine's cores.
        tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, threads);
        reference_census const census = count_and_gather(
            {refs.set(), threads, progress},
            gathering_in(refs.dir.path().string(), uint64_t{1} << 30), counts, gathered);
        EXPECT_EQ(census.kmer_positions, refs.positions);
        EXPECT_EQ(census.bases, refs.bases);
        EXPECT_EQ(census.longest_record, 40000u);
        EXPECT_EQ(counts.kmers.load(), refs.positions);
        EXPECT_EQ(counts.records, 4u);
        // ~45,000 distinct: past HyperLogLog's linear counting, within 5 errors of 0.81%, raised.
        EXPECT_GE(census.distinct_estimate, d + 1);
        EXPECT_LE(census.distinct_estimate,
                  std::min<uint64_t>(refs.positions + 1, std::ceil(1.07 * d) + 2));
        ASSERT_NE(gathered, nullptr);
        EXPECT_EQ(gathered->bin_count(), 1u << gathering_bin_bits(42));
        EXPECT_EQ(gathered->file_bytes(), 0u);  // 1 GiB holds them in memory
        if (!first) first = census;
        expect_same(census, *first);
    }
}

// The phases count_and_gather went through, from a progress meter's timings.
std::string phases_of_count_and_gather(reference_files const& refs, reference_census& census) {
    testing::internal::CaptureStderr();
    {
        progress_meter progress("test", false, true);
        build_counts counts;
        std::unique_ptr<superkmer_bins> gathered;
        census = count_and_gather({refs.set(), 2, progress},
                                  gathering_in(refs.dir.path().string(), uint64_t{1} << 30), counts,
                                  gathered);
        progress.finish();
    }
    return testing::internal::GetCapturedStderr();
}

// The sampled count sizes the table where it is certain enough (random sequence of a few Mbp);
// a reference of few minimizers (a tandem repeat) has every k-mer counted again from the bins.
TEST(count_and_gather, counts_every_kmer_again_only_where_the_sample_is_too_uncertain) {
    reference_files large;
    large.add("random.fa", {{"random", random_bases(1000000, 21)}});
    reference_census census;
    std::string const sampled = phases_of_count_and_gather(large, census);
    EXPECT_EQ(sampled.find("counting every k-mer"), std::string::npos) << sampled;
    EXPECT_NE(sampled.find("reading k-mers"), std::string::npos) << sampled;
    uint64_t const d = large.distinct();
    EXPECT_GE(census.distinct_estimate, d + 1);
    EXPECT_LE(census.distinct_estimate, large.positions + 1);

    reference_files repeat;
    std::string tandem;
    std::string const unit = random_bases(45, 22);
    for (int i = 0; i < 2000; ++i) tandem += unit;
    repeat.add("tandem.fa", {{"tandem", tandem}});
    std::string const counted_again = phases_of_count_and_gather(repeat, census);
    EXPECT_NE(counted_again.find("counting every k-mer"), std::string::npos) << counted_again;
    uint64_t const few = repeat.distinct();
    EXPECT_GE(census.distinct_estimate, few + 1);
    EXPECT_LE(census.distinct_estimate, static_cast<uint64_t>(std::ceil(1.03 * few)) + 2);
}

TEST(count_and_gather, a_reference_without_a_kmer_is_an_input_error_naming_it) {
    reference_files refs;
    refs.add("a.fa", {{"a", random_bases(1000, 19)}});
    std::string const bad = refs.add("bad.fa", {{"s", random_bases(k - 1, 20)}});
    progress_meter progress("test", true);
    build_counts counts;
    std::unique_ptr<superkmer_bins> gathered;
    try {
        (void)count_and_gather({refs.set(), 2, progress},
                               gathering_in(refs.dir.path().string(), uint64_t{1} << 30), counts,
                               gathered);
        ADD_FAILURE() << "no error";
    } catch (qmer::input_error const& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
}

// References whose size calls for more scratch room than the folder has are refused before they
// are read, naming the folder.
TEST(count_and_gather, refuses_a_scratch_folder_without_room_before_reading) {
    qmer::test::temp_folder const dir;
    std::string const scratch = dir.path().string();
    uint64_t const free = qmer::io::free_bytes_in(scratch);
    std::string path;
    try {
        path = sized_file(dir, "huge.fa", free);
    } catch (std::filesystem::filesystem_error const& e) {
        GTEST_SKIP() << "no sparse file of the folder's free size here: " << e.what();
    }
    reference_set const refs{{path}, {path}, k, false};
    progress_meter progress("test", true);
    build_counts counts;
    std::unique_ptr<superkmer_bins> gathered;
    try {
        (void)count_and_gather({refs, 2, progress}, gathering_in(scratch, uint64_t{1} << 30),
                               counts, gathered);
        ADD_FAILURE() << "no error";
    } catch (qmer::output_error const& e) {
        EXPECT_NE(std::string(e.what()).find("'" + scratch + "'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(counts.records, 0u);
    EXPECT_EQ(gathered, nullptr);
}

}  // namespace
