#include "app/query/output_names.hpp"

#include "io/output_file.hpp"

namespace qmer::app {
namespace {

constexpr std::string_view fastq_suffixes[] = {".fastq", ".fq"};
constexpr std::string_view fasta_suffixes[] = {".fasta", ".fa", ".fna", ".fas"};

bool ends_with_ignoring_case(std::string_view text, std::string_view suffix) noexcept {
    if (text.size() <= suffix.size()) return false;
    text.remove_prefix(text.size() - suffix.size());
    for (size_t i = 0; i < suffix.size(); ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != suffix[i]) return false;
    }
    return true;
}

// The name without its compression suffix.
std::string_view uncompressed(std::string_view path) noexcept {
    return path.substr(0, path.size() - io::compression_suffix_length(path));
}

// The length of the sequence suffix of a name without compression suffix (0 when none).
size_t sequence_suffix_length(std::string_view name) noexcept {
    for (auto s : fastq_suffixes)
        if (ends_with_ignoring_case(name, s)) return s.size();
    for (auto s : fasta_suffixes)
        if (ends_with_ignoring_case(name, s)) return s.size();
    return 0;
}

}  // namespace

record_format record_format_by_name(std::string_view path) noexcept {
    std::string_view const name = uncompressed(path);
    for (auto s : fastq_suffixes)
        if (ends_with_ignoring_case(name, s)) return record_format::fastq;
    for (auto s : fasta_suffixes)
        if (ends_with_ignoring_case(name, s)) return record_format::fasta;
    return record_format::as_read;
}

size_t fastx_suffix_length(std::string_view path) noexcept {
    std::string_view const name = uncompressed(path);
    return path.size() - name.size() + sequence_suffix_length(name);
}

std::string category_path(std::string const& path, std::string_view category) {
    size_t const suffix = fastx_suffix_length(path);
    if (suffix == 0) return path + "." + std::string(category) + ".fq";
    return path.substr(0, path.size() - suffix) + "." + std::string(category) +
           path.substr(path.size() - suffix);
}

std::string mate_path(std::string const& path, int mate) {
    size_t const suffix = fastx_suffix_length(path);
    return path.substr(0, path.size() - suffix) + "_" + std::to_string(mate) +
           path.substr(path.size() - suffix);
}

}  // namespace qmer::app
