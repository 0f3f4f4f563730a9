// Tests of io/output_file.hpp: the compression a name asks for (any case; .gz/.bgz BGZF, .zst
// zstd, each read back by its own decoder); a regular file written without a name (O_TMPFILE), or
// under a hidden name where that is refused (output_options::unnamed_temporary = false), and in
// both cases nothing under the final name until commit(), the old file replaced whole, nothing left
// by a discarded output or by a writer killed with SIGKILL (only the named temporary, which the
// next output to that name removes once it is stale), the permissions a new file gets (umask),
// rewrites and reads back, and errors that name the final path (a missing folder, a full disk).

#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <htslib/bgzf.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace qmer::test {
namespace {

namespace fs = std::filesystem;
using io::output_compression;
using io::output_file;
using io::output_options;

// A folder of its own under `base`, removed with everything in it when the guard goes, whatever
// the test did.
class temp_folder {
  public:
    explicit temp_folder(fs::path const& base = fs::temp_directory_path()) {
        std::string templ = (base / "qmer-output-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr)
            throw std::runtime_error("mkdtemp in " + base.string() + ": " + std::strerror(errno));
        path_ = templ;
    }
    ~temp_folder() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_folder(temp_folder const&) = delete;
    temp_folder& operator=(temp_folder const&) = delete;
    fs::path const& path() const { return path_; }
    std::string operator/(std::string const& name) const { return (path_ / name).string(); }

  private:
    fs::path path_;
};

// Sets the process's umask for a scope.
class umask_guard {
  public:
    explicit umask_guard(mode_t mask) : old_(::umask(mask)) {}
    ~umask_guard() { ::umask(old_); }
    umask_guard(umask_guard const&) = delete;
    umask_guard& operator=(umask_guard const&) = delete;

