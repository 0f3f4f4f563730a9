// Tests of io/detail/uncached_writer.hpp: whatever the sizes of the writes, the file holds exactly
// the bytes given, direct I/O or not (a file system that refuses it); rewrites and reads of bytes
// already given see the latest bytes wherever they lie (written out, or still in the buffer that
// fills), and a read past what was given is refused.

#include "io/detail/uncached_writer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace qmer::test {
namespace {

namespace fs = std::filesystem;
using io::detail::uncached_writer;

class uncached_writer_test : public ::testing::TestWithParam<bool> {
  protected:
    void SetUp() override {
        std::string templ = (fs::temp_directory_path() / "qmer-uncached-XXXXXX").string();
        ASSERT_NE(::mkdtemp(templ.data()), nullptr);
        dir = templ;
        path = (dir / "out.bin").string();
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
    }
    void TearDown() override {
        if (fd >= 0) ::close(fd);
        fs::remove_all(dir);
    }
    std::string contents() const {
        std::ifstream in(path, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    fs::path dir;
    std::string path;
    int fd = -1;
};

TEST_P(uncached_writer_test, the_file_holds_the_latest_bytes_given) {
    std::mt19937_64 rng(5);
    std::string expected;
    uncached_writer w(path.c_str(), fd, GetParam());
    if (!GetParam()) {
        EXPECT_FALSE(w.direct());
    }
    size_t const buffer = uncached_writer::buffer_bytes;
    // Writes of 0 bytes, 1, a buffer exactly, more than all buffers at once, and odd sizes.
    for (size_t size : {size_t{0}, size_t{1}, buffer - 1, buffer, 3 * buffer + 17, size_t{4096},
                        size_t{12345}, 5 * buffer / 2, size_t{7}}) {
        std::string chunk(size, '\0');
        for (char& c : chunk) c = static_cast<char>(rng());
        ASSERT_EQ(w.write(chunk.data(), chunk.size()), 0);
        expected += chunk;
    }
    ASSERT_EQ(w.size(), expected.size());
    // Rewrites: in the first buffer, across a written buffer boundary, across the written part
    // and the filling buffer, and inside the filling buffer.
    size_t const end = expected.size();
    for (auto [at, size] : {std::pair{size_t{3}, size_t{10}},
                            {buffer - 5, size_t{10}},
                            {end - end % buffer - 3, size_t{6}},
                            {end - 4, size_t{4}}}) {
        std::string patch(size, '\0');
        for (char& c : patch) c = static_cast<char>(rng());
        ASSERT_EQ(w.write_at(at, patch.data(), size), 0);
        expected.replace(at, size, patch);
        std::string back(size + 2, '\0');
        size_t const from = at - 1;
        ASSERT_EQ(w.read_at(from, back.data(), back.size() - (at + size + 1 > end ? 1 : 0)), 0);
        EXPECT_EQ(back.substr(0, size + 1), expected.substr(from, size + 1)) << at;
    }
    std::string past(8, '\0');
    EXPECT_EQ(w.read_at(end - 4, past.data(), 8), -1);
    EXPECT_NE(w.write_at(end - 4, past.data(), 8), 0);
    ASSERT_EQ(w.finish(), 0);
    // After finish, everything is in the file, and reads and rewrites still work.
    std::string tail(16, '\0');
    ASSERT_EQ(w.read_at(end - 16, tail.data(), 16), 0);
    EXPECT_EQ(tail, expected.substr(end - 16));
    ASSERT_EQ(w.write_at(0, "QMER", 4), 0);
    expected.replace(0, 4, "QMER");
    std::string const got = contents();
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected);
}

INSTANTIATE_TEST_SUITE_P(direct_or_not, uncached_writer_test, ::testing::Bool());

// Destroyed before finish (an abandoned build): the thread stops and nothing hangs or crashes.
TEST_P(uncached_writer_test, can_be_abandoned_with_writes_in_flight) {
    std::vector<char> data(7 * uncached_writer::buffer_bytes + 3, 'x');
    uncached_writer w(path.c_str(), fd, GetParam());
    ASSERT_EQ(w.write(data.data(), data.size()), 0);
}

// The buffers below cached_prefix go through the page cache (the index writer rewrites its head
// there), the others past it: after the writes, the prefix's pages are resident and
// the direct buffers' are not (mincore). Only where the file system takes direct I/O.
TEST(uncached_writer, a_cached_prefix_stays_in_the_page_cache) {
    std::string templ = (fs::temp_directory_path() / "qmer-uncached-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    fs::path const dir = templ;
    std::string const path = (dir / "out.bin").string();
    int const fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    size_t const buffer = uncached_writer::buffer_bytes;
    std::vector<char> data(6 * buffer, 'q');
    bool direct = false;
    {
        uncached_writer w(path.c_str(), fd, true, 2 * buffer);
        direct = w.direct();
        ASSERT_EQ(w.write(data.data(), data.size()), 0);
        ASSERT_EQ(w.finish(), 0);
    }
    if (direct) {
        void* map = ::mmap(nullptr, data.size(), PROT_READ, MAP_SHARED, fd, 0);
        ASSERT_NE(map, MAP_FAILED);
        size_t const page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        std::vector<unsigned char> resident(data.size() / page);
        ASSERT_EQ(::mincore(map, data.size(), resident.data()), 0);
        size_t cached_prefix = 0, cached_rest = 0;
        for (size_t i = 0; i < resident.size(); ++i)
            (i * page < 2 * buffer ? cached_prefix : cached_rest) += resident[i] & 1;
        ::munmap(map, data.size());
        EXPECT_EQ(cached_prefix, 2 * buffer / page);
        // The direct buffers' pages, but for the last buffer (written by finish() through the
        // cache if it were partial; here it is full, so none).
        EXPECT_EQ(cached_rest, 0u);
    }
    ::close(fd);
    fs::remove_all(dir);
    if (!direct) GTEST_SKIP() << "the temporary folder's file system refuses O_DIRECT";
}

// A file without a name (O_TMPFILE, as io::output_file writes) is opened for direct I/O through
// /proc/self/fd/N, as a named file in the same folder is through its name, and holds the bytes.
TEST(uncached_writer, writes_a_file_without_a_name_through_proc) {
    std::string templ = (fs::temp_directory_path() / "qmer-uncached-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    fs::path const dir = templ;
    struct remover {
        fs::path dir;
        ~remover() { fs::remove_all(dir); }
    } const remove{dir};
    int const fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) GTEST_SKIP() << "the temporary folder refuses O_TMPFILE: " << std::strerror(errno);
    std::string const named = (dir / "named.bin").string();
    int const named_fd = ::open(named.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(named_fd, 0);
    bool named_direct = false;
    {
        uncached_writer w(named.c_str(), named_fd, true);
        named_direct = w.direct();
    }
    ::close(named_fd);

    std::string data(2 * uncached_writer::buffer_bytes + 1000, '\0');
    std::mt19937_64 rng(9);
    for (char& c : data) c = static_cast<char>(rng());
    {
        uncached_writer w(("/proc/self/fd/" + std::to_string(fd)).c_str(), fd, true);
        EXPECT_EQ(w.direct(), named_direct);
        ASSERT_EQ(w.write(data.data(), data.size()), 0);
        ASSERT_EQ(w.finish(), 0);
    }
    std::string back(data.size(), '\0');
    EXPECT_EQ(::pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    EXPECT_TRUE(back == data);
    ::close(fd);
    auto const entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
    EXPECT_EQ(entries, 1) << "only named.bin: the other never had a name";
}

}  // namespace
}  // namespace qmer::test
