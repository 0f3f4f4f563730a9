#pragma once
// `qmer info`: a filter's saved parameters by name. The index header stores them as integers, array
// by array (app/filters/persistence.hpp); these helpers name them for the text and JSON forms.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/query/report.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// One parameter by name; `value` is written as it stands in JSON (a number or true/false).
struct named_value {
    std::string name;
    std::string value;
};
using named_values = std::vector<named_value>;

inline std::string number(double x, char const* format = "%.6g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

// A quotient filter table: its slots (canonical ones, the rest is the overflow past the last
// canonical slot), remainder bits, elements and fill (elements / canonical slots).
inline named_values quotient_table(uint64_t canonical, uint64_t total, uint64_t remainder_bits,
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
inline std::pair<named_values, std::vector<named_values>> describe_filter(
    io::index_file const& index) {
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
inline std::string as_text(named_values const& values) {
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

inline std::string as_json(named_values const& values) {
    std::string out = "{";
    for (size_t i = 0; i < values.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(values[i].name) + ": " + values[i].value;
    return out + "}";
}

}  // namespace qmer::app
