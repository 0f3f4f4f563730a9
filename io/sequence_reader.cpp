#include "io/sequence_reader.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <istream>
#include <optional>
#include <streambuf>
#include <utility>

#include "core/error.hpp"
#include "io/detail/fastx_source.hpp"
#include "io/detail/hts_source.hpp"
#include "io/detail/record_source.hpp"
#include "io/detail/text_stream.hpp"
#include "io/seqan/flatfile_reader.hpp"

namespace qmer::io {

std::string_view format_name(sequence_format format) noexcept {
    switch (format) {
        case sequence_format::empty:
            return "empty";
        case sequence_format::fasta:
            return "FASTA";
        case sequence_format::fastq:
            return "FASTQ";
        case sequence_format::sam:
            return "SAM";
        case sequence_format::bam:
            return "BAM";
        case sequence_format::cram:
            return "CRAM";
        case sequence_format::genbank:
            return "GenBank";
        case sequence_format::embl:
            return "EMBL";
    }
    return "unknown";
}

namespace {

// The text_stream as a std::streambuf, for SeqAn3's GenBank/EMBL parsers.
class text_streambuf final : public std::streambuf {
  public:
    explicit text_streambuf(detail::text_stream& stream) : stream_(stream) {}

  protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        int const got = stream_.read(buffer_, sizeof buffer_);
        if (got <= 0) return traits_type::eof();
        setg(buffer_, buffer_, buffer_ + got);
        return traits_type::to_int_type(*gptr());
    }

  private:
    detail::text_stream& stream_;
    char buffer_[1 << 16];
};

// GenBank/EMBL: the stream, the istream over it, and SeqAn3's reader, in construction order.
class flatfile_source final : public detail::record_source {
  public:
    flatfile_source(std::unique_ptr<detail::text_stream> stream, flatfile_format format)
        : stream_(std::move(stream)),
          buffer_(std::make_unique<text_streambuf>(*stream_)),
          in_(buffer_.get()),
          reader_(in_, format, stream_->path()) {}

    bool read(record_batch& batch, uint64_t number) override {
        bool const got = reader_.read(batch, number);
        // A stream error looks like an early end to SeqAn3: it must not pass for one.
        if (stream_->failed()) {
            if (got) batch.pop_back();
            throw input_error(stream_->path() + ": record " + std::to_string(number) + ": " +
                              stream_->failure());
        }
        return got;
    }

  private:
    std::unique_ptr<detail::text_stream> stream_;
    std::unique_ptr<text_streambuf> buffer_;
    std::istream in_;
    flatfile_reader reader_;
};

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string describe_first_byte(unsigned char c) {
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(c));
    return std::string("byte ") + hex + " (binary data)";
}

// Compressions htslib does not read, told by their magic bytes: the tool that decompresses them, or
// nullptr. qmer reads plain, gzip and BGZF itself; the others are piped in (`xz -dc f | qmer ...
// -`).
char const* foreign_compression(std::string_view head) {
    if (head.starts_with("\xfd"
                         "7zXZ"))
        return "xz";
    if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
    if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9')
        return "bzip2";
    return nullptr;
}

[[noreturn]] void fail_open(std::string const& path, int error) {
    throw input_error(path + ": cannot open: " + std::strerror(error));
}

}  // namespace

// What identifies a regular file's version: a file that another process appends to, truncates or
// replaces while qmer reads it gives results that describe neither version, and a truncation at a
// record boundary cannot be told from the data alone.
struct file_version {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};

    static file_version of(struct stat const& info) {
        return {info.st_dev, info.st_ino, info.st_size, info.st_mtim};
    }
    bool operator==(file_version const& o) const {
        return device == o.device && inode == o.inode && size == o.size &&
               modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
    }
};

// The backend lives behind record_source; this type only exists to name it in the header.
struct sequence_reader::backend {
    std::unique_ptr<detail::record_source> source;
    // Set for regular files: checked again when the last record has been read.
    std::optional<file_version> opened;
};

namespace {

// Throws if the regular file at path is no longer the version that was opened.
void check_unchanged(std::string const& path, file_version const& opened) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw input_error(path + ": removed or renamed while it was read: the results may be " +
                          "incomplete; run again on a finished file");
    auto const now = file_version::of(info);
    if (now == opened) return;
    std::string what = now.device != opened.device || now.inode != opened.inode
                           ? "replaced by another file"
                       : now.size > opened.size ? "grew from " + std::to_string(opened.size) +
                                                      " to " + std::to_string(now.size) + " bytes"
                       : now.size < opened.size ? "shrank from " + std::to_string(opened.size) +
                                                      " to " + std::to_string(now.size) + " bytes"
                                                : "rewritten (its modification time changed)";
    throw input_error(path + ": " + what + " while it was read: the results would describe " +
                      "neither version; run again on a finished file");
}

}  // namespace

