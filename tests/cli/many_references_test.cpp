// A many-reference index end to end (README, "Many references in one index"): `qmer index -r
// NAME=FILE` and `--references SHEET` build one index whose slots carry class ids, `qmer info`
// lists the references, and `qmer query` names each read's best references. The panel: two
// random "species", three "strains" of each (1% of bases changed per strain), so strains of a
// species share most k-mers and species share none. Every read's hits are checked against an
// exact k-mer set per reference: a filter's hits are never below the exact count.

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

uint64_t next(uint64_t& seed) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
}

std::string random_bases(size_t n, uint64_t seed) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[next(seed) & 3];
    return s;
}

std::string mutated(std::string s, double rate, uint64_t seed) {
    std::string const bases = "ACGT";
    for (auto& c : s)
        if (static_cast<double>(next(seed) % 1000000) < rate * 1e6)
            c = bases[(bases.find(c) + 1 + next(seed) % 3) % 4];
    return s;
}

// Canonical 31-mers of a sequence as 62-bit words (the test's own oracle, independent of qmer's
// scanner; no N in these sequences).
std::vector<uint64_t> canonical_kmers(std::string const& s, unsigned k = 31) {
    std::vector<uint64_t> out;
    auto code = [](char c) -> uint64_t { return std::string("ACGT").find(c); };
    uint64_t const mask = (uint64_t{1} << (2 * k)) - 1;
    uint64_t fwd = 0, rev = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        uint64_t const c = code(s[i]);
        fwd = ((fwd << 2) | c) & mask;
        rev = (rev >> 2) | ((3 - c) << (2 * (k - 1)));
        if (i + 1 >= k) out.push_back(std::min(fwd, rev));
    }
    return out;
}

std::vector<std::string> fields_of(std::string const& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string f;
    while (std::getline(in, f, '\t')) out.push_back(f);
    return out;
}

class many_references : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        std::string sheet = "# the panel: NAME, FILE, GROUP\n";
        for (int sp = 0; sp < 2; ++sp) {
            std::string const base = random_bases(60000, 100 + sp);
            for (int st = 0; st < 3; ++st) {
                std::string const name = "sp" + std::to_string(sp) + "_st" + std::to_string(st);
                strains_[name] = mutated(base, 0.01, 1000 + 10 * sp + st);
                write_file(name + ".fa", ">" + name + "\n" + strains_[name] + "\n");
                sheet += name + "\t" + name + ".fa\tsp" + std::to_string(sp) + "\n";
            }
        }
        write_file("refs.tsv", sheet);
        uint64_t seed = 77;
        std::string reads;
        for (auto const& [name, seq] : strains_)
            for (int i = 0; i < 200; ++i) {
                size_t const at = next(seed) % (seq.size() - 100);
                reads += "@" + name + "." + std::to_string(i) + "\n" + seq.substr(at, 100) +
                         "\n+\n" + std::string(100, 'I') + "\n";
            }
        for (int i = 0; i < 200; ++i)
            reads += "@random." + std::to_string(i) + "\n" + random_bases(100, 5000 + i) + "\n+\n" +
                     std::string(100, 'I') + "\n";
        write_file("reads.fq", reads);
    }

    // The per-read table's rows by read id, its columns by name.
    std::map<std::string, std::map<std::string, std::string>> rows(std::string const& file) {
        std::istringstream in(slurp(dir() / file));
        std::string line;
        std::vector<std::string> header;
        std::map<std::string, std::map<std::string, std::string>> out;
        while (std::getline(in, line)) {
            if (line.starts_with("#")) continue;
            auto const f = fields_of(line);
            if (header.empty()) {
                header = f;
                continue;
            }
            for (size_t i = 0; i < f.size() && i < header.size(); ++i) out[f[0]][header[i]] = f[i];
        }
        return out;
    }

    std::map<std::string, std::string> strains_;
};

