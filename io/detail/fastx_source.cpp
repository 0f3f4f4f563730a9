#include "io/detail/fastx_source.hpp"

#include <htslib/kseq.h>

#include <cstdio>
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
KSEQ_INIT(text_stream_ptr, read_text)

}  // namespace

namespace qmer::io::detail {
namespace {

// kseq only tests last_char for zero ("look for the next header") or non-zero ("the header
// character was already consumed"). This value, which is neither '>' nor '@', marks that this
// parser consumed and checked the header character itself; if it is still there after kseq_read,
// the record ended at the end of the input rather than at the next header.
constexpr int header_consumed = 1;

// True when every byte is printable ASCII, tab or CR (CR is left by kseq on a lone "\r" line of
// CRLF text). Written branch-free so that it vectorises: it runs over every sequence byte.
bool is_sequence_text(std::string_view s) noexcept {
    unsigned char bad = 0;
    for (unsigned char const c : s) {
        unsigned char const outside = static_cast<unsigned char>(c - 0x20) > 0x5e;  // not ' '..'~'
        bad |= static_cast<unsigned char>(outside & (c != '\t') & (c != '\r'));
    }
    return bad == 0;
}

// Headers may carry UTF-8 in their description; only control bytes and DEL count as binary.
bool is_header_text(std::string_view s) noexcept {
    unsigned char bad = 0;
    for (unsigned char const c : s) {
        bad |= static_cast<unsigned char>(((c < 0x20) & (c != '\t') & (c != '\r')) | (c == 0x7f));
    }
    return bad == 0;
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
        if (!is_sequence_text(sequence) || !is_sequence_text(quality) || !is_header_text(name) ||
            !is_header_text(comment)) {
            fail(number, binary_message(name, comment, sequence, quality));
        }
        batch.append(name, comment, sequence, quality);
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
            bool header;
        };
        for (field const& f :
             {field{"name", name, true}, field{"comment", comment, true},
              field{"sequence", sequence, false}, field{"quality", quality, false}}) {
            bool const ok = f.header ? is_header_text(f.text) : is_sequence_text(f.text);
            if (ok) continue;
            for (size_t i = 0; i < f.text.size(); ++i) {
                bool const bad = f.header ? !is_header_text(f.text.substr(i, 1))
                                          : !is_sequence_text(f.text.substr(i, 1));
                if (bad) {
                    return "binary data: " + describe_byte(static_cast<unsigned char>(f.text[i])) +
                           " at position " + std::to_string(i + 1) + " of the " + f.what;
                }
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
