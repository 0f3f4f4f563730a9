// qmer merge: the per-read tables of separate `qmer query -x` runs of the same reads, each against
// other indexes, joined into exactly the table and summary one run with all those indexes writes
// (README, "A panel spread over nodes: `qmer merge`"): a panel too large for one machine is queried
// one index per node and gathered here. Each index's verdict is taken again from its hits and the
// rule in the table's preamble, and checked against the category that table gives, so a table
// edited by hand or written under another rule is refused rather than merged into wrong categories.

#include <charconv>
#include <memory>
#include <optional>

#include "app/common/progress.hpp"
#include "app/merge/options.hpp"
#include "app/query/panel.hpp"
#include "app/query/report.hpp"
#include "app/query/verdict.hpp"
#include "core/error.hpp"
#include "io/line_reader.hpp"
#include "io/output_file.hpp"
#include "io/same_file.hpp"

namespace qmer::app {
namespace {

[[noreturn]] void fail(io::line_reader const& in, std::string const& what, uint64_t line = 0) {
    throw input_error("'" + in.path() + "': line " +
                      std::to_string(line ? line : in.line_number()) + ": " + what);
}

template <typename Number>
bool parse_number(std::string_view text, Number& value) {
    auto const r = std::from_chars(text.data(), text.data() + text.size(), value);
    return r.ec == std::errc{} && r.ptr == text.data() + text.size();
}

std::vector<std::string_view> split(std::string_view line, char separator) {
    std::vector<std::string_view> fields;
    size_t start = 0;
    for (;;) {
        size_t const end = line.find(separator, start);
        fields.push_back(line.substr(start, end - start));
        if (end == std::string_view::npos) return fields;
        start = end + 1;
    }
}

// "# index NAME: PATH (k = K, filter = F, fpr = P, k-mers = E, hash seed = S[, preset = R,
// min-containment = C])" back into what wrote it; nullopt when the line is not exactly what
// panel_index_line() writes.
std::optional<index_description> parse_index_line(std::string_view line) {
    constexpr std::string_view lead = "# index ";
    if (!line.starts_with(lead)) return std::nullopt;
    size_t const colon = line.find(": ", lead.size());
    size_t const open = line.rfind(" (k = ");
    if (colon == std::string_view::npos || open == std::string_view::npos || open < colon ||
        !line.ends_with(")"))
        return std::nullopt;
    index_description d;
    d.name = line.substr(lead.size(), colon - lead.size());
    d.path = line.substr(colon + 2, open - colon - 2);
    auto const params = split(line.substr(open + 2, line.size() - open - 3), ',');
    if (params.size() != 5 && params.size() != 7) return std::nullopt;
    auto value = [&](size_t i, std::string_view key) -> std::optional<std::string_view> {
        std::string_view p = params[i];
        if (i > 0) {
            if (!p.starts_with(' ')) return std::nullopt;
            p.remove_prefix(1);
        }
        if (!p.starts_with(key) || p.substr(key.size(), 3) != " = ") return std::nullopt;
        return p.substr(key.size() + 3);
    };
    auto const k = value(0, "k"), filter = value(1, "filter"), fpr = value(2, "fpr"),
               elements = value(3, "k-mers"), seed = value(4, "hash seed");
    if (!k || !filter || !fpr || !elements || !seed || !parse_number(*k, d.k) ||
        !parse_number(*fpr, d.fpr) || !parse_number(*elements, d.elements) ||
        !parse_number(*seed, d.hash_seed))
        return std::nullopt;
    d.filter = *filter;
    if (params.size() == 7) {
        auto const preset = value(5, "preset"), containment = value(6, "min-containment");
        if (!preset || !containment || !parse_number(*containment, d.preset_min_containment))
            return std::nullopt;
        d.preset = *preset;
    }
    if (!valid_index_name(d.name) || panel_index_line(d) != std::string(line) + "\n")
        return std::nullopt;
    return d;
}

// "# rule: min-hits = H, min-containment = C, quick = yes|no", as panel_rule_line() writes it.
std::optional<panel_rule> parse_rule_line(std::string_view line) {
    auto const fields = split(line, ',');
    panel_rule rule;
    if (fields.size() != 3 || !fields[0].starts_with("# rule: min-hits = ") ||
        !fields[1].starts_with(" min-containment = ") || !fields[2].starts_with(" quick = "))
        return std::nullopt;
    if (!parse_number(fields[0].substr(19), rule.min_hits) ||
        !parse_number(fields[1].substr(19), rule.min_containment))
        return std::nullopt;
    rule.quick = fields[2].substr(9) == "yes";
    if (panel_rule_line(rule) != std::string(line) + "\n") return std::nullopt;
    return rule;
}

// One panel table: its preamble, read and checked, and the rows still to come.
struct panel_table {
    io::line_reader in;
    std::string version_line, reads_line, input_line, verdict_line, rule_line;
    uint64_t reads_at = 0, input_at = 0, rule_at = 0;  // their line numbers
    std::vector<index_description> indexes;
    std::vector<verdict_table> verdicts;
    panel_rule rule;

