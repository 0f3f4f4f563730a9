// The huge-page copy of an index read by several threads (io/index_file.cpp, copy_and_sum), under
// ThreadSanitizer with the other concurrency tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/index_file.hpp"
#include "io/sequence_test_files.hpp"

namespace {

namespace fs = std::filesystem;

class index_file_copy : public qmer::io::test::temp_folder_test {};

// A huge-page copy with several threads: pieces of 4 MiB read in any order by any thread, summed
// in file order. A 14 MB file (4 pieces) reads the same words with 1 to 8 threads, a damaged byte
// in its last piece still fails the sum, and poll() abandoning the copy halfway stops every thread.
TEST_F(index_file_copy, several_threads_read_and_sum_every_piece) {
    std::string const path = this->path("big.qmer");
    std::vector<uint64_t> words(1750000);
    std::iota(words.begin(), words.end(), 11);
    {
        qmer::io::index_writer w(path, qmer::io::index_header{});
        std::vector<uint64_t> const params = {1};
        w.add_section(params, words);
        w.commit();
    }
    ASSERT_GT(fs::file_size(path), size_t{3} * (4 << 20));
    using qmer::io::index_check;
    using qmer::io::index_memory;
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
        SCOPED_TRACE(threads);
        qmer::io::index_file f(path, index_check::deferred, index_memory::huge_pages, {}, threads);
        ASSERT_EQ(f.sections().size(), 1u);
        ASSERT_EQ(f.sections()[0].words.size(), words.size());
        EXPECT_TRUE(std::equal(words.begin(), words.end(), f.sections()[0].words.begin()));
        EXPECT_TRUE(f.checksum_matches());
    }
    int polls = 0;
    EXPECT_THROW(qmer::io::index_file(
                     path, index_check::deferred, index_memory::huge_pages,
                     [&] {
                         if (++polls == 2) throw qmer::interrupted_error("interrupted");
                     },
                     4),
                 qmer::interrupted_error);
    EXPECT_EQ(polls, 2);
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(fs::file_size(path) - 100));  // the last piece
        f.put('\x5a');
    }
    for (unsigned threads : {1u, 4u}) {
        qmer::io::index_file f(path, index_check::deferred, index_memory::huge_pages, {}, threads);
        EXPECT_FALSE(f.checksum_matches()) << threads << " threads";
    }
}

}  // namespace
