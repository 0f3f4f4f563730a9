#include "app/query/report.hpp"

#include <charconv>
#include <cstdio>

namespace qmer::app {
namespace {

void append_number(std::string& out, uint64_t value) {
    char buf[24];
    auto const r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
}

std::string format_double(double value, char const* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

}  // namespace

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string tsv_preamble(index_description const& index, std::string const& rule,
                         std::vector<std::string> const& reads) {
    std::string out = "# qmer " QMER_VERSION "\n";
    out += "# index: " + index.path + " (k = " + std::to_string(index.k) +
           ", filter = " + index.filter + ", fpr = " + format_double(index.fpr, "%g") +
           ", k-mers = " + std::to_string(index.elements) + ")\n";
    out += "# reads:";
    for (auto const& r : reads) out += " " + r;
    out += "\n# verdict: " + rule + "\n";
    out += "read_id\tkmers\thits\tcontainment\tmatch\n";
    return out;
}

void append_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers, uint64_t hits,
                     bool match) {
    out.append(read_id);
    out += '\t';
    append_number(out, kmers);
    out += '\t';
    append_number(out, hits);
    out += '\t';
    // Containment with 4 decimals: exact for 1.0 and 0, stable across thread counts.
    char buf[32];
    double const containment = kmers ? static_cast<double>(hits) / static_cast<double>(kmers) : 0;
    auto const r = std::to_chars(buf, buf + sizeof buf, containment, std::chars_format::fixed, 4);
    out.append(buf, r.ptr);
    out += match ? "\t1\n" : "\t0\n";
}

void append_record(std::string& out, io::sequence_record const& record) {
    bool const fastq = !record.quality.empty() || record.sequence.empty();
    out += fastq ? '@' : '>';
    out.append(record.name);
    if (!record.comment.empty()) {
        out += ' ';
        out.append(record.comment);
    }
    out += '\n';
    out.append(record.sequence);
    if (fastq) {
        out += "\n+\n";
        out.append(record.quality);
    }
    out += '\n';
}

std::string summary_json(query_totals const& t, index_description const& index,
                         std::string const& rule, std::vector<std::string> const& reads,
                         double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                         unsigned threads) {
    uint64_t const units = t.pairs ? t.pairs : t.reads;
    std::string out = "{\n";
    out += "  \"qmer_version\": \"" QMER_VERSION "\",\n";
    out += "  \"reads\": " + std::to_string(t.reads) + ",\n";
    out += "  \"pairs\": " + std::to_string(t.pairs) + ",\n";
    out += "  \"matched\": " + std::to_string(t.matched) + ",\n";
    out += "  \"unmatched\": " + std::to_string(t.unmatched) + ",\n";
    out += "  \"matched_fraction\": " +
           format_double(units ? static_cast<double>(t.matched) / static_cast<double>(units) : 0,
                         "%.6f") +
           ",\n";
    out += "  \"kmers\": " + std::to_string(t.kmers) + ",\n";
    out += "  \"hits\": " + std::to_string(t.hits) + ",\n";
    out += "  \"wall_seconds\": " + format_double(wall_seconds, "%.3f") + ",\n";
    out += "  \"cpu_seconds\": " + format_double(cpu_seconds, "%.3f") + ",\n";
    out +=
        "  \"reads_per_second\": " +
        format_double(wall_seconds > 0 ? static_cast<double>(t.reads) / wall_seconds : 0, "%.1f") +
        ",\n";
    out += "  \"peak_rss_bytes\": " + std::to_string(peak_rss) + ",\n";
    out += "  \"threads\": " + std::to_string(threads) + ",\n";
    out += "  \"verdict_rule\": " + json_string(rule) + ",\n";
    out += "  \"inputs\": [";
    for (size_t i = 0; i < reads.size(); ++i) out += (i ? ", " : "") + json_string(reads[i]);
    out += "],\n";
    out += "  \"index\": {\"path\": " + json_string(index.path) +
           ", \"k\": " + std::to_string(index.k) + ", \"filter\": " + json_string(index.filter) +
           ", \"fpr\": " + format_double(index.fpr, "%g") +
           ", \"kmers\": " + std::to_string(index.elements) +
           ", \"hash_seed\": " + std::to_string(index.hash_seed) + "}\n";
    out += "}\n";
    return out;
}

}  // namespace qmer::app
