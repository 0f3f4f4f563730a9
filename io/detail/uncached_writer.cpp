#include "io/detail/uncached_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "io/detail/whole_transfer.hpp"

namespace qmer::io::detail {

namespace {
// Direct I/O wants the memory, the offset and the length aligned to the device's logical block;
// 4 KiB covers the usual ones, and every full buffer's offset and length are multiples of it.
constexpr size_t direct_alignment = 4096;
}  // namespace

void uncached_writer::aligned_free::operator()(char* p) const noexcept {
    std::free(p);
}

uncached_writer::uncached_writer(char const* path, int plain_fd, bool try_direct,
                                 uint64_t cached_prefix)
    : plain_fd_(plain_fd), cached_prefix_(cached_prefix), busy_(buffers, false) {
    static_assert(buffer_bytes % direct_alignment == 0);
    for (unsigned i = 0; i < buffers; ++i) {
        auto* p = static_cast<char*>(std::aligned_alloc(direct_alignment, buffer_bytes));
        if (!p) throw std::bad_alloc();
        buffer_.emplace_back(p);
    }
    if (try_direct) direct_fd_ = ::open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
    thread_ = std::thread([this] { run(); });
}

uncached_writer::~uncached_writer() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
    if (direct_fd_ >= 0) ::close(direct_fd_);
}

int uncached_writer::write_buffer(char const* data, uint64_t offset, size_t size) {
    bool plain;
    {
        std::lock_guard lock(mutex_);
        plain = use_plain_ || direct_fd_ < 0;
    }
    if (offset < cached_prefix_) plain = true;
    if (!plain) {
        ssize_t const n = ::pwrite(direct_fd_, data, size, static_cast<off_t>(offset));
        if (n == static_cast<ssize_t>(size)) return 0;
        if (n < 0 && errno != EINVAL && errno != EINTR) return errno;
        if (n < 0 && errno == EINVAL) {
            // A file system that opened the file for direct I/O but refuses the write.
            std::lock_guard lock(mutex_);
            use_plain_ = true;
        }
        size_t const done = n > 0 ? static_cast<size_t>(n) : 0;
        return pwrite_whole(plain_fd_, data + done, size - done, offset + done);
    }
    return pwrite_whole(plain_fd_, data, size, offset);
}

void uncached_writer::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        job const j = queue_.front();
        bool const failed = error_ != 0;  // after a failure, the rest is not written
        lock.unlock();
        int const e = failed ? 0 : write_buffer(buffer_[j.buffer].get(), j.offset, buffer_bytes);
        lock.lock();
        if (e != 0 && error_ == 0) error_ = e;
        queue_.erase(queue_.begin());
        busy_[j.buffer] = false;
        changed_.notify_all();
        if (stopping_ && queue_.empty()) return;
    }
}

int uncached_writer::submit_current() {
    std::unique_lock lock(mutex_);
    busy_[current_] = true;
    queue_.push_back({current_, current_offset_});
    changed_.notify_all();
    current_offset_ += buffer_bytes;
    current_ = (current_ + 1) % buffers;
    fill_ = 0;
    changed_.wait(lock, [&] { return !busy_[current_]; });
    return error_;
}

int uncached_writer::drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty(); });
    return error_;
}

int uncached_writer::write(void const* data, size_t size) {
    auto const* p = static_cast<char const*>(data);
    while (size > 0) {
        size_t const n = std::min(size, buffer_bytes - fill_);
        std::memcpy(buffer_[current_].get() + fill_, p, n);
        fill_ += n;
        written_ += n;
        p += n;
        size -= n;
        if (fill_ == buffer_bytes)
            if (int const e = submit_current(); e != 0) return e;
    }
    return 0;
}

int uncached_writer::write_at(uint64_t offset, void const* data, size_t size) {
    if (offset + size > written_) return EINVAL;
    if (int const e = drain(); e != 0) return e;
    auto const* p = static_cast<char const*>(data);
    // The part in the current buffer, then the part already written.
    if (offset + size > current_offset_) {
        uint64_t const from = std::max(offset, current_offset_);
        std::memcpy(buffer_[current_].get() + (from - current_offset_), p + (from - offset),
                    offset + size - from);
        size = static_cast<size_t>(
            std::min<uint64_t>(size, current_offset_ - std::min(offset, current_offset_)));
    }
    return pwrite_whole(plain_fd_, p, size, offset);
}

int uncached_writer::read_at(uint64_t offset, void* out, size_t size) {
    if (offset + size > written_) return -1;
    if (int const e = drain(); e != 0) return e;
    auto* p = static_cast<char*>(out);
    if (offset + size > current_offset_) {
        uint64_t const from = std::max(offset, current_offset_);
        std::memcpy(p + (from - offset), buffer_[current_].get() + (from - current_offset_),
                    offset + size - from);
        size = static_cast<size_t>(
            std::min<uint64_t>(size, current_offset_ - std::min(offset, current_offset_)));
    }
    return pread_whole(plain_fd_, p, size, offset);
}

int uncached_writer::finish() {
    if (int const e = drain(); e != 0) return e;
    int const e = pwrite_whole(plain_fd_, buffer_[current_].get(), fill_, current_offset_);
    current_offset_ += fill_;
    fill_ = 0;
    return e;
}

}  // namespace qmer::io::detail
