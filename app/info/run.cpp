// qmer info: what an index holds and how it was built, as text or JSON. Reads the header and the
// section geometry only; the checksum is verified as for any load.

#include <bit>
#include <cstdio>
#include <string>

#include "app/common/progress.hpp"
#include "app/filters/registry.hpp"
#include "app/info/filter_parameters.hpp"
#include "app/info/options.hpp"
#include "app/query/report.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"
#include "io/reference_catalog.hpp"

namespace qmer::app {
namespace {

std::string join_params(std::vector<uint64_t> const& params) {
    std::string out;
    for (size_t i = 0; i < params.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(params[i]);
    }
    return out;
}

// The hash scheme in words, and the number of overloaded windows.
uint64_t overloaded_count(hash_scheme_params const& scheme) {
    uint64_t n = 0;
    for (uint64_t w : scheme.overloaded) n += static_cast<uint64_t>(std::popcount(w));
    return n;
}

std::string hash_scheme_text(hash_scheme_params const& scheme) {
    if (scheme.scheme == hash_scheme::plain) return "plain (XXH3 of each k-mer)";
    uint64_t const windows = uint64_t{1} << scheme.window_bits;
    char buf[240];
    std::snprintf(
        buf, sizeof buf,
        "minimizer-local (m = %u, %llu windows, %llu overloaded = %.3f%%, plain there%s)",
        scheme.minimizer_length, static_cast<unsigned long long>(windows),
        static_cast<unsigned long long>(overloaded_count(scheme)),
        100.0 * static_cast<double>(overloaded_count(scheme)) / static_cast<double>(windows),
        scheme.extra_window_bits() != 0 ? "; larger levels read more window bits" : "");
    return buf;
}

// The read-type preset an index was built for: the header's, or "short" (the default, which
// records nothing).
std::string preset_name(io::index_header const& h) {
    return h.preset.empty() ? "short" : h.preset;
}

// What its queries apply without --min-hits/--min-containment, in words.
std::string preset_rule_text(io::index_header const& h) {
    std::string text = "queries apply the default rule";
    if (h.preset_min_containment >= 0)
        text += " and containment >= " + exact_double(h.preset_min_containment);
    return text + " unless given --min-hits/--min-containment";
}

// A many-reference index's references (io/reference_catalog.hpp): each one's name, group, source,
// k-mers and the k-mers of it alone, and the class count.
std::string references_text(io::reference_catalog const& c) {
    std::string out = "references:     " + std::to_string(c.references.size()) + " in " +
                      std::to_string(c.classes.size()) + " classes (" +
                      std::to_string(c.value_bits) + "-bit class ids beside each fingerprint; " +
                      std::to_string(c.escaped) + " fingerprints' ids in the overflow)\n";
    out += "  name\tgroup\tkmers\tunique_kmers\tsource\n";
    for (auto const& r : c.references)
        out += "  " + r.name + "\t" + (r.group.empty() ? "-" : r.group) + "\t" +
               std::to_string(r.kmers) + "\t" + std::to_string(r.unique_kmers) + "\t" + r.source +
               "\n";
    return out;
}
std::string references_json(io::reference_catalog const& c) {
    std::string out = "  \"classes\": " + std::to_string(c.classes.size()) +
                      ",\n  \"class_id_bits\": " + std::to_string(c.value_bits) +
                      ",\n  \"escaped_fingerprints\": " + std::to_string(c.escaped) +
                      ",\n  \"references\": [";
    for (size_t i = 0; i < c.references.size(); ++i) {
        auto const& r = c.references[i];
        out += std::string(i ? "," : "") + "\n    {\"name\": " + json_string(r.name) +
               ", \"group\": " + json_string(r.group) + ", \"source\": " + json_string(r.source) +
               ", \"kmers\": " + std::to_string(r.kmers) +
               ", \"unique_kmers\": " + std::to_string(r.unique_kmers) + "}";
    }
    return out + "\n  ]";
}

}  // namespace

void run_info(info_options const& o) {
    io::index_file const index(o.index);
    auto const& h = index.header();
    uint64_t array_bytes = 0;
    for (auto const& s : index.sections()) array_bytes += s.words.size_bytes();
    double const bits_per_kmer =
        h.elements ? 8.0 * static_cast<double>(array_bytes) / static_cast<double>(h.elements) : 0;
    auto const described = describe_filter(index);
    auto const catalog = reference_catalog_of(index);
    std::string out;
    if (o.json) {
        out += "{\n  \"path\": " + json_string(index.path()) + ",\n";
        out += "  \"format_version\": " + std::to_string(h.format_version) + ",\n";
        out += "  \"qmer_version\": " + json_string(h.qmer_version) + ",\n";
        out += "  \"k\": " + std::to_string(h.k) + ",\n";
        out += "  \"hash_seed\": " + std::to_string(h.hash_seed) + ",\n";
        out += "  \"hash_scheme\": {\"name\": " +
               json_string(h.hash.scheme == hash_scheme::plain ? "plain" : "minimizer-local") +
               ", \"minimizer_length\": " + std::to_string(h.hash.minimizer_length) +
               ", \"window_bits\": " + std::to_string(h.hash.window_bits) +
               ", \"level_window_bits\": " + std::to_string(h.hash.extra_window_bits()) +
               ", \"overloaded_windows\": " + std::to_string(overloaded_count(h.hash)) + "},\n";
        out += "  \"filter\": " + json_string(h.filter) + ",\n";
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", h.fpr);
        out += "  \"fpr\": " + std::string(buf) + ",\n";
        out += "  \"preset\": {\"name\": " + json_string(preset_name(h)) +
               ", \"min_containment\": " +
               (h.preset_min_containment >= 0 ? exact_double(h.preset_min_containment) : "null") +
               "},\n";
        out += "  \"expected\": " + std::to_string(h.expected) + ",\n";
        out += "  \"kmers\": " + std::to_string(h.elements) + ",\n";
        out += std::string("  \"empty\": ") + (h.elements == 0 ? "true" : "false") + ",\n";
        out += "  \"kmers_scanned\": " + std::to_string(h.kmers_scanned) + ",\n";
        out += "  \"file_bytes\": " + std::to_string(index.file_bytes()) + ",\n";
        out += "  \"filter_bytes\": " + std::to_string(array_bytes) + ",\n";
        std::snprintf(buf, sizeof buf, "%.3f", bits_per_kmer);
        out += "  \"bits_per_kmer\": " + std::string(buf) + ",\n";
        out += "  \"filter_parameters\": " + as_json(described.first) + ",\n";
        out += "  \"levels\": [";
        for (size_t i = 0; i < described.second.size(); ++i)
            out += (i ? ", " : "") + as_json(described.second[i]);
        out += "],\n";
        out += "  \"filter_params\": [" + join_params(h.filter_params) + "],\n";
        out += "  \"arrays\": [";
        for (size_t i = 0; i < index.sections().size(); ++i) {
            auto const& s = index.sections()[i];
            out += std::string(i ? ", " : "") + "{\"params\": [" + join_params(s.params) +
                   "], \"words\": " + std::to_string(s.words.size()) + "}";
        }
        out += "],\n";
        out += "  \"command\": " + json_string(h.command) + ",\n";
        out += "  \"inputs\": [";
        for (size_t i = 0; i < h.inputs.size(); ++i)
            out += (i ? ", " : "") + json_string(h.inputs[i]);
        out += "]";
        if (catalog) out += ",\n" + references_json(*catalog);
        out += "\n}\n";
    } else {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "index:          %s\n"
                      "format version: %u (written by qmer %s)\n"
                      "k:              %u\n"
                      "hash seed:      %llu\n"
                      "filter:         %s\n",
                      index.path().c_str(), h.format_version, h.qmer_version.c_str(), h.k,
                      static_cast<unsigned long long>(h.hash_seed), h.filter.c_str());
        out += buf;
        if (!described.first.empty()) out += "  parameters:   " + as_text(described.first) + "\n";
        for (size_t i = 0; i < described.second.size(); ++i) {
            std::string label = "  level " + std::to_string(i) + ":";
            label.resize(std::max<size_t>(label.size() + 1, 16), ' ');
            out += label + as_text(described.second[i]) + "\n";
        }
        if (described.first.empty() && described.second.empty())
            out += "  parameters:   " + join_params(h.filter_params) +
                   " (a layout this qmer does not name)\n";
        out += "fpr bound:      " + number(h.fpr, "%g") + "\n";
        out += "preset:         " + preset_name(h) + " (" + preset_rule_text(h) + ")\n";
        out += "hash scheme:    " + hash_scheme_text(h.hash) + "\n";
        std::snprintf(buf, sizeof buf,
                      "k-mers:         %llu distinct (%llu k-mer positions scanned)\n"
                      "size:           %s on disk, %s of filter arrays, %.2f bits per k-mer\n",
                      static_cast<unsigned long long>(h.elements),
                      static_cast<unsigned long long>(h.kmers_scanned),
                      human_bytes(static_cast<double>(index.file_bytes())).c_str(),
                      human_bytes(static_cast<double>(array_bytes)).c_str(), bits_per_kmer);
        out += buf;
        if (h.elements == 0)
            out +=
                "empty:          yes: its references held no k-mer (--allow-empty); no read "
                "matches it\n";
        out += "built by:       " + h.command + "\n";
        out += "inputs:         " + std::to_string(h.inputs.size()) + "\n";
        for (auto const& in : h.inputs) out += "  " + in + "\n";
        if (catalog) out += references_text(*catalog);
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
        throw output_error("writing to stdout failed");
}

}  // namespace qmer::app
