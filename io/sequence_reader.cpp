#include "io/sequence_reader.hpp"

#include <istream>
#include <optional>
#include <streambuf>
#include <utility>

#include "core/error.hpp"
#include "io/detail/fastx_source.hpp"
#include "io/detail/opened_input.hpp"
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

}  // namespace

// The backend lives behind record_source; this type only exists to name it in the header.
struct sequence_reader::backend {
    std::unique_ptr<detail::record_source> source;
    // Set for regular files: checked again when the last record has been read.
    std::optional<detail::file_version> opened;
};

sequence_reader::sequence_reader(std::string path, reader_options options)
    : path_(std::move(path)), options_(options), backend_(std::make_unique<backend>()) {
    adopt(detail::open_input(path_, options_));
}

sequence_reader::sequence_reader(std::string path, reader_options options,
                                 detail::opened_input&& opened)
    : path_(std::move(path)), options_(options), backend_(std::make_unique<backend>()) {
    adopt(std::move(opened));
}

void sequence_reader::adopt(detail::opened_input&& opened) {
    format_ = opened.format;
    backend_->opened = opened.version;
    switch (format_) {
        case sequence_format::empty:
            break;
        case sequence_format::fasta:
        case sequence_format::fastq:
            backend_->source = detail::make_fastx_source(std::move(opened.text),
                                                         format_ == sequence_format::fastq);
            break;
        case sequence_format::genbank:
        case sequence_format::embl:
            backend_->source = std::make_unique<flatfile_source>(std::move(opened.text),
                                                                 format_ == sequence_format::genbank
                                                                     ? flatfile_format::genbank
                                                                     : flatfile_format::embl);
            break;
        case sequence_format::sam:
        case sequence_format::bam:
        case sequence_format::cram:
            backend_->source = std::move(opened.records);
            flagged_paired_ = backend_->source->flagged_paired();
            if (options_.uniform_pairing) backend_->source->follow_mate_flags(mate_flags::uniform);
            break;
    }
}

void sequence_reader::follow_mate_flags(mate_flags rule) {
    if (backend_ && backend_->source) backend_->source->follow_mate_flags(rule);
}

sequence_reader::~sequence_reader() = default;
sequence_reader::sequence_reader(sequence_reader&&) noexcept = default;
sequence_reader& sequence_reader::operator=(sequence_reader&&) noexcept = default;

bool sequence_reader::read_record(record_batch& batch) {
    if (!backend_ || !backend_->source) return false;  // empty, finished or moved-from
    if (!backend_->source->read(batch, records_ + 1)) {
        backend_->source.reset();  // release the file (and any threads) as soon as it is done
        if (backend_->opened) detail::check_unchanged(path_, *backend_->opened);
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
