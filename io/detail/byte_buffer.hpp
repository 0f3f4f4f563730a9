#pragma once
// A growable run of bytes that is written into directly (a read into its free space, then
// commit): the raw text of a chunk. Not std::string or std::vector<char>: those zero-fill on
// resize, which would write every byte of the input twice. Grows geometrically and keeps its
// memory across clear(), so a reused chunk allocates nothing in the steady state.

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

namespace qmer::io::detail {

class byte_buffer {
  public:
    char const* data() const noexcept { return bytes_.get(); }
    size_t size() const noexcept { return size_; }
    size_t capacity() const noexcept { return capacity_; }
    bool empty() const noexcept { return size_ == 0; }
    std::string_view view() const noexcept { return {bytes_.get(), size_}; }

    // Room for n more bytes after the end: returns where they go; commit(count) adds them.
    char* reserve_more(size_t n) {
        reserve(size_ + n);
        return bytes_.get() + size_;
    }
    void commit(size_t n) noexcept { size_ += n; }

    void append(std::string_view bytes) {
        if (bytes.empty()) return;
        std::memcpy(reserve_more(bytes.size()), bytes.data(), bytes.size());
        size_ += bytes.size();
    }
    void assign(std::string_view bytes) {
        size_ = 0;
        append(bytes);
    }
    // Keeps the first n bytes (n <= size()).
    void truncate(size_t n) noexcept { size_ = n < size_ ? n : size_; }
    void clear() noexcept { size_ = 0; }
    // Gives the memory back (after a huge record, so that one chromosome does not pin its size).
    void release() noexcept {
        bytes_.reset();
        size_ = capacity_ = 0;
    }
    void swap(byte_buffer& other) noexcept {
        std::swap(bytes_, other.bytes_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
    }

  private:
    void reserve(size_t needed) {
        if (needed <= capacity_) return;
        size_t grown = capacity_ < 65536 ? 65536 : capacity_;
        while (grown < needed) grown *= 2;
        std::unique_ptr<char[]> fresh(new char[grown]);
        if (size_ != 0) std::memcpy(fresh.get(), bytes_.get(), size_);
        bytes_ = std::move(fresh);
        capacity_ = grown;
    }

    std::unique_ptr<char[]> bytes_;
    size_t size_ = 0;
    size_t capacity_ = 0;
};

}  // namespace qmer::io::detail
