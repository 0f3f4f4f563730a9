#include "app/index/reference_sheet.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <utility>

#include "app/query/panel.hpp"
#include "core/error.hpp"

namespace qmer::app {

namespace {

// A read several references match equally is counted under this name by the many-reference query
// (category_ambiguous, app/query/assignment.hpp), so no reference or group may take it. Spelled
// out here so that checking a sheet does not depend on the query's headers.
constexpr std::string_view reserved_ambiguous = "ambiguous";

// A name goes into output file names beside the user's own (out.NAME.fq.gz,
// app/query/output_names.hpp); 200 leaves room for both under the 255 bytes most file systems
// allow a file name.
constexpr size_t max_name_length = 200;

// What a message about a bad name says a name may be.
constexpr char const* name_rule =
    "letters, digits, '.', '_', '-'; not starting with '.' or '-'; not 'none', 'ambiguous' or "
    "'multiple'; at most 200 characters";

std::string bad_name(std::string_view name, char const* what) {
    std::string message = "'";
    message.append(name).append("' cannot name a ").append(what);
    return message.append(" (").append(name_rule).append(")");
}

named_reference parse_r_value(std::string const& value) {
    std::string const origin = "-r " + value;
    auto const eq = value.find('=');
    if (eq == std::string::npos)
        throw usage_error("-r '" + value + "': expected NAME=FILE (a reference under a name)");
    std::string name = value.substr(0, eq);
    if (!valid_reference_name(name))
        throw usage_error("-r '" + value + "': " + bad_name(name, "reference"));
    if (eq + 1 == value.size()) throw usage_error("-r '" + value + "': no file after '='");
    return {std::move(name), "", value.substr(eq + 1), origin};
}

std::vector<std::string_view> tab_fields(std::string_view line) {
    std::vector<std::string_view> fields;
    for (size_t begin = 0;;) {
        size_t const tab = line.find('\t', begin);
        fields.push_back(line.substr(begin, tab - begin));
        if (tab == std::string_view::npos) return fields;
        begin = tab + 1;
    }
}

// In a sheet, '-' could mean standard input (as on qmer's command line) or a file named '-' beside
// the sheet: it is refused rather than guessed, and ./- names the file. A relative file is taken
// from the sheet's folder, not the working directory, so the sheet works wherever qmer runs.
std::string sheet_file(std::string_view file, std::string const& sheet_path,
                       std::string const& where) {
    if (file.empty()) throw input_error(where + ": the file (second field) is empty");
    if (file == "-")
        throw input_error(where +
                          ": '-' (standard input) cannot be in a sheet; write ./- for a "
                          "file named '-'");
    std::filesystem::path const path(file);
    if (path.is_absolute()) return std::string(file);
    return (std::filesystem::path(sheet_path).parent_path() / path).string();
}

named_reference parse_sheet_line(std::string_view line, std::string const& sheet_path,
                                 size_t line_number) {
    std::string const where = sheet_path + ":" + std::to_string(line_number);
    auto const fields = tab_fields(line);
    if (fields.size() != 2 && fields.size() != 3)
        throw input_error(where + ": " + std::to_string(fields.size()) +
                          " field(s) where 2 or 3 tab-separated fields are expected "
                          "(NAME<TAB>FILE or NAME<TAB>FILE<TAB>GROUP)");
    if (!valid_reference_name(fields[0]))
        throw input_error(where + ": " + bad_name(fields[0], "reference"));
    // An empty third field is no group: a spreadsheet writes the empty cell of a row without one.
    std::string_view const group = fields.size() == 3 ? fields[2] : std::string_view();
    if (!group.empty() && !valid_reference_name(group))
        throw input_error(where + ": " + bad_name(group, "group"));
    return {std::string(fields[0]), std::string(group), sheet_file(fields[1], sheet_path, where),
            where};
}

// Windows editors and spreadsheets may start a UTF-8 file with a byte-order mark, which would
// otherwise make the first name invalid.
std::string_view without_bom(std::string_view line) {
    constexpr std::string_view bom = "\xEF\xBB\xBF";
    return line.starts_with(bom) ? line.substr(bom.size()) : line;
}

// Refuses two references under one name, and a group under a reference's name.
void check_names(std::vector<named_reference> const& references) {
    std::unordered_map<std::string_view, size_t> by_name;
    for (size_t i = 0; i < references.size(); ++i) {
        auto const [it, added] = by_name.emplace(references[i].name, i);
        if (!added)
            throw usage_error("two references are named '" + references[i].name + "' (" +
                              references[it->second].origin + " and " + references[i].origin + ")");
    }
    for (auto const& r : references) {
        if (r.group.empty()) continue;
        if (auto const it = by_name.find(r.group); it != by_name.end())
            throw usage_error("group '" + r.group + "' (" + r.origin +
                              ") has the name of a reference (" + references[it->second].origin +
                              "): the query's best column may name either, so they must differ");
    }
}

}  // namespace

bool valid_reference_name(std::string_view name) {
    return name.size() <= max_name_length && name != reserved_ambiguous && valid_index_name(name);
}

std::vector<named_reference> parse_named_references(std::vector<std::string> const& values) {
    std::vector<named_reference> references;
    references.reserve(values.size());
    for (auto const& value : values) references.push_back(parse_r_value(value));
    return references;
}

std::vector<named_reference> read_reference_sheet(std::string const& sheet_path) {
    std::ifstream in(sheet_path, std::ios::binary);
    if (!in) throw input_error("'" + sheet_path + "': cannot read it");
    std::vector<named_reference> references;
    std::string text;
    for (size_t line_number = 1; std::getline(in, text); ++line_number) {
        std::string_view line = line_number == 1 ? without_bom(text) : std::string_view(text);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line.empty() || line.front() == '#') continue;
        references.push_back(parse_sheet_line(line, sheet_path, line_number));
    }
    // A read error (a folder opens, then fails on the first read) ends getline as the end does.
    if (in.bad()) throw input_error("'" + sheet_path + "': cannot read it");
    if (references.empty())
        throw input_error("'" + sheet_path +
                          "': holds no reference (one a line: NAME<TAB>FILE or "
                          "NAME<TAB>FILE<TAB>GROUP)");
    return references;
}

std::vector<named_reference> collect_references(std::string const& sheet_path,
                                                std::vector<std::string> const& r_values) {
    std::vector<named_reference> references;
    if (!sheet_path.empty()) references = read_reference_sheet(sheet_path);
    auto from_r = parse_named_references(r_values);
    references.insert(references.end(), std::make_move_iterator(from_r.begin()),
                      std::make_move_iterator(from_r.end()));
    if (references.size() > max_references)
        throw usage_error(std::to_string(references.size()) + " references, more than the " +
                          std::to_string(max_references) + " one index can take");
    check_names(references);
    return references;
}

}  // namespace qmer::app
