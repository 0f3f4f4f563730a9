#include "io/chunked_reader.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace qmer::io {
namespace {

// A problem the parser found in a piece of a record cut into pieces, in the words of the whole
// record: a position in the piece's sequence is `offset` bytes further into the record's.
std::string in_whole_record(std::string const& problem, uint64_t offset) {
    std::string_view const before = "binary data: a NUL byte at position ";
    std::string_view const after = " of the sequence";
    if (!problem.starts_with(before) || !problem.ends_with(after)) return problem;
    std::string const digits =
        problem.substr(before.size(), problem.size() - before.size() - after.size());
    return std::string(before) + std::to_string(std::stoull(digits) + offset) + std::string(after);
}

// Whether the parser may take the end of the piece for the end of its last record: at the end of
// the input, or where the cutter cut inside that record.
bool ends(detail::cut_piece const& piece) {
    return piece.last || piece.cut_inside;
}

}  // namespace

chunk_sizes chunk_sizes::resolved(reader_options const& options, bool fastq) const noexcept {
    chunk_sizes out;
    out.target = target != 0 ? target : (fastq ? 2 : 1) * std::max<size_t>(options.batch_bytes, 1);
    out.most = most != 0 ? std::max(most, out.target) : 8 * out.target;
    return out;
}

chunked_reader::chunked_reader(std::string path, reader_options options, chunk_sizes sizes,
                               detail::record_split split)
    : path_(std::move(path)) {
    detail::opened_input in = detail::open_input(path_, options);
    format_ = in.format;
    if (format_ != sequence_format::fasta && format_ != sequence_format::fastq) {
        serial_.emplace(path_, options, std::move(in));
        flagged_paired_ = serial_->flagged_paired();
        return;
    }
    fastq_ = format_ == sequence_format::fastq;
    chunk_sizes const size = sizes.resolved(options, *fastq_);
    // A FASTQ chunk is at most `most` bytes and a little; a longer one held a long FASTA record.
    release_above_ = 2 * size.most;
    version_ = in.version;
    stream_ = std::move(in.text);
    cutter_ =
        std::make_unique<detail::chunk_cutter>(*stream_, *fastq_, size.target, size.most, split);
}

chunked_reader::~chunked_reader() = default;
chunked_reader::chunked_reader(chunked_reader&&) noexcept = default;
chunked_reader& chunked_reader::operator=(chunked_reader&&) noexcept = default;

void chunked_reader::follow_mate_flags(mate_flags rule) {
    if (serial_) serial_->follow_mate_flags(rule);
}

bool chunked_reader::cut(text_chunk& chunk, record_batch& batch) {
    chunk.text_ = false;
    chunk.parsed_ = false;
    chunk.problem_ = nullptr;
    chunk.continued_ = false;
    chunk.repeated_ = 0;
    if (serial_) {
        try {
            if (serial_->next_batch(batch)) return true;
            serial_.reset();  // release the file as soon as it is done
            return false;
        } catch (...) {
            // Thrown by settle(), after every chunk before this one has been settled.
            chunk.problem_ = std::current_exception();
            serial_.reset();
            return true;
        }
    }
    if (!cutter_) return false;
    chunk.text_ = true;
    chunk.fastq_ = *fastq_;
    bool const got = cutter_->cut(chunk.bytes_, chunk.piece_);
    if (!got || chunk.piece_.last) {
        // Release the file (and any decompression threads) as soon as its text is read.
        cutter_.reset();
        stream_.reset();
    }
    return got;
}

void chunked_reader::parse(text_chunk& chunk, record_batch& batch) {
    if (!chunk.text_ || !chunk.piece_.starts_verified) return;
    batch.clear();
    chunk.outcome_ = detail::parse_chunk(chunk.piece_.lead, chunk.bytes_.view(), chunk.fastq_,
                                         ends(chunk.piece_), chunk.piece_.failure, batch);
    chunk.parsed_ = true;
}

void chunked_reader::settle(text_chunk& chunk, record_batch& batch) {
    settled const after = settle_and_tell(chunk, batch);
    if (after.problem) std::rethrow_exception(after.problem);
}