  private:
    mode_t old_;
};

std::string slurp(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> entries(fs::path const& folder) {
    std::vector<std::string> names;
    for (auto const& e : fs::directory_iterator(folder)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

// Text of `lines` FASTQ-like lines: compressible, but not trivially.
std::string sample_text(size_t lines, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string text;
    for (size_t i = 0; i < lines; ++i) {
        text += "@read_" + std::to_string(i) + "\n";
        for (int j = 0; j < 60; ++j) text += "ACGT"[rng() & 3];
        text += "\n";
    }
    return text;
}

// Bytes no compressor shrinks.
std::string random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    return bytes;
}

// Whether `folder`'s file system makes files without a name; the reason when it does not.
std::string o_tmpfile_refused(fs::path const& folder) {
    int const fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return std::strerror(errno);
    ::close(fd);
    return {};
}

// --- the name's compression ---------------------------------------------------------------------

TEST(compression_by_name, follows_the_suffix_in_any_case) {
    struct expectation {
        char const* path;
        output_compression compression;
        size_t suffix;
    };
    for (auto const& e : std::vector<expectation>{
             {"x.gz", output_compression::bgzf, 3},
             {"clean.FQ.GZ", output_compression::bgzf, 3},
             {"dir/x.Gz", output_compression::bgzf, 3},
             {"x.bgz", output_compression::bgzf, 4},
             {"x.BgZ", output_compression::bgzf, 4},
             {"x.zst", output_compression::zstd, 4},
             {"out.fq.ZST", output_compression::zstd, 4},
             {"a.Zst", output_compression::zstd, 4},
             {"-", output_compression::none, 0},
             {"", output_compression::none, 0},
             {".gz", output_compression::none, 0},
             {".zst", output_compression::none, 0},
             {"gz", output_compression::none, 0},
             {"x.fq", output_compression::none, 0},
             {"x.gzip", output_compression::none, 0},
             {"x.zstd", output_compression::none, 0},
             {"x.tgz", output_compression::none, 0},
             {"x.gz.tsv", output_compression::none, 0},
             {"x.gz/out", output_compression::none, 0},
         }) {
        EXPECT_EQ(io::compression_by_name(e.path), e.compression) << e.path;
        EXPECT_EQ(io::compression_suffix_length(e.path), e.suffix) << e.path;
    }
}

// The suffix is matched in any case: clean.FQ.GZ must not be written as plain text.
TEST(output_file_compression, an_upper_case_gz_is_written_bgzf) {
    temp_folder dir;
    std::string const text = sample_text(20000, 1);
    for (std::string const name : {"clean.FQ.GZ", "clean.fq.Bgz"}) {
        std::string const path = dir / name;
        {
            output_file out(path);
            EXPECT_TRUE(out.is_compressed());
            EXPECT_FALSE(out.can_rewrite());
            out.write(text.substr(0, 1000));
            out.write(text.substr(1000));
            out.commit();
        }
        BGZF* in = ::bgzf_open(path.c_str(), "r");
        ASSERT_NE(in, nullptr) << name;
        EXPECT_EQ(::bgzf_compression(in), 2) << name << " is not BGZF";
        std::string back(text.size() + 1, '\0');
        EXPECT_EQ(::bgzf_read(in, back.data(), back.size()), static_cast<ssize_t>(text.size()));
        back.resize(text.size());
        EXPECT_TRUE(back == text) << name;
        ::bgzf_close(in);
    }
}

// The `zstd` tool decodes what a .zst output holds (any case of the suffix), with and without
// worker threads, written in pieces of every size.
TEST(output_file_compression, a_zst_output_round_trips_through_zstd) {
    if (std::system("command -v zstd > /dev/null") != 0)
        FAIL() << "zstd is not installed (scripts/install-deps installs it)";
    temp_folder dir;
    std::string const text = sample_text(100000, 2);  // ~7 MB: several zstd blocks and jobs
    for (unsigned threads : {0u, 2u}) {
        for (std::string const name : {"out.fq.zst", "OUT.FQ.ZST"}) {
            std::string const path = dir / name;
            fs::remove(path);
            {
                output_file out(path, {.threads = threads});
                EXPECT_TRUE(out.is_compressed());
                EXPECT_FALSE(out.can_rewrite());
                char byte = 0;
                EXPECT_THROW(out.write_at(0, &byte, 1), std::logic_error);
                std::mt19937_64 rng(threads);
                for (size_t at = 0; at < text.size();) {
                    size_t const n = std::min<size_t>(rng() % 300000, text.size() - at);
                    out.write(text.data() + at, n);
                    at += n;
                }
                EXPECT_FALSE(fs::exists(path)) << "nothing under the final name before commit";
                out.commit();
            }
            std::string const back = dir / "back.txt";
            ASSERT_EQ(std::system(("zstd -q -dc '" + path + "' > '" + back + "'").c_str()), 0)
                << name << ", " << threads << " threads";
            std::string const got = slurp(back);
            EXPECT_EQ(got.size(), text.size());
            EXPECT_TRUE(got == text) << name << ", " << threads << " threads";
            EXPECT_LT(fs::file_size(path), text.size() / 2) << "compressed";
        }
    }
}

TEST(output_file_compression, an_empty_zst_output_is_an_empty_frame) {
    temp_folder dir;
    std::string const path = dir / "empty.zst";
    output_file(path).commit();
    EXPECT_GT(fs::file_size(path), 0u);
    ASSERT_EQ(std::system(("zstd -q -t '" + path + "'").c_str()), 0);
}

TEST(output_file_compression, not_by_name_writes_plain_text) {
    temp_folder dir;
    for (std::string const name : {"x.zst", "x.gz"}) {
        output_file out(dir / name, {.compress_by_name = false});
        EXPECT_FALSE(out.is_compressed());
        EXPECT_TRUE(out.can_rewrite());
        out.write("plain\n");
        out.commit();
        EXPECT_EQ(slurp(dir / name), "plain\n");
    }
}

// --- the temporary: without a name, or named where O_TMPFILE is refused ------------------------

class output_file_temporary : public ::testing::TestWithParam<bool> {
  protected:
    // GetParam(): whether an unnamed temporary is asked for.
    output_options options() const { return {.unnamed_temporary = GetParam()}; }
    void SetUp() override {
        if (GetParam()) {
            if (auto const why = o_tmpfile_refused(dir.path()); !why.empty())
                GTEST_SKIP() << "the temporary folder refuses O_TMPFILE: " << why;
        }
    }
    temp_folder dir;
};

TEST_P(output_file_temporary, nothing_under_the_final_name_before_commit) {
    std::string const path = dir / "out.tsv";
    output_file out(path, options());
    EXPECT_EQ(out.is_unnamed(), GetParam());
    EXPECT_TRUE(out.can_rewrite());
    EXPECT_FALSE(out.is_direct());
    out.write("first\n");
    std::string const big = sample_text(10000, 3);
    out.write(big);
    auto const during = entries(dir.path());
    if (GetParam()) {
        EXPECT_TRUE(during.empty()) << "a file without a name shows in its folder: " << during[0];
    } else {
        ASSERT_EQ(during.size(), 1u);
        EXPECT_TRUE(during[0].starts_with(".out.tsv.qmer-tmp-")) << during[0];
        EXPECT_EQ(out.written_path(), dir / during[0]);
    }
    out.commit();
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.tsv"});
    EXPECT_TRUE(slurp(path) == "first\n" + big);
}

// The old file is replaced whole: a hard link to it keeps the old bytes, the name gets the new.
TEST_P(output_file_temporary, an_existing_file_is_replaced_whole) {
    std::string const path = dir / "out.tsv";
    std::ofstream(path) << "old\n";
    fs::create_hard_link(path, dir / "old-link");
    output_file out(path, options());
    out.write("new\n");
    EXPECT_EQ(slurp(path), "old\n");
    out.commit();
    EXPECT_EQ(slurp(path), "new\n");
    EXPECT_EQ(slurp(dir / "old-link"), "old\n");
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"old-link", "out.tsv"}));
}

TEST_P(output_file_temporary, a_discarded_output_leaves_the_folder_as_it_was) {
    std::string const path = dir / "out.tsv";
    std::ofstream(path) << "old\n";
    {
        output_file out(path, options());
        out.write(sample_text(1000, 4));
    }
    {
        output_file out(dir / "new.tsv", options());
        out.write("x");
        out.discard();
        out.discard();
        out.commit();  // after discard, does nothing
    }
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.tsv"});
    EXPECT_EQ(slurp(path), "old\n");
}

TEST_P(output_file_temporary, a_new_file_gets_the_umask_permissions) {
    for (mode_t const mask : {mode_t{027}, mode_t{002}}) {
        umask_guard const guard(mask);
        std::string const path = dir / ("m" + std::to_string(mask));
        output_file out(path, options());
        out.write("x");
        out.commit();
        struct stat st {};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0666 & ~mask) << std::oct << mask;
    }
}

