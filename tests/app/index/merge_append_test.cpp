// The merge append (app/index/merge_append.hpp): new references merged into an index in the
// rank-select layout give an index that holds every k-mer of the old and the new references,
// records both, counts their k-mer positions, and is the same file whatever the threads, the bins,
// and whether the new k-mers' hashes were held in memory or spilled to a scratch file; where the
// merge is not taken (a cascading index) or fails (too little memory even for the scratch file,
// no scratch folder, failing references), the index is left as it was, byte for byte.

#include "app/index/merge_append.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/filters/registry.hpp"
#include "app/index/counted_build.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "reference_files.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;
using codec = filter_codec<filter_kind::expandable>;
using qmer::test::random_bases;

constexpr unsigned k = 31;

struct reference {
    std::string path;
    std::string sequence;
    uint64_t positions() const { return qmer::test::canonical_kmers(sequence, k).size(); }
};

reference write_reference(qmer::test::temp_folder const& dir, std::string const& name,
                          std::string sequence) {
    reference r{(dir / name).string(), std::move(sequence)};
    qmer::test::write_fasta(r.path, {{name, r.sequence}});
    return r;
}

std::string file_bytes(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// How many of the sequence's k-mers the index holds, hashed as its header says, and passed by
// its minimizer gate where it has one (a query looks up only those).
uint64_t held(std::string const& path, std::string const& sequence) {
    qmer::io::index_file const index(path);
    auto const levels = codec::open_in_place(index);
    if (!levels) return 0;
    auto const gate = codec::gate_in_place(index);
    auto const& h = index.header();
    uint64_t found = 0;
    qmer::with_kmer_hashing(h.k, h.hash_seed, h.hash, [&](auto const& hashing) {
        if constexpr (minimizer_local_hashing<std::decay_t<decltype(hashing)>>) {
            (void)hashing.for_each_tagged(sequence, [&](uint64_t x, bool plain) {
                found += (!gate || plain || gate->passes(x)) && levels->contains(x);
            });
        } else {
            EXPECT_FALSE(gate.has_value());
            (void)for_each_kmer_hash(*levels, hashing, sequence,
                                     [&](uint64_t x) { found += levels->contains(x); });
        }
    });
    return found;
}

// A counted build of `ref` written as the index `path`, one level in the rank-select layout (the
// default build's), sized for `expected` distinct k-mers.
void build_index(std::string const& path, reference const& ref, uint64_t expected,
                 bool cascading = false) {
    reference_set const refs{{ref.path}, {ref.path}, k, false};
    progress_meter progress("test", true);
    reference_pass const pass{refs, 2, progress};
    reference_census const census = count_references(pass, 0);
    filter_plan const plan{.expected = expected, .cascading = cascading, .expected_measured = true};
    qmer::io::index_header header;
    header.k = k;
    header.filter = "expandable";
    header.fpr = plan.fpr;
    counted_build_settings const settings{
        .memory = {.limit = uint64_t{4} << 30}, .output = "-", .scratch_folder = ".", .origin = {}};
    build_counts counts;
    counted_build built = build_counted(
        codec::options(plan), [&] { return codec::create(plan); }, header, pass, settings, counts,
        census, nullptr);
    ASSERT_TRUE(built.level.has_value());
    auto const arrays = built.level->arrays();
    finish_header(header, {"qmer index", {ref.path}}, header_params(arrays), built.level->elements,
                  counts.kmers.load());
    qmer::io::index_writer writer(path, header);
    built.level->save(writer);
    writer.commit();
}

// append_by_merge of `refs` onto the index `path`, on `threads` threads, its scratch file (if
// any) in `scratch` (default: the index's folder), its bins of `bin_bits` hash bits (0: its own
// choice), the top level merged in parts of about `top_part_elements` (0: its own choice).
std::optional<sorted_append> append(std::string const& path, std::vector<std::string> const& refs,
                                    build_counts& counts, unsigned threads = 2,
                                    uint64_t memory_limit = uint64_t{4} << 30,
                                    unsigned bin_bits = 0, std::string scratch = "",
                                    uint64_t top_part_elements = 0) {
    if (scratch.empty()) scratch = std::filesystem::path(path).parent_path().string();
    qmer::io::index_file const existing(path);
    auto const levels = codec::open_in_place(existing);
    EXPECT_TRUE(levels.has_value());
    if (!levels) return std::nullopt;
    reference_set const set{refs, refs, k, false};
    progress_meter progress("test", true);
    // `threads` threads, even past the machine's cores.
    tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, threads);
    return append_by_merge(*levels, codec::gate_in_place(existing), existing,
                           {set, threads, progress},
                           {.fill = 0.95,
                            .memory = {.limit = memory_limit},
                            .scratch_folder = scratch,
                            .output = path,
                            .origin = {"qmer index --append", refs},
                            .bin_bits = bin_bits,
                            .top_part_elements = top_part_elements},
                           counts);
}