sequence_reader::sequence_reader(std::string path, reader_options options)
    : path_(std::move(path)), options_(options), backend_(std::make_unique<backend>()) {
    if (path_.empty()) throw input_error("an input file name is empty");
    if (path_ != "-") {
        // htslib opens a directory without complaint and then fails on read; say it plainly.
        struct stat info {};
        if (::stat(path_.c_str(), &info) != 0) fail_open(path_, errno);
        if (S_ISDIR(info.st_mode)) throw input_error(path_ + ": cannot open: is a directory");
        if (S_ISREG(info.st_mode)) backend_->opened = file_version::of(info);
    }
    hFILE* raw = hopen(path_.c_str(), "r");
    if (raw == nullptr) fail_open(path_, errno);

    // hts_detect_format peeks (decompressing a gzip start if need be) without consuming anything.
    htsFormat detected{};
    if (hts_detect_format(raw, &detected) < 0) {
        int const error = errno;
        hclose_abruptly(raw);
        throw input_error(path_ + ": cannot read: " + std::strerror(error));
    }

    if (detected.format == sam || detected.format == bam || detected.format == cram) {
        htsFile* fp = hts_hopen(raw, path_.c_str(), "r");
        if (fp == nullptr) {
            hclose_abruptly(raw);
            throw input_error(path_ + ": cannot open as " + hts_format_description(&detected));
        }
        format_ = detected.format == sam   ? sequence_format::sam
                  : detected.format == bam ? sequence_format::bam
                                           : sequence_format::cram;
        backend_->source = detail::make_hts_source(fp, path_, options_.decompression_threads);
        return;
    }

    BGZF* fp = bgzf_hopen(raw, "r");
    if (fp == nullptr) {
        hclose_abruptly(raw);
        throw input_error(path_ + ": cannot read: not a readable (compressed) text file");
    }
    bool const is_bgzf = fp->is_compressed && !fp->is_gzip;
    // The EOF marker of a seekable BGZF file is checked up front (threaded reading cannot see it at
    // the end); for a pipe text_stream checks it at the end of a single-threaded read.
    if (is_bgzf && bgzf_check_EOF(fp) == 0) {
        bgzf_close(fp);
        throw input_error(path_ + ": truncated BGZF data: the end-of-file marker block is missing");
    }
    // Only BGZF can be inflated by several threads (its blocks are independent); plain gzip is one
    // deflate stream. The first block is read before the threads start: htslib 1.16's threaded
    // reader takes a first block it cannot parse for the start of a plain gzip stream, falls back
    // to reading the file so, and accepted an input that a read without threads refuses (found
    // by fuzz/sequence_reader_fuzz;
    // tests/regressions/bgzf_threads_accept_a_bad_first_block_test.cpp). The threads go on from the
    // next block, as hts_source's do after a BAM header.
    if (options_.decompression_threads > 0 && is_bgzf) {
        if (bgzf_peek(fp) < -1) {
            int const error = fp->errcode;
            bgzf_close(fp);
            throw input_error(path_ + ": " + detail::bgzf_failure(error));
        }
        if (bgzf_mt(fp, static_cast<int>(options_.decompression_threads), 256) != 0) {
            bgzf_close(fp);
            throw input_error(path_ + ": cannot start decompression threads");
        }
    }
    auto stream = std::make_unique<detail::text_stream>(fp, path_);

    // The first non-blank byte decides. Blank prefixes are rare; the look-ahead doubles until it
    // finds a byte or the end of the input.
    size_t want = 4096;
    std::string_view head;
    size_t start = 0;
    for (;;) {
        head = stream->peek(want);
        while (start < head.size() && is_blank(head[start])) ++start;
        if (start < head.size() || head.size() < want) break;
        want *= 2;
    }
    if (start == head.size()) {
        format_ = sequence_format::empty;  // an empty file is an empty input, not an error
        return;
    }
    head = stream->peek(start + 5).substr(start);
    if (head[0] == '>') {
        format_ = sequence_format::fasta;
    } else if (head[0] == '@') {
        format_ = sequence_format::fastq;
    } else if (head.starts_with("LOCUS")) {
        format_ = sequence_format::genbank;
    } else if (head.starts_with("ID   ")) {
        format_ = sequence_format::embl;
    } else if (char const* tool = foreign_compression(head)) {
        std::string const shown = path_ == "-" ? std::string("FILE") : path_;
        throw input_error(path_ + ": " + tool + "-compressed, which qmer does not read (it reads " +
                          "plain, gzip and bgzf files): decompress it into a pipe, e.g. '" + tool +
                          " -dc " + shown + " | qmer ... -'");
    } else {
        throw input_error(path_ + ": not a sequence file: it starts with " +
                          describe_first_byte(static_cast<unsigned char>(head[0])) +
                          ", not '>' (FASTA), '@' (FASTQ), 'LOCUS' (GenBank), 'ID' (EMBL) or " +
                          "SAM/BAM/CRAM");
    }
    if (format_ == sequence_format::fasta || format_ == sequence_format::fastq) {
        backend_->source =
            detail::make_fastx_source(std::move(stream), format_ == sequence_format::fastq);
    } else {
        backend_->source = std::make_unique<flatfile_source>(
            std::move(stream),
            format_ == sequence_format::genbank ? flatfile_format::genbank : flatfile_format::embl);
    }
}

sequence_reader::~sequence_reader() = default;
sequence_reader::sequence_reader(sequence_reader&&) noexcept = default;
sequence_reader& sequence_reader::operator=(sequence_reader&&) noexcept = default;

bool sequence_reader::read_record(record_batch& batch) {
    if (!backend_ || !backend_->source) return false;  // empty, finished or moved-from
    if (!backend_->source->read(batch, records_ + 1)) {
        backend_->source.reset();  // release the file (and any threads) as soon as it is done
        if (backend_->opened) check_unchanged(path_, *backend_->opened);
        return false;
    }
    ++records_;
    return true;
}

bool sequence_reader::next_batch(record_batch& batch) {
    batch.clear(records_ + 1);
    while (batch.empty() ||
           !record_batch::budget_reached(batch.sequence_bytes(), batch.stored_bytes(), batch.size(),
                                         options_.batch_bytes)) {
        if (!read_record(batch)) break;
    }
    return !batch.empty();
}

std::string const& sequence_reader::path() const noexcept {
    return path_;
}
sequence_format sequence_reader::format() const noexcept {
    return format_;
}
uint64_t sequence_reader::records_read() const noexcept {
    return records_;
}
reader_options const& sequence_reader::options() const noexcept {
    return options_;
}

}  // namespace qmer::io
