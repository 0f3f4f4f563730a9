#pragma once
// The decompressed bytes of a text input (FASTA, FASTQ, GenBank, EMBL), read through htslib's BGZF
// layer, which inflates plain gzip and BGZF and passes other files through unchanged. Where those
// raw bytes start with the magic number of zstd, xz or bzip2, they are decoded here
// (stream_decoder.hpp), so that everything above sees text whatever the compression; the
// compression is told by content, never by the file name.
//
// The first bytes are read ahead into a prefix (to recognise the format from the content) and
// served again by read(), so the parsers see the stream from its first byte. read() never throws:
// it is called from inside kseq.h's C macros, which cannot be unwound cleanly mid-record; on a
// stream error it reports end of input and sets failed(), which the parser checks after every
// record.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "io/detail/byte_input.hpp"
#include "io/detail/stream_decoder.hpp"

struct BGZF;

namespace qmer::io::detail {

// What a BGZF error state means, for a message: "truncated or corrupt gzip/BGZF data (htslib
// error 3)" for a decompression error, "truncated or unreadable data (read error) (...)" for an
// I/O error alone.
std::string bgzf_failure(int errcode);

class text_stream final : public byte_input {
  public:
    // Takes ownership of fp (closed by the destructor). path is only used in messages.
    text_stream(BGZF* fp, std::string path);
    ~text_stream() override;
    text_stream(text_stream const&) = delete;
    text_stream& operator=(text_stream const&) = delete;

    // Reads ahead until the prefix holds at least n bytes or the stream ends; returns the prefix.
    // Throws input_error if the stream is damaged.
    std::string_view peek(size_t n);

    // Copies up to n bytes to buf; returns the count, 0 at the end of the input or after an error.
    int read(void* buf, int n) noexcept override;

    // True once the stream failed (truncated or corrupt compressed data, an I/O error).
    bool failed() const noexcept override { return failed_; }
    // What failed, for a message ("truncated or corrupt gzip/BGZF data (htslib error 5)",
    // "truncated zstd data: it ends inside a frame").
    std::string failure() const override;

    std::string const& path() const noexcept { return path_; }
    // The compression decoded here (none for text and for what htslib inflates), known once
    // peek() or read() has been called.
    compression decoded() const noexcept { return decoded_; }

  private:
    // The raw bytes are decoded in blocks of this size.
    static constexpr size_t raw_block = size_t{128} << 10;

    void start() noexcept;
    size_t pull(char* buf, size_t n) noexcept;
    size_t decode(char* buf, size_t n) noexcept;
    bool refill() noexcept;
    size_t read_raw(char* buf, size_t n) noexcept;
    void note_raw_end() noexcept;

    BGZF* fp_;
    std::string path_;
    std::string prefix_;
    size_t prefix_pos_ = 0;
    // The first raw bytes, read to look for a magic number; served first when they are text.
    char head_[magic_bytes];
    size_t head_size_ = 0;
    size_t head_pos_ = 0;
    bool started_ = false;
    compression decoded_ = compression::none;
    std::unique_ptr<stream_decoder> decoder_;
    std::unique_ptr<char[]> raw_;  // raw bytes being decoded: [raw_pos_, raw_end_)
    size_t raw_pos_ = 0;
    size_t raw_end_ = 0;
    bool raw_ended_ = false;  // the BGZF layer has given its last byte
    bool failed_ = false;
    bool ended_ = false;
    bool missing_eof_ = false;
    bool out_of_memory_ = false;
    int errcode_ = 0;
    bool threaded_;  // BGZF threads were running at the last look (htslib may stop them)
};

}  // namespace qmer::io::detail
