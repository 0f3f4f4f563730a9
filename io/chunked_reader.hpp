#pragma once
// Sequence input parsed by several threads, so that one serial parser does not bound a query's
// speed-up (bench/scaling/README.md). The text of a FASTA or FASTQ file (plain, gzip or BGZF,
// after decompression) goes through three stages of a pipeline:
//   - cut() (serial, in input order): reads the next piece of raw text and cuts it where a record
//     starts (io/detail/chunk_cutter.hpp). No parsing: cheap enough that one thread feeds many.
//   - parse() (any thread, concurrently, chunks in any order): parses a chunk into a record_batch
//     with the serial reader's own parser (io/detail/chunk_parser.hpp).
//   - settle() (serial, in input order): numbers the chunk's records and finishes what the chunk
//     alone could not. A cut that fell inside a record shows as a chunk whose last record ran past
//     its end; what follows it is then parsed again here, serially, together with the next chunk.
//     A FASTQ file that cannot be cut safely (multi-line records with '@' or '+' starting
//     quality lines, or no record start seen within chunk_sizes::most bytes) is parsed here, so,
//     chunk by chunk: serial parsing, as sequence_reader does it, but never a wrong record.
// The records, their 1-based numbers and every error are those sequence_reader gives for the same
// file: a problem found by any stage is thrown by settle(), in input order, so the error reported
// is the first malformed record of the file whichever thread parsed it, with the same words (the
// file's name, the record number) and the same checks (sequence_reader.hpp: header characters,
// '+' lines, quality lengths, NUL bytes, blank lines, CRLF, truncated gzip/BGZF, the file
// changing while it is read, checked after the last record). A batch is final only once settle()
// has returned; a settle() that throws ends the reading.
//
// Other formats (SAM/BAM/CRAM, GenBank/EMBL) and empty inputs keep sequence_reader: cut() reads
// their next batch of records, and parse() and settle() leave it as it is (a problem cut() meets is
// still thrown by settle()). A SAM/BAM/CRAM file flagged paired (flagged_paired()) is read as
// pairs by handing the opened reader to chunked_paired_reader, which works for standard input too.
//
// One reader feeds one pipeline: cut() and settle() may run at the same time on two threads (they
// share no state), each stage with itself never.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "io/detail/byte_buffer.hpp"
#include "io/detail/chunk_cutter.hpp"
#include "io/detail/chunk_parser.hpp"
#include "io/detail/opened_input.hpp"
#include "io/sequence_reader.hpp"
#include "io/sequence_record.hpp"

namespace qmer::io {

// The sizes of the pieces a chunked_reader cuts text into.
struct chunk_sizes {
    // A chunk ends at the first record that starts this many bytes into it. 0: batches of about
    // the reader's batch budget of sequence, which is the budget's bytes of FASTA text and twice
    // them of FASTQ text (names, '+' lines, qualities).
    size_t target = 0;
    // FASTQ: with no record start seen after this many bytes, cut blind (then parse serially;
    // see above). 0 means 8 times the target: room for reads of a few hundred kb.
    size_t most = 0;

    // These sizes with the defaults filled in, for FASTQ or FASTA text.
    chunk_sizes resolved(reader_options const& options, bool fastq) const noexcept;
};

// One piece of the input on its way through the stages; reused, keeping its memory. A pipeline
// only carries it from stage to stage, with the record_batch it is parsed into.
class text_chunk {
  public:
    // After settle(): the batch's first record is the last record of the chunk before, continued
    // (a FASTA record cut into pieces: the constructor's `split`). Its first repeated_bases() bases
    // are the last ones of that chunk's, repeated so that no k-mer across the cut is lost; the
    // record is counted (records_read()) with the chunk where it starts.
    bool continues_record() const noexcept { return continued_; }
    size_t repeated_bases() const noexcept { return repeated_; }

  private:
    friend class chunked_reader;

