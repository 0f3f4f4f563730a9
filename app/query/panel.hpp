#pragma once
// A screening panel: several indexes of one k, each under a name, queried in one pass over the
// reads (README, "Screening panels"). Every read gets a category: the name of the one index whose
// verdict matched, `multiple` when several did, `none` when none did. Names appear in TSV column
// headers (hits_NAME), JSON keys and output file names, so they are restricted to a safe alphabet.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qmer::app {

struct index_spec {
    std::string name;
    std::string path;
};

inline constexpr std::string_view category_multiple = "multiple";
inline constexpr std::string_view category_none = "none";

// Letters, digits, '.', '_', '-'; not starting with '.' or '-'; not a reserved category name.
bool valid_index_name(std::string_view name);

// "-x FILE" or "-x NAME=FILE": the name defaults to FILE's name without a trailing ".qmer". A value
// whose part before the first '=' is not a valid name is a path as a whole. Throws usage_error
// when no valid name results.
index_spec parse_index_spec(std::string const& value);

// Parses every -x value and refuses two indexes under one name (usage_error naming both).
std::vector<index_spec> parse_panel(std::vector<std::string> const& values);

// A read's category from how many indexes matched and which (the last one that did).
// Categories are numbered: 0..n-1 the index alone, n multiple, n + 1 none.
inline size_t category_of(size_t matched_count, size_t last_matched, size_t n) {
    return matched_count == 0 ? n + 1 : matched_count == 1 ? last_matched : n;
}
std::string_view category_name(size_t category, std::vector<index_spec> const& panel);

}  // namespace qmer::app
