// Screening panels end to end (README, "Screening panels" and "A panel spread over nodes"): several
// indexes in one query, a category per read, --split-by-category, and `qmer merge` of single-index
// runs against the joint run. The panel: three random genomes (distinct species as far as 31-mers
// go), the third holding a 2 kb copy of a stretch of the first, so reads from that stretch belong
// to two indexes.

#include <zlib.h>

#include <map>
#include <random>
#include <sstream>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

// A per-read table: its # lines, its column header, and its rows.
struct table {
    std::vector<std::string> preamble;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;

    size_t column(std::string const& name) const {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return i;
        ADD_FAILURE() << "no column " << name;
        return 0;
    }
};

std::vector<std::string> fields_of(std::string const& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string f;
    while (std::getline(in, f, '\t')) out.push_back(f);
    return out;
}

table parse_table(std::string const& text) {
    table t;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("#"))
            t.preamble.push_back(line);
        else if (t.header.empty())
            t.header = fields_of(line);
        else
            t.rows.push_back(fields_of(line));
    }
    return t;
}

std::string gunzip(std::filesystem::path const& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    EXPECT_NE(f, nullptr) << p;
    std::string out;
    if (!f) return out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    gzclose(f);
    return out;
}

// The read names of a FASTQ file, in order.
std::vector<std::string> fastq_names(std::string const& text) {
    std::vector<std::string> names;
    std::istringstream in(text);
    std::string line;
    for (size_t i = 0; std::getline(in, line); ++i)
        if (i % 4 == 0) names.push_back(line.substr(1, line.find(' ') - 1));
    return names;
}

// A summary without the fields that describe the process that wrote it.
std::string without_process_fields(std::string const& json) {
    std::istringstream in(json);
    std::string line, out;
    while (std::getline(in, line)) {
        bool skip = false;
        for (char const* key : {"\"wall_seconds\"", "\"cpu_seconds\"", "\"reads_per_second\"",
                                "\"peak_rss_bytes\"", "\"threads\""})
            skip = skip || line.find(key) != std::string::npos;
        if (!skip) out += line + "\n";
    }
    return out;
}