uint64_t elements_of(std::string const& path) {
    return qmer::io::index_file(path).header().elements;
}

TEST(merge_append, references_the_index_holds_already_change_only_its_record) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(50000, 1));
    // A second reference of k-mers the index holds: a piece of the first, reverse-complemented.
    std::string piece = a.sequence.substr(1000, 5000);
    std::reverse(piece.begin(), piece.end());
    for (auto& c : piece) c = "TGCA"[std::string("ACGT").find(c)];
    reference const same = write_reference(dir, "same.fa", piece);
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    uint64_t const before = elements_of(path);
    build_counts counts;
    auto const done = append(path, {same.path}, counts);
    ASSERT_TRUE(done.has_value());
    EXPECT_EQ(done->added_levels, 0u);
    EXPECT_EQ(done->elements, before);
    EXPECT_EQ(counts.kmers.load(), same.positions());
    qmer::io::index_file const index(path);
    EXPECT_EQ(index.header().elements, before);
    EXPECT_EQ(index.header().kmers_scanned, a.positions() + same.positions());
    EXPECT_EQ(index.header().command, "qmer index --append");
    EXPECT_EQ(index.header().inputs, (std::vector<std::string>{a.path, same.path}));
    EXPECT_EQ(held(path, a.sequence), a.positions());
}

TEST(merge_append, new_kmers_that_fit_the_top_level_go_into_it) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(50000, 2));
    reference const b = write_reference(dir, "b.fa", random_bases(3000, 3));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, 2 * a.positions());  // room for the new k-mers
    uint64_t const before = elements_of(path);
    build_counts counts;
    auto const done = append(path, {b.path}, counts);
    ASSERT_TRUE(done.has_value());
    EXPECT_EQ(done->added_levels, 0u);
    // Each new k-mer one element, but for the few that a level seems to hold already (a false
    // positive, 0.1% of them) or whose fingerprint another new one has.
    EXPECT_LE(done->elements, before + b.positions());
    EXPECT_GE(done->elements, before + b.positions() - b.positions() / 200);
    EXPECT_EQ(elements_of(path), done->elements);
    EXPECT_EQ(rank_select_levels_of(qmer::io::index_file(path))->levels(), 1u);
    EXPECT_EQ(held(path, a.sequence), a.positions());
    EXPECT_EQ(held(path, b.sequence), b.positions());
}

