#pragma once
// Scratch space on disk for a build whose working data does not fit its memory limit (the sorted
// build's fingerprints, app/index/sorted_build.hpp): an unnamed file in a chosen folder, appended
// to by several threads at once and read back by offset.
//
// The file has no name from the start (O_TMPFILE, or a name removed as soon as it is made where
// the file system lacks it), so nothing is left behind by any end of the process, SIGKILL
// included, and nothing in the folder can be mistaken for it. Its pages go through the page cache:
// on a machine with memory to spare they are read back without touching the disk, but they are
// never counted in the process's resident set, which is what --max-memory limits.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace qmer::io {

// The bytes a new file in `folder` can still take (statvfs: the blocks available to unprivileged
// users); the largest uint64_t where the file system does not say (the folder is then judged when
// a file is made there).
uint64_t free_bytes_in(std::string const& folder) noexcept;

class spill_file {
  public:
    // Throws output_error naming the folder when no file can be made there.
    explicit spill_file(std::string folder);
    spill_file(spill_file const&) = delete;
    spill_file& operator=(spill_file const&) = delete;
    ~spill_file();

    // Writes `bytes` at the end of the file and returns where they start. Safe from several
    // threads at once: each reserves its range with one atomic add, then writes it with pwrite.
    // Throws output_error (a full disk names the folder and the size written so far).
    uint64_t append(void const* data, size_t bytes);
    // Reads `bytes` at `offset` (written by an append that has returned). Throws output_error.
    void read(uint64_t offset, void* data, size_t bytes) const;
    // Gives the disk blocks wholly inside [offset, offset + bytes) back to the file system
    // (bytes never read again), so that a caller writing its data back sorted needs the room of
    // about one copy, not two. False where the file system cannot punch holes (nothing is freed
    // then; the data stays readable either way).
    bool release(uint64_t offset, size_t bytes) noexcept;

    // Appends everything readable from `path` ("-": standard input) until its end, so that an
    // input that can be read only once (stdin, a pipe) can be read again, through proc_path().
    // Throws input_error naming path when it cannot be read, output_error when the file fills.
    uint64_t copy_from(std::string const& path);
    // A name that opens this file afresh (Linux: /proc/self/fd/N), for readers that want a path.
    std::string proc_path() const;

    uint64_t size() const noexcept { return end_.load(std::memory_order_relaxed); }
    std::string const& folder() const noexcept { return folder_; }

  private:
    std::string folder_;
    int fd_ = -1;
    std::atomic<uint64_t> end_{0};
};

}  // namespace qmer::io
