// kseq.h (through kseq_reader.hpp) comes first, before any C++ standard header: libstdc++'s
// headers make glibc's <ctype.h> leave out its inline isspace(), and kseq's name parser then calls
// isspace() through the PLT for every header byte (measured: 8% of the reader's time on 150 bp
// FASTQ).
#include "io/detail/kseq_reader.hpp"

#include "io/detail/fastx_source.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace {

using text_stream_ptr = qmer::io::detail::text_stream*;

int read_text(text_stream_ptr stream, void* buf, int n) {
    return stream->read(buf, n);
}

// kseq.h's types get external-linkage names from the macro; the anonymous namespace keeps them out
// of other translation units that instantiate kseq over another stream type (bench/io).
QMER_KSEQ_INIT(text_stream_ptr, read_text)

}  // namespace

namespace qmer::io::detail {
namespace {

// kseq only tests last_char for zero ("look for the next header") or non-zero ("the header
// character was already consumed"). This value, which is neither '>' nor '@', marks that this
// parser consumed and checked the header character itself; if it is still there after kseq_read,
// the record ended at the end of the input rather than at the next header.
constexpr int header_consumed = 1;

// Binary data is recognised by NUL bytes: every binary format (compressed data, executables,
// images) has them and no text does. A check of every byte for control characters was measured at
// ~15% of the reader's time on 150 bp FASTQ (over the 10% budget of issue 3), memchr at ~2%; other
// control bytes can only end k-mer runs in the scanner, never turn into bases.
bool has_nul(char const* p, size_t n) noexcept {
    return n != 0 && std::memchr(p, 0, n) != nullptr;
}

std::string describe_byte(int c) {
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(c) & 0xffu);
    return std::string("byte ") + hex;
}

class fastx_source final : public record_source {
  public:
    fastx_source(std::unique_ptr<text_stream> stream, bool fastq)
        : stream_(std::move(stream)), seq_(kseq_init(stream_.get())), fastq_(fastq) {
        if (seq_ == nullptr || seq_->f == nullptr || seq_->f->buf == nullptr) {
            throw std::bad_alloc();
        }
    }
    ~fastx_source() override { kseq_destroy(seq_); }
    fastx_source(fastx_source const&) = delete;
    fastx_source& operator=(fastx_source const&) = delete;

    bool read(record_batch& batch, uint64_t number) override {
        if (done_) return false;
        char const header = fastq_ ? '@' : '>';
        int lead = seq_->last_char;
        if (lead == header_consumed) {
            // The previous (FASTA) record ran to the end of the input.
            return finish(number);
        }
        if (lead == 0) {
            // After a FASTQ record (or at the start): kseq would skip anything up to the next '>'
            // or '@'; this parser allows only blank lines there, so nothing is skipped silently.
            do {
                lead = ks_getc(seq_->f);
            } while (lead == '\n' || lead == '\r' || lead == ' ' || lead == '\t');
            if (lead == -1) return finish(number);
        }
        if (lead != header) {
            fail(number, "expected '" + std::string(1, header) +
                             "' at the start of the record, found " + describe_byte(lead) +
                             (fastq_ ? "" : " (a FASTQ record in FASTA?)"));
        }
        seq_->last_char = header_consumed;

        int const length = kseq_read(seq_);
        if (stream_->failed()) fail(number, stream_->failure());
        if (length == -1) fail(number, "the input ends inside the header line");
        if (length == -3) fail(number, "the sequence is too long for kseq (over 2 GiB)");
        // kseq sets last_char to 0 only after reading a '+' line and its quality; -2 also means a
        // '+' line was met (then the quality was short, long or missing).
        bool const had_plus = length == -2 || seq_->last_char == 0;
        std::string_view const name(seq_->name.s, seq_->name.l);
        if (fastq_) {
            if (!had_plus) {
                fail(number, "no '+' line after the sequence of '" + std::string(name) + "'");
            }
            if (length == -2) {
                if (seq_->qual.l == 0 && seq_->seq.l != 0) {
                    fail(number,
                         "the input ends before the quality line of '" + std::string(name) + "'");
                }
                fail(number, "quality length " + std::to_string(seq_->qual.l) +
                                 " differs from sequence length " + std::to_string(seq_->seq.l) +
                                 " in '" + std::string(name) + "'");
            }
        } else if (had_plus) {
            fail(number, "a line starting with '+' inside FASTA record '" + std::string(name) +
                             "' (FASTQ records in a FASTA file?)");
        }

        std::string_view const comment(seq_->comment.s == nullptr ? "" : seq_->comment.s,
                                       seq_->comment.l);
        std::string_view const sequence(seq_->seq.s, seq_->seq.l);
        std::string_view const quality(fastq_ ? seq_->qual.s : "", fastq_ ? seq_->qual.l : 0);
        size_t const total = name.size() + comment.size() + sequence.size() + quality.size();
        char* const start = batch.append_uninitialized(name.size(), comment.size(), sequence.size(),
                                                       quality.size());
        char* out = start;
        // Every field may be empty, and kseq leaves an empty field's buffer null (a FASTA header
        // "> " has no name): memcpy from null is undefined even for 0 bytes (found by fuzzing).
        if (!name.empty()) std::memcpy(out, name.data(), name.size());
        out += name.size();
        if (!comment.empty()) std::memcpy(out, comment.data(), comment.size());
        out += comment.size();
        if (!sequence.empty()) std::memcpy(out, sequence.data(), sequence.size());
        out += sequence.size();
        if (!quality.empty()) std::memcpy(out, quality.data(), quality.size());
        // One memchr over the record's bytes, which the batch holds contiguously.
        if (has_nul(start, total)) {
            batch.pop_back();
            fail(number, binary_message(name, comment, sequence, quality));
        }
        return true;
    }

  private:
    bool finish(uint64_t number) {
        done_ = true;
        if (stream_->failed()) fail(number, stream_->failure());
        return false;
    }

    [[noreturn]] void fail(uint64_t number, std::string const& what) const {
        throw input_error(stream_->path() + ": record " + std::to_string(number) + ": " + what);
    }

    static std::string binary_message(std::string_view name, std::string_view comment,
                                      std::string_view sequence, std::string_view quality) {
        struct field {
            char const* what;
            std::string_view text;
        };
        for (field const& f : {field{"name", name}, field{"comment", comment},
                               field{"sequence", sequence}, field{"quality", quality}}) {
            size_t const at = f.text.find('\0');
            if (at != std::string_view::npos) {
                return "binary data: a NUL byte at position " + std::to_string(at + 1) +
                       " of the " + f.what;
            }
        }
        return "binary data";
    }

    std::unique_ptr<text_stream> stream_;
    kseq_t* seq_;
    bool fastq_;
    bool done_ = false;
};

}  // namespace

std::unique_ptr<record_source> make_fastx_source(std::unique_ptr<text_stream> stream, bool fastq) {
    return std::make_unique<fastx_source>(std::move(stream), fastq);
}

}  // namespace qmer::io::detail