    detail::byte_buffer bytes_;
    detail::cut_piece piece_;
    bool text_ = false;  // raw text to parse; otherwise cut() read the records itself
    bool fastq_ = false;
    bool parsed_ = false;  // parse() parsed it
    detail::chunk_outcome outcome_;
    std::exception_ptr problem_;  // a problem cut() met, for settle() to throw in order
    bool continued_ = false;      // settle(): see continues_record()
    size_t repeated_ = 0;
};

class chunked_reader {
  public:
    // Opens path ("-" is standard input) and recognises its format, as sequence_reader does (the
    // same errors). options.batch_bytes sizes the chunks (chunk_sizes above) and, for the formats
    // read serially, the batches. `split`: where a FASTA record may be cut into pieces
    // (io/detail/chunk_cutter.hpp), each after the first carrying the split's `carry` sequence
    // bytes before it. Off by default: only the references of an index are read so (reads reach
    // a query whole). Such a record is still one record, numbered once; the batches of its pieces
    // after the first say they continue it (text_chunk::continues_record()).
    explicit chunked_reader(std::string path, reader_options options = {}, chunk_sizes sizes = {},
                            detail::record_split split = {});
    ~chunked_reader();
    chunked_reader(chunked_reader&&) noexcept;
    chunked_reader& operator=(chunked_reader&&) noexcept;
    chunked_reader(chunked_reader const&) = delete;
    chunked_reader& operator=(chunked_reader const&) = delete;

    // The input stage: the next chunk, or false when the input is used up. For formats read
    // serially, the chunk's records go into batch here. Never throws input_error (see above).
    bool cut(text_chunk& chunk, record_batch& batch);

    // The parsing stage: replaces batch's records with the chunk's, when the chunk can be parsed on
    // its own (otherwise settle() does it). Touches nothing but its arguments.
    static void parse(text_chunk& chunk, record_batch& batch);

    // The settling stage: makes batch the chunk's final records, numbered
    // (batch.first_record_number()), possibly none. Throws input_error for a malformed record, a
    // damaged stream or a file that changed while it was read; the batch then holds the records
    // before the malformed one.
    void settle(text_chunk& chunk, record_batch& batch);

    // What follows a settled chunk's records.
    struct settled {
        bool last = false;  // the input has no record after them
        // What reading on after them throws (a malformed record, a damaged stream; after the
        // last record, a file that changed while it was read), or null.
        std::exception_ptr problem;
    };
    // settle(), telling instead of throwing: for a reader that must put the problems of two inputs
    // in order (chunked_paired_reader). Formats read serially say `last` only through cut().
    settled settle_and_tell(text_chunk& chunk, record_batch& batch);

    std::string const& path() const noexcept { return path_; }
    sequence_format format() const noexcept { return format_; }
    // Records settled so far (the 1-based number of the last one).
    uint64_t records_read() const noexcept { return records_; }
    // Whether chunks of this input are parsed by parse() (FASTA and FASTQ text).
    bool chunked() const noexcept { return fastq_.has_value(); }
    // sequence_reader's: whether the input is SAM/BAM/CRAM whose first record is flagged paired
    // (0x1), and the rule its pairing flags are held to (set before the first cut()).
    bool flagged_paired() const noexcept { return flagged_paired_; }
    void follow_mate_flags(mate_flags rule);

  private:
    void carry_over(std::string_view first, std::string_view second,
                    detail::chunk_outcome const& outcome);

    std::string path_;
    sequence_format format_ = sequence_format::empty;
    bool flagged_paired_ = false;
    std::optional<bool> fastq_;  // set for FASTA/FASTQ (chunked)
    // FASTA/FASTQ: the stream and its cutter (the input stage's), until the last chunk is cut.
    std::unique_ptr<detail::text_stream> stream_;
    std::unique_ptr<detail::chunk_cutter> cutter_;
    std::optional<detail::file_version> version_;
    // The settling stage's: text of settled chunks that belongs to the records after them.
    detail::byte_buffer carry_, spare_;
    size_t release_above_ = 0;  // chunk buffers larger than this are freed once settled
    // Other formats.
    std::optional<sequence_reader> serial_;
    uint64_t records_ = 0;
    uint64_t record_bases_ = 0;  // the sequence bytes so far of the last record settled
    // carry_ starts with a record continued from the chunk before it, which repeats that many
    // sequence bytes.
    bool carry_continues_ = false;
    size_t carry_carried_ = 0;
};

}  // namespace qmer::io