// Rewrites and reads back before commit, through the page cache and past it (uncached, which
// opens the file being written through written_path()).
TEST_P(output_file_temporary, rewrites_and_reads_back_what_it_wrote) {
    for (bool const uncached : {false, true}) {
        std::string const path = dir / (uncached ? "uncached.bin" : "cached.bin");
        output_options o = options();
        o.uncached = uncached;
        std::string expected = random_bytes((size_t{9} << 20) + 123, 5);  // over two 4 MiB buffers
        {
            output_file out(path, o);
            out.write(expected.substr(0, 5000));
            out.write(expected.substr(5000));
            std::string const patch = "PATCHED";
            for (size_t at : {size_t{0}, size_t{4} << 20, expected.size() - patch.size()}) {
                out.write_at(at, patch.data(), patch.size());
                expected.replace(at, patch.size(), patch);
                std::string back(patch.size() + 1, '\0');
                size_t const from = at == 0 ? 0 : at - 1;
                out.read_at(from, back.data(), back.size());
                EXPECT_EQ(back, expected.substr(from, back.size())) << at;
            }
            out.commit();
        }
        std::string const got = slurp(path);
        EXPECT_EQ(got.size(), expected.size());
        EXPECT_TRUE(got == expected) << (uncached ? "uncached" : "cached");
    }
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"cached.bin", "uncached.bin"}));
}

