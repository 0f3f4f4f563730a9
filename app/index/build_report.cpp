#include "app/index/build_report.hpp"

#include <cstdio>
#include <filesystem>

namespace qmer::app {

void finish_header(io::index_header& header, build_origin const& origin,
                   std::vector<uint64_t> filter_params, uint64_t elements, uint64_t kmers_scanned) {
    header.filter_params = std::move(filter_params);
    header.elements = elements;
    header.kmers_scanned = kmers_scanned;
    header.qmer_version = QMER_VERSION;
    header.command = origin.command_line;
    header.inputs.insert(header.inputs.end(), origin.references.begin(), origin.references.end());
}

void report_built(std::string const& output, std::string const& scratch_folder,
                  progress_meter& progress, build_counts const& counts, uint64_t elements,
                  double memory_bytes, char const* how) {
    std::error_code size_error;
    auto const file_bytes = static_cast<double>(std::filesystem::file_size(output, size_error));
    double const bytes = !size_error ? file_bytes : memory_bytes;
    char extra[1024];
    // How the memory limit shaped the build, when it did: a user who sees extra passes may give
    // a --temp-dir with room, or more memory.
    std::string scratch;
    if (counts.scratch_bytes != 0)
        scratch.append("; ")
            .append(human_bytes(static_cast<double>(counts.scratch_bytes)))
            .append(" of k-mers went through a scratch file in '")
            .append(scratch_folder)
            .append("'");
    if (counts.passes > 1)
        scratch.append("; the references were read in ")
            .append(std::to_string(counts.passes))
            .append(" passes to keep to the memory limit");
    std::snprintf(extra, sizeof extra, "%s k-mers, %s distinct, index %s %s (%.2f bits/k-mer)%s%s",
                  human_count(static_cast<double>(counts.kmers.load()), "").c_str(),
                  human_count(static_cast<double>(elements), "").c_str(),
                  human_bytes(bytes).c_str(), size_error ? "in memory" : "on disk",
                  elements ? 8.0 * bytes / static_cast<double>(elements) : 0.0, scratch.c_str(),
                  how);
    progress.finish(extra);
}

void note_levels(std::string const& output, size_t levels) {
    if (levels >= 3)
        std::fprintf(stderr,
                     "qmer: note: '%s' has %zu levels: a query looks up each absent k-mer in all "
                     "%zu, several times the cost of a one-level index; one 'qmer index' run over "
                     "all the references builds one level\n",
                     output.c_str(), levels, levels);
}

}  // namespace qmer::app
