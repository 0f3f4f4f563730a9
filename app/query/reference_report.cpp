#include "app/query/reference_report.hpp"

#include <charconv>

namespace qmer::app {

void reference_totals::count(assignment const& a, reference_groups const& groups) {
    if (a.best.empty()) {
        ++none;
        return;
    }
    if (a.category >= 0) {
        ++alone[static_cast<size_t>(a.category)];
        if (int64_t const g = groups.of_reference[static_cast<size_t>(a.category)]; g >= 0)
            ++group_alone[static_cast<size_t>(g)];
        return;
    }
    for (uint32_t const r : a.best) ++shared[r];
    if (a.group_category >= 0)
        ++group_ties[static_cast<size_t>(a.group_category)];
    else
        ++ambiguous;
}

void reference_totals::add(reference_totals const& other) {
    for (size_t i = 0; i < alone.size(); ++i) {
        alone[i] += other.alone[i];
        shared[i] += other.shared[i];
    }
    for (size_t g = 0; g < group_alone.size(); ++g) {
        group_alone[g] += other.group_alone[g];
        group_ties[g] += other.group_ties[g];
    }
    ambiguous += other.ambiguous;
    none += other.none;
}

std::string_view reference_category(assignment const& a, io::reference_catalog const& catalog,
                                    reference_groups const& groups) {
    if (a.best.empty()) return category_none;
    if (a.category >= 0) return catalog.references[static_cast<size_t>(a.category)].name;
    if (a.group_category >= 0) return groups.names[static_cast<size_t>(a.group_category)];
    return category_ambiguous;
}

std::string reference_tsv_preamble(index_description const& index,
                                   io::reference_catalog const& catalog, std::string const& rule,
                                   std::string const& tie_rule,
                                   std::vector<std::string> const& reads) {
    std::string out = tsv_preamble(index, rule, reads);
    out.resize(out.rfind("read_id\t"));  // its column header, replaced below
    out += "# references: " + std::to_string(catalog.references.size()) + " in " +
           std::to_string(catalog.classes.size()) + " classes\n";
    out += "# best: " + tie_rule + "\n";
    out += "read_id\tkmers\thits\tcontainment\tcategory\tbest\n";
    return out;
}

void append_reference_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers,
                               uint64_t hits, std::string_view category, std::string_view best) {
    // The one-index line's first four columns; its match column (0/1) becomes the category.
    append_tsv_line(out, read_id, kmers, hits, false);
    out.resize(out.size() - 2);  // "0\n"
    out.append(category);
    out += '\t';
    out.append(best);
    out += '\n';
}

std::string reference_summary_json(reference_totals const& t, io::reference_catalog const& catalog,
                                   reference_groups const& groups) {
    std::string out = "  \"references\": [";
    for (size_t i = 0; i < catalog.references.size(); ++i) {
        auto const& r = catalog.references[i];
        out += (i ? ",\n    " : "\n    ");
        out += "{\"name\": " + json_string(r.name) + ", \"group\": " + json_string(r.group) +
               ", \"kmers\": " + std::to_string(r.kmers) +
               ", \"unique_kmers\": " + std::to_string(r.unique_kmers) +
               ", \"assigned\": " + std::to_string(t.alone[i]) +
               ", \"shared\": " + std::to_string(t.shared[i]) + "}";
    }
    out += "\n  ],\n  \"groups\": [";
    for (size_t g = 0; g < groups.names.size(); ++g) {
        out += (g ? ",\n    " : "\n    ");
        out += "{\"name\": " + json_string(groups.names[g]) +
               ", \"references\": " + std::to_string(groups.members[g].size()) +
               ", \"assigned_to_a_member\": " + std::to_string(t.group_alone[g]) +
               ", \"ties_within\": " + std::to_string(t.group_ties[g]) + "}";
    }
    out += groups.names.empty() ? "],\n" : "\n  ],\n";
    out += "  \"ambiguous\": " + std::to_string(t.ambiguous) + ",\n";
    out += "  \"none\": " + std::to_string(t.none) + ",\n";
    return out;
}

}  // namespace qmer::app