TEST_F(many_references, each_read_is_assigned_to_its_own_strain_and_never_loses_a_hit) {
    auto const built = qmer({"index", "-q", "-o", "panel.qmer", "--references", "refs.tsv"});
    ASSERT_EQ(built.exit_code, 0) << built.err;
    auto const q =
        qmer({"query", "-q", "-o", "out.tsv", "--summary", "s.json", "panel.qmer", "reads.fq"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    std::map<std::string, std::unordered_set<uint64_t>> exact;
    for (auto const& [name, seq] : strains_) {
        auto const kmers = canonical_kmers(seq);
        exact[name].insert(kmers.begin(), kmers.end());
    }
    auto const table = rows("out.tsv");
    std::string const reads = slurp(dir() / "reads.fq");
    ASSERT_EQ(table.size(), 1400u);
    int own_in_best = 0, alone_right = 0, wrong_alone = 0, from_strains = 0, random_called = 0;
    for (auto const& [id, row] : table) {
        std::string const origin = id.substr(0, id.find('.'));
        std::string const& category = row.at("category");
        if (origin == "random") {
            random_called += category != "none";
            continue;
        }
        ++from_strains;
        // The read's sequence again, from the reads file.
        size_t const at = reads.find("@" + id + "\n");
        ASSERT_NE(at, std::string::npos);
        std::string const seq = reads.substr(at + id.size() + 2, 100);
        uint64_t most = 0;
        for (auto const& [name, set] : exact) {
            uint64_t n = 0;
            for (uint64_t const x : canonical_kmers(seq)) n += set.count(x);
            most = std::max(most, n);
        }
        // A strain's read holds all 70 of its k-mers in its strain: called, and its best has at
        // least the exact count of the reference that holds the most.
        ASSERT_NE(category, "none") << id;
        EXPECT_GE(std::stoull(row.at("hits")), most) << id;
        std::string b = row.at("best");
        std::set<std::string> names;
        for (size_t p = 0; p != std::string::npos;) {
            size_t const comma = b.find(',', p);
            names.insert(b.substr(p, comma == std::string::npos ? comma : comma - p));
            p = comma == std::string::npos ? comma : comma + 1;
        }
        std::string const species = origin.substr(0, 3);
        own_in_best += names.count(origin) || names.count(species);
        alone_right += category == origin;
        wrong_alone += category != origin && category != "ambiguous";
    }
    EXPECT_EQ(from_strains, 1200);
    EXPECT_EQ(own_in_best, from_strains);
    EXPECT_EQ(wrong_alone, 0);
    // Strains differ at 2% of bases (1% each): most 100 bp reads hold a difference.
    EXPECT_GT(alone_right, from_strains * 3 / 4);
    EXPECT_LE(random_called, 1);
    std::string const summary = slurp(dir() / "s.json");
    EXPECT_NE(summary.find("\"name\": \"sp0_st0\", \"group\": \"sp0\""), std::string::npos)
        << summary;
    EXPECT_NE(summary.find("\"none\": "), std::string::npos) << summary;
}

TEST_F(many_references, named_on_the_command_line_or_in_a_sheet_it_is_the_same_index) {
    std::vector<std::string> args{"index", "-q", "-o", "named.qmer"};
    for (auto const& [name, seq] : strains_) {
        args.push_back("-r");
        args.push_back(name + "=" + name + ".fa");
    }
    ASSERT_EQ(qmer(args).exit_code, 0);
    ASSERT_EQ(qmer({"index", "-q", "-o", "sheet.qmer", "--references", "refs.tsv"}).exit_code, 0);
    ASSERT_EQ(qmer({"query", "-q", "-o", "named.tsv", "named.qmer", "reads.fq"}).exit_code, 0);
    ASSERT_EQ(qmer({"query", "-q", "-o", "sheet.tsv", "sheet.qmer", "reads.fq"}).exit_code, 0);
    // The categories agree; `best` may differ, since only the sheet names groups.
    auto const a = rows("named.tsv"), b = rows("sheet.tsv");
    ASSERT_EQ(a.size(), b.size());
    for (auto const& [id, row] : a) EXPECT_EQ(row.at("category"), b.at(id).at("category")) << id;
}

TEST_F(many_references, info_lists_the_references_and_their_unique_kmers) {
    ASSERT_EQ(qmer({"index", "-q", "-o", "panel.qmer", "--references", "refs.tsv"}).exit_code, 0);
    auto const info = qmer({"info", "panel.qmer"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("references:     6 in "), std::string::npos) << info.out;
    for (auto const& [name, seq] : strains_)
        EXPECT_NE(info.out.find("  " + name + "\tsp"), std::string::npos) << info.out;
    auto const json = qmer({"info", "--json", "panel.qmer"});
    ASSERT_EQ(json.exit_code, 0);
    EXPECT_NE(json.out.find("\"classes\": "), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"unique_kmers\": "), std::string::npos) << json.out;
    // This panel's rarest classes go to the overflow (the first test's exact-set check then
    // covers lookups through it): some, not none.
    auto const at = json.out.find("\"escaped_fingerprints\": ");
    ASSERT_NE(at, std::string::npos) << json.out;
    EXPECT_GT(std::stoull(json.out.substr(at + 24)), 0u) << json.out;
}

TEST_F(many_references, ties_within_a_species_can_be_called_the_species) {
    ASSERT_EQ(qmer({"index", "-q", "-o", "panel.qmer", "--references", "refs.tsv"}).exit_code, 0);
    ASSERT_EQ(qmer({"query", "-q", "--ties-to-group", "-o", "out.tsv", "panel.qmer", "reads.fq"})
                  .exit_code,
              0);
    int species = 0, ambiguous = 0;
    for (auto const& [id, row] : rows("out.tsv")) {
        std::string const& c = row.at("category");
        if (c == "sp0" || c == "sp1") {
            ++species;
            EXPECT_EQ(id.substr(0, 3), c) << id;
        }
        ambiguous += c == "ambiguous";
    }
    EXPECT_GT(species, 0);
    EXPECT_EQ(ambiguous, 0);  // strains of two species share no 31-mer here
}

TEST_F(many_references, split_by_category_writes_each_reference_s_reads) {
    ASSERT_EQ(qmer({"index", "-q", "-o", "panel.qmer", "--references", "refs.tsv"}).exit_code, 0);
    auto const q = qmer({"query", "-q", "-o", "out.tsv", "--split-by-category", "s.fq",
                         "--unmatched", "u.fq", "panel.qmer", "reads.fq"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    std::map<std::string, int> by_category;
    for (auto const& [id, row] : rows("out.tsv")) ++by_category[row.at("category")];
    auto records = [&](std::string const& file) {
        std::string const text = slurp(dir() / file);
        return static_cast<int>(std::count(text.begin(), text.end(), '\n') / 4);
    };
    for (auto const& [name, seq] : strains_)
        EXPECT_EQ(records("s." + name + ".fq"), by_category[name]) << name;
    EXPECT_EQ(records("s.ambiguous.fq"), by_category["ambiguous"]);
    EXPECT_EQ(records("s.none.fq"), by_category["none"]);
    EXPECT_EQ(records("u.fq"), by_category["none"]);
    EXPECT_GT(by_category["none"], 150);  // the random reads
    // A plain index has no categories to split by: refused before anything is written.
    ASSERT_EQ(qmer({"index", "-q", "-o", "plain.qmer", "sp0_st0.fa"}).exit_code, 0);
    auto const plain =
        qmer({"query", "-o", "p.tsv", "--split-by-category", "p.fq", "plain.qmer", "reads.fq"});
    EXPECT_EQ(plain.exit_code, 2) << plain.err;
    EXPECT_NE(plain.err.find("many-reference index"), std::string::npos) << plain.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "p.tsv"));
}

TEST_F(many_references, bad_input_is_one_line_and_writes_nothing) {
    auto refused = [&](std::vector<std::string> args, int code, std::string const& fragment) {
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, code) << r.err;
        EXPECT_TRUE(r.err.starts_with("qmer: error: ")) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer")) << fragment;
    };
    refused({"index", "-o", "x.qmer", "-r", "a=sp0_st0.fa", "-r", "a=sp0_st1.fa"}, 2,
            "two references are named 'a'");
    refused({"index", "-o", "x.qmer", "-r", "a=missing.fa"}, 3, "missing.fa");
    write_file("empty.fa", "");
    refused({"index", "-o", "x.qmer", "-r", "a=sp0_st0.fa", "-r", "e=empty.fa"}, 3, "empty.fa");
    write_file("bad.tsv", "a\tsp0_st0.fa\nb sp0_st1.fa\n");
    refused({"index", "-o", "x.qmer", "--references", "bad.tsv"}, 3, "bad.tsv:2:");
    refused({"index", "-o", "x.qmer", "-r", "a/b=sp0_st0.fa"}, 2, "a/b");
    refused({"index", "-o", "x.qmer", "-r", "none=sp0_st0.fa"}, 2, "none");
    refused({"index", "-o", "x.qmer", "-r", "a=sp0_st0.fa", "sp0_st1.fa"}, 2, "not both");
    refused({"index", "-o", "x.qmer", "--filter", "bloom", "-r", "a=sp0_st0.fa"}, 2, "bloom");

    ASSERT_EQ(qmer({"index", "-q", "-o", "panel.qmer", "-r", "a=sp0_st0.fa", "-r", "e=empty.fa",
                    "--allow-empty"})
                  .exit_code,
              0);
    std::string const before = slurp(dir() / "panel.qmer");
    auto const append = qmer({"index", "--append", "-o", "panel.qmer", "sp1_st0.fa"});
    EXPECT_EQ(append.exit_code, 2) << append.err;
    EXPECT_NE(append.err.find("many-reference"), std::string::npos) << append.err;
    EXPECT_EQ(slurp(dir() / "panel.qmer"), before);  // untouched
    auto const panel = qmer({"query", "-o", "x.tsv", "-x", "panel.qmer", "reads.fq"});
    EXPECT_EQ(panel.exit_code, 2) << panel.err;
    EXPECT_NE(panel.err.find("query it alone"), std::string::npos) << panel.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.tsv"));
}

TEST_F(many_references, a_pair_is_assigned_as_one) {
    ASSERT_EQ(qmer({"index", "-q", "-o", "panel.qmer", "--references", "refs.tsv"}).exit_code, 0);
    // Mate 1 from the first 100 bases of a stretch of sp1_st2, mate 2 from its last 100.
    std::string const& s = strains_.at("sp1_st2");
    std::string m1, m2;
    for (int i = 0; i < 50; ++i) {
        size_t const at = 500 + static_cast<size_t>(i) * 997;
        m1 += "@p" + std::to_string(i) + "/1\n" + s.substr(at, 100) + "\n+\n" +
              std::string(100, 'I') + "\n";
        m2 += "@p" + std::to_string(i) + "/2\n" + s.substr(at + 200, 100) + "\n+\n" +
              std::string(100, 'I') + "\n";
    }
    write_file("m1.fq", m1);
    write_file("m2.fq", m2);
    ASSERT_EQ(qmer({"query", "-q", "-o", "pairs.tsv", "panel.qmer", "m1.fq", "m2.fq"}).exit_code,
              0);
    auto const t = rows("pairs.tsv");
    ASSERT_EQ(t.size(), 50u);
    for (auto const& [id, row] : t) {
        EXPECT_EQ(row.at("kmers"), "140") << id;  // both mates' k-mers, one verdict
        EXPECT_TRUE(row.at("category") == "sp1_st2" || row.at("category") == "ambiguous") << id;
    }
}

}  // namespace
