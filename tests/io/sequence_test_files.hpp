#pragma once
// Helpers for the sequence input tests: a fresh temporary folder per test, files written as plain
// text, gzip or BGZF through htslib's own writer, and records read back into owned strings.

#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "io/sequence_reader.hpp"

namespace qmer::io::test {

struct owned_record {
    std::string name, comment, sequence, quality;
    bool operator==(owned_record const&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, owned_record const& r) {
    return out << "{" << r.name << " | " << r.comment << " | " << r.sequence << " | " << r.quality
               << "}";
}

inline owned_record own(sequence_record const& r) {
    return {std::string(r.name), std::string(r.comment), std::string(r.sequence),
            std::string(r.quality)};
}

enum class compression { none, gzip, bgzf };

class temp_folder_test : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "qmer-io-test-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override {
        std::error_code ignored;
        std::filesystem::permissions(dir_, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
        std::filesystem::remove_all(dir_, ignored);
    }

    std::string path(std::string_view name) const { return (dir_ / name).string(); }

    // Writes bytes to a file in the folder, as they are or compressed by htslib's BGZF writer
    // ("wg" writes one plain gzip stream, "w" writes BGZF blocks with the EOF marker).
    std::string write(std::string_view name, std::string_view bytes,
                      compression how = compression::none) const {
        std::string const p = path(name);
        if (how == compression::none) {
            std::ofstream out(p, std::ios::binary);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            EXPECT_TRUE(out.good());
        } else {
            BGZF* fp = bgzf_open(p.c_str(), how == compression::gzip ? "wg" : "w");
            EXPECT_NE(fp, nullptr);
            if (fp == nullptr) return p;
            EXPECT_EQ(bgzf_write(fp, bytes.data(), bytes.size()),
                      static_cast<ssize_t>(bytes.size()));
            EXPECT_EQ(bgzf_close(fp), 0);
        }
        return p;
    }

    static std::string read_bytes(std::string const& p) {
        std::ifstream in(p, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

    std::filesystem::path dir_;
};

inline std::vector<owned_record> read_all(std::string const& p, reader_options options = {}) {
    sequence_reader reader(p, options);
    std::vector<owned_record> out;
    record_batch batch;
    while (reader.next_batch(batch)) {
        EXPECT_EQ(batch.first_record_number(), out.size() + 1);
        for (sequence_record const r : batch) out.push_back(own(r));
    }
    EXPECT_EQ(reader.records_read(), out.size());
    return out;
}

// Runs f, which must throw input_error whose message contains every piece in `expected`.
template <typename F>
void expect_input_error(F&& f, std::vector<std::string> const& expected) {
    try {
        f();
        ADD_FAILURE() << "no input_error thrown; expected a message with '" << expected.front()
                      << "'";
    } catch (input_error const& e) {
        std::string const message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        for (std::string const& piece : expected) {
            EXPECT_NE(message.find(piece), std::string::npos)
                << "message '" << message << "' lacks '" << piece << "'";
        }
    }
}

// Replaces fd 0 with a pipe fed by a thread for the lifetime of the object.
class stdin_feed {
  public:
    explicit stdin_feed(std::string bytes) : bytes_(std::move(bytes)) {
        // A reader that stops early closes the pipe; the writer must see EPIPE, not die of SIGPIPE.
        ::signal(SIGPIPE, SIG_IGN);
        saved_ = ::dup(0);
        int fds[2];
        EXPECT_EQ(::pipe(fds), 0);
        ::dup2(fds[0], 0);
        ::close(fds[0]);
        int const out = fds[1];
        writer_ = std::thread([this, out] {
            size_t done = 0;
            while (done < bytes_.size()) {
                ssize_t const n = ::write(out, bytes_.data() + done, bytes_.size() - done);
                if (n <= 0) break;
                done += static_cast<size_t>(n);
            }
            ::close(out);
        });
    }
    ~stdin_feed() {
        writer_.join();
        ::dup2(saved_, 0);
        ::close(saved_);
    }
    stdin_feed(stdin_feed const&) = delete;
    stdin_feed& operator=(stdin_feed const&) = delete;

  private:
    std::string bytes_;
    int saved_ = -1;
    std::thread writer_;
};

}  // namespace qmer::io::test
