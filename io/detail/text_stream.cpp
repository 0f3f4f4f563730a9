#include "io/detail/text_stream.hpp"

#include <htslib/bgzf.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "core/error.hpp"
#include "io/detail/bgzf_fallback.hpp"

namespace qmer::io::detail {

text_stream::text_stream(BGZF* fp, std::string path)
    : fp_(fp), path_(std::move(path)), threaded_(fp->mt != nullptr) {}

text_stream::~text_stream() {
    if (fp_ != nullptr) bgzf_close(fp_);
}

std::string_view text_stream::peek(size_t n) {
    // Reading ahead is only done before the parser starts, so the prefix is still whole.
    while (prefix_.size() < n && !ended_ && !failed_) {
        size_t const old = prefix_.size();
        prefix_.resize(n);
        size_t const got = pull(prefix_.data() + old, n - old);
        prefix_.resize(old + got);
    }
    if (failed_) throw input_error(path_ + ": " + failure());
    return prefix_;
}

int text_stream::read(void* buf, int n) noexcept {
    if (n <= 0) return 0;
    if (prefix_pos_ < prefix_.size()) {
        size_t const take = std::min(prefix_.size() - prefix_pos_, static_cast<size_t>(n));
        std::memcpy(buf, prefix_.data() + prefix_pos_, take);
        prefix_pos_ += take;
        if (prefix_pos_ == prefix_.size()) {
            // Give the memory back: the prefix is never needed again.
            std::string().swap(prefix_);
            prefix_pos_ = 0;
        }
        return static_cast<int>(take);
    }
    return static_cast<int>(pull(static_cast<char*>(buf), static_cast<size_t>(n)));
}

// Reads the first raw bytes and, if they start with a magic number, sets up their decoder. Only
// magic_bytes are read, so that text from a pipe is handed on as soon as htslib has it.
void text_stream::start() noexcept {
    started_ = true;
    while (head_size_ < sizeof head_ && !raw_ended_ && !failed_)
        head_size_ += read_raw(head_ + head_size_, sizeof head_ - head_size_);
    if (failed_) return;
    compression const kind = compression_of({head_, head_size_});
    if (kind == compression::none) return;
    try {
        raw_ = std::make_unique<char[]>(raw_block);
        decoder_ = make_stream_decoder(kind);
    } catch (std::bad_alloc const&) {
        failed_ = out_of_memory_ = true;
        return;
    }
    decoded_ = kind;
    std::memcpy(raw_.get(), head_, head_size_);
    raw_end_ = head_size_;
}

// Up to n bytes of text after the prefix; 0 only at the end of the text or after a failure.
size_t text_stream::pull(char* buf, size_t n) noexcept {
    if (!started_) start();
    if (ended_ || failed_) return 0;
    if (decoder_) return decode(buf, n);
    if (head_pos_ < head_size_) {
        size_t const take = std::min(head_size_ - head_pos_, n);
        std::memcpy(buf, head_ + head_pos_, take);
        head_pos_ += take;
        return take;
    }
    size_t const got = read_raw(buf, n);
    ended_ = raw_ended_;
    return got;
}

size_t text_stream::decode(char* buf, size_t n) noexcept {
    for (;;) {
        if (raw_pos_ == raw_end_ && !raw_ended_ && !refill()) return 0;
        std::string_view const in(raw_.get() + raw_pos_, raw_end_ - raw_pos_);
        stream_decoder::step const s = decoder_->decode(in, {buf, n}, raw_ended_);
        raw_pos_ += s.consumed;
        if (s.produced > 0) return s.produced;  // a failure with it is reported by the next call
        if (decoder_->failed()) {
            failed_ = true;
            return 0;
        }
        if (s.ended) {
            ended_ = true;
            return 0;
        }
        // Neither: the decoder needs more raw bytes than it has. It never asks once they ended
        // (it reports truncation instead); the check only guards against a loop without end.
        if (s.consumed == 0 && (raw_ended_ || !refill())) {
            failed_ = true;
            return 0;
        }
    }
}

// Moves the raw bytes not yet decoded to the front of the buffer and reads more after them.
bool text_stream::refill() noexcept {
    size_t const kept = raw_end_ - raw_pos_;
    std::memmove(raw_.get(), raw_.get() + raw_pos_, kept);
    raw_pos_ = 0;
    raw_end_ = kept + read_raw(raw_.get() + kept, raw_block - kept);
    return !failed_;
}

// bgzf_read with htslib's error state checked: 0 at the end of the raw bytes or after a failure.
size_t text_stream::read_raw(char* buf, size_t n) noexcept {
    ssize_t const got = bgzf_read(fp_, buf, n);
    if (got >= 0) clear_threads_fallback_mark(fp_, threaded_);
    if (got < 0) {
        failed_ = true;
        errcode_ = fp_->errcode;
        return 0;
    }
    if (got == 0) note_raw_end();
    return static_cast<size_t>(got);
}

// A gzip stream cut short makes bgzf_read fail, but htslib's error state is checked at the end as
// well, so that an error recorded without a failing return still stops the input.
// A BGZF file ends with an empty block (the EOF marker); cut at a block boundary, it inflates
// cleanly and only the missing marker tells, so a missing marker counts as truncation (samtools
// only warns, but a silently shortened reference or read set is what ARCHITECTURE.md rules out).
void text_stream::note_raw_end() noexcept {
    raw_ended_ = true;
    if (fp_->errcode != 0) {
        failed_ = true;
        errcode_ = fp_->errcode;
    } else if (fp_->is_compressed && !fp_->is_gzip && fp_->mt == nullptr && !fp_->last_block_eof) {
        // (Threaded reading does not keep last_block_eof; sequence_reader checks the marker of a
        // seekable file with bgzf_check_EOF when it opens it, which covers that case.)
        failed_ = true;
        missing_eof_ = true;
    }
}

std::string text_stream::failure() const {
    if (out_of_memory_) return "out of memory";
    if (decoder_ && decoder_->failed()) return decoder_->failure(path_ == "-" ? "FILE" : path_);
    // A cut-short gzip member shows up as a zlib error together with an I/O error (htslib sets
    // both), so the decompression bits are looked at first.
    if (missing_eof_) return "truncated BGZF data: the end-of-file marker block is missing";
    return bgzf_failure(errcode_);
}

std::string bgzf_failure(int errcode) {
    // A BGZF block cut short is reported as an I/O error alone (the read came up short).
    std::string what = "truncated or unreadable data (read error)";
    if (errcode & (BGZF_ERR_ZLIB | BGZF_ERR_HEADER | BGZF_ERR_CRC)) {
        what = "truncated or corrupt gzip/BGZF data";
    }
    return what + " (htslib error " + std::to_string(errcode) + ")";
}

}  // namespace qmer::io::detail
