#include "app/query/panel.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace qmer::app {

bool valid_index_name(std::string_view name) {
    if (name.empty() || name.front() == '.' || name.front() == '-') return false;
    if (name == category_multiple || name == category_none) return false;
    for (char c : name) {
        bool const ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

index_spec parse_index_spec(std::string const& value) {
    if (auto const eq = value.find('='); eq != std::string::npos) {
        std::string name = value.substr(0, eq);
        if (valid_index_name(name)) {
            if (eq + 1 == value.size())
                throw usage_error("-x '" + value + "': no index file after '='");
            return {std::move(name), value.substr(eq + 1)};
        }
    }
    if (value.empty()) throw usage_error("-x: an empty index path");
    std::string name = std::filesystem::path(value).filename().string();
    if (name.size() > 5 && name.ends_with(".qmer")) name.resize(name.size() - 5);
    if (!valid_index_name(name))
        throw usage_error(
            "-x '" + value + "': '" + name +
            "' cannot name an index (letters, digits, '.', '_', '-'; not 'multiple' or 'none'): "
            "give one as -x NAME=FILE");
    return {std::move(name), value};
}

std::vector<index_spec> parse_panel(std::vector<std::string> const& values) {
    std::vector<index_spec> panel;
    for (size_t i = 0; i < values.size(); ++i) {
        index_spec spec = parse_index_spec(values[i]);
        for (size_t j = 0; j < panel.size(); ++j)
            if (panel[j].name == spec.name)
                throw usage_error("two indexes are named '" + spec.name + "' (-x '" + values[j] +
                                  "' and -x '" + values[i] + "'): name them with -x NAME=FILE");
        panel.push_back(std::move(spec));
    }
    return panel;
}

std::string_view category_name(size_t category, std::vector<index_spec> const& panel) {
    if (category < panel.size()) return panel[category].name;
    return category == panel.size() ? category_multiple : category_none;
}

}  // namespace qmer::app
