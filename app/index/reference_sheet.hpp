#pragma once
// The references of a many-reference `qmer index`, each under a name and optionally in a group:
// given on the command line as -r NAME=FILE, or many at once in a sheet of
// NAME<TAB>FILE[<TAB>GROUP] lines (a table a spreadsheet exports, or a script writes, for thousands
// of genomes). A name is a category of the query's TSV, a JSON key and part of output file names,
// so names and groups take the panel's safe alphabet (app/query/panel.hpp). All of it is checked
// here, before any reference is read: a bad line 9,000 should not surface after an hour of reading
// lines 1-8,999.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace qmer::app {

struct named_reference {
    std::string name;    // the reference's name: a TSV category, a JSON key, part of output names
    std::string group;   // "" = none; a set of references (e.g. a species)
    std::string path;    // the file it is read from (any reference format qmer reads)
    std::string origin;  // where it was given, for messages: "-r NAME=FILE" or "SHEET:LINE"
};

// The most references one index takes; more are refused before anything is read.
inline constexpr size_t max_references = 65536;

// Whether a name can be a reference's or a group's: valid_index_name (letters, digits, '.', '_',
// '-'; not starting with '.' or '-'; not 'multiple' or 'none'), not 'ambiguous' either, and at most
// 200 characters (it becomes part of output file names, which file systems cap at 255 bytes).
bool valid_reference_name(std::string_view name);

// The -r NAME=FILE values, in order. Throws usage_error naming the value when it has no '=', its
// part before the first '=' is not a valid name, or the file after it is empty.
std::vector<named_reference> parse_named_references(std::vector<std::string> const& values);

// The sheet's references, in order: one a line, NAME<TAB>FILE or NAME<TAB>FILE<TAB>GROUP (an empty
// GROUP is none). Empty lines and lines starting with '#' are skipped, a trailing '\r' is dropped.
// A relative FILE is relative to the sheet's folder, so that a sheet moves with its genomes.
// Throws input_error "'SHEET': cannot read it" when it cannot be read, "SHEET:LINE: ..." for a bad
// line, and when it holds no reference.
std::vector<named_reference> read_reference_sheet(std::string const& sheet_path);

// The sheet's references (when sheet_path is not empty), then the -r ones, checked together:
// throws usage_error when two share a name (naming both origins), when a group has the name of a
// reference (the query's `best` column may name a group in place of its members, so the two must
// not be confused), or when there are more than max_references. Returns nothing when given
// nothing: whether references are missing is the caller's to say.
std::vector<named_reference> collect_references(std::string const& sheet_path,
                                                std::vector<std::string> const& r_values);

}  // namespace qmer::app
