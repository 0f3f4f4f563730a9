#pragma once
// Text that `qmer query` writes: the per-read TSV (its # preamble, header and lines), FASTQ/FASTA
// records for --matched/--unmatched, and the JSON summary. Pure formatting: no I/O here.

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/query/output_names.hpp"
#include "io/sequence_record.hpp"

namespace qmer::app {

// How the reads' (pairs') containment, hits / kmers, is spread: the summary's "containment". A
// unit counts in the last bin whose lower edge it reaches, judged as --min-containment judges
// (hits >= ceil(edge * kmers)), so the units a run would call with --min-containment EDGE are the
// sum of the bins from EDGE on, exactly, for every edge above 0 (the first bin also holds the
// units without a hit): with spike-ins of known origin a user reads off the sensitivity (or the
// share of a negative control called) at each minimum without querying again. Units without a
// k-mer have no containment and are counted apart.
struct containment_bins {
    static constexpr std::array<double, 10> edges{0,    0.001, 0.005, 0.01, 0.02,
                                                  0.05, 0.1,   0.2,   0.5,  1};
    std::array<uint64_t, edges.size()> units{};
    uint64_t without_kmers = 0;

    void add(uint64_t kmers, uint64_t hits) noexcept {
        if (kmers == 0) {
            ++without_kmers;
            return;
        }
        size_t bin = edges.size() - 1;
        while (bin > 0 &&
               static_cast<double>(hits) < std::ceil(edges[bin] * static_cast<double>(kmers)))
            --bin;
        ++units[bin];
    }
    void add(containment_bins const& other) noexcept {
        for (size_t i = 0; i < units.size(); ++i) units[i] += other.units[i];
        without_kmers += other.without_kmers;
    }
};

struct query_totals {
    uint64_t reads = 0;  // records (both mates count for pairs)
    uint64_t pairs = 0;  // 0 for single-end input
    uint64_t matched = 0;
    uint64_t unmatched = 0;
    uint64_t kmers = 0;
    uint64_t hits = 0;
    uint64_t bases = 0;
    containment_bins containment;  // of the one index; a panel keeps one per index

    void add(query_totals const& t) noexcept {
        reads += t.reads;
        pairs += t.pairs;
        matched += t.matched;
        unmatched += t.unmatched;
        kmers += t.kmers;
        hits += t.hits;
        bases += t.bases;
        containment.add(t.containment);
    }
};

struct index_description {
    std::string name;  // the panel form's NAME (empty in the one-index form)
    std::string path;
    unsigned k = 0;
    std::string filter;
    double fpr = 0;
    uint64_t elements = 0;
    uint64_t hash_seed = 0;
    // The read-type preset the index records (io::index_header::preset; empty: none) and its
    // minimum containment. Written beside the other parameters only when there is one, so an
    // index without one is described as a qmer without presets describes it.
    std::string preset;
    double preset_min_containment = -1;
};

// "# qmer 0.1.0" ... lines recording the index and the rule, then the column header line.
std::string tsv_preamble(index_description const& index, std::string const& rule,
                         std::vector<std::string> const& reads);
// One line: read_id kmers hits containment match.
void append_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers, uint64_t hits,
                     bool match);
// The record in the format an output's name asks for (as_read: FASTQ, or FASTA when it has no
// quality). Returns false, writing nothing, when FASTQ is asked for a record without qualities
// (a FASTA read), which the caller reports naming the output.
bool append_record(std::string& out, io::sequence_record const& record, record_format format);

std::string summary_json(query_totals const& totals, index_description const& index,
                         std::string const& rule, std::vector<std::string> const& reads,
                         double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                         unsigned threads);

// The panel form (several indexes, or -x): per index its hits and the read's category.
struct panel_totals {
    std::vector<uint64_t> categories;  // per category: 0..n-1 one index alone, n multiple, n+1 none
    std::vector<uint64_t> matched;     // per index: reads (pairs) its verdict matched
    std::vector<uint64_t> hits;        // per index: hits over all reads
    std::vector<containment_bins> containment;  // per index

    explicit panel_totals(size_t indexes = 0)
        : categories(indexes + 2), matched(indexes), hits(indexes), containment(indexes) {}
    void add(panel_totals const& other);
};

// What the panel's verdict lines record: merge recomputes each index's verdict from them.
struct panel_rule {
    int64_t min_hits = -1;
    double min_containment = -1;
    bool quick = false;
    // Without minimums given, the indexes whose preset records a minimum containment, in words
    // (empty: none); part of the verdict line only.
    std::string presets;
};

// The # lines and the header of the panel TSV. Everything `qmer merge` needs to rebuild a joint
// run's output is here: one "# index NAME: PATH (k = .., filter = .., fpr = .., k-mers = ..,
// hash seed = ..[, preset = .., min-containment = ..])" line per index (fpr written to round-trip
// exactly; the preset only when the index records one), the reads, whether they are pairs, the
// verdict in words and its inputs.
std::string panel_tsv_preamble(std::vector<index_description> const& indexes,
                               panel_rule const& rule, std::vector<std::string> const& reads,
                               bool paired);
std::string panel_index_line(index_description const& index);
std::string panel_verdict_text(panel_rule const& rule);
// panel_rule::presets for these indexes: empty when the rule's minimums are given (they replace
// every index's rule) or no index's preset records a minimum containment.
std::string panel_presets_text(std::vector<index_description> const& indexes,
                               panel_rule const& rule);
std::string panel_rule_line(panel_rule const& rule);
std::string panel_reads_line(std::vector<std::string> const& reads);  // without '\n'
std::string panel_tsv_header(std::vector<index_description> const& indexes);
// One line: read_id kmers hits_1 ... hits_n category.
void append_panel_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers,
                           std::vector<uint64_t> const& hits, std::string_view category);

std::string panel_summary_json(query_totals const& totals, panel_totals const& panel,
                               std::vector<index_description> const& indexes,
                               std::string const& rule, std::vector<std::string> const& reads,
                               double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                               unsigned threads);

// Shortest text that reads back as the same double.
std::string exact_double(double value);

// The "containment" object of a summary: the edges, the units per bin and those without k-mers.
std::string containment_json(containment_bins const& bins);

// JSON string escaping (quotes, backslashes, control bytes).
std::string json_string(std::string_view s);

}  // namespace qmer::app