chunked_reader::settled chunked_reader::settle_and_tell(text_chunk& chunk, record_batch& batch) {
    if (chunk.problem_) return {false, chunk.problem_};
    if (!chunk.text_) {
        records_ += batch.size();
        return {};
    }
    // Whether the text parsed starts with a record continued from the chunk before (chunk_cutter:
    // a record cut into pieces), whose first `carried` sequence bytes that chunk held too.
    bool starts_continued = chunk.piece_.continues;
    size_t carried = chunk.piece_.carried;
    if (chunk.parsed_ && carry_.empty()) {
        carry_over(chunk.piece_.lead, chunk.bytes_.view(), chunk.outcome_);
    } else if (chunk.piece_.continues && carry_.empty()) {
        batch.clear();
        chunk.outcome_ = detail::parse_chunk(chunk.piece_.lead, chunk.bytes_.view(), chunk.fastq_,
                                             ends(chunk.piece_), chunk.piece_.failure, batch);
        carry_over(chunk.piece_.lead, chunk.bytes_.view(), chunk.outcome_);
    } else {
        // The chunk does not start where a record was seen to start, or the chunk before it left
        // part of a record over: its records are those that follow the leftover, parsed here.
        starts_continued = carry_continues_;
        carried = carry_carried_;
        batch.clear();
        chunk.outcome_ = detail::parse_chunk(carry_.view(), chunk.bytes_.view(), chunk.fastq_,
                                             ends(chunk.piece_), chunk.piece_.failure, batch);
        carry_over(carry_.view(), chunk.bytes_.view(), chunk.outcome_);
    }
    // A continued record was counted with the chunk where it starts; one the parser left over
    // whole (its problem showing only with the text that follows) stays counted.
    uint64_t const before = starts_continued ? records_ - 1 : records_;
    bool const left_over = starts_continued && batch.empty() &&
                           chunk.outcome_.how == detail::chunk_outcome::ending::incomplete;
    carry_continues_ = left_over;
    carry_carried_ = left_over ? carried : 0;
    chunk.continued_ = starts_continued && !batch.empty();
    chunk.repeated_ = chunk.continued_ ? carried : 0;
    batch.set_first_record_number(before + 1);
    if (chunk.outcome_.how == detail::chunk_outcome::ending::bad) {
        std::string const number = std::to_string(before + batch.size() + 1);
        std::string problem = chunk.outcome_.problem;
        if (starts_continued && batch.empty())
            problem = in_whole_record(problem, record_bases_ - carried);
        return {false, std::make_exception_ptr(
                           input_error(path_ + ": record " + number + ": " + problem))};
    }
    records_ = before + batch.size() + (left_over ? 1 : 0);
    if (!batch.empty()) {
        uint64_t const last = batch[batch.size() - 1].sequence.size();
        record_bases_ =
            chunk.continued_ && batch.size() == 1 ? record_bases_ + last - carried : last;
    }
    if (chunk.bytes_.capacity() > release_above_) chunk.bytes_.release();
    if (!chunk.piece_.last) return {};
    // After the last record, as sequence_reader checks it.
    settled end{true, nullptr};
    if (version_) {
        try {
            detail::check_unchanged(path_, *version_);
        } catch (input_error const&) {
            end.problem = std::current_exception();
        }
    }
    return end;
}

// Keeps the text after the chunk's last whole record, when there is any, for the next chunk.
void chunked_reader::carry_over(std::string_view first, std::string_view second,
                                detail::chunk_outcome const& outcome) {
    if (outcome.how != detail::chunk_outcome::ending::incomplete) {
        carry_.clear();
        return;
    }
    size_t const from = outcome.resume;
    if (from >= first.size()) {
        carry_.assign(second.substr(from - first.size()));
        return;
    }
    // `first` is carry_ itself: the new leftover is built aside.
    spare_.assign(first.substr(from));
    spare_.append(second);
    carry_.swap(spare_);
}

}  // namespace qmer::io
