// The text `qmer query` writes (app/query/report.hpp): JSON string escaping, the per-read TSV
// line, FASTQ/FASTA records, the preamble and the summary's escaping of file names.

#include "app/query/report.hpp"

#include "app/query/verdict.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace qmer::app;

TEST(json_string, quotes_backslashes_and_named_controls) {
    EXPECT_EQ(json_string(""), "\"\"");
    EXPECT_EQ(json_string("plain.fq.gz"), "\"plain.fq.gz\"");
    EXPECT_EQ(json_string("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(json_string("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(json_string("a\nb\tc\rd"), "\"a\\nb\\tc\\rd\"");
}

TEST(json_string, other_control_bytes_become_u_escapes) {
    EXPECT_EQ(json_string(std::string("\x01", 1)), "\"\\u0001\"");
    EXPECT_EQ(json_string(std::string("\x1f", 1)), "\"\\u001f\"");
    EXPECT_EQ(json_string(std::string("a\0b", 3)), "\"a\\u0000b\"");
    EXPECT_EQ(json_string("\b\f"), "\"\\u0008\\u000c\"");
    // DEL is not a control character for JSON: it stays as it is.
    EXPECT_EQ(json_string("\x7f"), "\"\x7f\"");
}

TEST(json_string, utf8_is_copied_and_every_other_byte_replaced) {
    EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
    EXPECT_EQ(json_string("\xe2\x82\xac \xf0\x9f\xa7\xac"), "\"\xe2\x82\xac \xf0\x9f\xa7\xac\"");
    // Latin-1, a stray continuation byte, 0xff: one U+FFFD per byte.
    EXPECT_EQ(json_string("caf\xe9"), "\"caf\\ufffd\"");
    EXPECT_EQ(json_string("\xff\x80"), "\"\\ufffd\\ufffd\"");
    EXPECT_EQ(json_string("bad\xff.fq"), "\"bad\\ufffd.fq\"");
    // A character cut short at the end, and one cut by another character.
    EXPECT_EQ(json_string("a\xe2\x82"), "\"a\\ufffd\\ufffd\"");
    EXPECT_EQ(json_string("\xe2\x82z"), "\"\\ufffd\\ufffdz\"");
    // Overlong forms, surrogates and code points above U+10FFFF are not UTF-8.
    EXPECT_EQ(json_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
    EXPECT_EQ(json_string("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");
    EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
    EXPECT_EQ(json_string("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    // The largest of each length is fine.
    EXPECT_EQ(json_string("\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf"),
              "\"\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf\"");
}

TEST(tsv, one_line_per_read_with_four_decimals) {
    std::string out;
    append_tsv_line(out, "read/1", 120, 30, true);
    append_tsv_line(out, "r2", 0, 0, false);
    append_tsv_line(out, "r3", 3, 2, false);
    EXPECT_EQ(out, "read/1\t120\t30\t0.2500\t1\nr2\t0\t0\t0.0000\t0\nr3\t3\t2\t0.6667\t0\n");
}

TEST(tsv, preamble_records_index_reads_and_rule) {
    index_description index;
    index.path = "lambda.qmer";
    index.k = 31;
    index.filter = "expandable";
    index.fpr = 0.001;
    index.elements = 48502;
    std::string const p = tsv_preamble(index, "hits >= 4", {"a.fq", "b.fq"});
    EXPECT_EQ(p.rfind("# qmer ", 0), 0u);
    EXPECT_NE(p.find("# index: lambda.qmer (k = 31, filter = expandable, fpr = 0.001, "
                     "k-mers = 48502)\n"),
              std::string::npos);
    EXPECT_NE(p.find("# reads: a.fq b.fq\n# verdict: hits >= 4\n"), std::string::npos);
    EXPECT_TRUE(p.ends_with("read_id\tkmers\thits\tcontainment\tmatch\n"));
}

// Two indexes of a panel, the second built with the long preset.
std::vector<index_description> host_and_phage() {
    index_description host, phage;
    host.name = "host";
    host.path = "host.qmer";
    host.k = 19;
    host.filter = "expandable";
    host.fpr = 0.001;
    host.preset = "long";
    host.preset_min_containment = 0.02;
    phage = host;
    phage.name = "phage";
    phage.path = "phage.qmer";
    phage.preset.clear();
    phage.preset_min_containment = -1;
    return {phage, host};
}

TEST(panel, an_index_line_names_a_preset_only_when_there_is_one) {
    auto const indexes = host_and_phage();
    EXPECT_EQ(panel_index_line(indexes[0]),
              "# index phage: phage.qmer (k = 19, filter = expandable, fpr = 0.001, k-mers = 0, "
              "hash seed = 0)\n");
    EXPECT_EQ(panel_index_line(indexes[1]),
              "# index host: host.qmer (k = 19, filter = expandable, fpr = 0.001, k-mers = 0, "
              "hash seed = 0, preset = long, min-containment = 0.02)\n");
    std::string const one = tsv_preamble(indexes[1], "r", {"a.fq"});
    EXPECT_NE(one.find("(k = 19, filter = expandable, fpr = 0.001, k-mers = 0, preset = long, "
                       "min-containment = 0.02)\n"),
              std::string::npos)
        << one;
    std::string const summary = summary_json({}, indexes[1], "r", {"a.fq"}, 0, 0, 0, 1);
    EXPECT_NE(summary.find("\"hash_seed\": 0, \"preset\": \"long\", \"min_containment\": 0.02}"),
              std::string::npos)
        << summary;
}

TEST(panel, the_verdict_names_indexes_whose_preset_adds_a_containment) {
    auto const indexes = host_and_phage();
    panel_rule rule;
    rule.presets = panel_presets_text(indexes, rule);
    EXPECT_EQ(rule.presets, "index host: also containment >= 0.02 (its preset long)");
    std::string const with = panel_verdict_text(rule);
    EXPECT_NE(with.find("(fpr: the index's); index host: also containment >= 0.02 (its preset "
                        "long); category: "),
              std::string::npos)
        << with;
    // The rule line, which qmer merge reads, is the options' alone.
    EXPECT_EQ(panel_rule_line(rule), panel_rule_line(panel_rule{}));
    // Minimums given replace every index's rule; no preset, no words.
    panel_rule given;
    given.min_hits = 3;
    EXPECT_EQ(panel_presets_text(indexes, given), "");
    EXPECT_EQ(panel_presets_text({indexes[0]}, panel_rule{}), "");
    EXPECT_EQ(panel_verdict_text(panel_rule{}).find("preset"), std::string::npos);
}

TEST(records, fastq_with_quality_fasta_without) {
    qmer::io::sequence_record r;
    r.name = "r1";
    r.comment = "x=1";
    r.sequence = "ACGT";
    r.quality = "IIII";
    std::string out;
    EXPECT_TRUE(append_record(out, r, record_format::as_read));
    EXPECT_EQ(out, "@r1 x=1\nACGT\n+\nIIII\n");
    r.quality = {};
    r.comment = {};
    out.clear();
    EXPECT_TRUE(append_record(out, r, record_format::as_read));
    EXPECT_EQ(out, ">r1\nACGT\n");
}

TEST(records, the_output_names_format_wins) {
    qmer::io::sequence_record r;
    r.name = "r1";
    r.comment = "x=1";
    r.sequence = "ACGT";
    r.quality = "IIII";
    std::string out;
    EXPECT_TRUE(append_record(out, r, record_format::fasta));
    EXPECT_EQ(out, ">r1 x=1\nACGT\n");
    out.clear();
    EXPECT_TRUE(append_record(out, r, record_format::fastq));
    EXPECT_EQ(out, "@r1 x=1\nACGT\n+\nIIII\n");
    // A FASTA record has no qualities to write as FASTQ: refused, nothing written.
    r.quality = {};
    out = "kept";
    EXPECT_FALSE(append_record(out, r, record_format::fastq));
    EXPECT_EQ(out, "kept");
}

TEST(exact_double, reads_back_as_the_same_double) {
    for (double v : {0.001, 1.0 / 3, 1e-12, 0.5, 0.0019531250000000001})
        EXPECT_EQ(std::stod(exact_double(v)), v) << exact_double(v);
}

TEST(summary_json, file_names_are_escaped) {
    index_description index;
    index.path = "dir/\"odd\".qmer";
    index.filter = "expandable";
    query_totals totals;
    std::string const j = summary_json(totals, index, "hits >= 1", {"a\tb.fq"}, 1.0, 1.0, 0, 2);
    EXPECT_NE(j.find("\"dir/\\\"odd\\\".qmer\""), std::string::npos) << j;
    EXPECT_NE(j.find("\"a\\tb.fq\""), std::string::npos) << j;
    EXPECT_EQ(j.find('\t'), std::string::npos);
}

TEST(containment_bins, the_bins_from_an_edge_on_hold_what_min_containment_calls) {
    containment_bins bins;
    std::vector<std::pair<uint64_t, uint64_t>> units;  // kmers, hits
    for (uint64_t kmers : {1, 2, 7, 100, 120, 999, 1000, 1001, 30000})
        for (uint64_t hits = 0; hits <= kmers; hits += 1 + kmers / 97)
            units.emplace_back(kmers, hits);
    for (auto [kmers, hits] : units) bins.add(kmers, hits);
    uint64_t total = 0;
    for (uint64_t u : bins.units) total += u;
    EXPECT_EQ(total, units.size());
    for (size_t e = 1; e < containment_bins::edges.size(); ++e) {
        verdict_rule rule;
        rule.min_containment = containment_bins::edges[e];
        uint64_t called = 0, from_bins = 0;
        for (auto [kmers, hits] : units) called += rule.matches(kmers, hits);
        for (size_t b = e; b < bins.units.size(); ++b) from_bins += bins.units[b];
        EXPECT_EQ(from_bins, called) << "edge " << containment_bins::edges[e];
    }
}

TEST(containment_bins, units_without_kmers_are_counted_apart_and_sums_add) {
    containment_bins a, b;
    a.add(0, 0);
    a.add(120, 0);    // no hit: the first bin
    b.add(120, 120);  // every k-mer: the last bin
    b.add(1000, 1);   // 0.001 exactly: the second bin
    a.add(b);
    EXPECT_EQ(a.without_kmers, 1u);
    EXPECT_EQ(a.units[0], 1u);
    EXPECT_EQ(a.units[1], 1u);
    EXPECT_EQ(a.units.back(), 1u);
    EXPECT_EQ(containment_json(a),
              "{\"from\": [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1], "
              "\"units\": [1, 1, 0, 0, 0, 0, 0, 0, 0, 1], \"without_kmers\": 1}");
}

TEST(summary_json, holds_the_containment_of_the_units) {
    index_description index;
    index.path = "i.qmer";
    query_totals totals;
    totals.containment.add(100, 50);
    std::string const j = summary_json(totals, index, "rule", {"r.fq"}, 1.0, 1.0, 0, 2);
    EXPECT_NE(j.find("\"containment\": {\"from\": [0, "), std::string::npos) << j;
    EXPECT_NE(j.find("\"units\": [0, 0, 0, 0, 0, 0, 0, 0, 1, 0]"), std::string::npos) << j;
}

}  // namespace
