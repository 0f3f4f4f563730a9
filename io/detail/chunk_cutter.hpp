#pragma once
// Cuts the decompressed text of a FASTA or FASTQ file into pieces of about `target` bytes, each cut
// made where a record starts, for chunk_parser to parse on any thread. The work that stays serial:
// reading the text, and looking at a few lines after the target to place the cut.
//
// Where a cut goes:
//   - FASTA: before the first line starting with '>' at or after the target. A record longer than
//     the target makes a longer piece, never two, unless the cutter was given a split size (the
//     references of `qmer index`; never reads, which must reach a query whole): then a piece that
//     reached the split size without a '>' line to cut at is cut inside its last record, between
//     two bytes of a sequence line, so that a chromosome is not held whole as text and again as
//     a parsed record. The next piece `continues` that record: its `lead` (the record's header
//     line and the `carried` sequence bytes before the cut, at most the split's carry, k - 1 for
//     an index) is parsed in front of it, so every k-mer of the record lies whole in exactly one
//     piece. The piece cut short gets a line end after its last byte.
//   - FASTQ: before the first record at or after the target whose four lines are seen whole: a line
//     starting with '@', a sequence line (not starting with '@' or '+'), a line starting with
//     '+', and a quality line as long as the sequence line. A lone '@' proves nothing: quality
//     lines may start with '@' (and '+'). Where no such record shows up within `most` bytes (a
//     multi-line FASTQ file, or records longer than that), the piece is cut where the text stops,
//     as it comes, and the next piece is marked unverified: it is parsed serially, after the
//     piece before it, with the bytes that piece left over (chunked_reader.hpp). Until a record is
//     seen again, the next pieces are cut so from `target` bytes on: a file parsed serially
//     gains nothing from large pieces, and they would hold memory in every chunk in flight.
// A cut is only a claim: chunk_parser checks it, and a wrong one costs a serial parse, never a
// wrong record.
//
// The text is read in requests of kseq's buffer size, the size the serial parser reads in: a
// damaged gzip stream then fails after the same bytes under both, and its damage is reported at the
// same record.

#include <cstddef>
#include <string>
#include <string_view>

#include "io/detail/byte_buffer.hpp"
#include "io/detail/byte_input.hpp"

namespace qmer::io::detail {

// The result of looking for a cut in text: found, at `at`; or not (yet), and then `at` is where to
// look on once more text has been read after it.
struct cut_search {
    bool found = false;
    size_t at = 0;
};

// The first FASTQ record start at or after from (from >= 1: a piece is never cut empty).
cut_search find_fastq_cut(std::string_view text, size_t from);
// The first line starting with '>' at or after from (from >= 1).
cut_search find_fasta_cut(std::string_view text, size_t from);

// What chunk_cutter::cut says of a piece.
struct cut_piece {
    bool starts_verified = true;  // it starts at the input's start or at a cut made by the rules
    bool last = false;            // it runs to the end of the input
    std::string failure;          // last: how the input's stream failed there (empty if it did not)
    // FASTA split inside a record (above): the piece's first record is the previous piece's last,
    // continued. `lead` is the text to parse in front of the piece: the record's header line,
    // then its `carried` sequence bytes before the cut, which the previous piece holds too.
    bool continues = false;
    std::string lead;
    size_t carried = 0;
    // The piece ends where its last record was cut (the next piece continues it): the record
    // ends there as it would at the end of the input, and a problem found in it is the record's
    // whatever follows.
    bool cut_inside = false;
};

// Where a chunk_cutter may cut inside a FASTA record: once a piece holds `bytes` bytes (0: never),
// carrying the last `carry` sequence bytes before the cut into the next piece.
struct record_split {
    size_t bytes = 0;
    size_t carry = 0;
};

class chunk_cutter {
  public:
    // Reads input (kept by reference). target >= 1; most >= target. `split` applies to FASTA only.
    chunk_cutter(byte_input& input, bool fastq, size_t target, size_t most,
                 record_split split = {});

    // Replaces bytes with the next piece of the text; false when the text is used up.
    bool cut(byte_buffer& bytes, cut_piece& piece);

  private:
    bool read_more(byte_buffer& bytes);
    // Cuts bytes inside its last record (above), when a place for it is found near its end.
    bool split_record(byte_buffer& bytes, bool continues, std::string_view carried);

    byte_input& input_;
    bool fastq_;
    size_t target_;
    size_t most_;
    size_t blind_from_;  // the size from which a FASTQ piece with no record seen is cut blind
    byte_buffer tail_;   // text read past the last cut: the start of the next piece
    bool tail_verified_ = true;
    bool ended_ = false;
    record_split split_;
    // The record the last split fell in: its header line and the lead of the next piece.
    std::string header_;
    std::string lead_;
    size_t carried_ = 0;
    bool continues_ = false;  // the next piece continues that record
};

}  // namespace qmer::io::detail
