// The merge append (app/index/merge_append.hpp): new references merged into an index in the
// rank-select layout give an index that holds every k-mer of the old and the new references,
// records both, counts their k-mer positions, and is the same file whatever the threads; where
// the merge is not taken (a cascading index, too little memory) or the references fail, the index
// is left as it was, byte for byte.

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

// How many of the sequence's k-mers the index holds, hashed as its header says.
uint64_t held(std::string const& path, std::string const& sequence) {
    qmer::io::index_file const index(path);
    auto const levels = codec::open_in_place(index);
    if (!levels) return 0;
    auto const& h = index.header();
    uint64_t found = 0;
    qmer::with_kmer_hashing(h.k, h.hash_seed, h.hash, [&](auto const& hashing) {
        (void)for_each_kmer_hash(*levels, hashing, sequence,
                                 [&](uint64_t x) { found += levels->contains(x); });
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

// append_by_merge of `refs` onto the index `path`, on `threads` threads.
std::optional<sorted_append> append(std::string const& path, std::vector<std::string> const& refs,
                                    build_counts& counts, unsigned threads = 2,
                                    uint64_t memory_limit = uint64_t{4} << 30) {
    qmer::io::index_file const existing(path);
    auto const levels = codec::open_in_place(existing);
    EXPECT_TRUE(levels.has_value());
    if (!levels) return std::nullopt;
    reference_set const set{refs, refs, k, false};
    progress_meter progress("test", true);
    // `threads` threads, even past the machine's cores.
    tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, threads);
    return append_by_merge(*levels, existing, {set, threads, progress},
                           {.fill = 0.95,
                            .memory_limit = memory_limit,
                            .output = path,
                            .origin = {"qmer index --append", refs}},
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

// The files of the folder, by name.
std::set<std::string> files_in(qmer::test::temp_folder const& dir) {
    std::set<std::string> names;
    for (auto const& e : std::filesystem::directory_iterator(dir.path()))
        names.insert(e.path().filename().string());
    return names;
}

TEST(merge_append, too_little_memory_declines_before_reading_and_writes_nothing) {
    qmer::test::temp_folder const dir;
    reference const a = write_reference(dir, "a.fa", random_bases(20000, 7));
    reference const b = write_reference(dir, "b.fa", random_bases(20000, 8));
    std::string const path = (dir / "x.qmer").string();
    build_index(path, a, a.positions());
    std::string const original = file_bytes(path);
    // The gathered hashes (17 bytes a byte of the references) and the index take half the limit.
    uint64_t const need = 2 * (17 * std::filesystem::file_size(b.path) + original.size());
    build_counts counts;
    EXPECT_FALSE(append(path, {b.path}, counts, 2, need - 2).has_value());
    EXPECT_EQ(counts.kmers.load(), 0u);
    EXPECT_TRUE(file_bytes(path) == original);
    EXPECT_EQ(files_in(dir), (std::set<std::string>{"a.fa", "b.fa", "x.qmer"}));
    // At the limit it is taken.
    EXPECT_TRUE(append(path, {b.path}, counts, 2, need).has_value());
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
