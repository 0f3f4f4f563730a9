// qmer info: what an index holds and how it was built, as text or JSON. Reads the header and the
// section geometry only; the checksum is verified as for any load.

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/common/progress.hpp"
#include "app/info/options.hpp"
#include "app/query/report.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"

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

// One parameter by name; `value` is written as it stands in JSON (a number or true/false).
struct named_value {
    std::string name;
    std::string value;
};
using named_values = std::vector<named_value>;

std::string number(double x, char const* format = "%.6g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

// A quotient filter table: its slots (canonical ones, the rest is the overflow past the last
// canonical slot), remainder bits, elements and fill (elements / canonical slots).
named_values quotient_table(uint64_t canonical, uint64_t total, uint64_t remainder_bits,
                            uint64_t elements) {
    return {{"slots", std::to_string(canonical)},
            {"overflow_slots", std::to_string(total > canonical ? total - canonical : 0)},
            {"remainder_bits", std::to_string(remainder_bits)},
            {"kmers", std::to_string(elements)},
            {"fill", number(canonical ? static_cast<double>(elements) / canonical : 0, "%.4f")}};
}

// The filter's saved parameters by name (the index header stores them as integers, array by
// array: app/filters/persistence.hpp). The filter as a whole, then one entry per level (one level
// for every filter but the expandable one). Parameters of a shape this qmer does not know are
// left out; `qmer info --json` still lists them raw.
std::pair<named_values, std::vector<named_values>> describe_filter(io::index_file const& index) {
    auto const& sections = index.sections();
    std::string const& kind = index.header().filter;
    named_values filter;
    std::vector<named_values> levels;
    auto params = [&](size_t i) -> std::vector<uint64_t> const& { return sections[i].params; };
    if (kind == "expandable" && !sections.empty() && params(0).size() >= 8) {
        auto const& p = params(0);  // tag, expected, p, delta_grow, cascading, levels, Q0, R0[, m0]
        filter = {{"levels", std::to_string(p[5])},
                  {"fpr_bound", number(std::bit_cast<double>(p[2]))},
                  {"grows_at_fill", number(std::bit_cast<double>(p[3]))},
                  {"cascading", p[4] ? "true" : "false"},
                  {"first_level_remainder_bits", std::to_string(p[7])}};
        for (size_t j = 1; j < sections.size(); ++j) {
            auto const& l = params(j);  // q, r, total, size[, canonical[, layout tag]]
            if (l.size() < 4 || l[0] >= 64) continue;
            uint64_t const canonical = l.size() >= 5 ? l[4] : uint64_t{1} << l[0];
            levels.push_back(quotient_table(canonical, l[2], l[1], l[3]));
            levels.back().push_back(
                {"layout", l.size() == 6 ? "\"rank-select\"" : "\"concurrent\""});
        }
    } else if ((kind == "locally-locked" || kind == "bounded-growing") && sections.size() == 1 &&
               params(0).size() == 6 && params(0)[0] < 64) {
        auto const& p = params(0);  // q, r, total, size, growing, grow_at * 1e6
        levels.push_back(quotient_table(uint64_t{1} << p[0], p[2], p[1], p[3]));
        filter = {{"grows", p[4] ? "true" : "false"}};
        if (p[4]) filter.push_back({"grows_at_fill", number(static_cast<double>(p[5]) / 1e6)});
    } else if ((kind == "linear-probing" || kind == "external-locks") && sections.size() == 1 &&
               params(0).size() == 3 && params(0)[0] < 64) {
        auto const& p = params(0);  // q, r, size
        levels.push_back(quotient_table(uint64_t{1} << p[0], uint64_t{1} << p[0], p[1], p[2]));
    } else if ((kind == "bloom" || kind == "blocked-bloom") && sections.size() == 1 &&
               params(0).size() == 5) {
        auto const& p = params(0);  // bits (or blocks), probes, expected, fpr * 1e12, size
        filter = {{kind == "bloom" ? "bits" : "blocks", std::to_string(p[0])},
                  {"probes", std::to_string(p[1])},
                  {"planned_kmers", std::to_string(p[2])},
                  {"planned_fpr", number(static_cast<double>(p[3]) / 1e12)},
                  {"kmers", std::to_string(p[4])}};
    } else if (kind == "cuckoo" && sections.size() == 1 && params(0).size() == 2) {
        auto const& p = params(0);  // buckets, size
        uint64_t const slots = p[0] * cuckoo_filter::slots_per_bucket;
        filter = {{"buckets", std::to_string(p[0])},
                  {"slots", std::to_string(slots)},
                  {"fingerprint_bits", std::to_string(cuckoo_filter::fingerprint_bits)},
                  {"kmers", std::to_string(p[1])},
                  {"fill", number(slots ? static_cast<double>(p[1]) / slots : 0, "%.4f")}};
    }
    return {filter, levels};
}

// "name value, name value" for the text form ("remainder_bits" as "remainder bits").
std::string as_text(named_values const& values) {
    std::string out;
    for (auto const& [name, value] : values) {
        if (!out.empty()) out += ", ";
        std::string shown = name;
        std::replace(shown.begin(), shown.end(), '_', ' ');
        std::string v = value;
        std::erase(v, '"');
        out += shown + " " + v;
    }
    return out;
}

std::string as_json(named_values const& values) {
    std::string out = "{";
    for (size_t i = 0; i < values.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(values[i].name) + ": " + values[i].value;
    return out + "}";
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
    std::string out;
    if (o.json) {
        out += "{\n  \"path\": " + json_string(index.path()) + ",\n";
        out += "  \"format_version\": " + std::to_string(h.format_version) + ",\n";
        out += "  \"qmer_version\": " + json_string(h.qmer_version) + ",\n";
        out += "  \"k\": " + std::to_string(h.k) + ",\n";
        out += "  \"hash_seed\": " + std::to_string(h.hash_seed) + ",\n";
        out += "  \"filter\": " + json_string(h.filter) + ",\n";
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", h.fpr);
        out += "  \"fpr\": " + std::string(buf) + ",\n";
        out += "  \"expected\": " + std::to_string(h.expected) + ",\n";
        out += "  \"kmers\": " + std::to_string(h.elements) + ",\n";
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
        out += "]\n}\n";
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
        std::snprintf(buf, sizeof buf,
                      "k-mers:         %llu distinct (%llu k-mer positions scanned)\n"
                      "size:           %s on disk, %s of filter arrays, %.2f bits per k-mer\n",
                      static_cast<unsigned long long>(h.elements),
                      static_cast<unsigned long long>(h.kmers_scanned),
                      human_bytes(static_cast<double>(index.file_bytes())).c_str(),
                      human_bytes(static_cast<double>(array_bytes)).c_str(), bits_per_kmer);
        out += buf;
        out += "built by:       " + h.command + "\n";
        out += "inputs:         " + std::to_string(h.inputs.size()) + "\n";
        for (auto const& in : h.inputs) out += "  " + in + "\n";
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
        throw output_error("writing to stdout failed");
}

}  // namespace qmer::app