// The top level merged in many parts, each by one of several threads (its runs crossing the
// parts' edges at 95% fill), is the file merged in one part by one thread, byte for byte, whether
// the new k-mers all fit the top or a new level takes the rest.
TEST(merge_append, the_top_merged_in_parts_is_the_top_merged_whole) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(60000, 21));
    reference const fits = write_reference(dir, "fits.fa", random_bases(20000, 22));
    reference const more = write_reference(dir, "more.fa", random_bases(90000, 23));
    for (auto const& [added, room] : {std::pair{fits, 2}, std::pair{more, 1}}) {
        std::string const whole = (dir / "whole.qmer").string();
        std::string const parts = (dir / "parts.qmer").string();
        std::filesystem::remove(whole);
        std::filesystem::remove(parts);
        build_index(whole, a, static_cast<uint64_t>(room) * a.positions());
        std::filesystem::copy_file(whole, parts);
        build_counts counts_whole, counts_parts;
        auto const one = append(whole, {added.path}, counts_whole, 1, uint64_t{4} << 30, 0, "",
                                uint64_t{1} << 40);
        auto const many =
            append(parts, {added.path}, counts_parts, 4, uint64_t{4} << 30, 0, "", 50);
        ASSERT_TRUE(one.has_value());
        ASSERT_TRUE(many.has_value());
        EXPECT_EQ(one->added_levels, room == 2 ? 0u : 1u);
        EXPECT_EQ(one->elements, many->elements);
        EXPECT_TRUE(file_bytes(whole) == file_bytes(parts)) << "the parts changed the index";
        EXPECT_EQ(held(parts, a.sequence), a.positions());
        EXPECT_EQ(held(parts, added.sequence), added.positions());
    }
}

// More new k-mers than the top level has room for: a new level, the same file on 1 and 3
// threads, and a second append onto that index still holds everything.
TEST(merge_append, more_than_the_top_holds_adds_a_level_the_same_on_any_threads) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(40000, 4));
    reference const b = write_reference(dir, "b.fa", random_bases(120000, 5));
    reference const c = write_reference(dir, "c.fa", random_bases(20000, 6));
    std::string const one = (dir / "one.qmer").string(), three = (dir / "three.qmer").string();
    build_index(one, a, a.positions());
    std::filesystem::copy_file(one, three);
    uint64_t const before = elements_of(one);
    build_counts counts_one, counts_three;
    auto const done_one = append(one, {b.path}, counts_one, 1);
    auto const done_three = append(three, {b.path}, counts_three, 3);
    ASSERT_TRUE(done_one.has_value());
    ASSERT_TRUE(done_three.has_value());
    EXPECT_EQ(done_one->added_levels, 1u);
    EXPECT_EQ(done_one->elements, done_three->elements);
    EXPECT_GE(done_one->elements, before + b.positions() - b.positions() / 200);
    EXPECT_LE(done_one->elements, before + b.positions());
    EXPECT_EQ(counts_one.kmers.load(), b.positions());
    EXPECT_EQ(counts_three.kmers.load(), b.positions());
    EXPECT_TRUE(file_bytes(one) == file_bytes(three)) << "the threads changed the index";
    EXPECT_EQ(rank_select_levels_of(qmer::io::index_file(one))->levels(), 2u);
    EXPECT_EQ(held(one, a.sequence), a.positions());
    EXPECT_EQ(held(one, b.sequence), b.positions());

    build_counts counts;
    auto const again = append(one, {c.path}, counts);
    ASSERT_TRUE(again.has_value());
    qmer::io::index_file const index(one);
    EXPECT_EQ(index.header().elements, again->elements);
    EXPECT_EQ(rank_select_levels_of(index)->levels(), 2u + again->added_levels);
    EXPECT_EQ(index.header().inputs, (std::vector<std::string>{a.path, b.path, c.path}));
    EXPECT_EQ(index.header().kmers_scanned, a.positions() + b.positions() + c.positions());
    for (reference const* r : {&a, &b, &c}) EXPECT_EQ(held(one, r->sequence), r->positions());
}

