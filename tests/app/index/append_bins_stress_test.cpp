// Oversubscribed stress test of the merge append's bins (app/index/append_bins.hpp; label
// concurrency, run under ThreadSanitizer by scripts/sanitize tsan): 16 threads on 2 cores add
// hashes at once through buffers of the smallest size, so each thread writes to the scratch file
// many times while the others do (each write's range reserved with one atomic add), then the bins
// are sorted by TBB workers (one under a sanitizer: TBB's own code is not instrumented). No hash
// is lost or repeated: every bin read back in order is every distinct hash added, sorted.

#include "app/index/append_bins.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "io/spill_file.hpp"
#include "sanitized.hpp"
#include "temp_folder.hpp"

namespace {

using qmer::app::append_bins;

TEST(append_bins_stress, sixteen_threads_lose_no_hash) {
    size_t const per_thread = QMER_TEST_SANITIZED ? 20000 : 100000;
    constexpr unsigned threads = 16;
    // Each thread's hashes: a pool shared by all threads (repeats across threads) and its own.
    std::mt19937_64 rng(20261127);
    std::vector<uint64_t> shared(per_thread / 4);
    for (auto& v : shared) v = rng();
    std::vector<std::vector<uint64_t>> mine(threads);
    for (auto& m : mine) {
        m.resize(per_thread);
        for (size_t i = 0; i < m.size(); ++i)
            m[i] = i % 2 == 0 ? shared[rng() % shared.size()] : rng();
    }
    std::vector<uint64_t> expected;
    for (auto const& m : mine) expected.insert(expected.end(), m.begin(), m.end());
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());

    qmer::test::temp_folder const dir;
    qmer::io::spill_file file(dir.path().string());
    append_bins bins(8, &file, append_bins::min_buffer_values);
    {
        std::vector<std::thread> adders;
        for (unsigned t = 0; t < threads; ++t)
            adders.emplace_back([&, t] {
                append_bins::thread_bins& local = bins.local();
                for (uint64_t h : mine[t]) bins.add(local, h);
            });
        for (auto& a : adders) a.join();
    }
    tbb::global_control const limit(tbb::global_control::max_allowed_parallelism,
                                    QMER_TEST_SANITIZED ? 1 : 8);
    bins.sort_bins([](uint32_t, std::vector<uint64_t>&) {});
    std::vector<uint64_t> all, one;
    for (uint32_t bin = 0; bin < bins.bins(); ++bin) {
        bins.read(bin, one);
        all.insert(all.end(), one.begin(), one.end());
    }
    EXPECT_EQ(bins.distinct(), expected.size());
    EXPECT_EQ(all, expected);
}

}  // namespace
