// The default kind's counted build (app/index/counted_build.hpp) as a unit: the first level
// written in the rank-select layout holds every k-mer of the references, minimizer-local or
// plain, and reads back in place through the codec (open_in_place). The merge append onto it is
// tested in merge_append_test.cpp.

#include "app/index/counted_build.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "app/filters/registry.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;
using codec = filter_codec<filter_kind::expandable>;

std::string random_fasta(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

struct reference {
    std::string path;
    std::string sequence;
};
reference write_reference(qmer::test::temp_folder const& dir, std::string const& name, size_t bases,
                          uint64_t seed) {
    reference r{(dir / name).string(), random_fasta(bases, seed)};
    std::ofstream(r.path) << ">" << name << "\n" << r.sequence << "\n";
    return r;
}

// How many of the sequence's k-mers the index holds, hashed as its header says.
uint64_t held(qmer::io::index_file const& index, std::string const& sequence) {
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

// A counted build of `refs` written as the index `path` (the level kept in memory: output "-"
// does not stream it).
uint64_t build_index(std::string const& path, reference const& ref, bool plain_hash) {
    unsigned const k = 31;
    reference_set const refs{{ref.path}, {ref.path}, k, false};
    progress_meter progress("test", true);
    reference_pass const pass{refs, 2, progress};
    reference_census const census = count_references(pass, 0);
    filter_plan const plan{.expected = census.distinct_estimate, .expected_measured = true};
    qmer::io::index_header header;
    header.k = k;
    header.filter = "expandable";
    header.fpr = plan.fpr;
    counted_build_settings const settings{.plain_hash = plain_hash,
                                          .memory = {.limit = uint64_t{4} << 30},
                                          .output = "-",
                                          .scratch_folder = ".",
                                          .origin = {}};
    build_counts counts;
    counted_build built = build_counted(
        codec::options(plan), [&] { return codec::create(plan); }, header, pass, settings, counts,
        census, nullptr);
    EXPECT_TRUE(built.level.has_value());
    EXPECT_FALSE(built.filter);
    EXPECT_FALSE(built.streamed);
    if (!built.level) return 0;
    EXPECT_EQ(header.hash.scheme == qmer::hash_scheme::plain, plain_hash);
    auto const arrays = built.level->arrays();
    finish_header(header, {"qmer index", {ref.path}}, header_params(arrays), built.level->elements,
                  counts.kmers.load());
    qmer::io::index_writer writer(path, header);
    built.level->save(writer);
    writer.commit();
    return built.level->elements;
}

TEST(counted_build, the_written_level_holds_every_kmer_and_reads_in_place) {
    qmer::test::temp_folder const dir;
    reference const ref = write_reference(dir, "a.fa", 300000, 11);
    uint64_t const distinct = ref.sequence.size() - 31 + 1;
    for (bool plain : {false, true}) {
        std::string const path = (dir / (plain ? "plain.qmer" : "local.qmer")).string();
        uint64_t const elements = build_index(path, ref, plain);
        // Two random 31-mers share a fingerprint rarely: nearly one element each.
        EXPECT_GE(elements, distinct * 999 / 1000);
        EXPECT_LE(elements, distinct);
        qmer::io::index_file const index(path);
        EXPECT_EQ(index.header().elements, elements);
        EXPECT_EQ(held(index, ref.sequence), distinct) << (plain ? "plain" : "local");
        // The registry reaches it through the kind's codec.
        ASSERT_TRUE(rank_select_levels_of(index).has_value());
        EXPECT_EQ(rank_select_levels_of(index)->levels(), 1u);
    }
}

TEST(codec_open, only_the_default_kind_is_read_in_place) {
    qmer::test::temp_folder const dir;
    std::string const path = (dir / "bloom.qmer").string();
    qmer::bloom_filter const filter(1000, 0.01);
    qmer::io::index_header header;
    header.k = 31;
    header.filter = "bloom";
    header.filter_params = filter_codec<filter_kind::bloom>::params(filter);
    qmer::io::index_writer writer(path, header);
    filter_codec<filter_kind::bloom>::save(filter, writer);
    writer.commit();
    qmer::io::index_file const index(path);
    EXPECT_FALSE(rank_select_levels_of(index).has_value());
    EXPECT_NE(filter_codec<filter_kind::bloom>::open(index), nullptr);
}

}  // namespace