// A few new k-mers onto a larger index: the new level is an early top level
// (core/qf/concurrent/expandable.hpp, "Early top levels"), more than 3 doublings short of its final
// size, not a quarter of the first level; it loads into the concurrent filter and grows there by
// inserts, and a later merge append grows it too; every k-mer is held throughout.
TEST(merge_append, a_few_kmers_onto_a_larger_index_take_an_early_level_that_grows) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(400000, 21));
    reference const b = write_reference(dir, "b.fa", random_bases(3000, 22));
    reference const d = write_reference(dir, "d.fa", random_bases(60000, 24));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    build_counts counts;
    auto const done = append(path, {b.path}, counts);
    ASSERT_TRUE(done.has_value());
    ASSERT_EQ(done->added_levels, 1u);
    {
        qmer::io::index_file const index(path);
        auto const& stack = index.sections()[0].params;
        uint64_t const m0 = stack[8];
        auto const r0 = static_cast<unsigned>(stack[7]);
        auto const levels = rank_select_levels_of(index);
        ASSERT_EQ(levels->levels(), 2u);
        auto const eighth = qmer::qf::expandable_filter::plan_level(m0, r0, 1, 3);
        ASSERT_TRUE(eighth.has_value());
        EXPECT_LT(levels->level(1).capacity() * 4, eighth->g.canonical_slots());
        EXPECT_GT(levels->level(1).geometry().remainder_bits, r0 + 1 + 3);
    }
    EXPECT_EQ(held(path, a.sequence), a.positions());
    EXPECT_EQ(held(path, b.sequence), b.positions());

    // Loaded to take inserts (an append k-mer by k-mer): the early level grows by doubling.
    {
        qmer::io::index_file const index(path);
        auto filter = codec::open(index);
        std::string const c = random_bases(40000, 23);
        auto const& h = index.header();
        qmer::with_kmer_hashing(h.k, h.hash_seed, h.hash, [&](auto const& hashing) {
            hashing.for_each(c, [&](uint64_t x) { (void)filter->insert(x); });
            uint64_t missing = 0;
            hashing.for_each(c, [&](uint64_t x) { missing += !filter->contains(x); });
            hashing.for_each(b.sequence, [&](uint64_t x) { missing += !filter->contains(x); });
            EXPECT_EQ(missing, 0u);
        });
        EXPECT_GT(filter->level_stats().back().growths, 0u);
    }

    // A larger merge append onto it: the top rewritten at a larger size of its place.
    auto const again = append(path, {d.path}, counts);
    ASSERT_TRUE(again.has_value());
    for (reference const* r : {&a, &b, &d}) EXPECT_EQ(held(path, r->sequence), r->positions());
}

// The files of the folder, by name.
std::set<std::string> files_in(qmer::test::temp_folder const& dir) {
    std::set<std::string> names;
    for (auto const& e : std::filesystem::directory_iterator(dir.path()))
        names.insert(e.path().filename().string());
    return names;
}

// The least memory limit the scratch file's way keeps to, for appending `refs` onto `path` on
// `threads` threads in bins of `bin_bits` bits; below the in-memory way's need (checked), so that
// a limit between the two takes the scratch file.
uint64_t spilled_limit(std::string const& path, std::vector<std::string> const& refs,
                       unsigned threads, unsigned bin_bits) {
    qmer::io::index_file const index(path);
    uint64_t const positions = estimate_kmers_from_sizes(refs);
    unsigned const bits = append_bin_bits(positions, index.header().hash.level_windows(), bin_bits);
    EXPECT_EQ(bits, bin_bits) << "the index's windows allow fewer bin bits";
    append_memory const at_least =
        plan_append_memory(positions, append_index_bytes(index, codec::gate_in_place(index)),
                           threads, bits, ~uint64_t{0});
    append_memory const plan =
        plan_append_memory(positions, append_index_bytes(index, codec::gate_in_place(index)),
                           threads, bits, at_least.least_spilled);
    EXPECT_FALSE(plan.in_memory) << "the hashes fit in memory at the scratch file's least";
    return at_least.least_spilled;
}