TEST_P(output_file_temporary, a_missing_folder_is_an_error_naming_the_file) {
    std::string const path = dir / "no/such/out.tsv";
    try {
        output_file out(path, options());
        FAIL() << "opened " << path;
    } catch (output_error const& e) {
        std::string const what = e.what();
        EXPECT_TRUE(what.starts_with("'" + path + "': ")) << what;
        EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

// The folder removed before commit: the file cannot be put in place, and the error names it.
TEST_P(output_file_temporary, a_folder_removed_before_commit_is_an_error_naming_the_file) {
    fs::create_directory(dir.path() / "sub");
    std::string const path = dir / "sub/out.tsv";
    output_file out(path, options());
    out.write("x");
    fs::remove_all(dir.path() / "sub");
    try {
        out.commit();
        FAIL() << "committed into a removed folder";
    } catch (output_error const& e) {
        EXPECT_TRUE(std::string(e.what()).starts_with("'" + path + "': ")) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path() / "sub"));
}

TEST_P(output_file_temporary, stdout_and_devices_are_written_directly) {
    output_file null("/dev/null", options());
    EXPECT_TRUE(null.is_direct());
    EXPECT_FALSE(null.is_unnamed());
    EXPECT_FALSE(null.can_rewrite());
    null.write("x");
    null.commit();
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    output_file out("-", options());
    EXPECT_TRUE(out.is_direct());
    EXPECT_EQ(out.written_path(), "<stdout>");
}

INSTANTIATE_TEST_SUITE_P(unnamed_or_named, output_file_temporary, ::testing::Bool(),
                         [](auto const& p) { return p.param ? "unnamed" : "named"; });

// --- a writer killed with SIGKILL ---------------------------------------------------------------

// Forks a child that opens `path` with `options`, writes 1 MiB to it and then waits to be killed;
// returns once it has written, with the child's pid and whether its file has no name.
struct killed_writer {
    pid_t pid = -1;
    bool unnamed = false;
};
killed_writer start_writer(std::string const& path, output_options const& options) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_t const pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork");
    if (pid == 0) {
        ::close(fds[0]);
        char state = 'e';
        try {
            output_file out(path, options);
            out.write(random_bytes(size_t{1} << 20, 6));
            state = out.is_unnamed() ? 'u' : 'n';
            if (::write(fds[1], &state, 1) != 1) ::_exit(1);
            for (;;) ::pause();
        } catch (...) {
        }
        [[maybe_unused]] auto const n = ::write(fds[1], &state, 1);
        ::_exit(1);
    }
    ::close(fds[1]);
    char state = 0;
    ssize_t const n = ::read(fds[0], &state, 1);
    ::close(fds[0]);
    if (n != 1 || state == 'e') {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        throw std::runtime_error("the writer failed before writing");
    }
    return {pid, state == 'u'};
}

int kill_and_wait(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

// In the temporary folder ("") and in the build folder (a file system of its own on some machines).
class killed_output : public ::testing::TestWithParam<char const*> {};

TEST_P(killed_output, leaves_nothing_behind) {
    fs::path const base = *GetParam() ? fs::path(GetParam()) : fs::temp_directory_path();
    temp_folder dir(base);
    if (auto const why = o_tmpfile_refused(dir.path()); !why.empty())
        GTEST_SKIP() << base << " refuses O_TMPFILE (" << why << "): there, a killed run leaves "
                     << "its named temporary, tested below";
    std::ofstream(dir / "out.qmer") << "old\n";
    auto const writer = start_writer(dir / "out.qmer", {.uncached = true});
    EXPECT_TRUE(writer.unnamed);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.qmer"}) << "while writing";
    EXPECT_EQ(kill_and_wait(writer.pid), SIGKILL);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.qmer"});
    EXPECT_EQ(slurp(dir / "out.qmer"), "old\n");
    auto const writer2 = start_writer(dir / "new.tsv.gz", {});
    EXPECT_EQ(kill_and_wait(writer2.pid), SIGKILL);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.qmer"});
}

INSTANTIATE_TEST_SUITE_P(folders, killed_output, ::testing::Values("", QMER_BUILD_DIR),
                         [](auto const& p) {
                             return std::string(p.index == 0 ? "tmp" : "build_folder");
                         });

// Where O_TMPFILE is refused: the killed writer's named temporary stays; the next output to the
// same name leaves it while it is young (it may be between a writer's close and its rename),
// and removes it once unmodified for 10 s. A live writer's temporary stays however old (locked).
TEST(killed_output, the_named_temporary_is_removed_by_the_next_output_once_stale) {
    temp_folder dir;
    std::string const path = dir / "out.tsv";
    auto const killed = start_writer(path, {.unnamed_temporary = false});
    EXPECT_FALSE(killed.unnamed);
    EXPECT_EQ(kill_and_wait(killed.pid), SIGKILL);
    auto const left = entries(dir.path());
    ASSERT_EQ(left.size(), 1u);
    std::string const temporary = left[0];
    EXPECT_TRUE(temporary.starts_with(".out.tsv.qmer-tmp-")) << temporary;

    auto const age = [&](std::string const& name) {
        timespec const times[2] = {{std::time(nullptr) - 60, 0}, {std::time(nullptr) - 60, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, (dir / name).c_str(), times, 0), 0);
    };
    auto const write_out = [&](output_options const& o) {
        output_file out(path, o);
        out.write("done\n");
        out.commit();
    };
    write_out({.unnamed_temporary = false});
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{temporary, "out.tsv"})) << "young";

    // A live writer of the same name, its temporary aged too: kept.
    auto const live = start_writer(path, {.unnamed_temporary = false});
    auto names = entries(dir.path());
    ASSERT_EQ(names.size(), 3u);
    std::string const live_temporary = names[0] == temporary ? names[1] : names[0];
    age(temporary);
    age(live_temporary);
    write_out({.unnamed_temporary = true});  // the same cleanup whichever way it writes
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{live_temporary, "out.tsv"}));
    EXPECT_EQ(slurp(path), "done\n");
    // Killed, its writer's lock is gone: the next output removes it.
    EXPECT_EQ(kill_and_wait(live.pid), SIGKILL);
    write_out({.unnamed_temporary = false});
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.tsv"});
}

