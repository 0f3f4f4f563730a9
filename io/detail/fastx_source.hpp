#pragma once
// FASTA and FASTQ records through htslib's kseq.h over a text_stream (see sequence_reader.hpp for
// the rules it enforces on top of kseq).

#include <memory>

#include "io/detail/record_source.hpp"
#include "io/detail/text_stream.hpp"

namespace qmer::io::detail {

std::unique_ptr<record_source> make_fastx_source(std::unique_ptr<text_stream> stream, bool fastq);

}  // namespace qmer::io::detail
