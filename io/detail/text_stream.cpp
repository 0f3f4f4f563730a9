#include "io/detail/text_stream.hpp"

#include <htslib/bgzf.h>

#include <cstring>
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
        size_t const chunk = n - old;
        prefix_.resize(n);
        ssize_t const got = bgzf_read(fp_, prefix_.data() + old, chunk);
        if (got >= 0) clear_threads_fallback_mark(fp_, threaded_);
        if (got < 0) {
            failed_ = true;
            errcode_ = fp_->errcode;
            prefix_.resize(old);
        } else {
            prefix_.resize(old + static_cast<size_t>(got));
            if (got == 0) note_end();
        }
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
    if (ended_ || failed_) return 0;
    ssize_t const got = bgzf_read(fp_, buf, static_cast<size_t>(n));
    if (got >= 0) clear_threads_fallback_mark(fp_, threaded_);
    if (got < 0) {
        failed_ = true;
        errcode_ = fp_->errcode;
        return 0;
    }
    if (got == 0) note_end();
    return static_cast<int>(got);
}

// A gzip stream cut short makes bgzf_read fail, but htslib's error state is checked at the end as
// well, so that an error recorded without a failing return still stops the input.
// A BGZF file ends with an empty block (the EOF marker); cut at a block boundary, it inflates
// cleanly and only the missing marker tells, so a missing marker counts as truncation (samtools
// only warns, but a silently shortened reference or read set is what DESIGN.md rules out).
void text_stream::note_end() noexcept {
    ended_ = true;
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