    explicit panel_table(std::string const& path) : in(path) {
        std::string_view line;
        auto next = [&](char const* expected) {
            if (!in.next(line))
                fail(in, std::string("the table ends before its ") + expected + " line");
        };
        auto refuse = [&](char const* what) {
            if (line.starts_with("# index: "))
                fail(in,
                     "written by the one-index form of qmer query (INDEX READS); run it as "
                     "qmer query -x NAME=INDEX to get a table qmer merge joins");
            fail(in, std::string("not a panel table of qmer query -x: ") + what);
        };
        next("'# qmer'");
        if (!line.starts_with("# qmer ")) refuse("it does not start with '# qmer'");
        version_line = line;
        next("'# index'");
        while (auto d = parse_index_line(line)) {
            indexes.push_back(std::move(*d));
            next("'# reads'");
        }
        if (indexes.empty()) refuse("no '# index NAME: ...' line after the first");
        if (!line.starts_with("# reads:"))
            refuse("a line after the indexes that is not '# reads:'");
        reads_line = line;
        reads_at = in.line_number();
        next("'# input'");
        if (line != "# input: pairs" && line != "# input: single-end")
            refuse("no '# input: pairs' or '# input: single-end' line");
        input_line = line;
        input_at = in.line_number();
        next("'# verdict'");
        verdict_line = line;
        next("'# rule'");
        auto const parsed = parse_rule_line(line);
        if (!parsed) refuse("no '# rule: ...' line as qmer query writes it");
        rule = *parsed;
        rule.presets = panel_presets_text(indexes, rule);
        rule_line = line;
        rule_at = in.line_number();
        if (verdict_line != "# verdict: " + panel_verdict_text(rule))
            fail(in, "the verdict line does not follow from the rule line");
        next("column header");
        if (std::string(line) + "\n" != panel_tsv_header(indexes))
            refuse("the column header does not name its indexes' hits");
        for (auto const& d : indexes)
            verdicts.emplace_back(verdict_rule::for_index(d.fpr, d.preset, d.preset_min_containment,
                                                          rule.min_hits, rule.min_containment));
    }
    bool paired() const { return input_line == "# input: pairs"; }
};

// Every table's preamble checked against the first's: the same reads, qmer, rule and k, and no
// index name twice.
void check_compatible(std::vector<std::unique_ptr<panel_table>> const& tables) {
    auto const& a = *tables.front();
    std::vector<std::pair<std::string, std::string>> names;  // name, table
    for (auto const& t : tables) {
        auto mismatch = [&](uint64_t line, std::string const& mine, std::string const& theirs) {
            throw input_error("'" + t->in.path() + "': line " + std::to_string(line) + ": '" +
                              mine + "', but '" + a.in.path() + "' has '" + theirs +
                              "': only tables of one qmer, one rule and the same reads merge");
        };
        if (t->version_line != a.version_line) mismatch(1, t->version_line, a.version_line);
        if (t->reads_line != a.reads_line) mismatch(t->reads_at, t->reads_line, a.reads_line);
        if (t->input_line != a.input_line) mismatch(t->input_at, t->input_line, a.input_line);
        if (t->rule_line != a.rule_line) mismatch(t->rule_at, t->rule_line, a.rule_line);
        for (size_t i = 0; i < t->indexes.size(); ++i) {
            auto const& d = t->indexes[i];
            if (d.k != a.indexes.front().k)
                throw input_error("'" + t->in.path() + "': line " + std::to_string(i + 2) +
                                  ": index " + d.name + " has k = " + std::to_string(d.k) +
                                  ", but '" + a.in.path() +
                                  "' has k = " + std::to_string(a.indexes.front().k) +
                                  ": the indexes of one panel share k");
            for (auto const& [name, table] : names)
                if (name == d.name)
                    throw input_error("'" + t->in.path() + "': line " + std::to_string(i + 2) +
                                      ": index " + d.name + " is in '" + table +
                                      "' too: merge each index once");
            names.emplace_back(d.name, t->in.path());
        }
    }
}

struct merged_row {
    std::string_view id;
    uint64_t kmers = 0;
};

// Reads one row of every table, checks that they describe the same read, and fills hits (all
// indexes, in order) and matched (per index). False when every table has ended.
bool next_rows(std::vector<std::unique_ptr<panel_table>>& tables, merged_row& row,
               std::vector<uint64_t>& hits, std::vector<bool>& matched) {
    size_t column = 0;
    for (size_t t = 0; t < tables.size(); ++t) {
        auto& table = *tables[t];
        std::string_view line;
        bool const got = table.in.next(line);
        if (t == 0 && !got) {
            for (size_t u = 1; u < tables.size(); ++u)
                if (tables[u]->in.next(line))
                    fail(tables[u]->in, "a read beyond the last of '" + table.in.path() +
                                            "': the tables hold different reads");
            return false;
        }
        if (!got)
            fail(table.in,
                 "the table ends before read '" + std::string(row.id) + "' of '" +
                     tables[0]->in.path() + "': the tables hold different reads",
                 table.in.line_number() + 1);
        auto const fields = split(line, '\t');
        size_t const n = table.indexes.size();
        if (fields.size() != n + 3)
            fail(table.in,
                 std::to_string(fields.size()) + " columns, not " + std::to_string(n + 3));
        uint64_t kmers = 0;
        if (!parse_number(fields[1], kmers)) fail(table.in, "kmers is not a number");
        if (t == 0) {
            row.id = fields[0];
            row.kmers = kmers;
        } else if (fields[0] != row.id) {
            fail(table.in, "read '" + std::string(fields[0]) + "' where '" + tables[0]->in.path() +
                               "' has '" + std::string(row.id) +
                               "': the tables hold different reads, or in another order");
        } else if (kmers != row.kmers) {
            fail(table.in, "read '" + std::string(row.id) + "' has " + std::to_string(kmers) +
                               " k-mers, but " + std::to_string(row.kmers) + " in '" +
                               tables[0]->in.path() + "': not the same reads or k");
        }
        size_t matched_count = 0, last = 0;
        for (size_t j = 0; j < n; ++j, ++column) {
            if (!parse_number(fields[2 + j], hits[column]))
                fail(table.in, "hits_" + table.indexes[j].name + " is not a number");
            matched[column] = table.verdicts[j].matches(kmers, hits[column]);
            if (matched[column]) ++matched_count, last = j;
        }
        std::string_view const expected = category_of(matched_count, last, n) < n
                                              ? std::string_view(table.indexes[last].name)
                                          : matched_count ? category_multiple
                                                          : category_none;
        if (fields[n + 2] != expected)
            fail(table.in, "category '" + std::string(fields[n + 2]) + "', but its hits give '" +
                               std::string(expected) +
                               "' under the table's rule (edited, or written by another qmer)");
    }
    return true;
}

std::vector<std::unique_ptr<panel_table>> open_tables(merge_options const& o) {
    std::vector<std::unique_ptr<panel_table>> tables;
    for (auto const& path : o.tables) tables.push_back(std::make_unique<panel_table>(path));
    check_compatible(tables);
    return tables;
}

// One pass over the tables; with out, writes the joint table and returns the totals.
void merge_pass(merge_options const& o, io::output_file* out, io::output_file* summary,
                progress_meter& progress) {
    auto tables = open_tables(o);
    std::vector<index_description> indexes;
    for (auto const& t : tables)
        indexes.insert(indexes.end(), t->indexes.begin(), t->indexes.end());
    auto const& first = *tables.front();
    size_t const n = indexes.size();
    bool const paired = first.paired();

    // The joint verdict line names the presets of every table's indexes.
    panel_rule joint = first.rule;
    joint.presets = panel_presets_text(indexes, joint);
    std::string const verdict = panel_verdict_text(joint);
    std::string text = first.version_line + "\n";
    for (auto const& d : indexes) text += panel_index_line(d);
    text += first.reads_line + "\n" + first.input_line + "\n# verdict: " + verdict + "\n" +
            first.rule_line + "\n" + panel_tsv_header(indexes);

    query_totals totals;
    panel_totals sums(n);
    merged_row row;
    std::vector<uint64_t> hits(n);
    std::vector<bool> matched(n);
    while (next_rows(tables, row, hits, matched)) {
        size_t matched_count = 0, last = 0;
        for (size_t j = 0; j < n; ++j) {
            sums.hits[j] += hits[j];
            sums.containment[j].add(row.kmers, hits[j]);
            totals.hits += hits[j];
            if (matched[j]) ++matched_count, last = j, ++sums.matched[j];
        }
        size_t const category = category_of(matched_count, last, n);
        ++sums.categories[category];
        totals.reads += paired ? 2 : 1;
        totals.pairs += paired;
        totals.kmers += row.kmers;
        (matched_count ? totals.matched : totals.unmatched) += 1;
        if (!out) continue;
        std::string_view const name = category < n    ? std::string_view(indexes[category].name)
                                      : category == n ? category_multiple
                                                      : category_none;
        append_panel_tsv_line(text, row.id, row.kmers, hits, name);
        if (text.size() >= (size_t{1} << 20)) {
            out->write(text);
            text.clear();
            progress.update(totals.reads, 0);
        }
    }
    if (!out) return;
    progress.update(totals.reads, 0);
    out->write(text);
    out->commit();
    if (summary) {
        std::vector<std::string> reads;
        auto const names = split(
            std::string_view(first.reads_line).substr(std::string_view("# reads:").size()), '\t');
        for (size_t i = 1; i < names.size(); ++i) reads.emplace_back(names[i]);
        summary->write(panel_summary_json(totals, sums, indexes, verdict, reads,
                                          progress.elapsed_seconds(), cpu_seconds(),
                                          peak_rss_bytes(), 1));
        summary->commit();
    }
    uint64_t const units = paired ? totals.pairs : totals.reads;
    progress.finish(std::to_string(units) + (paired ? " pairs" : " reads") + " of " +
                    std::to_string(tables.size()) + " tables, " + std::to_string(n) + " indexes");
}

}  // namespace

void run_merge(merge_options const& o) {
    if (o.tables.empty()) throw usage_error("merge needs at least one table");
    std::vector<io::named_file> inputs, outputs{{o.output, "-o"}};
    for (auto const& t : o.tables) {
        if (t == "-") throw usage_error("merge reads its tables from files, not stdin");
        inputs.push_back({t, "table"});
    }
    if (!o.summary.empty()) outputs.push_back({o.summary, "--summary"});
    io::refuse_same_files(inputs, outputs);
    io::refuse_repeated_inputs(inputs);
    progress_meter progress("qmer merge", o.quiet);
    // Standard output and pipes cannot be taken back: check every table to its end before the
    // first byte goes there, so a mismatch leaves no output anywhere.
    if (io::is_direct_output(o.output) || (!o.summary.empty() && io::is_direct_output(o.summary)))
        merge_pass(o, nullptr, nullptr, progress);
    io::output_file out(o.output);
    std::unique_ptr<io::output_file> summary;
    if (!o.summary.empty()) summary = std::make_unique<io::output_file>(o.summary);
    merge_pass(o, &out, summary.get(), progress);
}

}  // namespace qmer::app
