#include "io/detail/chunk_cutter.hpp"

#include <algorithm>
#include <cstring>

#include "io/detail/kseq_reader.hpp"

namespace qmer::io::detail {
namespace {

constexpr size_t none = std::string_view::npos;

// The offset of the '\n' that ends the line starting at p, or `none` when the text stops first.
size_t line_end(std::string_view text, size_t p) {
    if (p >= text.size()) return none;
    void const* hit = std::memchr(text.data() + p, '\n', text.size() - p);
    return hit == nullptr ? none : static_cast<size_t>(static_cast<char const*>(hit) - text.data());
}

enum class verdict { yes, no, unknown };

// Whether a FASTQ record of four lines starts at p (text[p] == '@'); unknown while the text stops
// before that is settled. Line lengths are compared with their '\r', if any: a CRLF file has it on
// both lines.
verdict fastq_record_at(std::string_view text, size_t p) {
    size_t const header_end = line_end(text, p);
    if (header_end == none) return verdict::unknown;
    size_t const sequence = header_end + 1;
    // kseq ends a sequence at a line starting with '@' or '+' (and '>').
    if (sequence < text.size() && (text[sequence] == '@' || text[sequence] == '+'))
        return verdict::no;
    size_t const sequence_end = line_end(text, sequence);
    if (sequence_end == none) return verdict::unknown;
    size_t const plus = sequence_end + 1;
    if (plus >= text.size()) return verdict::unknown;
    if (text[plus] != '+') return verdict::no;
    size_t const plus_end = line_end(text, plus);
    if (plus_end == none) return verdict::unknown;
    size_t const quality = plus_end + 1;
    size_t const length = sequence_end - sequence;
    size_t const quality_end = line_end(text, quality);
    if (quality_end == none)
        return text.size() - std::min(quality, text.size()) > length ? verdict::no
                                                                     : verdict::unknown;
    return quality_end - quality == length ? verdict::yes : verdict::no;
}

// The first line start at or after from (from >= 1), or `none` when the text stops first.
size_t line_start_from(std::string_view text, size_t from) {
    if (from > text.size()) return none;
    if (text[from - 1] == '\n') return from;
    size_t const end = line_end(text, from);
    return end == none ? none : end + 1;
}

// A split looks for its place among this many bytes at the end of a piece (a few lines); where
// none is there (no sequence line in them), the piece grows and the split is tried again.
constexpr size_t split_window = 4096;

bool line_break(char c) {
    return c == '\n' || c == '\r';
}

// kseq ends a FASTA record at a line starting with one of these (the next record's header).
bool ends_sequence(char c) {
    return c == '>' || c == '@' || c == '+';
}

// The start of the last line starting with '>' that starts before `end`, or `none`. memrchr: a
// piece that continues a record is searched whole, once per piece, in the serial stage.
size_t last_header_before(std::string_view text, size_t end) {
    while (end > 0) {
        void const* hit = ::memrchr(text.data(), '>', end);
        if (hit == nullptr) return none;
        size_t const at = static_cast<size_t>(static_cast<char const*>(hit) - text.data());
        if (at == 0 || text[at - 1] == '\n') return at;
        end = at;
    }
    return none;
}

// Up to `want` of the sequence bytes kseq keeps from text[from, to) (line breaks, and a '\r'
// ending a line, dropped), the last ones, prepended to `out`; returns how many are still wanted.
size_t kept_bytes_before(std::string_view text, size_t from, size_t to, size_t want,
                         std::string& out) {
    std::string reversed;
    for (size_t p = to; p > from && reversed.size() < want; --p) {
        char const c = text[p - 1];
        if (c == '\n' || (c == '\r' && p < text.size() && text[p] == '\n')) continue;
        reversed.push_back(c);
    }
    out.insert(out.begin(), reversed.rbegin(), reversed.rend());
    return want - reversed.size();
}

}  // namespace

cut_search find_fastq_cut(std::string_view text, size_t from) {
    size_t p = line_start_from(text, from);
    if (p == none) return {false, from};
    for (;;) {
        // p is a line start: looking on from it later needs nothing before it.
        if (p >= text.size()) return {false, p};
        if (text[p] == '@') {
            verdict const v = fastq_record_at(text, p);
            if (v == verdict::yes) return {true, p};
            if (v == verdict::unknown) return {false, p};
        }
        size_t const end = line_end(text, p);
        if (end == none) return {false, p};
        p = end + 1;
    }
}

cut_search find_fasta_cut(std::string_view text, size_t from) {
    size_t p = from;
    while (p < text.size()) {
        void const* hit = std::memchr(text.data() + p, '>', text.size() - p);
        if (hit == nullptr) break;
        size_t const at = static_cast<size_t>(static_cast<char const*>(hit) - text.data());
        if (text[at - 1] == '\n') return {true, at};
        p = at + 1;
    }
    return {false, std::max(from, text.size())};
}

chunk_cutter::chunk_cutter(byte_input& input, bool fastq, size_t target, size_t most,
                           record_split split)
    : input_(input),
      fastq_(fastq),
      target_(target < 1 ? 1 : target),
      most_(most),
      blind_from_(most),
      split_(fastq ? record_split{} : split) {}

bool chunk_cutter::cut(byte_buffer& bytes, cut_piece& piece) {
    if (ended_) return false;
    bytes.swap(tail_);  // the piece starts with what the last cut left over
    tail_.clear();
    piece.starts_verified = tail_verified_;
    piece.last = false;
    piece.failure.clear();
    piece.continues = continues_;
    piece.lead.swap(lead_);
    piece.carried = carried_;
    piece.cut_inside = false;
    continues_ = false;
    lead_.clear();
    carried_ = 0;
    tail_verified_ = true;
    size_t look_from = target_;
    for (;;) {
        if (bytes.size() >= look_from) {
            cut_search const found = fastq_ ? find_fastq_cut(bytes.view(), look_from)
                                            : find_fasta_cut(bytes.view(), look_from);
            if (found.found) {
                tail_.assign(bytes.view().substr(found.at));
                bytes.truncate(found.at);
                blind_from_ = most_;
                return true;
            }
            look_from = found.at;
            if (fastq_ && bytes.size() >= blind_from_) {
                tail_verified_ = false;  // cut blind, where the text stops
                blind_from_ = target_;
                return true;
            }
        }
        if (split_.bytes != 0 && bytes.size() >= split_.bytes &&
            split_record(bytes, piece.continues,
                         std::string_view(piece.lead).substr(piece.lead.size() - piece.carried))) {
            piece.cut_inside = true;
            return true;
        }
        if (!read_more(bytes)) {
            ended_ = true;
            piece.last = true;
            if (input_.failed()) piece.failure = input_.failure();
            return true;
        }
    }
}

// No line starting with '>' lies at or after the target (a cut there would have been made): the
// cut goes into the piece's last record. `continues`: the piece continues a record, whose
// sequence bytes `carried` (its lead's) precede its text.
bool chunk_cutter::split_record(byte_buffer& bytes, bool continues, std::string_view carried) {
    std::string_view const text = bytes.view();
    size_t const lowest = text.size() > split_window ? text.size() - split_window : 1;
    for (size_t at = text.size() - 1; at >= lowest; --at) {
        // Between two bytes of one line: the piece cut short then ends that line where kseq would
        // have gone on reading it, and no line end (nor a '\r' before one) moves.
        if (line_break(text[at - 1]) || line_break(text[at])) continue;
        size_t const header = last_header_before(text, at);
        size_t sequence_from = 0;
        std::string header_line;
        if (header != none) {
            size_t const header_end = line_end(text, header);
            if (header_end == none || header_end >= at) return false;  // a cut in a header line
            sequence_from = header_end + 1;
            header_line.assign(text.substr(header, sequence_from - header));
        } else if (continues) {
            header_line = header_;
        } else {
            return false;  // text before the first header: the parser reports it whole
        }
        std::string kept;
        size_t const wanted = kept_bytes_before(text, sequence_from, at, split_.carry, kept);
        if (header == none && wanted != 0)
            kept.insert(0, carried.substr(carried.size() - std::min(wanted, carried.size())));
        // The next piece's first sequence line starts with kept (or text[at]): a byte that would
        // end the record there is no place for a cut.
        if (ends_sequence(kept.empty() ? text[at] : kept.front())) continue;
        header_ = std::move(header_line);
        carried_ = kept.size();
        lead_ = header_ + kept;
        continues_ = true;
        tail_.assign(text.substr(at));
        bytes.truncate(at);
        bytes.append("\n");
        return true;
    }
    return false;
}

bool chunk_cutter::read_more(byte_buffer& bytes) {
    char* const to = bytes.reserve_more(kseq_buffer_bytes);
    int const got = input_.read(to, kseq_buffer_bytes);
    if (got <= 0) return false;
    bytes.commit(static_cast<size_t>(got));
    return true;
}

}  // namespace qmer::io::detail
