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

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i) noexcept {
    auto const byte = [&](size_t j) { return static_cast<unsigned char>(s[j]); };
    unsigned char const lead = byte(i);
    size_t n;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range
    if (lead >= 0xc2 && lead <= 0xdf) {
        n = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        n = 3;
        if (lead == 0xe0) low = 0xa0;   // overlong
        if (lead == 0xed) high = 0x9f;  // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        n = 4;
        if (lead == 0xf0) low = 0x90;   // overlong
        if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
        return 0;
    }
    if (i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (size_t j = 2; j < n; ++j)
        if (byte(i + j) < 0x80 || byte(i + j) > 0xbf) return 0;
    return n;
}

}  // namespace

// JSON text must be UTF-8 (RFC 8259, section 8.1), but file and read names are bytes: a name in
// Latin-1 or cut mid-character would make a summary no parser reads. Well-formed UTF-8 is copied;
// each byte of anything else becomes U+FFFD, the replacement character, as a JSON library's
// "replace" mode writes it. Control characters are escaped.
std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        char const c = s[i];
        auto const u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
            size_t const n = utf8_sequence_length(s, i);
            if (n == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
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
                if (u < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
                    out += buf;
                } else {
                    out += c;
                }
        }
        ++i;
    }
    return out + "\"";
}

namespace {

// ", preset = P, min-containment = C" for an index that records a preset; empty otherwise.
std::string preset_text(index_description const& index) {
    if (index.preset.empty()) return "";
    return ", preset = " + index.preset +
           ", min-containment = " + exact_double(index.preset_min_containment);
}

// The same as JSON members, after an index's others.
std::string preset_json(index_description const& index) {
    if (index.preset.empty()) return "";
    return ", \"preset\": " + json_string(index.preset) +
           ", \"min_containment\": " + exact_double(index.preset_min_containment);
}

}  // namespace

std::string tsv_preamble(index_description const& index, std::string const& rule,
                         std::vector<std::string> const& reads) {
    std::string out = "# qmer " QMER_VERSION "\n";
    out += "# index: " + index.path + " (k = " + std::to_string(index.k) +
           ", filter = " + index.filter + ", fpr = " + format_double(index.fpr, "%g") +
           ", k-mers = " + std::to_string(index.elements) + preset_text(index) + ")\n";
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

bool append_record(std::string& out, io::sequence_record const& record, record_format format) {
    bool const has_quality = !record.quality.empty() || record.sequence.empty();
    if (format == record_format::fastq && !has_quality) return false;
    bool const fastq =
        format == record_format::fastq || (format == record_format::as_read && has_quality);
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
    return true;
}

namespace {

// The counts every summary opens with, up to "kmers".
std::string summary_head(query_totals const& t) {
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
    return out;
}

// What describes the process that wrote the summary, then the rule and the reads.
std::string summary_run(uint64_t reads, std::string const& rule,
                        std::vector<std::string> const& inputs, double wall_seconds,
                        double cpu_seconds, uint64_t peak_rss, unsigned threads) {
    std::string out;
    out += "  \"wall_seconds\": " + format_double(wall_seconds, "%.3f") + ",\n";
    out += "  \"cpu_seconds\": " + format_double(cpu_seconds, "%.3f") + ",\n";
    out += "  \"reads_per_second\": " +
           format_double(wall_seconds > 0 ? static_cast<double>(reads) / wall_seconds : 0, "%.1f") +
           ",\n";
    out += "  \"peak_rss_bytes\": " + std::to_string(peak_rss) + ",\n";
    out += "  \"threads\": " + std::to_string(threads) + ",\n";
    out += "  \"verdict_rule\": " + json_string(rule) + ",\n";
    out += "  \"inputs\": [";
    for (size_t i = 0; i < inputs.size(); ++i) out += (i ? ", " : "") + json_string(inputs[i]);
    out += "]";
    return out;
}

}  // namespace

std::string summary_json(query_totals const& t, index_description const& index,
                         std::string const& rule, std::vector<std::string> const& reads,
                         double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                         unsigned threads) {
    std::string out = summary_head(t);
    out += "  \"hits\": " + std::to_string(t.hits) + ",\n";
    out += "  \"containment\": " + containment_json(t.containment) + ",\n";
    out += summary_run(t.reads, rule, reads, wall_seconds, cpu_seconds, peak_rss, threads);
    out += ",\n  \"index\": {\"path\": " + json_string(index.path) +
           ", \"k\": " + std::to_string(index.k) + ", \"filter\": " + json_string(index.filter) +
           ", \"fpr\": " + format_double(index.fpr, "%g") +
           ", \"kmers\": " + std::to_string(index.elements) +
           ", \"hash_seed\": " + std::to_string(index.hash_seed) + preset_json(index) + "}\n";
    out += "}\n";
    return out;
}

void panel_totals::add(panel_totals const& other) {
    for (size_t i = 0; i < categories.size(); ++i) categories[i] += other.categories[i];
    for (size_t i = 0; i < matched.size(); ++i) {
        matched[i] += other.matched[i];
        hits[i] += other.hits[i];
        containment[i].add(other.containment[i]);
    }
}

std::string containment_json(containment_bins const& bins) {
    std::string out = "{\"from\": [";
    for (size_t i = 0; i < bins.edges.size(); ++i)
        out += (i ? ", " : "") + exact_double(bins.edges[i]);
    out += "], \"units\": [";
    for (size_t i = 0; i < bins.units.size(); ++i)
        out += (i ? ", " : "") + std::to_string(bins.units[i]);
    out += "], \"without_kmers\": " + std::to_string(bins.without_kmers) + "}";
    return out;
}

std::string exact_double(double value) {
    char buf[64];
    auto const r = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, r.ptr);
}

