// kseq.h (through kseq_reader.hpp) comes first, before any C++ standard header: libstdc++'s
// headers make glibc's <ctype.h> leave out its inline isspace(), and kseq's name parser then calls
// isspace() through the PLT for every header byte, a cost the reader's profile shows
// (bench/io/README.md).
#include "io/detail/kseq_reader.hpp"

#include "io/detail/fastx_parser.hpp"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace {

// The input and how many bytes it has handed to kseq (for resume_offset).
struct counted_input {
    qmer::io::detail::byte_input* input;
    uint64_t delivered = 0;
};
using counted_input_ptr = counted_input*;

int read_counted(counted_input_ptr in, void* buf, int n) {
    int const got = in->input->read(buf, n);
    in->delivered += static_cast<uint64_t>(got);
    return got;
}

// kseq.h's types get external-linkage names from the macro; the anonymous namespace keeps them out
// of other translation units that instantiate kseq over another stream type (bench/io).
QMER_KSEQ_INIT(counted_input_ptr, read_counted)

}  // namespace

namespace qmer::io::detail {
namespace {

// kseq only tests last_char for zero ("look for the next header") or non-zero ("the header
// character was already consumed"). This value, which is neither '>' nor '@', marks that this
// parser consumed and checked the header character itself; if it is still there after kseq_read,
// the record ended at the end of the input rather than at the next header.
constexpr int header_consumed = 1;

// Binary data is recognised by NUL bytes: every binary format (compressed data, executables,
// images) has them and no text does. A check of every byte for control characters would cost the
// reader several times what one memchr does (bench/io/README.md); other control bytes can only end
// k-mer runs in the scanner, never turn into bases.
bool has_nul(char const* p, size_t n) noexcept {
    return n != 0 && std::memchr(p, 0, n) != nullptr;
}

std::string describe_byte(int c) {
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(c) & 0xffu);
    return std::string("byte ") + hex;
}

std::string binary_message(std::string_view name, std::string_view comment,
                           std::string_view sequence, std::string_view quality) {
    struct field {
        char const* what;
        std::string_view text;
    };
    for (field const& f : {field{"name", name}, field{"comment", comment},
                           field{"sequence", sequence}, field{"quality", quality}}) {
        size_t const at = f.text.find('\0');
        if (at != std::string_view::npos) {
            return "binary data: a NUL byte at position " + std::to_string(at + 1) + " of the " +
                   f.what;
        }
    }
    return "binary data";
}

}  // namespace

struct fastx_parser::kseq_state {
    counted_input input;
    kseq_t* seq = nullptr;
};

fastx_parser::fastx_parser(byte_input& input, bool fastq)
    : state_(std::make_unique<kseq_state>()), input_(input), fastq_(fastq) {
    state_->input.input = &input;
    state_->seq = kseq_init(&state_->input);
    kseq_t const* seq = state_->seq;
    if (seq == nullptr || seq->f == nullptr || seq->f->buf == nullptr) {
        kseq_destroy(state_->seq);
        throw std::bad_alloc();
    }
}

fastx_parser::~fastx_parser() {
    kseq_destroy(state_->seq);
}

fastx_parser::step fastx_parser::next(record_batch& batch) {
    if (!problem_.empty()) return step::bad;
    if (done_) return step::end;
    kseq_t* const seq = state_->seq;
    char const header = fastq_ ? '@' : '>';
    int lead = seq->last_char;
    if (lead == header_consumed) {
        // The previous (FASTA) record ran to the end of the input.
        return finish();
    }
    if (lead == 0) {
        // After a FASTQ record (or at the start): kseq would skip anything up to the next '>'
        // or '@'; this parser allows only blank lines there, so nothing is skipped silently.
        do {
            lead = ks_getc(seq->f);
        } while (lead == '\n' || lead == '\r' || lead == ' ' || lead == '\t');
        if (lead == -1) return finish();
    }
    if (lead != header) {
        return fail("expected '" + std::string(1, header) + "' at the start of the record, found " +
                    describe_byte(lead) + (fastq_ ? "" : " (a FASTQ record in FASTA?)"));
    }
    seq->last_char = header_consumed;

    int const length = kseq_read(seq);
    if (input_.failed()) return fail(input_.failure());
    if (length == -1) return fail("the input ends inside the header line");
    if (length == -3) return fail("the sequence is too long for kseq (over 2 GiB)");
    // kseq sets last_char to 0 only after reading a '+' line and its quality; -2 also means a
    // '+' line was met (then the quality was short, long or missing).
    bool const had_plus = length == -2 || seq->last_char == 0;
    std::string_view const name(seq->name.s, seq->name.l);
    if (fastq_) {
        if (!had_plus) return fail("no '+' line after the sequence of '" + std::string(name) + "'");
        if (length == -2) {
            if (seq->qual.l == 0 && seq->seq.l != 0)
                return fail("the input ends before the quality line of '" + std::string(name) +
                            "'");
            return fail("quality length " + std::to_string(seq->qual.l) +
                        " differs from sequence length " + std::to_string(seq->seq.l) + " in '" +
                        std::string(name) + "'");
        }
    } else if (had_plus) {
        return fail("a line starting with '+' inside FASTA record '" + std::string(name) +
                    "' (FASTQ records in a FASTA file?)");
    }

    std::string_view const comment(seq->comment.s == nullptr ? "" : seq->comment.s, seq->comment.l);
    std::string_view const sequence(seq->seq.s, seq->seq.l);
    std::string_view const quality(fastq_ ? seq->qual.s : "", fastq_ ? seq->qual.l : 0);
    size_t const total = name.size() + comment.size() + sequence.size() + quality.size();
    char* const start =
        batch.append_uninitialized(name.size(), comment.size(), sequence.size(), quality.size());
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
        return fail(binary_message(name, comment, sequence, quality));
    }
    return step::record;
}

uint64_t fastx_parser::resume_offset() const noexcept {
    kseq_t const* seq = state_->seq;
    kstream_t const* ks = seq->f;
    // kseq advances `begin` past the end of its buffer when a read ends there without a delimiter.
    uint64_t const unread = ks->end > ks->begin ? static_cast<uint64_t>(ks->end - ks->begin) : 0;
    uint64_t const used = state_->input.delivered - unread;
    bool const next_header_read = seq->last_char == '>' || seq->last_char == '@';
    return used - (next_header_read ? 1 : 0);
}

bool fastx_parser::ran_to_end() const noexcept {
    return state_->seq->last_char == header_consumed;
}

fastx_parser::step fastx_parser::fail(std::string what) {
    problem_ = std::move(what);
    return step::bad;
}

fastx_parser::step fastx_parser::finish() {
    done_ = true;
    if (input_.failed()) return fail(input_.failure());
    return step::end;
}

}  // namespace qmer::io::detail
