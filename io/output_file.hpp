#pragma once
// An output that never leaves a half-written file under its final name (ARCHITECTURE.md, errors).
//
// A regular-file path (existing or new) is written to a file without a name (O_TMPFILE) in the
// same folder, and commit() gives it its final name: it is linked to a hidden name beside the
// final one and renamed over it, so a reader sees the old file or the whole new one, never a part.
// A run that dies, even by SIGKILL (the OOM killer, a scheduler's time limit), leaves nothing:
// the kernel frees a file without a name when its last descriptor closes.
// Where the file system or kernel refuses O_TMPFILE, the file is written under the hidden name
// `.NAME.qmer-tmp-XXXXXX` from the start, flock()ed by its writer; destroying an output_file that
// was not committed removes it, but a run killed with SIGKILL leaves it behind, and the next
// output to NAME removes such leftovers (unlocked and unmodified for 10 s) before it starts.
// "-" means stdout. Paths that exist and are not regular files (/dev/null, /dev/stdout, a named
// pipe) are written directly and never replaced: qmer runs as root in containers, and a rename onto
// a device path would replace the device. Every write and the final close are checked; a failure
// throws output_error naming the file.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include <memory>

struct BGZF;
namespace qmer::io::detail {
class uncached_writer;
class zstd_writer;
}  // namespace qmer::io::detail

namespace qmer::io {

enum class output_compression { none, bgzf, zstd };
// What an output path's name asks for: ".gz"/".bgz" -> bgzf, ".zst" -> zstd, matched
// case-insensitively; "-" and every other name -> none.
output_compression compression_by_name(std::string_view path) noexcept;
// The length of that suffix in path (0 for none): "x.FQ.GZ" -> 3.
size_t compression_suffix_length(std::string_view path) noexcept;

struct output_options {
    // Paths named as compression_by_name() says are written compressed: BGZF or zstd.
    bool compress_by_name = true;
    unsigned threads = 0;  // extra compression threads
    // A large file written once (an index): a regular file is written past the page cache where
    // its file system allows, from a thread of its own (io/detail/uncached_writer.hpp). Not with
    // compression; stdout, devices and pipes are written as usual.
    bool uncached = false;
    // With uncached: the first bytes that go through the page cache all the same, because the
    // writer rewrites them (the index's head) or reads them back (uncached_writer's cached_prefix).
    uint64_t cached_prefix = 0;
    // false writes a regular file under the hidden name from the start, as where O_TMPFILE is
    // refused: for tests of that path.
    bool unnamed_temporary = true;
};

class output_file {
  public:
    explicit output_file(std::string path, output_options options = {});
    output_file(output_file const&) = delete;
    output_file& operator=(output_file const&) = delete;
    ~output_file();

    void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
    void write(void const* data, size_t size);
    // Flushes, closes and (for a regular file) puts the finished file in place under its final
    // name. Throws on failure.
    void commit();

    // A regular, uncompressed file (the temporary) can be rewritten and read back before commit:
    // an index whose header counts are known only after its sections are written
    // (io/index_file.hpp). Not for stdout, devices, pipes or compressed output.
    bool can_rewrite() const noexcept { return !direct_ && !is_compressed(); }
    // Overwrites bytes already written, at `offset` (can_rewrite() only; the end stays the end).
    void write_at(uint64_t offset, void const* data, size_t size);
    // Reads `size` bytes written so far, from `offset` (can_rewrite() only).
    void read_at(uint64_t offset, void* out, size_t size);
    // Removes the temporary, if any; safe to call twice. Called by the destructor when not
    // committed.
    void discard() noexcept;

    std::string const& path() const noexcept { return path_; }
    // The file being written now, as a path that opens it: the hidden temporary, or
    // /proc/self/fd/N for a file without a name; the path itself for stdout, devices and pipes.
    std::string const& written_path() const noexcept { return written_; }
    bool is_direct() const noexcept { return direct_; }
    bool is_compressed() const noexcept { return bgzf_ != nullptr || zstd_ != nullptr; }
    // True while the file being written has no name in the folder (O_TMPFILE).
    bool is_unnamed() const noexcept { return unnamed_; }

  private:
    void open_stream(bool unnamed_temporary);
    void open_named_temporary(std::string const& folder, std::string const& hidden);
    void give_final_name(int fd);
    [[noreturn]] void fail(std::string_view what);  // with errno's reason
    [[noreturn]] void fail_with(int err, std::string_view what);

    std::string path_;
    std::string written_;
    std::string hidden_prefix_;  // ".NAME.qmer-tmp-", beside NAME (regular files only)
    std::FILE* file_ = nullptr;
    BGZF* bgzf_ = nullptr;
    std::unique_ptr<detail::zstd_writer> zstd_;
    std::unique_ptr<detail::uncached_writer> uncached_;
    bool direct_ = false;
    bool unnamed_ = false;
    bool owns_stream_ = true;
    bool done_ = false;
};

// True for "-" and for paths that exist and are not regular files (devices, pipes, sockets).
bool is_direct_output(std::string const& path);

// Throws the output_error output_file would if path's folder cannot take a new file, creating
// nothing: lets a long job fail before its work, not after it.
void check_output_folder(std::string const& path);

}  // namespace qmer::io
