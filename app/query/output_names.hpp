#pragma once
// What the name of a reads output (--matched, --unmatched, --split-by-category) decides: the record
// format it holds and the names derived from it (a category's file, each mate's file). Suffixes are
// matched without regard to letter case (clean.FQ.GZ is FASTQ, BGZF-compressed), and the derived
// names keep the case the user wrote. The compression suffix is io::output_file's rule
// (io::compression_suffix_length): ".gz", ".bgz", ".zst".

#include <string>
#include <string_view>

namespace qmer::app {

// The records an output holds: FASTA for .fa/.fasta/.fna/.fas names, FASTQ for .fq/.fastq names,
// and for any other name the reads' own format (FASTQ when a record has qualities).
enum class record_format { as_read, fastq, fasta };
record_format record_format_by_name(std::string_view path) noexcept;

// The length of path's sequence suffix with its compression (".fq.gz", ".FASTA", ".zst"; 0 when it
// has none).
size_t fastx_suffix_length(std::string_view path) noexcept;

// The --split-by-category file of a category: ".NAME" goes before the FASTQ/FASTA suffix (and the
// compression's): out.fq.gz -> out.NAME.fq.gz; a path without one gets ".NAME.fq" (out ->
// out.NAME.fq).
std::string category_path(std::string const& path, std::string_view category);

// "--matched out.fq.gz" with two mate files writes out_1.fq.gz and out_2.fq.gz: pairs stay
// together, mate files stay mate files.
std::string mate_path(std::string const& path, int mate);

}  // namespace qmer::app