TEST(merge_append, too_little_memory_even_for_the_scratch_file_is_refused_before_reading) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(20000, 7));
    reference const b = write_reference(dir, "b.fa", random_bases(150000, 8));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    std::string const original = file_bytes(path);
    uint64_t const least = spilled_limit(path, {b.path}, 2, 6);
    build_counts counts;
    try {
        (void)append(path, {b.path}, counts, 2, least - 1, 6);
        ADD_FAILURE() << "no error";
    } catch (qmer::capacity_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find("--max-memory"), std::string::npos) << what;
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    EXPECT_EQ(counts.kmers.load(), 0u);
    EXPECT_TRUE(file_bytes(path) == original);
    EXPECT_EQ(files_in(dir), (std::set<std::string>{"a.fa", "b.fa", "x.qmer"}));
    // At the limit it is taken, through the scratch file, which leaves nothing behind.
    auto const done = append(path, {b.path}, counts, 2, least, 6);
    ASSERT_TRUE(done.has_value());
    EXPECT_GE(counts.scratch_bytes, 8 * counts.kmers.load());
    EXPECT_EQ(files_in(dir), (std::set<std::string>{"a.fa", "b.fa", "x.qmer"}));
    EXPECT_EQ(held(path, a.sequence), a.positions());
    EXPECT_EQ(held(path, b.sequence), b.positions());
}

TEST(merge_append, a_scratch_folder_that_cannot_take_the_file_is_an_output_error) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(20000, 14));
    reference const b = write_reference(dir, "b.fa", random_bases(150000, 15));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    std::string const original = file_bytes(path);
    std::string const missing = (dir / "no-such-folder").string();
    build_counts counts;
    try {
        (void)append(path, {b.path}, counts, 2, spilled_limit(path, {b.path}, 2, 6), 6, missing);
        ADD_FAILURE() << "no error";
    } catch (qmer::output_error const& e) {
        std::string const what = e.what();
        EXPECT_NE(what.find(missing), std::string::npos) << what;
        EXPECT_NE(what.find("--temp-dir"), std::string::npos) << what;
    }
    EXPECT_EQ(counts.kmers.load(), 0u);
    EXPECT_TRUE(file_bytes(path) == original);
}

// The same append through memory and through the scratch file, on 1, 2 and 8 threads, in bins of
// 3, 6 and the append's own number of bits: one file, byte for byte. The new k-mers outnumber the
// top level's room, so a second level is written, and its window map (the index is
// minimizer-local) is not the identity: each bin's share of it is sorted within the bin.
TEST(merge_append, spilled_and_in_memory_appends_write_the_same_file) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(40000, 16));
    reference const b = write_reference(dir, "b.fa", random_bases(300000, 17));
    std::string const seed = (dir / "seed.qmer").string();
    build_index(seed, a, a.positions());
    {
        qmer::io::index_file const index(seed);
        auto const windows = index.header().hash.level_windows();
        ASSERT_FALSE(windows.identity());
        ASSERT_GE(windows.window_bits, 6u);
    }
    struct run {
        std::string name;
        unsigned threads;
        bool spilled;
        unsigned bin_bits;
    };
    std::vector<run> const runs{{"memory", 2, false, 0},
                                {"memory3", 2, false, 3},
                                {"spill1", 1, true, 6},
                                {"spill8", 8, true, 6},
                                {"spill3", 2, true, 3}};
    std::string first;
    for (run const& r : runs) {
        SCOPED_TRACE(r.name);
        std::string const path = (dir / (r.name + ".qmer")).string();
        std::filesystem::copy_file(seed, path);
        uint64_t const limit =
            r.spilled ? spilled_limit(path, {b.path}, r.threads, r.bin_bits) : uint64_t{4} << 30;
        build_counts counts;
        auto const done = append(path, {b.path}, counts, r.threads, limit, r.bin_bits);
        ASSERT_TRUE(done.has_value());
        EXPECT_EQ(done->added_levels, 1u);
        EXPECT_EQ(counts.scratch_bytes != 0, r.spilled);
        if (first.empty()) {
            first = file_bytes(path);
            EXPECT_EQ(held(path, a.sequence), a.positions());
            EXPECT_EQ(held(path, b.sequence), b.positions());
        } else {
            EXPECT_TRUE(file_bytes(path) == first) << "not the in-memory append's file";
        }
    }
}

