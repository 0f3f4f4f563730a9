#pragma once
// What a `qmer index` build records and says once its k-mers are stored: the index header's
// account of how it was made, the closing line, and the note on indexes of many levels.

#include <cstdint>
#include <string>
#include <vector>

#include "app/common/progress.hpp"
#include "app/index/reference_reading.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// Who made an index, and from what: recorded in its header.
struct build_origin {
    std::string command_line;
    std::vector<std::string> references;  // added to those an appended index records
};

// The fields every index records of how it was made, from the build's results: the filter's
// parameters, its element count, the k-mers read (with those of earlier builds, for --append),
// the version, the command and the references (added to those already there).
void finish_header(io::index_header& header, build_origin const& origin,
                   std::vector<uint64_t> filter_params, uint64_t elements, uint64_t kmers_scanned);

// The build's last line: k-mers, distinct k-mers, the index's size (the file `output`'s;
// `memory_bytes` where it cannot be read), and what the memory limit made the build do (a
// scratch file in `scratch_folder`, several passes, `how`).
void report_built(std::string const& output, std::string const& scratch_folder,
                  progress_meter& progress, build_counts const& counts, uint64_t elements,
                  double memory_bytes, char const* how = "");

// A grown index answers each absent k-mer from every level (README, "Limitations"): says so when
// an index of 3 levels or more is written, and what gives one level again.
void note_levels(std::string const& output, size_t levels);

}  // namespace qmer::app
