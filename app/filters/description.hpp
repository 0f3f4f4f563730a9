#pragma once
// A filter's saved parameters by name, for `qmer info` (text and JSON): each kind names its own
// (filter_codec<K>::describe, app/filters/kinds/), from the integers the index header stores array
// by array (app/filters/persistence.hpp).

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace qmer::app {

// One parameter by name; `value` is written as it stands in JSON (a number, true/false, or a
// quoted string).
struct named_value {
    std::string name;
    std::string value;
};
using named_values = std::vector<named_value>;

// The filter as a whole, then one entry per level (one level for every filter but the expandable
// one).
using filter_description = std::pair<named_values, std::vector<named_values>>;

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

}  // namespace qmer::app
