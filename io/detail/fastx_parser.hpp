#pragma once
// FASTA and FASTQ records: htslib's kseq.h parser (through io/detail/kseq_reader.hpp) with the
// checks kseq itself does not make (sequence_reader.hpp lists them), over any byte_input. The one
// parser of these formats: sequence_reader runs it over a file's stream (fastx_source.cpp), the
// chunked reader over pieces of the text in memory (chunk_parser.cpp), so both give the same
// records and the same problems.
//
// It reports problems as values, not exceptions: only its caller knows a record's number in the
// file (a chunk parser does not, until the chunks before it are counted).

#include <cstdint>
#include <memory>
#include <string>

#include "io/detail/byte_input.hpp"
#include "io/sequence_record.hpp"

namespace qmer::io::detail {

class fastx_parser {
  public:
    enum class step {
        record,  // a record was appended to the batch
        end,     // no record is left
        bad,     // the next record is malformed, or the input failed: problem() says how
    };

    // Reads from input (kept by reference). Throws std::bad_alloc.
    fastx_parser(byte_input& input, bool fastq);
    ~fastx_parser();
    fastx_parser(fastx_parser const&) = delete;
    fastx_parser& operator=(fastx_parser const&) = delete;

    // Appends the next record to batch. After `end` or `bad` it returns the same again; after `bad`
    // the batch holds nothing of the malformed record.
    step next(record_batch& batch);

    // Why the last step was `bad`, in the words that follow "record N: " in an error message.
    std::string const& problem() const noexcept { return problem_; }

    // Where a parser started afresh at this point would go on exactly as this one does: the offset
    // in the input of the first byte this one has not used (less the next record's header
    // character, when kseq has already read it). Meaningful after a `record` step.
    uint64_t resume_offset() const noexcept;

    // FASTA: the last record's sequence ran to the end of the input (rather than stopping at the
    // next header line).
    bool ran_to_end() const noexcept;

  private:
    step fail(std::string what);
    step finish();

    struct kseq_state;  // kseq.h's types exist only in the .cpp
    std::unique_ptr<kseq_state> state_;
    byte_input& input_;
    bool fastq_;
    bool done_ = false;
    std::string problem_;
};

}  // namespace qmer::io::detail
