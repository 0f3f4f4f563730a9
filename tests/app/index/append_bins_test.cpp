// The merge append's bins (app/index/append_bins.hpp): hashes added from several threads come
// back bin by bin sorted and distinct, all of them, the same from memory and from a scratch file
// (whose buffers fill and are written many times over); what sort_bins' callback removes is gone;
// the radix sort sorts as std::sort does; and a stash gives back what was put, in order.

#include "app/index/append_bins.hpp"

#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/index/merge_append.hpp"
#include "io/spill_file.hpp"
#include "temp_folder.hpp"

namespace {

using qmer::app::append_bins;

// n hashes with many repeats: values drawn from a pool of n / 3.
std::vector<uint64_t> hashes_with_repeats(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> pool(n / 3);
    for (auto& v : pool) v = rng();
    std::vector<uint64_t> out(n);
    for (auto& v : out) v = pool[rng() % pool.size()];
    return out;
}

// Every bin's sorted hashes, concatenated in bin order, after adding `hashes` on 4 threads.
std::vector<uint64_t> collected(append_bins& bins, std::vector<uint64_t> const& hashes,
                                bool drop_odd = false) {
    tbb::global_control const limit(tbb::global_control::max_allowed_parallelism, 4);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, hashes.size(), 1000), [&](auto const& r) {
        append_bins::thread_bins& mine = bins.local();
        for (size_t i = r.begin(); i != r.end(); ++i) bins.add(mine, hashes[i]);
    });
    bins.sort_bins([&](uint32_t, std::vector<uint64_t>& values) {
        if (drop_odd) std::erase_if(values, [](uint64_t v) { return v % 2 == 1; });
    });
    std::vector<uint64_t> all, one;
    for (uint32_t bin = 0; bin < bins.bins(); ++bin) {
        bins.read(bin, one);
        all.insert(all.end(), one.begin(), one.end());
    }
    EXPECT_EQ(all.size(), bins.distinct());
    return all;
}

TEST(append_bins, memory_and_scratch_file_give_every_hash_once_in_order) {
    std::vector<uint64_t> const hashes = hashes_with_repeats(300000, 1);
    std::vector<uint64_t> expected = hashes;
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    qmer::test::temp_folder const dir;
    for (unsigned bits : {0u, 1u, 6u, 12u}) {
        SCOPED_TRACE(bits);
        append_bins in_memory(bits, nullptr, 0);
        EXPECT_EQ(collected(in_memory, hashes), expected);
        qmer::io::spill_file file(dir.path().string());
        append_bins spilled(bits, &file, append_bins::min_buffer_values);
        EXPECT_EQ(collected(spilled, hashes), expected);
        // The positions, then the distinct hashes written back sorted.
        EXPECT_EQ(file.size(), (hashes.size() + expected.size()) * sizeof(uint64_t));
    }
}

TEST(append_bins, what_the_callback_removes_is_gone) {
    std::vector<uint64_t> const hashes = hashes_with_repeats(30000, 2);
    std::vector<uint64_t> expected;
    for (uint64_t h : hashes)
        if (h % 2 == 0) expected.push_back(h);
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    qmer::test::temp_folder const dir;
    qmer::io::spill_file file(dir.path().string());
    append_bins spilled(4, &file, 0);
    EXPECT_EQ(collected(spilled, hashes, true), expected);
    append_bins in_memory(4, nullptr, 0);
    EXPECT_EQ(collected(in_memory, hashes, true), expected);
}

TEST(append_bins, radix_sort_sorts_as_std_sort) {
    std::mt19937_64 rng(3);
    for (unsigned bits : {64u, 53u, 37u, 14u, 1u}) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{5000}, size_t{70000}}) {
            SCOPED_TRACE(std::to_string(bits) + " bits, " + std::to_string(n));
            uint64_t const top = rng() & ~(bits == 64 ? 0 : ~uint64_t{0} >> (64 - bits));
            std::vector<uint64_t> a(n);
            for (auto& v : a) v = top | (bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1));
            std::vector<uint64_t> expected = a, scratch;
            std::sort(expected.begin(), expected.end());
            qmer::app::radix_sort_hashes(a, scratch, bits);
            EXPECT_EQ(a, expected);
        }
    }
}

TEST(append_bins, a_stash_reads_back_any_slice_of_what_was_put_in_order) {
    std::vector<uint64_t> values(200000);
    std::iota(values.begin(), values.end(), uint64_t{7});
    qmer::test::temp_folder const dir;
    qmer::io::spill_file file(dir.path().string());
    for (qmer::io::spill_file* where : {static_cast<qmer::io::spill_file*>(nullptr), &file}) {
        qmer::app::sorted_stash stash(where);
        for (size_t at = 0; at < values.size(); at += 70001)
            stash.put(std::span(values).subspan(at, std::min<size_t>(70001, values.size() - at)));
        stash.put({});
        EXPECT_EQ(stash.size(), values.size());
        std::vector<uint64_t> back;
        stash.read(0, stash.size(), back);
        EXPECT_EQ(back, values);
        // Any slice, within a part or across the parts' edges (70001 values each), from several
        // threads at once.
        std::vector<std::thread> readers;
        std::atomic<int> wrong{0};
        for (unsigned t = 0; t < 4; ++t)
            readers.emplace_back([&, t] {
                std::vector<uint64_t> slice;
                for (uint64_t from = t * 997; from < values.size(); from += 13331) {
                    uint64_t const n = std::min<uint64_t>(values.size() - from, 150000 - from / 2);
                    stash.read(from, n, slice);
                    if (!std::equal(slice.begin(), slice.end(), values.begin() + from) ||
                        slice.size() != n)
                        ++wrong;
                }
            });
        for (auto& r : readers) r.join();
        EXPECT_EQ(wrong.load(), 0);
        EXPECT_THROW(stash.read(values.size() - 1, 2, back), std::logic_error);
    }
}

// The bins' bits: from the positions, at most what the level window maps keep in order (their
// top B bits), any where they are the identity.
TEST(append_bins, bin_bits_never_exceed_the_window_bits) {
    using qmer::app::append_bin_bits;
    qmer::qf::level_windows const identity{};
    qmer::qf::level_windows const narrow{5, 8};
    EXPECT_EQ(append_bin_bits(uint64_t{3} << 30, identity, 0), 12u);
    EXPECT_EQ(append_bin_bits(1000, identity, 0), 6u);
    EXPECT_EQ(append_bin_bits(uint64_t{3} << 30, narrow, 0), 5u);
    EXPECT_EQ(append_bin_bits(1000, narrow, 3), 3u);
    EXPECT_EQ(append_bin_bits(1000, narrow, 9), 5u);
    EXPECT_EQ(append_bin_bits(1000, qmer::qf::level_windows{5, 0}, 9), 9u);
}

}  // namespace