// New k-mers that fit the top level: merged into it alike through memory and the scratch file.
TEST(merge_append, spilled_merge_into_the_top_level_is_the_in_memory_one) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(50000, 18));
    reference const b = write_reference(dir, "b.fa", random_bases(150000, 19));
    std::string const memory = (dir / "memory.qmer").string(),
                      spilled = (dir / "spilled.qmer").string();
    build_index(memory, a, 5 * a.positions());  // room for the new k-mers
    std::filesystem::copy_file(memory, spilled);
    build_counts in_memory, through_file;
    auto const m = append(memory, {b.path}, in_memory, 2, uint64_t{4} << 30, 6);
    auto const s =
        append(spilled, {b.path}, through_file, 2, spilled_limit(spilled, {b.path}, 2, 6), 6);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->added_levels, 0u);
    EXPECT_EQ(in_memory.scratch_bytes, 0u);
    EXPECT_NE(through_file.scratch_bytes, 0u);
    EXPECT_TRUE(file_bytes(memory) == file_bytes(spilled));
    EXPECT_EQ(held(spilled, a.sequence), a.positions());
    EXPECT_EQ(held(spilled, b.sequence), b.positions());
}

// The spilled append of b onto a's index answers every k-mer a fresh build of a and b holds, and
// holds about as many k-mers (fingerprints that two k-mers share differ between the two).
TEST(merge_append, spilled_append_holds_what_a_fresh_build_of_both_does) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(30000, 20));
    reference const b = write_reference(dir, "b.fa", random_bases(150000, 21));
    reference const both = write_reference(dir, "both.fa", a.sequence + "NNN" + b.sequence);
    std::string const grown = (dir / "grown.qmer").string(), fresh = (dir / "fresh.qmer").string();
    build_index(grown, a, a.positions());
    build_index(fresh, both, both.positions());
    build_counts counts;
    auto const done = append(grown, {b.path}, counts, 2, spilled_limit(grown, {b.path}, 2, 6), 6);
    ASSERT_TRUE(done.has_value());
    EXPECT_NE(counts.scratch_bytes, 0u);
    for (std::string const* index : {&grown, &fresh}) {
        SCOPED_TRACE(*index);
        EXPECT_EQ(held(*index, a.sequence), a.positions());
        EXPECT_EQ(held(*index, b.sequence), b.positions());
    }
    double const g = static_cast<double>(elements_of(grown)),
                 f = static_cast<double>(elements_of(fresh));
    EXPECT_NEAR(g, f, 0.005 * f);
}

TEST(merge_append, a_cascading_index_is_left_to_the_inserts) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(20000, 9));
    reference const b = write_reference(dir, "b.fa", random_bases(5000, 10));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions(), true);
    std::string const original = file_bytes(path);
    build_counts counts;
    EXPECT_FALSE(append(path, {b.path}, counts).has_value());
    EXPECT_EQ(counts.kmers.load(), 0u);
    EXPECT_TRUE(file_bytes(path) == original);
}

TEST(merge_append, failing_references_are_input_errors_naming_them_and_the_index_stays) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(20000, 11));
    reference const good = write_reference(dir, "good.fa", random_bases(5000, 12));
    reference const empty = write_reference(dir, "short.fa", random_bases(k - 1, 13));
    std::string const missing = (dir / "absent.fa").string();
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    std::string const original = file_bytes(path);
    for (std::string const& bad : {empty.path, missing}) {
        SCOPED_TRACE(bad);
        build_counts counts;
        try {
            (void)append(path, {good.path, bad}, counts);
            ADD_FAILURE() << "no error";
        } catch (qmer::input_error const& e) {
            std::string const what = e.what();
            EXPECT_NE(what.find(bad), std::string::npos) << what;
            EXPECT_EQ(what.find(good.path), std::string::npos) << what;
        }
        EXPECT_TRUE(file_bytes(path) == original);
        EXPECT_EQ(files_in(dir), (std::set<std::string>{"a.fa", "good.fa", "short.fa", "x.qmer"}));
    }
}

}  // namespace
