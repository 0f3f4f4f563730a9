#pragma once
// Sequential writes of a large file past the page cache (O_DIRECT), from a thread of their own.
//
// Why: a host-sized index is gigabytes written once. Through the page cache every byte is copied
// into freshly allocated cache pages, which costs the kernel seconds of CPU per few GiB where
// direct writes cost a fraction of one (bench/JOURNAL.md, the human-sized build;
// bench/MEASUREMENTS.md). The writes go out from a thread that only waits on the device, so the
// build's threads never block on them.
//
// The bytes are copied into one of a few aligned buffers; each full buffer is written at its
// offset (a multiple of the buffer size, so aligned) while the next fills. Anything direct I/O
// cannot take goes through the ordinary descriptor instead: the last, partial buffer; a file
// system that refuses O_DIRECT at open or at the first write (then every later buffer); and
// rewrites and reads of bytes already written, after the writes in flight have landed.
//
// Errors: write(), write_at(), read_at() and finish() return 0 or an errno (the first failure of
// a background write is reported by the next call); -1 from read_at for bytes not written.
// Not thread-safe: one caller.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace qmer::io::detail {

class uncached_writer {
  public:
    // Writes at offset 0 on of `path`, a regular file opened as `plain_fd` (not owned, which takes
    // what direct I/O cannot). `path` is opened again for direct I/O: a name of the file, or
    // /proc/self/fd/N for one without a name (O_TMPFILE). try_direct = false writes everything
    // through plain_fd (as a file system without O_DIRECT would): for tests. The buffers that start
    // below `cached_prefix` go through the page cache all the same: bytes the caller will rewrite
    // or read back (the index's header, whose counts are rewritten last), which after a direct
    // write the kernel would fetch from the device again.
    uncached_writer(char const* path, int plain_fd, bool try_direct = true,
                    uint64_t cached_prefix = 0);
    ~uncached_writer();
    uncached_writer(uncached_writer const&) = delete;
    uncached_writer& operator=(uncached_writer const&) = delete;

    int write(void const* data, size_t size);
    // Overwrites / reads bytes already given to write().
    int write_at(uint64_t offset, void const* data, size_t size);
    int read_at(uint64_t offset, void* out, size_t size);
    // Writes what is left and waits for every write; nothing may be written after it.
    int finish();

    uint64_t size() const noexcept { return written_; }
    bool direct() const noexcept { return direct_fd_ >= 0; }

    static constexpr size_t buffer_bytes = size_t{4} << 20;
    static constexpr unsigned buffers = 3;

  private:
    struct aligned_free {
        void operator()(char* p) const noexcept;
    };
    struct job {
        unsigned buffer;
        uint64_t offset;
    };
    int submit_current();
    int drain();  // waits until no write is in flight; the first background error, or 0
    void run();
    int write_buffer(char const* data, uint64_t offset, size_t size);

    int plain_fd_;
    int direct_fd_ = -1;
    uint64_t cached_prefix_;
    std::vector<std::unique_ptr<char, aligned_free>> buffer_;
    unsigned current_ = 0;
    size_t fill_ = 0;       // bytes in the current buffer
    uint64_t written_ = 0;  // bytes given to write()
    uint64_t current_offset_ = 0;

    // Shared with the thread, under mutex_.
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<job> queue_;  // submitted, not yet written, in order
    std::vector<bool> busy_;  // per buffer: submitted and not yet written
    int error_ = 0;           // the first background failure
    bool stopping_ = false;
    bool use_plain_ = false;  // direct I/O was refused: every later buffer goes through plain_fd_
    std::thread thread_;
};

}  // namespace qmer::io::detail
