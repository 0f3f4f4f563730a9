// qmer index --preset: the long preset's k and verdict rule, recorded in the index and applied by
// qmer query without options; options replace it; the default preset changes nothing.
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class preset : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        genome_ = sequence_of(random_fasta(1, 20'000, 7));
        write_file("ref.fa", ">ref\n" + genome_ + "\n");
        // Reads of 2,000 bases: a noisy copy of the reference (15% substitutions, as 85%-accurate
        // long reads), and an unrelated read holding one 40-base stretch of the reference: 24
        // shared 17-mers out of 1,984 k-mers, which the default rule calls (it needs ~12 at
        // --fpr 0.001) and the long preset's containment (0.02: 40 hits) does not.
        std::string const unrelated = sequence_of(random_fasta(1, 2'000, 99));
        std::string const spliced =
            unrelated.substr(0, 1'000) + genome_.substr(5'000, 40) + unrelated.substr(1'040);
        write_file("reads.fa", ">noisy\n" + noisy_copy(genome_.substr(3'000, 2'000), 0.15, 11) +
                                   "\n>spliced\n" + spliced + "\n");
    }

    // The bases of a one-record FASTA.
    static std::string sequence_of(std::string const& fasta) {
        return fasta.substr(fasta.find('\n') + 1, fasta.size() - fasta.find('\n') - 2);
    }

    // `bases` with each base replaced by another with probability `rate` (a 64-bit LCG).
    static std::string noisy_copy(std::string bases, double rate, uint64_t seed) {
        for (char& c : bases) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            if (static_cast<double>(seed >> 11) / 9007199254740992.0 >= rate) continue;
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            char const other = "ACGT"[seed >> 62];
            c = other == c ? "CGTA"[seed >> 62] : other;
        }
        return bases;
    }

    // read_id -> match column of a one-index TSV.
    static std::vector<std::pair<std::string, std::string>> verdicts(std::string const& tsv) {
        std::vector<std::pair<std::string, std::string>> out;
        std::istringstream in(qmer::test::tsv_body(tsv));
        std::string line;
        std::getline(in, line);  // the column header
        while (std::getline(in, line)) {
            std::vector<std::string> fields;
            std::istringstream fs(line);
            std::string f;
            while (std::getline(fs, f, '\t')) fields.push_back(f);
            out.emplace_back(fields.front(), fields.back());
        }
        return out;
    }

    using verdict_list = std::vector<std::pair<std::string, std::string>>;

    std::string genome_;
};

TEST_F(preset, long_records_its_k_and_rule_and_info_shows_them) {
    auto const built = qmer({"index", "--preset", "long", "-q", "-o", "long.qmer", "ref.fa"});
    ASSERT_EQ(built.exit_code, 0) << built.err;
    auto const info = qmer({"info", "long.qmer"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("\nk:              17\n"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("\npreset:         long (queries apply the default rule and "
                            "containment >= 0.02 unless given --min-hits/--min-containment)\n"),
              std::string::npos)
        << info.out;
    auto const json = qmer({"info", "--json", "long.qmer"});
    EXPECT_NE(json.out.find("\"k\": 17,"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"preset\": {\"name\": \"long\", \"min_containment\": 0.02},"),
              std::string::npos)
        << json.out;
    write_file("info.json", json.out);
    ASSERT_EQ(shell("python3 -c 'import json; j = json.load(open(\"info.json\")); "
                    "print(j[\"preset\"][\"name\"], j[\"preset\"][\"min_containment\"])' > parsed")
                  .exit_code,
              0);
    EXPECT_EQ(slurp(dir() / "parsed"), "long 0.02\n");
}

TEST_F(preset, an_explicit_k_replaces_the_presets_and_keeps_its_rule) {
    ASSERT_EQ(
        qmer({"index", "--preset", "long", "-k", "21", "-q", "-o", "x.qmer", "ref.fa"}).exit_code,
        0);
    auto const info = qmer({"info", "x.qmer"});
    EXPECT_NE(info.out.find("\nk:              21\n"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("\npreset:         long ("), std::string::npos) << info.out;
}

TEST_F(preset, a_query_without_options_applies_the_recorded_rule) {
    ASSERT_EQ(qmer({"index", "--preset", "long", "-q", "-o", "long.qmer", "ref.fa"}).exit_code, 0);
    // The same k without the preset: the difference below is the rule's, not k's.
    ASSERT_EQ(qmer({"index", "-k", "17", "-q", "-o", "k17.qmer", "ref.fa"}).exit_code, 0);
    auto const with_preset =
        qmer({"query", "-q", "--summary", "s.json", "-o", "-", "long.qmer", "reads.fa"});
    ASSERT_EQ(with_preset.exit_code, 0) << with_preset.err;
    EXPECT_EQ(verdicts(with_preset.out), (verdict_list{{"noisy", "1"}, {"spliced", "0"}}))
        << with_preset.out;
    EXPECT_NE(with_preset.out.find("# verdict: hits >= smallest t with P(Binomial(kmers, fpr) >= "
                                   "t) <= 1e-5 (fpr = 0.001000) and containment >= 0.020000 (the "
                                   "rule of the index's preset long)\n"),
              std::string::npos)
        << with_preset.out;
    EXPECT_NE(with_preset.out.find(", preset = long, min-containment = 0.02)\n"), std::string::npos)
        << with_preset.out;
    auto const summary = slurp(dir() / "s.json");
    EXPECT_NE(summary.find("(the rule of the index's preset long)"), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"preset\": \"long\", \"min_containment\": 0.02}"), std::string::npos)
        << summary;

    auto const without = qmer({"query", "-q", "-o", "-", "k17.qmer", "reads.fa"});
    ASSERT_EQ(without.exit_code, 0) << without.err;
    EXPECT_EQ(verdicts(without.out), (verdict_list{{"noisy", "1"}, {"spliced", "1"}}))
        << without.out;
    EXPECT_EQ(without.out.find("preset"), std::string::npos) << without.out;

    // --quick stops lookups at the preset rule's threshold and calls the same reads.
    auto const quick = qmer({"query", "-q", "--quick", "-o", "-", "long.qmer", "reads.fa"});
    EXPECT_EQ(verdicts(quick.out), verdicts(with_preset.out)) << quick.out;
}

TEST_F(preset, query_options_replace_the_recorded_rule) {
    ASSERT_EQ(qmer({"index", "--preset", "long", "-q", "-o", "long.qmer", "ref.fa"}).exit_code, 0);
    auto const hits = qmer({"query", "-q", "--min-hits", "15", "-o", "-", "long.qmer", "reads.fa"});
    ASSERT_EQ(hits.exit_code, 0) << hits.err;
    EXPECT_EQ(verdicts(hits.out), (verdict_list{{"noisy", "1"}, {"spliced", "1"}})) << hits.out;
    EXPECT_NE(hits.out.find("# verdict: hits >= 15 and containment >= 0.000000 (from "
                            "--min-hits/--min-containment, in place of the rule of the index's "
                            "preset long)\n"),
              std::string::npos)
        << hits.out;
    auto const containment =
        qmer({"query", "-q", "--min-containment", "0.005", "-o", "-", "long.qmer", "reads.fa"});
    EXPECT_EQ(verdicts(containment.out), (verdict_list{{"noisy", "1"}, {"spliced", "1"}}))
        << containment.out;
}

TEST_F(preset, a_panel_applies_each_indexs_recorded_rule) {
    ASSERT_EQ(qmer({"index", "--preset", "long", "-q", "-o", "long.qmer", "ref.fa"}).exit_code, 0);
    auto const r = qmer({"query", "-q", "-x", "host=long.qmer", "-o", "-", "reads.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("; index host: also containment >= 0.02 (its preset long); category:"),
              std::string::npos)
        << r.out;
    auto const body = qmer::test::tsv_body(r.out);
    EXPECT_NE(body.find("\nnoisy\t1984\t"), std::string::npos) << body;
    EXPECT_NE(body.find("\thost\nspliced\t1984\t"), std::string::npos) << body;
    EXPECT_TRUE(body.ends_with("\tnone\n")) << body;
}

TEST_F(preset, short_or_no_preset_records_nothing_and_answers_as_before) {
    ASSERT_EQ(qmer({"index", "-q", "-o", "plain.qmer", "ref.fa"}).exit_code, 0);
    ASSERT_EQ(qmer({"index", "--preset", "short", "-q", "-o", "short.qmer", "ref.fa"}).exit_code,
              0);
    for (char const* index : {"plain.qmer", "short.qmer"}) {
        auto const json = qmer({"info", "--json", index});
        EXPECT_NE(json.out.find("\"k\": 31,"), std::string::npos) << json.out;
        EXPECT_NE(json.out.find("\"preset\": {\"name\": \"short\", \"min_containment\": null},"),
                  std::string::npos)
            << json.out;
        auto const r = qmer({"query", "-q", "-o", "-", index, "reads.fa"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find("# verdict: hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= "
                             "1e-5 (fpr = 0.001000)\n"),
                  std::string::npos)
            << r.out;
    }
    // The two indexes differ only in the command line their headers record (and so, perhaps, in
    // the padding before their 64-byte aligned arrays).
    auto const described = [&](char const* index) {
        std::istringstream in(qmer({"info", "--json", index}).out);
        std::string line, kept;
        while (std::getline(in, line))
            if (!line.starts_with("  \"path\"") && !line.starts_with("  \"command\"") &&
                !line.starts_with("  \"file_bytes\""))
                kept += line + "\n";
        return kept;
    };
    EXPECT_EQ(described("short.qmer"), described("plain.qmer"));
}

TEST_F(preset, an_unknown_preset_is_a_usage_error_naming_the_option) {
    auto const r = qmer({"index", "--preset", "medium", "-o", "x.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--preset medium"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("short, long"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
}

TEST_F(preset, the_completion_offers_the_presets) {
    auto const help = qmer({"index", "--help"});
    EXPECT_NE(help.out.find("--preset {short,long}=short"), std::string::npos) << help.out;
    char const* const bash_completion = "/usr/share/bash-completion/bash_completion";
    if (!std::filesystem::exists(bash_completion))
        GTEST_FAIL() << "bash-completion is not installed (scripts/install-deps installs it)";
    // The source tree's completion, completing `qmer index --preset ` with this build's qmer.
    std::filesystem::create_directory(dir() / "bin");
    std::filesystem::create_symlink(QMER_BINARY, dir() / "bin" / "qmer");
    write_file("complete.sh",
               std::string("export PATH=$PWD/bin:$PATH\nsource ") + bash_completion +
                   "\nsource '" QMER_SOURCE_DIR
                   "/completions/qmer.bash'\n"
                   "COMP_WORDS=(qmer index --preset ''); COMP_CWORD=3\n"
                   "COMP_LINE='qmer index --preset '; COMP_POINT=${#COMP_LINE}; COMPREPLY=()\n"
                   "_qmer qmer '' --preset\n"
                   "echo \"${COMPREPLY[*]}\" > offered\n");
    auto const r = shell("bash complete.sh");
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_EQ(slurp(dir() / "offered"), "short long\n");
}

// An index holding a large share of all k-mers (here 13-mers of a 400 kbp reference: ~1.2% of
// the 4^13 / 2 canonical ones, beyond half the preset's 2% minimum) would call unrelated reads by
// chance: the query says so once, and says nothing for the long index of a small reference, with
// --min-containment given, or with -q.
TEST_F(preset, a_query_notes_an_index_that_chance_alone_would_match) {
    write_file("big.fa", random_fasta(1, 400'000, 5));
    ASSERT_EQ(
        qmer({"index", "--preset", "long", "-k", "13", "-q", "-o", "big.qmer", "big.fa"}).exit_code,
        0);
    ASSERT_EQ(qmer({"index", "--preset", "long", "-q", "-o", "long.qmer", "ref.fa"}).exit_code, 0);
    auto const big = qmer({"query", "-o", "/dev/null", "big.qmer", "reads.fa"});
    ASSERT_EQ(big.exit_code, 0) << big.err;
    EXPECT_NE(big.err.find("qmer: note: 'big.qmer' (--preset long, k = 13) holds "),
              std::string::npos)
        << big.err;
    EXPECT_NE(big.err.find("so unrelated reads may be called"), std::string::npos) << big.err;
    for (auto const& args :
         {std::vector<std::string>{"query", "-o", "/dev/null", "long.qmer", "reads.fa"},
          std::vector<std::string>{"query", "--min-containment", "0.1", "-o", "/dev/null",
                                   "big.qmer", "reads.fa"},
          std::vector<std::string>{"query", "-q", "-o", "/dev/null", "big.qmer", "reads.fa"}}) {
        auto const r = qmer(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.err.find("by chance"), std::string::npos) << r.err;
    }
}

}  // namespace