std::string panel_index_line(index_description const& index) {
    return "# index " + index.name + ": " + index.path + " (k = " + std::to_string(index.k) +
           ", filter = " + index.filter + ", fpr = " + exact_double(index.fpr) +
           ", k-mers = " + std::to_string(index.elements) +
           ", hash seed = " + std::to_string(index.hash_seed) + preset_text(index) + ")\n";
}

std::string panel_verdict_text(panel_rule const& rule) {
    std::string text =
        rule.min_hits < 0 && rule.min_containment < 0
            ? "per index, hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= 1e-5 (fpr: the "
              "index's)"
            : "per index, hits >= " + std::to_string(std::max<int64_t>(rule.min_hits, 0)) +
                  " and containment >= " + exact_double(std::max(rule.min_containment, 0.0));
    if (!rule.presets.empty()) text += "; " + rule.presets;
    text += "; category: the one index that matched, multiple, or none";
    if (rule.quick)
        text +=
            "; --quick: an index's lookups stop once the read has the hits to match it, so "
            "hits count only the k-mers looked up (kmers counts them all)";
    return text;
}

std::string panel_presets_text(std::vector<index_description> const& indexes,
                               panel_rule const& rule) {
    if (rule.min_hits >= 0 || rule.min_containment >= 0) return "";
    std::string text;
    for (auto const& index : indexes) {
        if (index.preset.empty() || index.preset_min_containment < 0) continue;
        text += (text.empty() ? "index " : "; index ") + index.name +
                ": also containment >= " + exact_double(index.preset_min_containment) +
                " (its preset " + index.preset + ")";
    }
    return text;
}

std::string panel_rule_line(panel_rule const& rule) {
    return "# rule: min-hits = " + std::to_string(rule.min_hits) +
           ", min-containment = " + exact_double(rule.min_containment) +
           ", quick = " + (rule.quick ? "yes" : "no") + "\n";
}

std::string panel_reads_line(std::vector<std::string> const& reads) {
    // Tab-separated (not space, as in the one-index form): merge reads the names back.
    std::string out = "# reads:";
    for (auto const& r : reads) out += "\t" + r;
    return out;
}

std::string panel_tsv_header(std::vector<index_description> const& indexes) {
    std::string out = "read_id\tkmers";
    for (auto const& index : indexes) out += "\thits_" + index.name;
    return out + "\tcategory\n";
}

std::string panel_tsv_preamble(std::vector<index_description> const& indexes,
                               panel_rule const& rule, std::vector<std::string> const& reads,
                               bool paired) {
    std::string out = "# qmer " QMER_VERSION "\n";
    for (auto const& index : indexes) out += panel_index_line(index);
    out += panel_reads_line(reads);
    out += paired ? "\n# input: pairs\n" : "\n# input: single-end\n";
    out += "# verdict: " + panel_verdict_text(rule) + "\n";
    out += panel_rule_line(rule);
    return out + panel_tsv_header(indexes);
}

void append_panel_tsv_line(std::string& out, std::string_view read_id, uint64_t kmers,
                           std::vector<uint64_t> const& hits, std::string_view category) {
    out.append(read_id);
    out += '\t';
    append_number(out, kmers);
    for (uint64_t h : hits) {
        out += '\t';
        append_number(out, h);
    }
    out += '\t';
    out.append(category);
    out += '\n';
}

std::string panel_summary_json(query_totals const& t, panel_totals const& panel,
                               std::vector<index_description> const& indexes,
                               std::string const& rule, std::vector<std::string> const& reads,
                               double wall_seconds, double cpu_seconds, uint64_t peak_rss,
                               unsigned threads) {
    size_t const n = indexes.size();
    std::string out = summary_head(t);
    out += "  \"categories\": {";
    for (size_t c = 0; c < n + 2; ++c) {
        std::string_view const name = c < n    ? std::string_view(indexes[c].name)
                                      : c == n ? "multiple"
                                               : "none";
        out += (c ? ", " : "") + json_string(name) + ": " + std::to_string(panel.categories[c]);
    }
    out += "},\n";
    out += "  \"indexes\": [";
    for (size_t i = 0; i < n; ++i) {
        auto const& index = indexes[i];
        out += (i ? ",\n    " : "\n    ");
        out += "{\"name\": " + json_string(index.name) + ", \"path\": " + json_string(index.path) +
               ", \"k\": " + std::to_string(index.k) +
               ", \"filter\": " + json_string(index.filter) +
               ", \"fpr\": " + exact_double(index.fpr) +
               ", \"kmers\": " + std::to_string(index.elements) +
               ", \"hash_seed\": " + std::to_string(index.hash_seed) + preset_json(index) +
               ", \"hits\": " + std::to_string(panel.hits[i]) +
               ", \"matched\": " + std::to_string(panel.matched[i]) +
               ", \"matched_only\": " + std::to_string(panel.categories[i]) +
               ", \"containment\": " + containment_json(panel.containment[i]) + "}";
    }
    out += "\n  ],\n";
    out += summary_run(t.reads, rule, reads, wall_seconds, cpu_seconds, peak_rss, threads);
    out += "\n}\n";
    return out;
}

}  // namespace qmer::app