std::string reverse_complement(std::string s) {
    std::reverse(s.begin(), s.end());
    for (char& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    return s;
}

class panel : public cli_test {
  protected:
    static constexpr size_t genome_length = 30000, read_length = 150, per_genome = 300;

    void SetUp() override {
        cli_test::SetUp();
        std::mt19937_64 rng(17);
        auto random_dna = [&](size_t n) {
            std::string s(n, 'A');
            for (char& c : s) c = "ACGT"[rng() % 4];
            return s;
        };
        genomes_ = {random_dna(genome_length), random_dna(genome_length),
                    random_dna(genome_length)};
        // The third genome carries a copy of the first's 5,000..7,000.
        genomes_[2].replace(10000, 2000, genomes_[0].substr(5000, 2000));
        char const* names[] = {"A", "B", "C"};
        for (size_t g = 0; g < 3; ++g)
            write_file(std::string("ref_") + names[g] + ".fa",
                       ">" + std::string(names[g]) + "\n" + genomes_[g] + "\n");

        // Single-end reads named after what they should be called: A, B, C, multiple, none. 1%
        // substitutions, every other read reverse-complemented.
        std::string fq, r1, r2;
        std::string const qual(read_length, 'I');
        auto mutate = [&](std::string s) {
            for (char& c : s)
                if (rng() % 100 == 0) c = "ACGT"[(std::string("ACGT").find(c) + 1 + rng() % 3) % 4];
            return s;
        };
        auto add = [&](std::string const& name, std::string seq) {
            if (rng() % 2) seq = reverse_complement(seq);
            fq += "@" + name + "\n" + mutate(seq) + "\n+\n" + qual + "\n";
        };
        for (size_t g = 0; g < 3; ++g) {
            for (size_t i = 0; i < per_genome; ++i) {
                size_t pos;
                do {  // outside the shared stretch: these reads belong to their genome alone
                    pos = rng() % (genome_length - read_length);
                } while ((g == 0 && pos + read_length > 5000 && pos < 7000) ||
                         (g == 2 && pos + read_length > 10000 && pos < 12000));
                add(std::string(names[g]) + "_" + std::to_string(i),
                    genomes_[g].substr(pos, read_length));
            }
        }
        for (size_t i = 0; i < 50; ++i)
            add("multiple_" + std::to_string(i),
                genomes_[0].substr(5000 + rng() % (2000 - read_length), read_length));
        for (size_t i = 0; i < 100; ++i) add("none_" + std::to_string(i), random_dna(read_length));
        write_file("reads.fq", fq);

        // Pairs from 400 bp fragments of each genome, mates named NAME/1 and NAME/2.
        for (size_t g = 0; g < 3; ++g)
            for (size_t i = 0; i < 100; ++i) {
                size_t pos;
                do {
                    pos = rng() % (genome_length - 400);
                } while ((g == 0 && pos + 400 > 5000 && pos < 7000) ||
                         (g == 2 && pos + 400 > 10000 && pos < 12000));
                std::string const name = std::string(names[g]) + "p" + std::to_string(i);
                r1 += "@" + name + "/1\n" + mutate(genomes_[g].substr(pos, read_length)) + "\n+\n" +
                      qual + "\n";
                r2 += "@" + name + "/2\n" +
                      mutate(reverse_complement(genomes_[g].substr(pos + 250, read_length))) +
                      "\n+\n" + qual + "\n";
            }
        write_file("r1.fq", r1);
        write_file("r2.fq", r2);

        // Three filter kinds: the default (queried in place), a Bloom filter and a locally locked
        // QF (both loaded into their own memory): each index gets its own instantiation.
        auto r = qmer({"index", "-q", "-o", "A.qmer", "ref_A.fa"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = qmer({"index", "-q", "--filter", "bloom", "-o", "B.qmer", "ref_B.fa"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = qmer({"index", "-q", "--filter", "locally-locked", "-o", "C.qmer", "ref_C.fa"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }

    // The expected category of a read, from its name.
    static std::string origin(std::string const& id) {
        if (id.starts_with("multiple_")) return "multiple";
        if (id.starts_with("none_")) return "none";
        return id.substr(0, 1);
    }

    std::vector<std::string> panel_args() const {
        return {"-x", "A.qmer", "-x", "B=B.qmer", "-x", "C=./C.qmer"};
    }

    std::vector<std::string> genomes_;
};

std::vector<std::string> operator+(std::vector<std::string> a, std::vector<std::string> const& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TEST_F(panel, every_read_lands_in_its_own_category) {
    auto const r = qmer(std::vector<std::string>{"query", "--summary", "s.json", "-o", "t.tsv"} +
                        panel_args() + std::vector<std::string>{"reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const t = parse_table(slurp(dir() / "t.tsv"));
    ASSERT_EQ(t.header, (std::vector<std::string>{"read_id", "kmers", "hits_A", "hits_B", "hits_C",
                                                  "category"}));
    ASSERT_EQ(t.rows.size(), 3 * per_genome + 150);
    std::map<std::string, size_t> right, total, called;
    for (auto const& row : t.rows) {
        ++total[origin(row[0])];
        right[origin(row[0])] += row[5] == origin(row[0]);
        ++called[row[5]];
    }
    for (auto const& [category, n] : total)
        EXPECT_GE(static_cast<double>(right[category]), 0.99 * static_cast<double>(n))
            << category << ": " << right[category] << " of " << n;
    // The preamble names every index with its parameters; the summary counts what the table says.
    ASSERT_GE(t.preamble.size(), 4u);
    EXPECT_TRUE(
        t.preamble[1].starts_with("# index A: A.qmer (k = 31, filter = expandable, fpr = "));
    EXPECT_TRUE(t.preamble[2].starts_with("# index B: B.qmer (k = 31, filter = bloom, "));
    EXPECT_TRUE(t.preamble[3].starts_with("# index C: ./C.qmer (k = 31, filter = locally-locked"));
    auto const json = slurp(dir() / "s.json");
    std::string categories = "\"categories\": {";
    for (char const* c : {"A", "B", "C", "multiple", "none"})
        categories += std::string(c == std::string("A") ? "" : ", ") + "\"" + c +
                      "\": " + std::to_string(called[c]);
    EXPECT_NE(json.find(categories + "}"), std::string::npos) << json;
    // Per index: matched by it (alone or not), and by it alone.
    size_t matched_a = 0;
    for (auto const& row : t.rows) matched_a += row[5] == "A" || row[5] == "multiple";
    EXPECT_NE(json.find("\"name\": \"A\""), std::string::npos);
    EXPECT_NE(json.find("\"matched\": " + std::to_string(matched_a) +
                        ", \"matched_only\": " + std::to_string(called["A"]) + ", "),
              std::string::npos)
        << json;
    // Per index, how the reads' containment is spread: for A, the last two bins (at least half
    // of the k-mers; all of them) counted from the table.
    size_t half = 0, all = 0;
    for (auto const& row : t.rows) {
        uint64_t const kmers = std::stoull(row[1]), hits = std::stoull(row[2]);
        all += kmers > 0 && hits == kmers;
        half += kmers > 0 && 2 * hits >= kmers && hits < kmers;
    }
    EXPECT_NE(json.find("\"matched_only\": " + std::to_string(called["A"]) +
                        ", \"containment\": {\"from\": [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, "
                        "0.2, 0.5, 1], \"units\": ["),
              std::string::npos)
        << json;
    EXPECT_NE(json.find(", " + std::to_string(half) + ", " + std::to_string(all) +
                        "], \"without_kmers\": 0}},"),
              std::string::npos)
        << json;
}

TEST_F(panel, hits_equal_single_index_runs) {
    // The panel answers A (the default filter) in place from the mapped file; the single runs
    // read it into huge pages: both load paths give the same hits.
    auto const joint = qmer(std::vector<std::string>{"query", "--mmap"} + panel_args() +
                            std::vector<std::string>{"reads.fq"});
    ASSERT_EQ(joint.exit_code, 0) << joint.err;
    auto const t = parse_table(joint.out);
    for (char const* name : {"A", "B", "C"}) {
        // The one-index form, unchanged: read_id kmers hits containment match.
        auto const single = qmer({"query", std::string(name) + ".qmer", "reads.fq"});
        ASSERT_EQ(single.exit_code, 0) << single.err;
        auto const s = parse_table(single.out);
        ASSERT_EQ(s.header,
                  (std::vector<std::string>{"read_id", "kmers", "hits", "containment", "match"}));
        ASSERT_EQ(s.rows.size(), t.rows.size());
        size_t const column = t.column(std::string("hits_") + name);
        for (size_t i = 0; i < t.rows.size(); ++i) {
            ASSERT_EQ(s.rows[i][0], t.rows[i][0]);
            EXPECT_EQ(s.rows[i][1], t.rows[i][1]) << t.rows[i][0];
            EXPECT_EQ(s.rows[i][2], t.rows[i][column]) << name << " " << t.rows[i][0];
            // The index's own verdict shows in the category.
            std::string const& category = t.rows[i][5];
            if (s.rows[i][4] == "1")
                EXPECT_TRUE(category == name || category == "multiple") << t.rows[i][0];
            else
                EXPECT_NE(category, name) << t.rows[i][0];
        }
    }
}

TEST_F(panel, quick_keeps_categories_and_counts_every_kmer) {
    auto const full = qmer(std::vector<std::string>{"query"} + panel_args() +
                           std::vector<std::string>{"r1.fq", "r2.fq"});
    auto const quick = qmer(std::vector<std::string>{"query", "--quick", "-t", "2"} + panel_args() +
                            std::vector<std::string>{"r1.fq", "r2.fq"});
    ASSERT_EQ(full.exit_code, 0) << full.err;
    ASSERT_EQ(quick.exit_code, 0) << quick.err;
    auto const a = parse_table(full.out), b = parse_table(quick.out);
    ASSERT_EQ(a.rows.size(), 300u);
    ASSERT_EQ(b.rows.size(), a.rows.size());
    size_t fewer_hits = 0;
    for (size_t i = 0; i < a.rows.size(); ++i) {
        EXPECT_EQ(a.rows[i][0], b.rows[i][0]);
        EXPECT_EQ(a.rows[i][1], b.rows[i][1]) << a.rows[i][0];  // kmers: all of them
        EXPECT_EQ(a.rows[i][5], b.rows[i][5]) << a.rows[i][0];
        EXPECT_EQ(a.rows[i][5], a.rows[i][0].substr(0, 1)) << a.rows[i][0];
        fewer_hits += std::stoull(b.rows[i][2]) < std::stoull(a.rows[i][2]);
    }
    EXPECT_GT(fewer_hits, 50u);  // --quick did stop early
}

// A panel's JSON and TSV, written by one run, and by single-index runs merged: identical, but for
// the fields that describe the process.
TEST_F(panel, merge_equals_the_joint_run) {
    for (bool paired : {false, true}) {
        std::vector<std::string> const reads = paired ? std::vector<std::string>{"r1.fq", "r2.fq"}
                                                      : std::vector<std::string>{"reads.fq"};
        auto r =
            qmer(std::vector<std::string>{"query", "-o", "joint.tsv", "--summary", "joint.json"} +
                 panel_args() + reads);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        auto const args = panel_args();
        std::vector<std::string> tables;
        for (size_t i = 0; i < 3; ++i) {
            // Gzip-compressed, as the workflow writes them.
            std::string const out = "part" + std::to_string(i) + ".tsv.gz";
            r = qmer(std::vector<std::string>{"query", "-o", out, "-x", args[2 * i + 1]} + reads);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            tables.push_back(out);
        }
        r = qmer(std::vector<std::string>{"merge", "-o", "merged.tsv", "--summary", "merged.json"} +
                 tables);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(slurp(dir() / "merged.tsv"), slurp(dir() / "joint.tsv")) << paired;
        EXPECT_EQ(without_process_fields(slurp(dir() / "merged.json")),
                  without_process_fields(slurp(dir() / "joint.json")))
            << paired;
        // A merge of merges: (A, B) joined with C, to stdout.
        r = qmer({"merge", "-o", "ab.tsv", tables[0], tables[1]});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = qmer({"merge", "ab.tsv", tables[2]});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, slurp(dir() / "joint.tsv"));
    }
}

TEST_F(panel, merge_refuses_other_reads_naming_file_and_line) {
    auto r = qmer({"query", "-o", "a.tsv", "-x", "A.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const good = slurp(dir() / "reads.fq");
    // Reads 2 and 3 swapped; one read dropped; one renamed.
    std::vector<std::string> records;
    for (size_t at = 0; at < good.size();) {
        size_t end = at;
        for (int l = 0; l < 4; ++l) end = good.find('\n', end) + 1;
        records.push_back(good.substr(at, end - at));
        at = end;
    }
    auto join = [](std::vector<std::string> const& v) {
        std::string s;
        for (auto const& x : v) s += x;
        return s;
    };
    auto swapped = records;
    std::swap(swapped[1], swapped[2]);
    auto dropped = records;
    dropped.pop_back();
    auto renamed = records;
    renamed[4].replace(0, renamed[4].find('\n'), "@other");
    struct variant {
        std::string name, content, message;
    };
    for (auto const& v : {variant{"swapped", join(swapped), "line 9: read 'A_2' where"},
                          variant{"dropped", join(dropped), "line 1057: the table ends before"},
                          variant{"renamed", join(renamed), "line 12: read 'other' where"}}) {
        // The same read file name, so only the rows differ.
        std::filesystem::create_directory(dir() / v.name);
        write_file(v.name + "/reads.fq", v.content);
        r = shell("cd " + v.name + " && \"$QMER\" query -q -o ../" + v.name +
                  ".tsv -x B=../B.qmer reads.fq");
        ASSERT_EQ(r.exit_code, 0);
        r = qmer({"merge", "-o", "m.tsv", "a.tsv", v.name + ".tsv"});
        EXPECT_EQ(r.exit_code, 3) << v.name << r.err;
        EXPECT_NE(r.err.find("'" + v.name + ".tsv': " + v.message), std::string::npos)
            << v.name << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "m.tsv")) << v.name;
        // To stdout: nothing at all is written.
        r = qmer({"merge", "a.tsv", v.name + ".tsv"});
        EXPECT_EQ(r.exit_code, 3);
        EXPECT_EQ(r.out, "") << v.name;
    }
}

TEST_F(panel, merge_refuses_mixed_k_other_rules_and_one_index_tables) {
    auto r = qmer({"index", "-q", "-k", "25", "-o", "B25.qmer", "ref_B.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (auto const& args : std::vector<std::vector<std::string>>{
             {"query", "-o", "a.tsv", "-x", "A.qmer", "reads.fq"},
             {"query", "-o", "b25.tsv", "-x", "B25.qmer", "reads.fq"},
             {"query", "-o", "b5.tsv", "--min-hits", "5", "-x", "B.qmer", "reads.fq"},
             {"query", "-o", "one.tsv", "B.qmer", "reads.fq"}}) {
        r = qmer(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    struct bad {
        std::string table, message;
    };
    for (auto const& b :
         {bad{"b25.tsv", "'b25.tsv': line 2: index B25 has k = 25, but 'a.tsv' has k = 31"},
          bad{"b5.tsv", "'b5.tsv': line 6: '# rule: min-hits = 5, "},
          bad{"one.tsv", "'one.tsv': line 2: written by the one-index form"},
          bad{"a_copy.tsv", "'a_copy.tsv': line 2: index A is in 'a.tsv' too"}}) {
        if (b.table == "a_copy.tsv")
            std::filesystem::copy_file(dir() / "a.tsv", dir() / "a_copy.tsv");
        r = qmer({"merge", "-o", "m.tsv", "--summary", "m.json", "a.tsv", b.table});
        EXPECT_EQ(r.exit_code, 3) << b.table;
        EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "m.tsv"));
        EXPECT_FALSE(std::filesystem::exists(dir() / "m.json"));
    }
    // The same table twice is one input given twice (io/same_file.hpp).
    r = qmer({"merge", "-o", "m.tsv", "a.tsv", "a.tsv"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("'a.tsv' (table) and 'a.tsv' (table) are the same file"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "m.tsv"));
    // An output that is a table.
    r = qmer({"merge", "-o", "a.tsv", "a.tsv", "b25.tsv"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'a.tsv' (-o) is the same file as 'a.tsv' (table)"), std::string::npos)
        << r.err;
    // A table edited by hand: a category its hits do not give.
    auto text = slurp(dir() / "a.tsv");
    auto const at = text.find("\tnone\n");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 6, "\tA\n");
    write_file("edited.tsv", text);
    r = qmer({"merge", "edited.tsv"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("category 'A', but its hits give 'none'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

// Bad panels fail with one line and exit 2 before anything is written (-o, --summary and the
// FASTQ outputs named, none of them made).
TEST_F(panel, bad_panels_are_usage_errors_before_any_output) {
    auto r = qmer({"index", "-q", "-k", "25", "-o", "B25.qmer", "ref_B.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::filesystem::create_directory(dir() / "other");
    std::filesystem::copy_file(dir() / "A.qmer", dir() / "other" / "A.qmer");
    struct bad {
        std::vector<std::string> indexes;
        std::string message;
    };
    for (auto const& b : {
             bad{{"-x", "A.qmer", "-x", "other/A.qmer"},
                 "two indexes are named 'A' (-x 'A.qmer' and -x 'other/A.qmer')"},
             bad{{"-x", "A.qmer", "-x", "B25.qmer"},
                 "-x B25 ('B25.qmer') has k = 25, but -x A ('A.qmer') has k = 31"},
             bad{{"-x", "none=A.qmer"}, "'none=A' cannot name an index"},
             bad{{"-x", "A.qmer", "B.qmer"}, "'B.qmer' is given as reads"},
         }) {
        r = qmer(std::vector<std::string>{"query", "-o", "out.tsv", "--summary", "s.json",
                                          "--matched", "m.fq", "--split-by-category", "split.fq"} +
                 b.indexes + std::vector<std::string>{"reads.fq"});
        EXPECT_EQ(r.exit_code, 2) << b.message << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
        EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        for (auto const& entry : std::filesystem::directory_iterator(dir())) {
            auto const name = entry.path().filename().string();
            bool const made_here = name.starts_with("m") || name.starts_with("split") ||
                                   name.starts_with("out") || name.starts_with("s.");
            EXPECT_FALSE(made_here) << name << " after: " << b.message;
        }
    }
}

TEST_F(panel, split_by_category_keeps_pairs_together) {
    auto r =
        qmer(std::vector<std::string>{"query", "-o", "t.tsv", "--split-by-category", "out/s.fq.gz",
                                      "--matched", "m.fq", "--unmatched", "u.fq"} +
             panel_args() + std::vector<std::string>{"r1.fq", "r2.fq"});
    EXPECT_EQ(r.exit_code, 5) << r.err;  // out/ does not exist: nothing is written
    EXPECT_FALSE(std::filesystem::exists(dir() / "t.tsv"));
    std::filesystem::create_directory(dir() / "out");
    r = qmer(std::vector<std::string>{"query", "-o", "t.tsv", "--split-by-category", "out/s.fq.gz",
                                      "--matched", "m.fq", "--unmatched", "u.fq"} +
             panel_args() + std::vector<std::string>{"r1.fq", "r2.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const t = parse_table(slurp(dir() / "t.tsv"));
    std::map<std::string, std::vector<std::string>> by_category;
    for (auto const& row : t.rows) by_category[row[5]].push_back(row[0]);
    EXPECT_EQ(by_category["A"].size(), 100u);
    EXPECT_EQ(by_category["B"].size(), 100u);
    EXPECT_EQ(by_category["C"].size(), 100u);
    for (char const* c : {"A", "B", "C", "multiple", "none"})
        for (int mate : {1, 2}) {
            auto const path =
                dir() / "out" / ("s." + std::string(c) + "_" + std::to_string(mate) + ".fq.gz");
            ASSERT_TRUE(std::filesystem::exists(path)) << path;
            auto names = fastq_names(gunzip(path));
            for (auto& n : names) {
                EXPECT_TRUE(n.ends_with(mate == 1 ? "/1" : "/2")) << n;
                n.resize(n.size() - 2);
            }
            EXPECT_EQ(names, by_category[c]) << c << " mate " << mate;
        }
    // --matched: by any index; --unmatched: by none.
    EXPECT_EQ(fastq_names(slurp(dir() / "m_1.fq")).size(), 300u);
    EXPECT_EQ(fastq_names(slurp(dir() / "u_2.fq")).size(), 0u);
    // A category file that would replace an input is refused before anything is written.
    std::filesystem::copy_file(dir() / "reads.fq", dir() / "x.A.fq");
    r = qmer(std::vector<std::string>{"query", "-o", "t2.tsv", "--split-by-category", "x.fq"} +
             panel_args() + std::vector<std::string>{"x.A.fq"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'x.A.fq' (--split-by-category, A) is the same file as 'x.A.fq' (reads)"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "t2.tsv"));
}

}  // namespace
