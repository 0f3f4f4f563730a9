// Oversubscribed stress test of the super-k-mer bins (app/index/superkmer_bins.hpp; label
// concurrency, run under ThreadSanitizer by scripts/sanitize tsan): 32 threads on 2 cores add
// sequences at once, with an arena so small that most chunks go to the scratch file mid-way (the
// arena's CAS, the file's lazy opening and its appends race), then mark and fill with 16 TBB
// threads (one under a sanitizer: TBB's own code is not instrumented, and its partitioner reads
// look like races to TSan). No k-mer is lost: every k-mer's fingerprint (by the marks the bins
// chose) is handed over once, in order, exactly the set the scheme's hashing gives over the same
// sequences.

#include "app/index/superkmer_bins.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sanitized.hpp"

namespace {

TEST(superkmer_bins_stress, thirty_two_threads_lose_no_kmer) {
    qmer::qf::geometry const g = qmer::qf::geometry::with_slots(300000, 9);
    unsigned const bits = qmer::locality_window_bits(g.canonical_slots());
    qmer::local_kmer_hashing const hashing(31, 5, 20, bits, {}, qmer::level_window_extra_bits);
    std::mt19937_64 rng(20261126);
    std::vector<std::string> refs;
    size_t const pieces = QMER_TEST_SANITIZED ? 60 : 240;
    for (size_t i = 0; i < pieces; ++i) {
        std::string s(1000 + rng() % 2000, 'A');
        for (auto& c : s) c = "ACGT"[rng() % 4];
        refs.push_back(std::move(s));
    }
    qmer::app::superkmer_bins bins(hashing, g, 64 << 10,
                                   std::filesystem::temp_directory_path().string(), 0);
    {
        constexpr size_t threads = 32;
        std::vector<std::thread> adders;
        for (size_t t = 0; t < threads; ++t)
            adders.emplace_back([&, t] {
                for (size_t i = t; i < refs.size(); i += threads) bins.add(refs[i]);
            });
        for (auto& a : adders) a.join();
    }
    unsigned const workers = QMER_TEST_SANITIZED ? 1 : 16;
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, workers);
    qmer::app::overloaded_windows marks;
    marks.bits.assign(((uint64_t{1} << bits) + 63) / 64, 0);
    bins.mark(marks, 6.0);  // low: many windows marked, plain hashes from every worker
    std::vector<uint64_t> fps;
    bool const complete = bins.append_to(
        [&](std::span<uint64_t const> part) {
            fps.insert(fps.end(), part.begin(), part.end());
            return part.size();
        },
        marks, workers);
    ASSERT_TRUE(complete);
    EXPECT_GT(bins.file_bytes(), 0u);
    EXPECT_GT(marks.marked.load(), 0u);

    qmer::local_kmer_hashing const marked(31, 5, 20, bits, marks.bits,
                                          qmer::level_window_extra_bits);
    std::set<uint64_t> expected;
    for (auto const& seq : refs)
        marked.for_each(seq, [&](uint64_t h) { expected.insert(g.fingerprint(h)); });
    EXPECT_EQ(fps, std::vector<uint64_t>(expected.begin(), expected.end()));
}

}  // namespace
