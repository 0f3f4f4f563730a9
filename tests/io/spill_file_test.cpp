// io/spill_file.hpp: what is appended reads back at its offset, the file leaves no name in its
// folder, and released ranges give their disk blocks back while the rest stays readable.

#include "io/spill_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "temp_folder.hpp"

namespace {

// The disk blocks the file takes (st_blocks, 512-byte units), through its /proc/self/fd name.
int64_t blocks_of(qmer::io::spill_file const& file) {
    struct stat st {};
    if (::stat(file.proc_path().c_str(), &st) != 0) return -1;
    return static_cast<int64_t>(st.st_blocks);
}

TEST(spill_file, appends_read_back_at_their_offsets_and_leave_no_name) {
    qmer::test::temp_folder const dir;
    qmer::io::spill_file file(dir.path().string());
    std::vector<uint64_t> a(1000), b(3000);
    std::iota(a.begin(), a.end(), uint64_t{1});
    std::iota(b.begin(), b.end(), uint64_t{5000});
    uint64_t const at_a = file.append(a.data(), a.size() * sizeof(uint64_t));
    uint64_t const at_b = file.append(b.data(), b.size() * sizeof(uint64_t));
    EXPECT_EQ(file.size(), (a.size() + b.size()) * sizeof(uint64_t));
    std::vector<uint64_t> back(b.size());
    file.read(at_b, back.data(), back.size() * sizeof(uint64_t));
    EXPECT_EQ(back, b);
    back.resize(a.size());
    file.read(at_a, back.data(), back.size() * sizeof(uint64_t));
    EXPECT_EQ(back, a);
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(spill_file, a_released_range_gives_its_blocks_back_and_the_rest_stays) {
    qmer::test::temp_folder const dir;
    qmer::io::spill_file file(dir.path().string());
    std::vector<uint64_t> values(size_t{1} << 18);  // 2 MiB
    std::iota(values.begin(), values.end(), uint64_t{0});
    uint64_t const at = file.append(values.data(), values.size() * sizeof(uint64_t));
    int64_t const before = blocks_of(file);
    ASSERT_GT(before, 0);
    // The first half released: 1 MiB of whole blocks.
    size_t const half = values.size() / 2 * sizeof(uint64_t);
    if (!file.release(at, half)) GTEST_SKIP() << "this file system cannot punch holes";
    int64_t const after = blocks_of(file);
    EXPECT_LE(after, before - static_cast<int64_t>(half / 512) + 16);
    std::vector<uint64_t> back(values.size() / 2);
    file.read(at + half, back.data(), back.size() * sizeof(uint64_t));
    EXPECT_TRUE(std::equal(back.begin(), back.end(), values.begin() + values.size() / 2));
}

}  // namespace
