#pragma once
// A piece of a file's decompressed text, held in memory, as the parser's byte_input: what a chunk
// of the text is parsed from (io/detail/chunk_parser.hpp). The piece may be given in two parts
// (bytes carried over from an earlier chunk, then a chunk), read as one run of bytes.
//
// It remembers whether the parser asked for a byte past its end (overran()): a record that did so
// may go on in the next chunk, which the chunk parser must know. A piece that ends where the
// file's stream failed carries that failure, and reports it the way text_stream does: failed()
// turns true when the parser asks for the first byte that is not there, not before.

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "io/detail/byte_input.hpp"

namespace qmer::io::detail {

class memory_input final : public byte_input {
  public:
    // The bytes of first, then those of second. A non-empty `failure` is the stream failure met
    // right after the last byte (the message text_stream::failure() gave).
    explicit memory_input(std::string_view first, std::string_view second = {},
                          std::string failure = {})
        : parts_{first, second}, failure_(std::move(failure)) {}

    int read(void* buf, int n) noexcept override {
        while (part_ < 2 && at_ == parts_[part_].size()) {
            ++part_;
            at_ = 0;
        }
        if (part_ == 2 || n <= 0) {
            overran_ = overran_ || part_ == 2;
            return 0;
        }
        std::string_view const from = parts_[part_];
        size_t const take = std::min(from.size() - at_, static_cast<size_t>(n));
        std::memcpy(buf, from.data() + at_, take);
        at_ += take;
        return static_cast<int>(take);
    }

    bool failed() const noexcept override { return overran_ && !failure_.empty(); }
    std::string failure() const override { return failure_; }

    // True once a read found no byte left.
    bool overran() const noexcept { return overran_; }

  private:
    std::string_view parts_[2];
    size_t part_ = 0;  // the part read from
    size_t at_ = 0;    // the next byte of that part
    std::string failure_;
    bool overran_ = false;
};

}  // namespace qmer::io::detail
