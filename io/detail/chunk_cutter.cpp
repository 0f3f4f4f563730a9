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

chunk_cutter::chunk_cutter(byte_input& input, bool fastq, size_t target, size_t most)
    : input_(input),
      fastq_(fastq),
      target_(target < 1 ? 1 : target),
      most_(most),
      blind_from_(most) {}

bool chunk_cutter::cut(byte_buffer& bytes, cut_piece& piece) {
    if (ended_) return false;
    bytes.swap(tail_);  // the piece starts with what the last cut left over
    tail_.clear();
    piece.starts_verified = tail_verified_;
    piece.last = false;
    piece.failure.clear();
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
        if (!read_more(bytes)) {
            ended_ = true;
            piece.last = true;
            if (input_.failed()) piece.failure = input_.failure();
            return true;
        }
    }
}

bool chunk_cutter::read_more(byte_buffer& bytes) {
    char* const to = bytes.reserve_more(kseq_buffer_bytes);
    int const got = input_.read(to, kseq_buffer_bytes);
    if (got <= 0) return false;
    bytes.commit(static_cast<size_t>(got));
    return true;
}

}  // namespace qmer::io::detail
