// End to end: the real binary indexes data/ and screens reads, each test in a fresh folder.
#include <zlib.h>

#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <unordered_set>

#include "app/filters/registry.hpp"
#include "cli/cli_fixture.hpp"
#include "sanitized.hpp"

namespace {

using qmer::test::cli_test;

// Parses the TSV body (after the # lines and the header) into rows of fields.
std::vector<std::vector<std::string>> tsv_rows(std::string const& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    std::string line;
    bool header_seen = false;
    while (std::getline(in, line)) {
        if (line.starts_with("#")) continue;
        if (!header_seen) {
            EXPECT_EQ(line, "read_id\tkmers\thits\tcontainment\tmatch");
            header_seen = true;
            continue;
        }
        std::vector<std::string> fields;
        std::istringstream fs(line);
        std::string f;
        while (std::getline(fs, f, '\t')) fields.push_back(f);
        rows.push_back(fields);
    }
    EXPECT_TRUE(header_seen);
    return rows;
}

std::string read_gz(std::filesystem::path const& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    std::string out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    gzclose(f);
    return out;
}

// The lambda genome as one string (from the bundled FASTA).
std::string lambda_genome() {
    std::string text = read_gz(std::filesystem::path(QMER_DATA_DIR) / "lambda_virus.fa.gz");
    std::string seq;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (!line.starts_with(">")) seq += line;
    return seq;
}

std::string reverse_complement(std::string s) {
    std::reverse(s.begin(), s.end());
    for (char& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    return s;
}

// The exact oracle: the canonical 31-mers of `sequences` (none spans two of them).
std::unordered_set<std::string> canonical_31mers(std::vector<std::string> const& sequences) {
    std::unordered_set<std::string> kmers;
    for (auto const& s : sequences) {
        for (size_t i = 0; i + 31 <= s.size(); ++i) {
            std::string const kmer = s.substr(i, 31);
            kmers.insert(std::min(kmer, reverse_complement(kmer)));
        }
    }
    return kmers;
}

// Per read of a FASTQ text, in order: its name and how many of its 31-mers `kmers` holds.
std::vector<std::pair<std::string, size_t>> exact_hits_per_read(
    std::string const& fastq, std::unordered_set<std::string> const& kmers) {
    std::vector<std::pair<std::string, size_t>> out;
    std::istringstream in(fastq);
    std::string header, seq, plus, qual;
    while (std::getline(in, header) && std::getline(in, seq) && std::getline(in, plus) &&
           std::getline(in, qual)) {
        size_t hits = 0;
        for (size_t i = 0; i + 31 <= seq.size(); ++i) {
            std::string const kmer = seq.substr(i, 31);
            hits += kmers.count(std::min(kmer, reverse_complement(kmer)));
        }
        out.emplace_back(header.substr(1, header.find(' ') - 1), hits);
    }
    return out;
}

class index_query : public cli_test {
  protected:
    // The last `bytes` bytes of an index's filter words (they end the file, before its 8-byte
    // checksum), or "" for a shorter file: what two builds of one filter share, whatever their
    // headers (command lines, inputs) say.
    std::string filter_words(std::string const& index, size_t bytes) {
        std::string const all = slurp(dir() / index);
        return all.size() > bytes + 8 ? all.substr(all.size() - 8 - bytes, bytes) : "";
    }
    // A build of `reference` at --max-memory `limit` must be refused (exit 6, no index) naming the
    // least limit it needs: that, in MiB (to 0.05), into `least`.
    void least_memory_mib(std::string const& reference, char const* limit, double& least) {
        auto const refused =
            qmer({"index", "-t", "2", "--max-memory", limit, "-o", "x.qmer", reference});
        ASSERT_EQ(refused.exit_code, 6) << refused.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
        std::smatch m;
        ASSERT_TRUE(std::regex_search(refused.err, m, std::regex("needs at least ([0-9.]+) MiB")))
            << refused.err;
        least = std::stod(m[1]);
    }
    // `qmer index -t 2` of `reference` into limited.qmer at --max-memory `mib` MiB (to the KiB),
    // its scratch file in scratch/.
    qmer::test::cli_result index_limited(std::string const& reference, double mib) {
        char limit[32];
        std::snprintf(limit, sizeof limit, "%.0fK", mib * 1024);
        return qmer({"index", "-t", "2", "--max-memory", limit, "--temp-dir", "scratch", "-o",
                     "limited.qmer", reference});
    }
    // Every array's parameters of an index, in order, as `qmer info --json` prints them.
    std::vector<uint64_t> filter_params(std::string const& index) {
        auto const json = qmer({"info", "--json", index});
        EXPECT_EQ(json.exit_code, 0) << json.err;
        auto const at = json.out.find("\"filter_params\": [");
        EXPECT_NE(at, std::string::npos) << json.out;
        std::vector<uint64_t> out;
        if (at == std::string::npos) return out;
        std::istringstream in(json.out.substr(at + 18, json.out.find(']', at) - at - 18));
        std::string v;
        while (std::getline(in, v, ',')) out.push_back(std::stoull(v));
        return out;
    }
    // Indexes of the same k-mers under different hash schemes (a counted file build is
    // minimizer-local, a stdin build plain: core/kmer/sequence_hashing.hpp) have different false
    // positives: every read has the same k-mers, and at most `max_flips` reads change their call.
    void expect_same_kmers_and_nearly_same_calls(std::string const& a_index,
                                                 std::string const& b_index,
                                                 std::string const& reads, size_t max_flips) {
        auto const a = qmer({"query", a_index, reads});
        auto const b = qmer({"query", b_index, reads});
        ASSERT_EQ(a.exit_code, 0) << a.err;
        ASSERT_EQ(b.exit_code, 0) << b.err;
        auto const ra = tsv_rows(a.out), rb = tsv_rows(b.out);
        ASSERT_EQ(ra.size(), rb.size());
        size_t flips = 0;
        for (size_t i = 0; i < ra.size(); ++i) {
            EXPECT_EQ(ra[i][1], rb[i][1]) << ra[i][0];
            flips += ra[i][4] != rb[i][4];
        }
        EXPECT_LE(flips, max_flips);
    }
};

TEST_F(index_query, hand_checked_counts) {
    // k = 3. The reference's canonical 3-mers: AAA, AAC, ACC, CCC.
    write_file("ref.fa", ">r\nAAACCC\n");
    write_file("reads.fq",
               "@same\nAAACCC\n+\nIIIIII\n"
               "@revcomp\nGGGTTT\n+\nIIIIII\n"  // GGG GGT GTT TTT: the same 4 canonical k-mers
               "@broken\nAANCCC\n+\nIIIIII\n"   // only CCC is a whole k-mer
               "@absent\nACGT\n+\nIIII\n"       // ACG, CGT (both canonical ACG): not in the ref
               "@empty\n\n+\n\n"                // no k-mer at all
               "@twice\ntttt\n+\nIIII\n");      // TTT twice (lowercase counts): canonical AAA
    auto r = qmer({"index", "-k", "3", "--fpr", "0.0001", "-o", "ref.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = qmer({"query", "--min-hits", "1", "ref.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const rows = tsv_rows(r.out);
    std::vector<std::vector<std::string>> const expected = {
        {"same", "4", "4", "1.0000", "1"},   {"revcomp", "4", "4", "1.0000", "1"},
        {"broken", "1", "1", "1.0000", "1"}, {"absent", "2", "0", "0.0000", "0"},
        {"empty", "0", "0", "0.0000", "0"},  {"twice", "2", "2", "1.0000", "1"}};
    EXPECT_EQ(rows, expected) << r.out;
}

TEST_F(index_query, error_free_reads_have_containment_one_and_unrelated_reads_are_not_called) {
    // Error-free reads cut from both strands of the reference.
    std::string const genome = lambda_genome();
    ASSERT_EQ(genome.size(), 48502u);
    std::mt19937_64 rng(42);
    std::string fq;
    for (int i = 0; i < 500; ++i) {
        size_t const start = rng() % (genome.size() - 150);
        std::string read = genome.substr(start, 150);
        if (i % 2) read = reverse_complement(read);
        fq += "@r" + std::to_string(i) + "\n" + read + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file("exact.fq", fq);
    auto r = qmer({"index", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;

    r = qmer({"query", "lambda.qmer", "exact.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rows = tsv_rows(r.out);
    ASSERT_EQ(rows.size(), 500u);
    for (auto const& row : rows) {
        EXPECT_EQ(row[1], "120") << row[0];
        EXPECT_EQ(row[3], "1.0000") << row[0];
        EXPECT_EQ(row[4], "1") << row[0];
    }

    // The unrelated reads: an exact k-mer set (the oracle below) calls the few that share real
    // sequence with lambda; the filter must call exactly those, adding no false calls.
    std::map<std::string, size_t> exact_hits;  // read name -> exact hits, for reads with any
    for (auto const& [name, hits] :
         exact_hits_per_read(read_gz(data("unrelated_reads.fq.gz")), canonical_31mers({genome})))
        if (hits) exact_hits[name] = hits;
    r = qmer(
        {"query", "--summary", "s.json", "lambda.qmer", data("unrelated_reads.fq.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rows = tsv_rows(r.out);
    ASSERT_EQ(rows.size(), 1000u);
    size_t called = 0;
    for (auto const& row : rows) {
        if (row[4] != "1") continue;
        ++called;
        EXPECT_TRUE(exact_hits.contains(row[0])) << row[0] << " called without a shared k-mer";
    }
    EXPECT_LE(called, exact_hits.size());
    EXPECT_LE(exact_hits.size(), 10u) << "the negatives are mostly unrelated to lambda";
    auto const json = slurp(dir() / "s.json");
    EXPECT_NE(json.find("\"reads\": 1000"), std::string::npos) << json;
    EXPECT_NE(json.find("\"matched\": " + std::to_string(called)), std::string::npos) << json;
}

TEST_F(index_query, no_filter_kind_reports_a_reference_kmer_absent) {
    std::string const genome = lambda_genome();
    std::string fq;
    for (size_t start = 0; start + 150 <= genome.size(); start += 97) {
        std::string const read = genome.substr(start, 150);
        fq += "@r" + std::to_string(start) + "\n" + read + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file("exact.fq", fq);
    for (auto const name : qmer::app::filter_kind_names) {
        std::string const kind(name);
        SCOPED_TRACE(kind);
        auto r = qmer({"index", "--filter", kind, "--fpr", "0.005", "-t", "3", "-o", "x.qmer",
                       data("lambda_virus.fa.gz").string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = qmer({"query", "-t", "3", "x.qmer", "exact.fq"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        auto const rows = tsv_rows(r.out);
        ASSERT_EQ(rows.size(), genome.size() / 97 - 1);
        for (auto const& row : rows) ASSERT_EQ(row[2], "120") << row[0];
        auto const info = qmer({"info", "--json", "x.qmer"});
        EXPECT_NE(info.out.find(std::string("\"filter\": \"") + kind + "\""), std::string::npos);
    }
}

// The fixed-size quotient filters have 256 slots after their 2^q canonical ones, and `qmer info`
// counts them (not 0, as if there were none).
TEST_F(index_query, info_counts_the_overflow_area_of_fixed_quotient_filters) {
    for (char const* kind : {"external-locks", "linear-probing"}) {
        SCOPED_TRACE(kind);
        ASSERT_EQ(qmer({"index", "--filter", kind, "-q", "-o", "x.qmer",
                        data("lambda_virus.fa.gz").string()})
                      .exit_code,
                  0);
        auto const json = qmer({"info", "--json", "x.qmer"});
        EXPECT_NE(json.out.find("\"overflow_slots\": 256"), std::string::npos) << json.out;
        auto const text = qmer({"info", "x.qmer"});
        EXPECT_NE(text.out.find("overflow slots 256,"), std::string::npos) << text.out;
    }
}

// An index that grew several levels says so when it is written (each level costs a query's absent
// k-mers one more lookup); a counted build, with one level, says nothing of levels. Levels grow
// when --append adds many more k-mers than the index was made for, twice (2,000 bases, then the
// rest, then 60,000 random bases: each append writes one level sized for what its top level has
// no room for, 3 levels in all).
TEST_F(index_query, a_grown_index_notes_its_levels) {
    std::string const genome = lambda_genome();
    write_file("head.fa", ">head\n" + genome.substr(0, 2000) + "\n");
    write_file("rest.fa", ">rest\n" + genome.substr(2000) + "\n");
    std::mt19937_64 rng(13);
    std::string random;
    for (int i = 0; i < 60000; ++i) random += "ACGT"[rng() % 4];
    write_file("more.fa", ">more\n" + random + "\n");
    ASSERT_EQ(qmer({"index", "-q", "-o", "grown.qmer", "head.fa"}).exit_code, 0);
    auto const two = qmer({"index", "-q", "--append", "-o", "grown.qmer", "rest.fa"});
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.err.find("qmer: note: 'grown.qmer' has "), std::string::npos) << two.err;
    auto const grown = qmer({"index", "-q", "--append", "-o", "grown.qmer", "more.fa"});
    ASSERT_EQ(grown.exit_code, 0) << grown.err;
    EXPECT_NE(grown.err.find("qmer: note: 'grown.qmer' has "), std::string::npos) << grown.err;
    EXPECT_NE(grown.err.find("levels: a query looks up each absent k-mer"), std::string::npos);
    // A small append after that merges into the top level, and says the same of the levels.
    write_file("tiny.fa", ">tiny\nGATTACAGATTACACCCGGGTTTAAACCCGGGTTTAGGCATCGATCGA\n");
    auto const tiny = qmer({"index", "--append", "-o", "grown.qmer", "tiny.fa"});
    ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
    EXPECT_NE(tiny.err.find("merged into the top level"), std::string::npos) << tiny.err;
    EXPECT_NE(tiny.err.find("qmer: note: 'grown.qmer' has "), std::string::npos) << tiny.err;
    auto const counted =
        qmer({"index", "-q", "-o", "counted.qmer", data("lambda_virus.fa.gz").string()});
    ASSERT_EQ(counted.exit_code, 0) << counted.err;
    EXPECT_EQ(counted.err.find("levels"), std::string::npos) << counted.err;
}

// An --expected that holds the references' distinct k-mers (lambda: ~48,500) takes the sorted
// build, like a counted build: one level in the rank-select layout, sized from --expected (three
// times the count here: a larger table, so fewer false positives, never fewer true k-mers), the
// same k-mers looked up in every read and the same reads matched as the counted index.
TEST_F(index_query, an_expected_count_that_holds_the_references_builds_one_sorted_level) {
    std::string const genome = data("lambda_virus.fa.gz").string();
    std::string const reads = data("lambda_reads_1.fq.gz").string();
    auto const room = qmer({"index", "-q", "--expected", "150000", "-o", "room.qmer", genome});
    ASSERT_EQ(room.exit_code, 0) << room.err;
    EXPECT_EQ(room.err.find("levels"), std::string::npos) << room.err;
    ASSERT_EQ(qmer({"index", "-o", "counted.qmer", genome}).exit_code, 0);
    auto const info = qmer({"info", "--json", "room.qmer"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("{\"levels\": 1,"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("\"layout\": \"rank-select\""), std::string::npos) << info.out;
    // Made at its final size for --expected (k-mer by k-mer inserts start it at 1/8 of that and
    // double it as it fills), and the user told so.
    EXPECT_NE(room.err.find("qmer: note: --expected 150000 is more than twice"), std::string::npos)
        << room.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(info.out, m, std::regex("\"slots\": ([0-9]+)"))) << info.out;
    EXPECT_GE(std::stoull(m[1]), 150000u) << info.out;
    auto const with_room = qmer({"query", "room.qmer", reads});
    auto const counted = qmer({"query", "counted.qmer", reads});
    ASSERT_EQ(with_room.exit_code, 0) << with_room.err;
    ASSERT_EQ(counted.exit_code, 0) << counted.err;
    auto const a = tsv_rows(with_room.out), b = tsv_rows(counted.out);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GT(a.size(), 1u);
    for (size_t i = 1; i < a.size(); ++i) {
        ASSERT_EQ(a[i].size(), b[i].size());
        // read_id, kmers and match; hits and containment may differ by a false positive.
        for (size_t c : {0u, 1u, 4u}) EXPECT_EQ(a[i][c], b[i][c]) << "row " << i << " column " << c;
    }
    // The same from stdin: copied to a scratch file, then the same sorted build (not inserts k-mer
    // by k-mer into a level grown from 1/8 of --expected), so the same words, the same hits.
    auto const piped =
        qmer({"index", "-q", "--expected", "150000", "-o", "piped.qmer", "-"}, genome);
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.err.find("levels"), std::string::npos) << piped.err;
    auto const piped_info = qmer({"info", "--json", "piped.qmer"});
    EXPECT_NE(piped_info.out.find("{\"levels\": 1,"), std::string::npos) << piped_info.out;
    EXPECT_NE(piped_info.out.find("\"layout\": \"rank-select\""), std::string::npos)
        << piped_info.out;
    auto const from_pipe = qmer({"query", "piped.qmer", reads});
    ASSERT_EQ(from_pipe.exit_code, 0) << from_pipe.err;
    EXPECT_EQ(tsv_rows(from_pipe.out), tsv_rows(with_room.out));
}

// An --expected below the references' count (1,000 for lambda's ~48,500 k-mers) would mean inserts
// into a first level of 125 k-mers and the 6-7 levels it grows: a far slower build, more bits per
// k-mer, every absent k-mer looked up in every level (bench/MEASUREMENTS.md). The default filter
// counts the references all the same: it makes the index for the count, the same one as without
// --expected, and says so; from a file or from stdin.
TEST_F(index_query, an_expected_count_below_the_references_builds_for_the_count) {
    std::string const genome = data("lambda_virus.fa.gz").string();
    std::string const reads = data("lambda_reads_1.fq.gz").string();
    ASSERT_EQ(qmer({"index", "-q", "-o", "counted.qmer", genome}).exit_code, 0);
    auto const counted = qmer({"query", "counted.qmer", reads});
    ASSERT_EQ(counted.exit_code, 0) << counted.err;
    for (bool const piped : {false, true}) {
        SCOPED_TRACE(piped ? "stdin" : "file");
        auto const low =
            piped ? qmer({"index", "-q", "--expected", "1000", "-o", "low.qmer", "-"}, genome)
                  : qmer({"index", "-q", "--expected", "1000", "-o", "low.qmer", genome});
        ASSERT_EQ(low.exit_code, 0) << low.err;
        EXPECT_NE(low.err.find("qmer: note: --expected 1000 is below the references' ~"),
                  std::string::npos)
            << low.err;
        EXPECT_EQ(low.err.find("levels"), std::string::npos) << low.err;
        auto const info = qmer({"info", "--json", "low.qmer"});
        EXPECT_NE(info.out.find("{\"levels\": 1,"), std::string::npos) << info.out;
        EXPECT_NE(info.out.find("\"layout\": \"rank-select\""), std::string::npos) << info.out;
        EXPECT_NE(info.out.find("\"expected\": 1000"), std::string::npos) << info.out;
        auto const q = qmer({"query", "low.qmer", reads});
        ASSERT_EQ(q.exit_code, 0) << q.err;
        EXPECT_EQ(tsv_rows(q.out), tsv_rows(counted.out));
    }
}

// An --append whose new k-mers fit the top level's room (here: a level made for --expected 60000,
// holding 40,000 bases' k-mers) is merged into that level in one sorted pass instead of inserted
// k-mer by k-mer, and says so. It answers exactly as a fresh build of both at the same --expected:
// the same distinct k-mers, one level, the same rows for every read, no read's hits below an exact
// k-mer set's. One more append that does not fit the top level writes a new level in the same
// pass.
TEST_F(index_query, an_append_the_top_level_has_room_for_is_merged_in_one_pass) {
    std::string const genome = lambda_genome();
    write_file("base.fa", ">base\n" + genome.substr(0, 40000) + "\n");
    write_file("add.fa", ">add\n" + genome.substr(40000) + "\n");
    std::string const reads = data("lambda_reads_1.fq.gz").string();
    ASSERT_EQ(
        qmer({"index", "-q", "--expected", "60000", "-o", "merged.qmer", "base.fa"}).exit_code, 0);
    auto const merged = qmer({"index", "--append", "-o", "merged.qmer", "add.fa"});
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_NE(merged.err.find("merged into the top level in one pass"), std::string::npos)
        << merged.err;
    // A fresh build of both at the same --expected: the same level, the same fingerprints.
    auto const fresh =
        qmer({"index", "-q", "--expected", "60000", "-o", "fresh.qmer", "base.fa", "add.fa"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    auto const a = qmer({"info", "--json", "merged.qmer"}),
               b = qmer({"info", "--json", "fresh.qmer"});
    for (auto const* info : {&a, &b})
        EXPECT_NE(info->out.find("{\"levels\": 1,"), std::string::npos) << info->out;
    EXPECT_NE(a.out.find("\"base.fa\", \"add.fa\""), std::string::npos) << a.out;
    std::smatch ma, mb;
    ASSERT_TRUE(std::regex_search(a.out, ma, std::regex("\"kmers\": ([0-9]+)"))) << a.out;
    ASSERT_TRUE(std::regex_search(b.out, mb, std::regex("\"kmers\": ([0-9]+)"))) << b.out;
    EXPECT_EQ(ma[1], mb[1]);
    EXPECT_GT(std::stoull(ma[1]), 45000u);
    auto const qa = qmer({"query", "merged.qmer", reads}),
               qb = qmer({"query", "fresh.qmer", reads});
    ASSERT_EQ(qa.exit_code, 0) << qa.err;
    ASSERT_EQ(qb.exit_code, 0) << qb.err;
    auto const rows = tsv_rows(qa.out);
    EXPECT_EQ(rows, tsv_rows(qb.out));
    auto const exact = exact_hits_per_read(
        read_gz(reads), canonical_31mers({genome.substr(0, 40000), genome.substr(40000)}));
    ASSERT_EQ(rows.size(), exact.size());
    for (size_t r = 0; r < rows.size(); ++r) {
        ASSERT_EQ(rows[r][0], exact[r].first);
        EXPECT_GE(std::stoul(rows[r][2]), exact[r].second) << rows[r][0];
    }
    // The same k-mers again (a strain the index holds): nothing new, merged, the same k-mers.
    // Its k-mers are left out as they are read, so they are not counted against the room.
    auto const again = qmer({"index", "--append", "-o", "merged.qmer", "base.fa", "add.fa"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("merged into the top level"), std::string::npos) << again.err;
    std::smatch m2;
    auto const again_info = qmer({"info", "--json", "merged.qmer"});
    ASSERT_TRUE(std::regex_search(again_info.out, m2, std::regex("\"kmers\": ([0-9]+)")));
    EXPECT_EQ(m2[1], ma[1]);
    // 30,000 random bases: more new k-mers than the top level has room for, so a level is
    // pushed, written in the same pass, and every k-mer is still found.
    std::mt19937_64 rng(11);
    std::string random;
    for (int i = 0; i < 30000; ++i) random += "ACGT"[rng() % 4];
    write_file("more.fa", ">more\n" + random + "\n");
    auto const more = qmer({"index", "--append", "-o", "merged.qmer", "more.fa"});
    ASSERT_EQ(more.exit_code, 0) << more.err;
    EXPECT_NE(more.err.find("merged into the top level and 1 new level in one pass"),
              std::string::npos)
        << more.err;
    EXPECT_NE(qmer({"info", "--json", "merged.qmer"}).out.find("{\"levels\": 2,"),
              std::string::npos);
    write_file("more.fq",
               "@m1\n" + random.substr(100, 150) + "\n+\n" + std::string(150, 'I') + "\n");
    auto const found = tsv_rows(qmer({"query", "merged.qmer", "more.fq"}).out);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0][1], "120");
    EXPECT_EQ(found[0][2], "120");
}

// An --append of many more k-mers than the index holds (lambda's first 2,000 bases, then the rest:
// ~24x) writes them in the same sorted pass, not k-mer by k-mer (many times faster:
// bench/append/README.md), into the top level and one new level sized for the rest (the levels the
// inserts push, one per doubling, cost an absent k-mer a lookup each). Against one qmer index run
// over both: 2 levels, at most 10% more bits per k-mer, about the same k-mers (a level's
// fingerprint collisions depend on which k-mers share it), and both answer every read with the
// exact k-mer set's k-mers and no fewer hits; stdin takes the same pass. Two more appends onto the
// written levels still find every k-mer.
TEST_F(index_query, an_append_beyond_the_top_level_writes_one_level_sized_for_the_rest) {
    std::string const genome = lambda_genome();
    write_file("head.fa", ">head\n" + genome.substr(0, 2000) + "\n");
    write_file("rest.fa", ">rest\n" + genome.substr(2000) + "\n");
    std::string const reads = data("lambda_reads_1.fq.gz").string();
    ASSERT_EQ(qmer({"index", "-q", "-o", "sorted.qmer", "head.fa"}).exit_code, 0);
    std::filesystem::copy_file(dir() / "sorted.qmer", dir() / "piped.qmer");
    auto const sorted = qmer({"index", "--append", "-o", "sorted.qmer", "rest.fa"});
    ASSERT_EQ(sorted.exit_code, 0) << sorted.err;
    std::smatch added;
    ASSERT_TRUE(std::regex_search(
        sorted.err, added,
        std::regex("merged into the top level and ([0-9]+) new level in one pass")))
        << sorted.err;
    EXPECT_EQ(std::stoul(added[1]), 1u);
    // Stdin is copied to a scratch file first and takes the same pass.
    auto const piped =
        qmer({"index", "--append", "-o", "piped.qmer", "-"}, (dir() / "rest.fa").string());
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_NE(piped.err.find(added[0].str()), std::string::npos) << piped.err;
    EXPECT_EQ(filter_params("piped.qmer"), filter_params("sorted.qmer"));
    auto const one_level = qmer({"index", "-q", "-o", "one.qmer", "head.fa", "rest.fa"});
    ASSERT_EQ(one_level.exit_code, 0) << one_level.err;
    auto number = [](std::string const& json, char const* field) {
        std::smatch m;
        EXPECT_TRUE(
            std::regex_search(json, m, std::regex(std::string("\"") + field + "\": ([0-9]+)")))
            << json;
        return std::stoull(m[1]);
    };
    auto const a = qmer({"info", "--json", "sorted.qmer"}).out,
               b = qmer({"info", "--json", "one.qmer"}).out;
    EXPECT_EQ(number(a, "levels"), 2u);
    // A new index's hash carries the window bits its sized level reads (hash scheme 2).
    EXPECT_NE(a.find("\"level_window_bits\": 8"), std::string::npos) << a;
    EXPECT_EQ(number(b, "levels"), 1u);
    auto bits = [](std::string const& json) {
        std::smatch m;
        EXPECT_TRUE(std::regex_search(json, m, std::regex("\"bits_per_kmer\": ([0-9.]+)"))) << json;
        return std::stod(m[1]);
    };
    EXPECT_LT(bits(a), 1.1 * bits(b));
    double const ka = static_cast<double>(number(a, "kmers")),
                 kb = static_cast<double>(number(b, "kmers"));
    EXPECT_NEAR(ka, kb, 0.002 * kb);
    EXPECT_GT(ka, 45000);
    auto const exact = exact_hits_per_read(
        read_gz(reads), canonical_31mers({genome.substr(0, 2000), genome.substr(2000)}));
    // Each read's k-mers (column 1) as the one-level index counts them, and no fewer hits than
    // the exact set's.
    auto const reference = tsv_rows(qmer({"query", "one.qmer", reads}).out);
    auto check = [&](char const* index) {
        SCOPED_TRACE(index);
        auto const q = qmer({"query", index, reads});
        ASSERT_EQ(q.exit_code, 0) << q.err;
        auto const rows = tsv_rows(q.out);
        ASSERT_EQ(rows.size(), exact.size());
        ASSERT_EQ(rows.size(), reference.size());
        for (size_t r = 0; r < rows.size(); ++r) {
            ASSERT_EQ(rows[r][0], exact[r].first);
            ASSERT_EQ(rows[r][1], reference[r][1]) << rows[r][0];
            ASSERT_GE(std::stoul(rows[r][2]), exact[r].second) << rows[r][0];
        }
    };
    check("sorted.qmer");
    check("piped.qmer");
    check("one.qmer");
    EXPECT_EQ(tsv_rows(qmer({"query", "piped.qmer", reads}).out),
              tsv_rows(qmer({"query", "sorted.qmer", reads}).out));
    // Two more appends onto the written levels: 30,000 random bases each.
    std::mt19937_64 rng(12);
    std::string more[2];
    for (auto& m : more)
        for (int i = 0; i < 30000; ++i) m += "ACGT"[rng() % 4];
    write_file("more0.fa", ">more0\n" + more[0] + "\n");
    write_file("more1.fa", ">more1\n" + more[1] + "\n");
    auto const first_merge = qmer({"index", "--append", "-o", "sorted.qmer", "more0.fa"});
    ASSERT_EQ(first_merge.exit_code, 0) << first_merge.err;
    EXPECT_NE(first_merge.err.find("in one pass"), std::string::npos) << first_merge.err;
    auto const by_merge = qmer({"index", "--append", "-o", "sorted.qmer", "more1.fa"});
    ASSERT_EQ(by_merge.exit_code, 0) << by_merge.err;
    EXPECT_NE(by_merge.err.find("in one pass"), std::string::npos) << by_merge.err;
    check("sorted.qmer");
    std::string fq;
    for (int m = 0; m < 2; ++m)
        for (int at = 0; at + 150 <= 30000; at += 3000)
            fq += "@m" + std::to_string(m) + "_" + std::to_string(at) + "\n" +
                  more[m].substr(at, 150) + "\n+\n" + std::string(150, 'I') + "\n";
    write_file("more.fq", fq);
    auto const found = tsv_rows(qmer({"query", "sorted.qmer", "more.fq"}).out);
    ASSERT_EQ(found.size(), 20u);
    for (auto const& row : found) {
        EXPECT_EQ(row[1], "120") << row[0];
        EXPECT_EQ(row[2], "120") << row[0];
    }
}

TEST_F(index_query, appending_answers_as_building_at_once) {
    std::string const genome = lambda_genome();
    write_file("a.fa", ">a\n" + genome.substr(0, 24000) + "\n");
    write_file("b.fa", ">b\n" + genome.substr(24000) + "\n");
    std::string const reads = data("lambda_reads_1.fq.gz").string();
    for (size_t i = 0; i < qmer::app::filter_kind_count; ++i) {
        if (!qmer::app::filter_kind_appends[i]) continue;
        std::string const kind(qmer::app::filter_kind_names[i]);
        SCOPED_TRACE(kind);
        // Small first levels, so the appended half makes the filters grow (the default filter
        // counts its references and sizes its first level for them, whatever --expected says:
        // its level for a.fa alone fills, and b.fa grows a second). One thread: with several,
        // which k-mers land in which level depends on the interleaving, so two builds differ in
        // their (rare) false positives, never in a true k-mer.
        ASSERT_EQ(qmer({"index", "-t", "1", "--filter", kind, "--expected", "1000", "-o",
                        "once.qmer", "a.fa", "b.fa"})
                      .exit_code,
                  0);
        ASSERT_EQ(qmer({"index", "-t", "1", "--filter", kind, "--expected", "1000", "-o",
                        "twice.qmer", "a.fa"})
                      .exit_code,
                  0);
        auto const app =
            qmer({"index", "-t", "1", "--append", "--filter", kind, "-o", "twice.qmer", "b.fa"});
        ASSERT_EQ(app.exit_code, 0) << app.err;
        auto const once = qmer({"query", "once.qmer", reads});
        auto const twice = qmer({"query", "twice.qmer", reads});
        ASSERT_EQ(once.exit_code, 0);
        ASSERT_EQ(twice.exit_code, 0);
        auto const info = qmer({"info", "--json", "twice.qmer"});
        if (kind == "expandable") {
            // One counted level against a counted level and a grown one: the same k-mers looked
            // up in every read, neither below an exact k-mer set's hits, and apart only by a
            // false positive here and there.
            EXPECT_NE(info.out.find("{\"levels\": 2,"), std::string::npos) << info.out;
            // The k-mers of a.fa and b.fa: none spans the cut.
            auto const exact = exact_hits_per_read(
                read_gz(reads), canonical_31mers({genome.substr(0, 24000), genome.substr(24000)}));
            auto const a = tsv_rows(once.out), b = tsv_rows(twice.out);
            ASSERT_EQ(a.size(), b.size());
            ASSERT_EQ(a.size(), exact.size());
            size_t differ = 0;
            for (size_t r = 0; r < a.size(); ++r) {
                ASSERT_EQ(a[r][0], b[r][0]);
                ASSERT_EQ(a[r][0], exact[r].first);
                ASSERT_EQ(a[r][1], b[r][1]) << a[r][0];
                size_t const ha = std::stoul(a[r][2]), hb = std::stoul(b[r][2]);
                EXPECT_GE(ha, exact[r].second) << a[r][0];
                EXPECT_GE(hb, exact[r].second) << a[r][0];
                differ += ha != hb;
            }
            EXPECT_LE(differ, a.size() / 100);
        } else {
            EXPECT_EQ(tsv_rows(once.out), tsv_rows(twice.out));
        }
        EXPECT_NE(info.out.find("\"a.fa\", \"b.fa\""), std::string::npos) << info.out;
        EXPECT_EQ(
            qmer({"info", "--json", "once.qmer"}).out.find("\"kmers\": ") != std::string::npos,
            true);
    }
    // A fixed-size filter cannot take more references.
    ASSERT_EQ(qmer({"index", "--filter", "locally-locked", "-o", "fixed.qmer", "a.fa"}).exit_code,
              0);
    EXPECT_EQ(qmer({"index", "--append", "--filter", "locally-locked", "-o", "fixed.qmer", "b.fa"})
                  .exit_code,
              2);
}

TEST_F(index_query, output_does_not_depend_on_the_thread_count) {
    auto r = qmer({"index", "-t", "2", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const one = qmer({"query", "-t", "1", "lambda.qmer", data("lambda_reads_1.fq.gz").string(),
                           data("lambda_reads_2.fq.gz").string()});
    auto const eight =
        qmer({"query", "-t", "8", "lambda.qmer", data("lambda_reads_1.fq.gz").string(),
              data("lambda_reads_2.fq.gz").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_EQ(eight.exit_code, 0) << eight.err;
    EXPECT_EQ(one.out, eight.out);
    EXPECT_EQ(tsv_rows(one.out).size(), 10000u);  // one line per pair
}

TEST_F(index_query, paired_outputs_keep_mates_together) {
    ASSERT_EQ(qmer({"index", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()}).exit_code,
              0);
    auto const r =
        qmer({"query", "-o", "v.tsv", "--matched", "m.fq.gz", "--unmatched", "u.fq", "lambda.qmer",
              data("lambda_reads_1.fq.gz").string(), data("lambda_reads_2.fq.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    auto const rows = tsv_rows(slurp(dir() / "v.tsv"));
    size_t matched = 0;
    for (auto const& row : rows) matched += row[4] == "1";
    auto const count_records = [](std::string const& fq) {
        return static_cast<size_t>(std::count(fq.begin(), fq.end(), '\n')) / 4;
    };
    EXPECT_EQ(count_records(read_gz(dir() / "m_1.fq.gz")), matched);
    EXPECT_EQ(count_records(read_gz(dir() / "m_2.fq.gz")), matched);
    EXPECT_EQ(count_records(slurp(dir() / "u_1.fq")), rows.size() - matched);
    EXPECT_EQ(count_records(slurp(dir() / "u_2.fq")), rows.size() - matched);
    // bowtie2's simulated pairs: 98.8% are called; of the rest, 82 pairs keep no error-free
    // 31-mer at all in either mate (hits = 0 with any index), so no rule could call them.
    EXPECT_GE(matched, rows.size() * 98 / 100);
}

TEST_F(index_query, info_reports_what_was_built) {
    ASSERT_EQ(qmer({"index", "-k", "21", "--fpr", "0.01", "-o", "lambda.qmer",
                    data("lambda_virus.fa.gz").string()})
                  .exit_code,
              0);
    auto const text = qmer({"info", "lambda.qmer"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("k:              21"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("lambda_virus.fa.gz"), std::string::npos);
    auto const json = qmer({"info", "--json", "lambda.qmer"});
    ASSERT_EQ(json.exit_code, 0);
    EXPECT_NE(json.out.find("\"k\": 21"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"fpr\": 0.01"), std::string::npos) << json.out;
    // lambda has 48,502 - 21 + 1 k-mer positions; distinct canonical 21-mers are a few fewer.
    EXPECT_NE(json.out.find("\"kmers_scanned\": 48482"), std::string::npos) << json.out;
}

// From files, the default index first counts the distinct k-mers (HyperLogLog) and builds level 0
// at its final size: filter_params holds Q0 (index 6) and level 0's current quotient bits (index
// 8). Stdin and pipes, which cannot be read twice, are copied into a scratch file first and give
// the same index as the file, word for word; a bad record there is named as the user named the
// input, not as the scratch copy.
TEST_F(index_query, file_input_sizes_the_first_level_from_a_distinct_count) {
    write_file("lambda.fa", read_gz(data("lambda_virus.fa.gz")));
    ASSERT_EQ(qmer({"index", "-o", "file.qmer", "lambda.fa"}).exit_code, 0);
    auto const file = filter_params("file.qmer");
    // The stack's {tag, expected, p, grow_at, cascading, levels, Q0, R0, m0}, then level 0's
    // {q, r, total slots, size, canonical slots}.
    ASSERT_GE(file.size(), 14u);
    EXPECT_EQ(file[5], 1u) << "one level";
    EXPECT_EQ(file[9], file[6]) << "level 0 built at its final size";
    EXPECT_EQ(file[13], file[8]) << "level 0 built at its final size";
    // 48,464 distinct 31-mers: the estimate (+3 standard errors) must cover them in one level at
    // its 95% fill, and level 0's slots (any count, not a power of two) must not exceed what they
    // need by more than the estimate's error: the level ends at least 88% full.
    EXPECT_GE(0.95 * static_cast<double>(file[8]), 48464.0);
    EXPECT_GE(48464.0 / static_cast<double>(file[8]), 0.88);
    EXPECT_NE(qmer({"info", "file.qmer"}).out.find("hash scheme:    minimizer-local"),
              std::string::npos);

    auto const words_of = [&](char const* index) { return filter_words(index, 90000); };
    ASSERT_EQ(qmer({"index", "-o", "stdin.qmer", "-"}, "lambda.fa").exit_code, 0);
    EXPECT_TRUE(words_of("file.qmer") == words_of("stdin.qmer")) << "stdin built another filter";
    // A named pipe, as a process substitution gives one.
    std::string const pipe = "cd '" + dir().string() + "' && mkfifo ref.pipe && { cat lambda.fa " +
                             "> ref.pipe & } && '" + std::string(QMER_BINARY) +
                             "' index -q -o pipe.qmer ref.pipe";
    ASSERT_EQ(std::system(pipe.c_str()), 0);
    EXPECT_TRUE(words_of("file.qmer") == words_of("pipe.qmer")) << "a pipe built another filter";
    EXPECT_NE(qmer({"info", "stdin.qmer"}).out.find("inputs:         1\n  -\n"), std::string::npos)
        << qmer({"info", "stdin.qmer"}).out;

    write_file("bad.fq", "@r1\nACGTACGT\n+\nIII\n");
    auto const bad = qmer({"index", "-o", "bad.qmer", "-"}, "bad.fq");
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_TRUE(bad.err.starts_with("qmer: error: -: record 1: quality length")) << bad.err;
    EXPECT_EQ(bad.err.find("/proc/"), std::string::npos) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "bad.qmer"));
}

// --fill sets how full a counted first level ends: 0.5 gives ~0.95 / 0.5 the slots of the default,
// the same calls, and a value outside [0.25, 0.95] is a usage error.
TEST_F(index_query, fill_sizes_the_counted_first_level) {
    auto m0_of = [&](std::string const& index) {
        auto const params = filter_params(index);  // the stack's 9th parameter is m0
        return params.size() > 8 ? static_cast<double>(params[8]) : 0.0;
    };
    write_file("lambda.fa", read_gz(data("lambda_virus.fa.gz")));
    ASSERT_EQ(qmer({"index", "-o", "default.qmer", "lambda.fa"}).exit_code, 0);
    ASSERT_EQ(qmer({"index", "--fill", "0.5", "-o", "half.qmer", "lambda.fa"}).exit_code, 0);
    double const ratio = m0_of("half.qmer") / m0_of("default.qmer");
    EXPECT_NEAR(ratio, 0.95 / 0.5, 0.02);
    // Another fill gives other windows (core/kmer/sequence_hashing.hpp), so other false positives.
    expect_same_kmers_and_nearly_same_calls("default.qmer", "half.qmer",
                                            data("lambda_reads_1.fq.gz").string(), 10);
    auto const bad = qmer({"index", "--fill", "0.96", "-o", "bad.qmer", "lambda.fa"});
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "bad.qmer"));
}

// --max-memory is a promise. A limit below what the build needs (its table, the reading pipeline,
// the longest record) is refused before the build, naming that size; from there up every limit is
// kept (the peak RSS the closing line reports stays under it), and the filter words are the same
// whichever way the limit makes the sorted build go: buckets in memory (no limit) or a scratch file
// (0.2 and 20 MiB to spare; the references read in slices are for fingerprints too long for the
// scratch file's bins, tested in tests/app/index/sorted_build_test.cpp). A --temp-dir that does not
// exist fails before any work (exit 5).
TEST_F(index_query, every_memory_limit_is_kept_or_refused_and_gives_the_same_filter) {
    // 4 Mbp of random sequence in 40 records: a table of ~9 MiB.
    write_file("ref.fa", random_fasta(40, 100000, 11));
    ASSERT_EQ(qmer({"index", "-t", "2", "-o", "free.qmer", "ref.fa"}).exit_code, 0);

    double least = 0;
    ASSERT_NO_FATAL_FAILURE(least_memory_mib("ref.fa", "40M", least));
    EXPECT_GT(least, 40.0);

    std::filesystem::create_directories(dir() / "scratch");
    size_t const words = 900000;
    std::string const free_words = filter_words("free.qmer", words);
    ASSERT_FALSE(free_words.empty());
    std::smatch m;
    struct limited {
        double spare_mib;
        char const* shows;  // in the closing line
    };
    for (auto const& [spare, shows] :
         {limited{20, "scratch file in 'scratch'"}, limited{0.2, "scratch file in 'scratch'"}}) {
        SCOPED_TRACE(testing::Message() << spare << " MiB to spare");
        auto const r = index_limited("ref.fa", least + spare);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find(shows), std::string::npos) << r.err;
        ASSERT_TRUE(std::regex_search(r.err, m, std::regex("peak RSS ([0-9.]+) MiB"))) << r.err;
        // Under AddressSanitizer the shadow memory and the quarantine alone pass any such limit.
        if (!QMER_TEST_SANITIZED) {
            EXPECT_LT(std::stod(m[1]), least + spare) << r.err;
        }
        EXPECT_TRUE(std::filesystem::is_empty(dir() / "scratch"));
        EXPECT_TRUE(filter_words("limited.qmer", words) == free_words) << "the filter words differ";
    }

    auto const missing = qmer({"index", "--temp-dir", "no/such", "-o", "x.qmer", "ref.fa"});
    EXPECT_EQ(missing.exit_code, 5) << missing.err;
    EXPECT_NE(missing.err.find("'no/such': cannot make the build's scratch file"),
              std::string::npos)
        << missing.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
}

// References large enough (by their files' sizes) are counted and their super-k-mers gathered in
// one read, the table sized only at its end. The index is word for word the one a build that counts
// first writes: the same references without the record of Ns that makes the file large (no k-mers,
// so the same k-mer set) take the two reads, and so does every memory limit's build, with the
// super-k-mers in memory or in the scratch file. A limit too small for the table is refused, after
// that read, naming the size it needs.
TEST_F(index_query, a_large_reference_is_counted_and_gathered_in_one_read) {
    std::string const sequence = random_fasta(30, 100000, 23);  // 3 Mbp: a table of ~6 MiB
    write_file("small.fa", sequence);
    write_file("large.fa", sequence + ">only_n\n" + std::string(9000000, 'N') + "\n");
    ASSERT_EQ(qmer({"index", "-t", "2", "-o", "small.qmer", "small.fa"}).exit_code, 0);
    auto const large = qmer({"index", "-t", "2", "-o", "large.qmer", "large.fa"});
    ASSERT_EQ(large.exit_code, 0) << large.err;
    auto const words_of = [&](char const* index) { return filter_words(index, 1 << 20); };
    std::string const expected = words_of("small.qmer");
    ASSERT_FALSE(expected.empty());
    EXPECT_TRUE(words_of("large.qmer") == expected) << "one read built another filter";

    double least = 0;
    ASSERT_NO_FATAL_FAILURE(least_memory_mib("large.fa", "30M", least));
    std::filesystem::create_directories(dir() / "scratch");
    for (double const spare : {20.0, 0.2}) {
        SCOPED_TRACE(testing::Message() << spare << " MiB to spare");
        auto const r = index_limited("large.fa", least + spare);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(words_of("limited.qmer") == expected) << r.err;
    }

    // Files that look large but hold few k-mers: the table is too small for the bins chosen
    // before the count (its windows coarser than them), so the references are read again, and
    // the index is still the one the small file gives.
    std::string const few = random_fasta(1, 20000, 29);
    write_file("few.fa", few);
    write_file("few_large.fa", few + ">only_n\n" + std::string(9000000, 'N') + "\n");
    ASSERT_EQ(qmer({"index", "-o", "few.qmer", "few.fa"}).exit_code, 0);
    auto const few_large = qmer({"index", "-o", "few_large.qmer", "few_large.fa"});
    ASSERT_EQ(few_large.exit_code, 0) << few_large.err;
    std::string const few_words = filter_words("few.qmer", 20000);  // of ~37 KB of words
    ASSERT_FALSE(few_words.empty());
    EXPECT_TRUE(filter_words("few_large.qmer", 20000) == few_words);
    // Counted once, not once per read.
    EXPECT_NE(few_large.err.find("2 records, 9.02 Mbp"), std::string::npos) << few_large.err;
    EXPECT_NE(few_large.err.find("19.97 k k-mers"), std::string::npos) << few_large.err;
}

// The one read counts the k-mers of one minimizer in eight (core/sketch/group_sampled_count.hpp).
// A tandem repeat has a handful of minimizers, here none of them sampled: the sample says
// nothing, and every k-mer is counted again from the gathered super-k-mers, so the table is the
// one a build that counts first makes (not sized for nothing, nor for the 2 M positions).
TEST_F(index_query, a_tandem_repeat_of_few_minimizers_is_counted_in_full) {
    std::string unit = "ACGTTGCAT", repeat;
    while (repeat.size() < 2000000) repeat += unit;
    write_file("small.fa", ">repeat\n" + repeat + "\n");
    write_file("large.fa", ">repeat\n" + repeat + "\n>only_n\n" + std::string(9000000, 'N') + "\n");
    ASSERT_EQ(qmer({"index", "-o", "small.qmer", "small.fa"}).exit_code, 0);
    auto const large = qmer({"index", "-t", "2", "-o", "large.qmer", "large.fa"});
    ASSERT_EQ(large.exit_code, 0) << large.err;
    EXPECT_NE(large.err.find("2.00 M k-mers, 9 distinct"), std::string::npos) << large.err;
    std::string const words = filter_words("small.qmer", 1024);  // of ~2.5 KB
    ASSERT_FALSE(words.empty());
    EXPECT_TRUE(filter_words("large.qmer", 1024) == words);
    EXPECT_EQ(filter_params("small.qmer"), filter_params("large.qmer"));
}

// The default build writes its level into the index file as it makes it and the header's counts
// last (io::index_writer::rewrite); written to stdout, where nothing can be rewritten, it is
// buffered and written at the end. Both give the same index: the same words, counts and answers,
// and a checksum that matches.
TEST_F(index_query, a_level_streamed_into_the_file_is_the_one_written_at_the_end) {
    write_file("ref.fa", random_fasta(4, 50000, 31));
    ASSERT_EQ(qmer({"index", "-t", "2", "-o", "streamed.qmer", "ref.fa"}).exit_code, 0);
    auto const piped = shell("\"$QMER\" index -q -t 2 -o - ref.fa > piped.qmer");
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    std::string const words = filter_words("streamed.qmer", 200000);
    ASSERT_FALSE(words.empty());
    EXPECT_TRUE(filter_words("piped.qmer", 200000) == words);
    EXPECT_EQ(filter_params("streamed.qmer"), filter_params("piped.qmer"));
    // The counts rewritten last: 199,880 positions, ~199.8 k distinct fingerprints.
    auto const level_line = [&](char const* index) {
        auto const info = qmer({"info", index});
        EXPECT_EQ(info.exit_code, 0) << info.err;
        auto const at = info.out.find("level 0:");
        return at == std::string::npos ? "" : info.out.substr(at, info.out.find('\n', at) - at);
    };
    std::string const level = level_line("streamed.qmer");
    EXPECT_NE(level.find("kmers 1998"), std::string::npos) << level;
    EXPECT_EQ(level, level_line("piped.qmer"));
    EXPECT_NE(qmer({"info", "streamed.qmer"}).out.find("199880 k-mer positions"),
              std::string::npos);
    auto const a = qmer({"query", "-q", "streamed.qmer", "ref.fa"});
    auto const b = qmer({"query", "-q", "piped.qmer", "ref.fa"});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out.substr(a.out.find("read_id")), b.out.substr(b.out.find("read_id")));
}

// --quick calls exactly the reads a full lookup calls; only matched reads may stop early, and
// their counts are then a prefix of the full ones.
TEST_F(index_query, quick_calls_the_same_reads_and_stops_only_matched_ones) {
    // Half the reads from lambda, half random: both verdicts occur.
    std::string const genome = lambda_genome();
    std::mt19937_64 rng(7);
    std::string fq;
    for (int i = 0; i < 400; ++i) {
        std::string seq;
        if (i % 2 == 0) {
            seq = genome.substr(rng() % (genome.size() - 150), 150);
        } else {
            for (int j = 0; j < 150; ++j) seq += "ACGT"[rng() % 4];
        }
        fq += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file("reads.fq", fq);
    ASSERT_EQ(qmer({"index", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()}).exit_code,
              0);
    for (auto const& rule :
         {std::vector<std::string>{}, {"--min-hits", "20"}, {"--min-containment", "0.5"}}) {
        std::vector<std::string> full_args = {"query", "lambda.qmer", "reads.fq"};
        full_args.insert(full_args.end(), rule.begin(), rule.end());
        auto quick_args = full_args;
        quick_args.push_back("--quick");
        auto const full = qmer(full_args);
        auto const quick = qmer(quick_args);
        ASSERT_EQ(full.exit_code, 0) << full.err;
        ASSERT_EQ(quick.exit_code, 0) << quick.err;
        auto const a = tsv_rows(full.out), b = tsv_rows(quick.out);
        ASSERT_EQ(a.size(), 400u);
        ASSERT_EQ(b.size(), a.size());
        size_t stopped = 0, matched = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_EQ(b[i][0], a[i][0]);
            ASSERT_EQ(b[i][4], a[i][4]) << a[i][0];  // the verdict
            if (a[i][4] == "0") {
                EXPECT_EQ(b[i], a[i]);  // an unmatched read is looked up in full
                continue;
            }
            ++matched;
            EXPECT_LE(std::stoul(b[i][1]), std::stoul(a[i][1]));
            EXPECT_LE(std::stoul(b[i][2]), std::stoul(a[i][2]));
            stopped += std::stoul(b[i][1]) < std::stoul(a[i][1]);
        }
        EXPECT_EQ(matched, 200u);
        EXPECT_GT(stopped, matched / 2) << "--quick should stop most matched reads early";
        EXPECT_NE(quick.out.find("--quick"), std::string::npos);  // the preamble says so
    }
}

}  // namespace
