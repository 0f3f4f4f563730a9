#pragma once
// Text that a query of a many-reference index writes (app/query/assignment.hpp decides what):
// the per-read TSV's preamble and lines, and the summary's per-reference table, as Seal's
// refstats and FastQ Screen's table give it. Pure formatting: no I/O here.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/query/assignment.hpp"
#include "app/query/panel.hpp"
#include "app/query/report.hpp"
#include "io/reference_catalog.hpp"

namespace qmer::app {

// Per reference, and per group: the reads (pairs) assigned to it alone and those it shared in a
// tie; the reads called ambiguous (a tie), assigned to a group (--ties-to-group), and none.
struct reference_totals {
    std::vector<uint64_t> alone, shared;  // per reference
    std::vector<uint64_t> group_alone;    // per group: reads assigned to one of its members alone
    std::vector<uint64_t> group_ties;     // per group: ties inside it (--ties-to-group: assigned)
    uint64_t ambiguous = 0, none = 0;

    reference_totals(size_t references = 0, size_t groups = 0)
        : alone(references), shared(references), group_alone(groups), group_ties(groups) {}
    void count(assignment const& a, reference_groups const& groups);
    void add(reference_totals const& other);
};

// The read's category name: a reference, a group (--ties-to-group), ambiguous or none.
std::string_view reference_category(assignment const& a, io::reference_catalog const& catalog,
                                    reference_groups const& groups);

// The # lines (as tsv_preamble's, with the references and the tie rule) and the header:
// read_id kmers hits containment category best, hits and containment being the best's.
std::string reference_tsv_preamble(index_description const& index,
                                   io::reference_catalog const& catalog, std::string const& rule,
                                   std::string const& tie_rule,
                                   std::vector<std::string> const& reads);
void append_reference_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers,
                               uint64_t hits, std::string_view category, std::string_view best);

// The summary's "references", "groups" and "categories" members (each line ending ",\n").
std::string reference_summary_json(reference_totals const& t, io::reference_catalog const& catalog,
                                   reference_groups const& groups);

}  // namespace qmer::app
