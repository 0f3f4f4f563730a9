#pragma once
// FASTA and FASTQ records of a file, one at a time: fastx_parser over the file's text_stream, its
// problems thrown as input_error naming the file and the record (see sequence_reader.hpp for the
// rules the parser enforces on top of kseq).

#include <memory>

#include "io/detail/record_source.hpp"
#include "io/detail/text_stream.hpp"

namespace qmer::io::detail {

std::unique_ptr<record_source> make_fastx_source(std::unique_ptr<text_stream> stream, bool fastq);

}  // namespace qmer::io::detail
