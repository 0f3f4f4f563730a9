#pragma once
// What the FASTA/FASTQ parser (fastx_parser) reads its bytes from: the decompressed stream of a
// file (text_stream), or a piece of that text held in memory (memory_input, for parsing chunks of a
// file on several threads). The parser gives the same records and the same errors over either,
// which is what lets a chunk be parsed anywhere.

#include <string>

namespace qmer::io::detail {

class byte_input {
  public:
    virtual ~byte_input() = default;
    // Copies up to n bytes to buf; returns the count, 0 at the end of the input or after an error.
    // Never throws: it is called from inside kseq.h's C macros, which cannot be unwound cleanly.
    virtual int read(void* buf, int n) noexcept = 0;
    // True once reading failed (truncated or corrupt gzip, an I/O error); read() then returns 0.
    virtual bool failed() const noexcept = 0;
    // What failed, for a message ("truncated or corrupt gzip/BGZF data (htslib error 5)").
    virtual std::string failure() const = 0;
};

}  // namespace qmer::io::detail
