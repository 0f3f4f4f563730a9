// `qmer index --append` under a --max-memory that its new k-mers' hashes do not fit in memory
// (app/index/merge_append.hpp): they go through a scratch file in --temp-dir, and the index is
// the in-memory append's (the same k-mers, levels and answers), the scratch folder left empty. A
// limit below what the scratch file's way needs is exit code 6 naming --max-memory, a scratch
// folder without room for it exit code 5 naming --temp-dir (as the build's), and either leaves the
// index as it was, byte for byte.

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_result;

class spilled_append : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        // A 40 kbp seed and 2 Mbp to append (8 bytes a position in memory would be 16 MB, and the
        // in-memory way counts them twice over: a limit of 100 MB takes the scratch file).
        write_file("seed.fa", random_fasta(1, 40000, 1));
        write_file("add.fa", random_fasta(4, 500000, 2));
        ASSERT_EQ(qmer({"index", "-q", "-t", "2", "-o", "seed.qmer", "seed.fa"}).exit_code, 0);
        std::filesystem::create_directory(dir() / "scratch");
    }

    void write_file(std::string const& name, std::string const& text) {
        std::ofstream(dir() / name, std::ios::binary) << text;
    }
    std::string file_bytes(std::string const& name) {
        std::ifstream in(dir() / name, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    std::string copy_of_seed(std::string const& name) {
        std::filesystem::copy_file(dir() / "seed.qmer", dir() / name);
        return name;
    }
    static std::string field(std::string const& json, std::string const& name) {
        std::smatch m;
        if (!std::regex_search(json, m, std::regex("\"" + name + "\": ([0-9.]+)"))) return "";
        return m[1];
    }
    // The rows of a query's TSV without its comment lines.
    std::string rows_of(std::string const& index) {
        auto const r = qmer({"query", "-t", "2", index, "reads.fq"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::istringstream in(r.out);
        std::string rows, line;
        while (std::getline(in, line))
            if (!line.starts_with("#")) rows += line + "\n";
        return rows;
    }
};

TEST_F(spilled_append, goes_through_the_scratch_file_and_writes_the_in_memory_index) {
    std::string const memory = copy_of_seed("memory.qmer"), spilled = copy_of_seed("spilled.qmer");
    auto const in_memory = qmer({"index", "-t", "2", "--append", "-o", memory, "add.fa"});
    ASSERT_EQ(in_memory.exit_code, 0) << in_memory.err;
    EXPECT_EQ(in_memory.err.find("scratch file"), std::string::npos) << in_memory.err;
    auto const through_file = qmer({"index", "-t", "2", "--append", "--max-memory", "100M",
                                    "--temp-dir", "scratch", "-o", spilled, "add.fa"});
    ASSERT_EQ(through_file.exit_code, 0) << through_file.err;
    EXPECT_NE(through_file.err.find("of k-mers went through a scratch file in 'scratch'"),
              std::string::npos)
        << through_file.err;
    EXPECT_NE(through_file.err.find("merged into the top level and 1 new level in one pass"),
              std::string::npos)
        << through_file.err;
    EXPECT_TRUE(std::filesystem::is_empty(dir() / "scratch"));
    auto const a = qmer({"info", "--json", memory}).out, b = qmer({"info", "--json", spilled}).out;
    for (char const* name : {"levels", "kmers", "bits_per_kmer", "kmers_scanned"}) {
        EXPECT_NE(field(a, name), "") << name << ": " << a;
        EXPECT_EQ(field(a, name), field(b, name)) << name;
    }
    // Reads of 150 bases from the seed, the appended reference and neither: the same rows from
    // both indexes, and every k-mer of the first two found.
    std::string const seed = file_bytes("seed.fa"), add = file_bytes("add.fa");
    auto sequence_of = [](std::string const& fasta) {
        std::string s;
        std::istringstream in(fasta);
        for (std::string line; std::getline(in, line);)
            if (!line.starts_with(">")) s += line;
        return s;
    };
    std::string const seed_bases = sequence_of(seed), add_bases = sequence_of(add),
                      other = sequence_of(random_fasta(1, 3000, 3));
    std::string fq;
    auto read = [&](std::string const& name, std::string const& bases) {
        fq += "@" + name + "\n" + bases + "\n+\n" + std::string(bases.size(), 'I') + "\n";
    };
    for (size_t at = 0; at + 150 <= seed_bases.size(); at += 4000)
        read("seed" + std::to_string(at), seed_bases.substr(at, 150));
    for (size_t at = 0; at + 150 <= add_bases.size(); at += 97000)
        read("add" + std::to_string(at), add_bases.substr(at, 150));
    for (size_t at = 0; at + 150 <= other.size(); at += 300)
        read("other" + std::to_string(at), other.substr(at, 150));
    write_file("reads.fq", fq);
    std::string const rows = rows_of(spilled);
    EXPECT_EQ(rows, rows_of(memory));
    std::istringstream in(rows);
    size_t held = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("read_id") || line.starts_with("other")) continue;
        EXPECT_NE(line.find("\t120\t120\t"), std::string::npos) << line;
        ++held;
    }
    EXPECT_EQ(held, 10u + 21u);
}

TEST_F(spilled_append, a_limit_below_the_scratch_files_need_is_exit_6_and_keeps_the_index) {
    std::string const original = file_bytes("seed.qmer");
    auto const r = qmer({"index", "-t", "2", "--append", "--max-memory", "40M", "--temp-dir",
                         "scratch", "-o", "seed.qmer", "add.fa"});
    EXPECT_EQ(r.exit_code, 6) << r.err;
    EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
    EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("seed.qmer"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(file_bytes("seed.qmer") == original);
    EXPECT_TRUE(std::filesystem::is_empty(dir() / "scratch"));
}

// A 1 MiB tmpfs as the scratch folder: the 2 Mbp need 16 MB there. Mounting needs root and a
// kernel or container that allows it; the test is skipped otherwise.
TEST_F(spilled_append, a_scratch_folder_without_room_is_exit_5_and_keeps_the_index) {
    std::filesystem::path const small = dir() / "small";
    std::filesystem::create_directory(small);
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    struct unmount {
        std::filesystem::path path;
        ~unmount() { ::umount2(path.c_str(), MNT_DETACH); }
    } const guard{small};
    std::string const original = file_bytes("seed.qmer");
    auto const r = qmer({"index", "-t", "2", "--append", "--max-memory", "100M", "--temp-dir",
                         "small", "-o", "seed.qmer", "add.fa"});
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_NE(r.err.find("'small'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--temp-dir"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
    EXPECT_TRUE(file_bytes("seed.qmer") == original);
    EXPECT_TRUE(std::filesystem::is_empty(small));
}

}  // namespace
