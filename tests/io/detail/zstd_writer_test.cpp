// Tests of io/detail/zstd_writer.hpp: what it writes is one zstd frame that the `zstd` tool
// decodes to the bytes given, in pieces of any size, with worker threads or without; a sink that
// refuses the bytes (/dev/full) is a failure with the system's reason, at a write or at finish().

#include "io/detail/zstd_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>

namespace qmer::test {
namespace {

namespace fs = std::filesystem;
using io::detail::zstd_writer;

class temp_folder {
  public:
    temp_folder() {
        std::string templ = (fs::temp_directory_path() / "qmer-zstd-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp");
        path_ = templ;
    }
    ~temp_folder() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_folder(temp_folder const&) = delete;
    temp_folder& operator=(temp_folder const&) = delete;
    std::string operator/(std::string const& name) const { return (path_ / name).string(); }

  private:
    fs::path path_;
};

std::string slurp(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

TEST(zstd_writer, writes_one_frame_the_zstd_tool_decodes) {
    if (std::system("command -v zstd > /dev/null") != 0)
        FAIL() << "zstd is not installed (scripts/install-deps installs it)";
    temp_folder dir;
    std::mt19937_64 rng(11);
    std::string text;
    while (text.size() < (size_t{5} << 20)) {
        text += "@read\n";
        for (int i = 0; i < 100; ++i) text += "ACGT"[rng() & 3];
        text += "\n";
    }
    for (unsigned threads : {0u, 1u, 3u}) {
        std::string const path = dir / ("out" + std::to_string(threads) + ".zst");
        std::FILE* out = std::fopen(path.c_str(), "wb");
        ASSERT_NE(out, nullptr);
        {
            zstd_writer w(out, zstd_writer::default_level, threads);
            if (threads > 0 && w.workers() == 0)
                std::cout << "libzstd has no worker threads here: the caller compresses\n";
            EXPECT_TRUE(w.write(nullptr, 0));
            for (size_t at = 0; at < text.size();) {
                size_t const n = std::min<size_t>(1 + rng() % 700000, text.size() - at);
                ASSERT_TRUE(w.write(text.data() + at, n)) << w.error();
                at += n;
            }
            ASSERT_TRUE(w.finish()) << w.error();
        }
        ASSERT_EQ(std::fclose(out), 0);
        std::string const back = dir / "back";
        ASSERT_EQ(std::system(("zstd -q -dc '" + path + "' > '" + back + "'").c_str()), 0);
        std::string const got = slurp(back);
        EXPECT_EQ(got.size(), text.size()) << threads << " threads";
        EXPECT_TRUE(got == text) << threads << " threads";
    }
}

TEST(zstd_writer, a_sink_that_refuses_the_bytes_is_a_failure) {
    std::string noise(size_t{1} << 20, '\0');
    std::mt19937_64 rng(12);
    for (char& c : noise) c = static_cast<char>(rng());
    for (unsigned threads : {0u, 2u}) {
        std::FILE* full = std::fopen("/dev/full", "wb");
        ASSERT_NE(full, nullptr);
        std::setvbuf(full, nullptr, _IONBF, 0);  // each compressed piece meets the device
        bool ok = true;
        std::string error;
        {
            zstd_writer w(full, zstd_writer::default_level, threads);
            for (int i = 0; i < 4 && ok; ++i) ok = w.write(noise.data(), noise.size());
            if (ok) ok = w.finish();
            error = w.error();
        }
        std::fclose(full);
        EXPECT_FALSE(ok) << threads << " threads";
        EXPECT_EQ(error, "No space left on device") << threads << " threads";
    }
}

}  // namespace
}  // namespace qmer::test