// --- a full disk --------------------------------------------------------------------------------

// A 1 MiB tmpfs mounted in a temporary folder (root only), unmounted by the guard.
class small_disk {
  public:
    small_disk() {
        fs::create_directory(dir_.path() / "small");
        if (::geteuid() != 0) {
            why_ = "mounting a tmpfs needs root";
        } else if (::mount("tmpfs", (dir_ / "small").c_str(), "tmpfs", 0, "size=1m") != 0) {
            why_ = std::string("cannot mount a tmpfs here: ") + std::strerror(errno);
        } else {
            mounted_ = true;
        }
    }
    ~small_disk() {
        if (mounted_) ::umount2((dir_ / "small").c_str(), MNT_DETACH);
    }
    small_disk(small_disk const&) = delete;
    small_disk& operator=(small_disk const&) = delete;
    std::string const& refused() const { return why_; }
    fs::path folder() const { return dir_.path() / "small"; }

  private:
    temp_folder dir_;  // removed after the unmount
    bool mounted_ = false;
    std::string why_;
};

// Incompressible bytes past the disk's size, in a .zst, a .gz and a plain output, with and without
// a name: an output_error naming the file, at a write or at commit, and nothing left on the disk.
TEST(output_file_full_disk, fails_naming_the_file_and_leaves_nothing) {
    small_disk disk;
    if (!disk.refused().empty()) GTEST_SKIP() << disk.refused();
    // Eight different pieces: zstd's window would find a piece repeated and write it in a few
    // bytes.
    std::vector<std::string> pieces;
    for (int i = 0; i < 8; ++i) pieces.push_back(random_bytes(size_t{256} << 10, 7 + i));
    for (bool const unnamed : {true, false}) {
        for (std::string const name : {"out.fq.zst", "out.fq.GZ", "out.bin"}) {
            for (unsigned const threads : {0u, 2u}) {
                std::string const path = (disk.folder() / name).string();
                std::string what;
                try {
                    output_file out(path, {.threads = threads, .unnamed_temporary = unnamed});
                    for (auto const& piece : pieces) out.write(piece);
                    out.commit();
                } catch (output_error const& e) {
                    what = e.what();
                }
                std::string const which =
                    name + (unnamed ? ", unnamed, " : ", named, ") + std::to_string(threads);
                EXPECT_TRUE(what.starts_with("'" + path + "': ")) << which << ": " << what;
                EXPECT_NE(what.find("No space left on device"), std::string::npos)
                    << which << ": " << what;
                EXPECT_TRUE(fs::is_empty(disk.folder())) << which;
            }
        }
    }
}

}  // namespace
}  // namespace qmer::test
