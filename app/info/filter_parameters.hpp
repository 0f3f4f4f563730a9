#pragma once
// `qmer info`: a filter's saved parameters by name (app/filters/registry.hpp, describe_filter, from
// each kind's codec) in the text and JSON forms.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/filters/description.hpp"
#include "app/query/report.hpp"

namespace qmer::app {

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
