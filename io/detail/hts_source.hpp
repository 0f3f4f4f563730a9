#pragma once
// Reads of SAM, BAM and CRAM files through htslib's sam_read1: secondary and supplementary records
// are skipped (they repeat a read), reverse-strand records are turned back to the read's own
// orientation. Aligned files work too; the alignment is ignored.

#include <memory>
#include <string>

#include "io/detail/record_source.hpp"

struct htsFile;

namespace qmer::io::detail {

// Takes ownership of fp (opened by hts_hopen). threads > 0 adds decompression threads.
std::unique_ptr<record_source> make_hts_source(htsFile* fp, std::string path, unsigned threads);

}  // namespace qmer::io::detail
