// A full disk on a real file system (the README's "Errors and exit codes" table, "a full disk"): a
// 1 MiB tmpfs is mounted in the test's folder and `qmer index` and `qmer query` write more than
// that into it. Each must stop with exit code 5 and one line naming the output path, and leave
// nothing in the tmpfs: no file under the final name, no temporary beside it. /dev/full
// (errors_test.cpp) only tests a device that refuses every write; here the write fails part-way,
// after the temporary file has taken the space, which is what a disk filling up does.
//
// Mounting needs root (CAP_SYS_ADMIN) and a kernel or container that allows it; where it does
// not, the tests are skipped with the reason. The tmpfs is unmounted in TearDown, whatever the
// test did.

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"
#include "core/error.hpp"
#include "io/spill_file.hpp"

namespace {

using qmer::test::cli_result;

class full_disk : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        mount_point_ = dir() / "small";
        std::filesystem::create_directory(mount_point_);
        if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
        if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=1m") != 0)
            GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
        mounted_ = true;
    }
    void TearDown() override {
        // MNT_DETACH: unmounts even if something (a qmer that did not exit) still holds a file
        // there; the folder is then removed by cli_test.
        if (mounted_) {
            EXPECT_EQ(::umount2(mount_point_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
        }
        cli_test::TearDown();
    }

    // Random sequence, so that every k-mer is distinct and the index is as large as it gets.
    static std::string random_bases(std::mt19937_64& rng, size_t n) {
        std::string s(n, 'A');
        for (size_t i = 0; i < n; ++i) s[i] = "ACGT"[rng() & 3];
        return s;
    }

    void expect_full_disk_error(cli_result const& r, std::string const& output) {
        EXPECT_EQ(r.exit_code, 5) << r.err;
        EXPECT_EQ(r.signal, 0);
        EXPECT_TRUE(r.err.starts_with("qmer: error: '" + output + "'")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        std::vector<std::string> left;
        for (auto const& e : std::filesystem::directory_iterator(mount_point_))
            left.push_back(e.path().filename().string());
        EXPECT_TRUE(left.empty()) << "left in the full tmpfs: " << left.front();
    }

    std::filesystem::path mount_point_;
    bool mounted_ = false;
};

TEST_F(full_disk, index_larger_than_the_disk) {
    // 1.2 Mbp of distinct 31-mers: a ~4 MiB index.
    std::mt19937_64 rng(5);
    {
        std::ofstream out(dir() / "big.fa");
        out << ">big\n";
        for (int i = 0; i < 12000; ++i) out << random_bases(rng, 100) << '\n';
    }
    auto const r = qmer({"index", "-q", "-t", "2", "-o", "small/big.qmer", "big.fa"});
    expect_full_disk_error(r, "small/big.qmer");
    // The same command with room to write succeeds, so the failure was the disk.
    EXPECT_EQ(qmer({"index", "-q", "-t", "2", "-o", "big.qmer", "big.fa"}).exit_code, 0);
    EXPECT_GT(std::filesystem::file_size(dir() / "big.qmer"), size_t{1} << 20);
}

TEST_F(full_disk, query_output_larger_than_the_disk) {
    std::mt19937_64 rng(7);
    std::string const reference = random_bases(rng, 2000);
    write_file("ref.fa", ">ref\n" + reference + "\n");
    ASSERT_EQ(qmer({"index", "-q", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    // 60,000 reads: a ~1.7 MiB TSV and as much FASTQ of matched reads.
    {
        std::ofstream out(dir() / "reads.fq");
        for (int i = 0; i < 60000; ++i) {
            std::string const seq =
                i % 2 ? reference.substr(static_cast<size_t>(i % 1900), 60) : random_bases(rng, 60);
            out << "@read_" << i << '\n' << seq << "\n+\n" << std::string(60, 'I') << '\n';
        }
    }
    expect_full_disk_error(
        qmer({"query", "-q", "-t", "2", "-o", "small/verdicts.tsv", "ref.qmer", "reads.fq"}),
        "small/verdicts.tsv");
    expect_full_disk_error(qmer({"query", "-q", "-t", "2", "-o", "/dev/null", "--matched",
                                 "small/matched.fq", "ref.qmer", "reads.fq"}),
                           "small/matched.fq");
    auto const ok = qmer({"query", "-q", "-t", "2", "-o", "verdicts.tsv", "ref.qmer", "reads.fq"});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_GT(std::filesystem::file_size(dir() / "verdicts.tsv"), size_t{1} << 20);
}

}  // namespace

namespace {

// A build whose scratch file (--temp-dir) would not fit its folder's free space is refused once the
// references are counted, before their k-mers are gathered (rather than when the disk fills,
// minutes into a human-sized build): exit 5, one line naming the folder and both sizes, no index,
// nothing left in the folder. The same limit with room succeeds.
TEST_F(full_disk, build_refuses_a_scratch_folder_without_room) {
    write_file("ref.fa", random_fasta(40, 100000, 3));  // ~9 MB of super-k-mers to spill
    // The least limit the build accepts, from its refusal of a smaller one; a little above it
    // sends the super-k-mers to the scratch file.
    auto const refused =
        qmer({"index", "-t", "2", "--max-memory", "40M", "-o", "x.qmer", "ref.fa"});
    ASSERT_EQ(refused.exit_code, 6) << refused.err;
    auto const at = refused.err.find("needs at least ");
    ASSERT_NE(at, std::string::npos) << refused.err;
    double const least_mib = std::stod(refused.err.substr(at + 15));
    std::string const limit = std::to_string(static_cast<int>((least_mib + 2) * 1024)) + "K";
    auto const r = qmer({"index", "-q", "-t", "2", "--max-memory", limit, "--temp-dir", "small",
                         "-o", "ref.qmer", "ref.fa"});
    expect_full_disk_error(r, "small");
    // ~4 M positions of super-k-mers, ~2.3 bytes each, less the little the limit leaves memory.
    auto const size_at = r.err.find("scratch file would take ");
    ASSERT_NE(size_at, std::string::npos) << r.err;
    double const need_mib = std::stod(r.err.substr(size_at + 24));
    EXPECT_GT(need_mib, 5.0) << r.err;
    EXPECT_LT(need_mib, 10.0) << r.err;
    EXPECT_NE(r.err.find("MiB (its super-k-mers on random sequence"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("has 1.0 MiB free"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "ref.qmer"));
    auto const roomy = qmer(
        {"index", "-t", "2", "--max-memory", limit, "--temp-dir", ".", "-o", "ref.qmer", "ref.fa"});
    EXPECT_EQ(roomy.exit_code, 0) << roomy.err;
    EXPECT_NE(roomy.err.find("went through a scratch file in '.'"), std::string::npos) << roomy.err;
}

// A scratch file that fills its disk while it is written (the free space was taken by something
// else after the build checked it): the append that fails throws output_error naming the folder,
// the size written and the system's reason, and the file leaves nothing behind (it never had a
// name there).
TEST_F(full_disk, scratch_file_filling_its_disk) {
    std::vector<char> const chunk(size_t{256} << 10, 'x');
    {
        qmer::io::spill_file file(mount_point_.string());
        try {
            for (int i = 0; i < 16; ++i) file.append(chunk.data(), chunk.size());
            ADD_FAILURE() << "4 MiB went into a 1 MiB tmpfs";
        } catch (qmer::output_error const& e) {
            std::string const what = e.what();
            std::string folder = "'";  // not one chain of operator+: GCC 12 warns falsely there
            folder.append(mount_point_.string()).append("': ");
            EXPECT_TRUE(what.starts_with(folder)) << what;
            EXPECT_NE(what.find("scratch file failed after"), std::string::npos) << what;
            EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
        }
        EXPECT_TRUE(std::filesystem::is_empty(mount_point_));
    }
    EXPECT_TRUE(std::filesystem::is_empty(mount_point_));
}

}  // namespace
