#pragma once
// Cuts the decompressed text of a FASTA or FASTQ file into pieces of about `target` bytes, each cut
// made where a record starts, for chunk_parser to parse on any thread. The work that stays serial:
// reading the text, and looking at a few lines after the target to place the cut.
//
// Where a cut goes:
//   - FASTA: before the first line starting with '>' at or after the target. A record longer than
//     the target makes a longer piece (a chromosome is one piece), never two.
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
};

class chunk_cutter {
  public:
    // Reads input (kept by reference). target >= 1; most >= target.
    chunk_cutter(byte_input& input, bool fastq, size_t target, size_t most);

    // Replaces bytes with the next piece of the text; false when the text is used up.
    bool cut(byte_buffer& bytes, cut_piece& piece);

  private:
    bool read_more(byte_buffer& bytes);

    byte_input& input_;
    bool fastq_;
    size_t target_;
    size_t most_;
    size_t blind_from_;  // the size from which a FASTQ piece with no record seen is cut blind
    byte_buffer tail_;   // text read past the last cut: the start of the next piece
    bool tail_verified_ = true;
    bool ended_ = false;
};

}  // namespace qmer::io::detail
