#include "app/query/assignment.hpp"

#include <algorithm>

namespace qmer::app {

reference_groups::reference_groups(io::reference_catalog const& catalog)
    : of_reference(catalog.references.size(), -1) {
    for (size_t i = 0; i < catalog.references.size(); ++i) {
        std::string const& g = catalog.references[i].group;
        if (g.empty()) continue;
        auto const it = std::find(names.begin(), names.end(), g);
        auto const at = static_cast<size_t>(it - names.begin());
        if (it == names.end()) {
            names.push_back(g);
            members.emplace_back();
        }
        members[at].push_back(static_cast<uint32_t>(i));
        of_reference[i] = static_cast<int64_t>(at);
    }
}

reference_assigner::reference_assigner(io::reference_catalog const& catalog,
                                       verdict_table const& verdicts, assignment_rule rule,
                                       double fpr, uint64_t elements)
    : catalog_(catalog), verdicts_(verdicts), rule_(rule), fpr_(fpr), groups_(catalog) {
    for (auto const& r : catalog.references)
        fpr_of_.push_back(elements == 0 ? fpr
                                        : fpr * std::min(1.0, static_cast<double>(r.kmers) /
                                                                  static_cast<double>(elements)));
    // The margin at the index's fpr, the largest any reference's can be: most reads' leads are
    // past it or 0, and only the others need their best's own (a binomial tail a read).
    margin_table_.resize(1024);
    for (uint64_t n = 0; n < margin_table_.size(); ++n)
        margin_table_[n] = rule_.tie_margin(n, fpr_);
}

void reference_assigner::assign(uint64_t kmers, std::span<class_count const> classes,
                                std::vector<uint32_t>& scratch, std::vector<uint32_t>& touched,
                                assignment& out) const {
    out.best.clear();
    out.hits = 0;
    out.category = out.group_category = -1;
    touched.clear();
    // A class's hits count for each of its references: the work is the classes' sizes, not the
    // number of references.
    for (class_count const c : classes) {
        if (c.hits == 0) continue;  // would leave scratch at 0 and be touched twice
        for (uint32_t const r : catalog_.classes.members(c.id)) {
            if (scratch[r] == 0) touched.push_back(r);
            scratch[r] += c.hits;
        }
    }
    uint64_t best = 0;
    for (uint32_t const r : touched)
        if (scratch[r] > best && verdicts_.matches(kmers, scratch[r])) best = scratch[r];
    if (best != 0) {
        uint64_t margin =
            kmers < margin_table_.size() ? margin_table_[kmers] : rule_.tie_margin(kmers, fpr_);
        auto tied = [&](uint64_t m) {
            out.best.clear();
            uint64_t const floor = best > m ? best - m : 0;
            for (uint32_t const r : touched)
                if (scratch[r] >= floor && scratch[r] > 0 && verdicts_.matches(kmers, scratch[r]))
                    out.best.push_back(r);
        };
        tied(margin);
        // One reference holds the most, others trail it within the margin: judged again with
        // that reference's own rate, which only narrows the tie.
        if (out.best.size() > 1 && margin > rule_.clearzone) {
            uint32_t const top = *std::find_if(out.best.begin(), out.best.end(),
                                               [&](uint32_t r) { return scratch[r] == best; });
            bool const alone_at_top =
                std::count_if(out.best.begin(), out.best.end(),
                              [&](uint32_t r) { return scratch[r] == best; }) == 1;
            if (alone_at_top && fpr_of_[top] < fpr_) {
                margin = rule_.tie_margin(kmers, fpr_of_[top]);
                tied(margin);
            }
        }
        std::sort(out.best.begin(), out.best.end());
        out.hits = best;
        if (out.best.size() == 1) {
            out.category = out.best[0];
        } else if (rule_.ties_to_group) {
            int64_t const g = groups_.of_reference[out.best[0]];
            bool const one_group =
                g >= 0 && std::all_of(out.best.begin(), out.best.end(),
                                      [&](uint32_t r) { return groups_.of_reference[r] == g; });
            if (one_group) out.group_category = g;
        }
    }
    for (uint32_t const r : touched) scratch[r] = 0;
}

std::string reference_assigner::best_text(assignment const& a) const {
    if (a.best.empty()) return "-";
    std::string out;
    std::vector<bool> shown(a.best.size(), false);
    auto add = [&](std::string const& name) { out.append(out.empty() ? "" : ",").append(name); };
    // Groups whose every member (two or more) ties, in group order, by their name.
    for (size_t g = 0; g < groups_.names.size(); ++g) {
        auto const& m = groups_.members[g];
        if (m.size() < 2 || !std::ranges::includes(a.best, m)) continue;
        add(groups_.names[g]);
        for (size_t i = 0; i < a.best.size(); ++i)
            if (groups_.of_reference[a.best[i]] == static_cast<int64_t>(g)) shown[i] = true;
    }
    for (size_t i = 0; i < a.best.size(); ++i)
        if (!shown[i]) add(catalog_.references[a.best[i]].name);
    return out;
}

}  // namespace qmer::app
