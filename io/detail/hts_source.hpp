#pragma once
// Reads of SAM, BAM and CRAM files through htslib's sam_read1: secondary and supplementary records
// are skipped (they repeat a read), reverse-strand records are turned back to the read's own
// orientation. Aligned files work too; the alignment is ignored. The first of the records left is
// read at the opening, so that whether the file holds pairs (its flag 0x1) is known before any is
// handed out; the pairing flags are then held to the rule the reader sets (mate_flags).

#include <memory>
#include <string>

#include "io/detail/record_source.hpp"

struct htsFile;

namespace qmer::io::detail {

// Takes ownership of fp (opened by hts_hopen). threads > 0 adds decompression threads.
std::unique_ptr<record_source> make_hts_source(htsFile* fp, std::string path, unsigned threads);

}  // namespace qmer::io::detail
