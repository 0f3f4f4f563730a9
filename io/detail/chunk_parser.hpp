#pragma once
// The records of a piece of FASTA/FASTQ text held in memory, exactly as the serial reader gives
// them: the same parser (fastx_parser) over the same bytes, and a rule for the one place where a
// piece differs from the whole file, its end.
//
// A piece ends where the chunker cut the file, which it did by looking at a few lines only, so the
// cut may fall inside a record. The parser shows it: a record cut short asks for bytes past the
// piece. The piece is whole (its records are the file's, and the next piece starts a record
// afresh) only if the parse stopped there in one of two ways the serial parser reaches too:
//   - between records (FASTQ, or blank lines): the parser was looking for the next header;
//   - FASTA: a record's sequence lines ran to the end of the piece, which ends with a line end and
//     is followed by a '>' line (the chunker cuts FASTA only before '>' at a line start), where
//     the serial parser ends that record the same way.
// Otherwise the piece is incomplete: its records up to the last whole one stand, and the rest
// must be parsed again together with the text that follows. A malformed record is a result only
// if the parser did not run past the piece to find it: otherwise the text that follows might
// complete it, and the piece is incomplete too. The last piece of a file is always conclusive.

#include <cstddef>
#include <string>
#include <string_view>

#include "io/sequence_record.hpp"

namespace qmer::io::detail {

struct chunk_outcome {
    enum class ending {
        whole,       // every record of the piece is in the batch
        incomplete,  // the records from byte `resume` on need the text that follows
        bad,         // the record after the batch's last is malformed: `problem`
    };
    ending how = ending::whole;
    size_t resume = 0;
    std::string problem;
};

// Appends the records of the text `first` then `second` (one run of bytes) to batch. `last`: the
// text runs to the end of the input, where its stream failed if `failure` is not empty (the
// message, as text_stream::failure() gave it). Throws only std::bad_alloc.
chunk_outcome parse_chunk(std::string_view first, std::string_view second, bool fastq, bool last,
                          std::string const& failure, record_batch& batch);

}  // namespace qmer::io::detail
