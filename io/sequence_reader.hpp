#pragma once
// Sequence input: one reader for every format qmer takes, handing out batches of records bounded by
// a byte budget (ARCHITECTURE.md, "Data flow": the serial, in-order input stage).
//
// Formats are recognised from the content, never from the file name: after transparent
// decompression (gzip and BGZF through htslib; zstd, xz and bzip2, told by their magic numbers,
// by io/detail/stream_decoder.hpp; concatenated streams are read whole; one layer only: gzip
// inside zstd is not inflated), the first non-blank byte '>' means FASTA, '@' FASTQ, "LOCUS"
// GenBank, "ID   " EMBL; SAM, BAM and CRAM are recognised by htslib's hts_detect_format (magic
// bytes, SAM header lines), and are read plain or gzip/BGZF-compressed only.
//   - FASTA and FASTQ are parsed by htslib's kseq.h over bgzf_read (the fastest reader measured,
//     ARCHITECTURE.md "Dependencies"), with checks kseq itself does not make: every record must
//     start with the format's header character, FASTQ records need their '+' line and as many
//     quality bytes as bases, FASTA must not contain '+' lines, and no record may hold a NUL byte
//     (binary data; other control bytes pass through, and the k-mer scanner treats them as
//     non-bases). FASTA: multi-line, blank lines allowed; a header with no sequence is an empty
//     record. FASTQ: 4-line and multi-line records.
//   - SAM/BAM/CRAM through hts_open + sam_read1, for unaligned (or aligned) reads: secondary and
//     supplementary records are skipped, and records flagged reverse-strand are
//     reverse-complemented (quality reversed) back to the orientation the sequencer read them in.
//     A file whose first record is flagged paired (0x1, flagged_paired()) holds pairs, as
//     `samtools import -1 R1.fq -2 R2.fq` writes them: paired_reader and chunked_paired_reader read
//     it as pairs by those flags (mate_flags below). A reader of single reads ignores the flags
//     unless told to refuse a file of mixed pairing (reader_options::uniform_pairing).
//   - GenBank and EMBL through SeqAn3 (io/seqan/flatfile_reader), read as characters: the sequence
//     bytes are those of the file (lowercase kept), never squeezed into dna4.
//
// An empty file (or one holding only whitespace, after decompression) is an empty input: format()
// is sequence_format::empty and next_batch() returns false at once. It is not an error.
//
// Errors: every problem throws qmer::input_error with one line naming the file and, where there is
// one, the 1-based record number: a missing, unreadable or directory path, a truncated or corrupt
// gzip/BGZF stream (htslib's stream error state is checked at the end as well as on every read),
// zstd/xz/bzip2 data cut short, damaged, followed by other bytes or asking for more memory than
// its limit (a zstd window over 128 MiB, an xz stream needing over 256 MiB), SAM in zstd/xz/bzip2,
// FASTQ quality length different from sequence length, a missing '+' line, a record that does not
// start with the header character, binary bytes, a bad SAM/BAM/CRAM record. A reader never skips a
// malformed record silently. A regular file that grew, shrank, was rewritten or replaced between
// its opening and its last record is an error too, found when the last record has been read (a file
// still being written, or one truncated at a record boundary, looks well-formed).
//
// Not thread-safe: one reader is used by one thread at a time. The pipelines read through
// io/chunked_reader.hpp, which parses FASTA/FASTQ text on several threads with this reader's
// parser (io/detail/fastx_parser.hpp) and gives the same records and errors, and which keeps this
// reader for the other formats.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/sequence_record.hpp"

namespace qmer::io {

namespace detail {
struct opened_input;
}

enum class sequence_format { empty, fasta, fastq, sam, bam, cram, genbank, embl };

// The rule SAM/BAM/CRAM records' pairing flags are held to (other formats have none). Each
// breach is an input_error naming the file, the record number and the read's name.
enum class mate_flags {
    ignored,  // every record a read of its own, whatever its flags
    // Every record flagged paired (0x1) if the first one is, none if it is not: a file mixing
    // single reads and pairs is refused.
    uniform,
    // Pairs by their flags: every record flagged paired, a first mate (0x40 and not 0x80) followed
    // at once by its second mate (0x80 and not 0x40), the file ending after a second mate.
    mates,
};

// "FASTA", "FASTQ", "SAM", ... ("empty" for an empty input).
std::string_view format_name(sequence_format format) noexcept;

struct reader_options {
    // Extra threads that inflate BGZF blocks (htslib's bgzf_mt; hts_set_threads for BAM/CRAM).
    // 0 inflates in the calling thread. Plain gzip cannot be inflated in parallel and ignores it.
    unsigned decompression_threads = 0;
    // next_batch() stops adding records once the batch holds this many sequence bytes (a batch
    // always takes at least one record, so a single record longer than the budget fills a batch);
    // record_batch::budget_reached has the whole rule.
    size_t batch_bytes = record_batch::default_byte_budget;
    // SAM/BAM/CRAM read as single reads: false ignores the pairing flags (mate_flags::ignored);
    // true refuses a file of mixed pairing (mate_flags::uniform), for a reader that sends a file
    // flagged paired to a paired reader and every other file to a single one. Readers of pairs
    // from one file hold the flags to their own rule whatever this says.
    bool uniform_pairing = false;
};

class sequence_reader {
  public:
    // Opens path ("-" is standard input) and detects its format. Throws input_error.
    explicit sequence_reader(std::string path, reader_options options = {});
    // Reads an input that detail::open_input(path, options) opened (chunked_reader hands the
    // formats it does not cut over to this reader so).
    sequence_reader(std::string path, reader_options options, detail::opened_input&& opened);
    ~sequence_reader();
    sequence_reader(sequence_reader&&) noexcept;
    sequence_reader& operator=(sequence_reader&&) noexcept;
    sequence_reader(sequence_reader const&) = delete;
    sequence_reader& operator=(sequence_reader const&) = delete;

    // Clears batch and fills it with the next records, up to the byte budget. Returns false (and
    // leaves batch empty) when no record is left. batch.first_record_number() is set.
    bool next_batch(record_batch& batch);

    // Appends the next record to batch (whatever it already holds, no budget). Returns false at the
    // end of the input. For readers that need records one at a time (paired input).
    bool read_record(record_batch& batch);

    // Whether the input is SAM/BAM/CRAM whose first record (secondary and supplementary records
    // aside) is flagged paired (0x1). Known from the opening: the first record is read ahead.
    bool flagged_paired() const noexcept { return flagged_paired_; }
    // Sets the rule the pairing flags are held to (the options' one until then). Call it before
    // the first record is read; it changes nothing for other formats.
    void follow_mate_flags(mate_flags rule);

    std::string const& path() const noexcept;
    sequence_format format() const noexcept;
    // Records handed out so far (the 1-based number of the last one).
    uint64_t records_read() const noexcept;
    reader_options const& options() const noexcept;

    // The backends (FASTA/FASTQ, SAM/BAM/CRAM, GenBank/EMBL); defined in sequence_reader.cpp.
    struct backend;

  private:
    void adopt(detail::opened_input&& opened);

    std::string path_;
    reader_options options_;
    sequence_format format_ = sequence_format::empty;
    bool flagged_paired_ = false;
    uint64_t records_ = 0;
    std::unique_ptr<backend> backend_;
};

}  // namespace qmer::io
