#pragma once
// Text that `qmer query` writes: the per-read TSV (its # preamble, header and lines), FASTQ/FASTA
// records for --matched/--unmatched, and the JSON summary. Pure formatting: no I/O here.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/sequence_record.hpp"

namespace qmer::app {

struct query_totals {
    uint64_t reads = 0;  // records (both mates count for pairs)
    uint64_t pairs = 0;  // 0 for single-end input
    uint64_t matched = 0;
    uint64_t unmatched = 0;
    uint64_t kmers = 0;
    uint64_t hits = 0;
    uint64_t bases = 0;
};

struct index_description {
    std::string path;
    unsigned k = 0;
    std::string filter;
    double fpr = 0;
    uint64_t elements = 0;
    uint64_t hash_seed = 0;
};

// "# qmer 0.1.0" ... lines recording the index and the rule, then the column header line.
std::string tsv_preamble(index_description const& index, std::string const& rule,
                         std::vector<std::string> const& reads);
// One line: read_id kmers hits containment match.
void append_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers, uint64_t hits,
                     bool match);
// The record as FASTQ, or as FASTA when it has no quality.
void append_record(std::string& out, io::sequence_record const& record);

std::string summary_json(query_totals const& totals, index_description const& index,
                         std::string const& rule, std::vector<std::string> const& reads,
                         double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                         unsigned threads);

// JSON string escaping (quotes, backslashes, control bytes).
std::string json_string(std::string_view s);

}  // namespace qmer::app
