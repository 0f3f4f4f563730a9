// The minimizer gate end to end (core/qf/stored/minimizer_gate.hpp): a default build writes it and
// `qmer info` names it; no k-mer of a reference is turned away, by the default query or --quick,
// after a build and after --append by merge (which keeps the gate); an append that inserts
// k-mer by k-mer (a --cascading index) drops the gate, and still finds every k-mer.

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace qmer::test {
namespace {

class minimizer_gate : public cli_test {
  protected:
    // The reference's records cut into reads of 150 bases, every 37 bases (FASTA).
    std::string reads_of(std::string const& fasta) {
        std::istringstream in(fasta);
        std::string line, out;
        int n = 0;
        while (std::getline(in, line)) {
            if (line.starts_with('>')) continue;
            for (size_t at = 0; at + 150 <= line.size(); at += 37)
                out += ">q" + std::to_string(n++) + "\n" + line.substr(at, 150) + "\n";
        }
        return out;
    }
    // Every read's hits equal its k-mers (each k-mer found), under the default and --quick
    // (whose reads all settle: hits reach the threshold).
    void expect_every_kmer_found(std::string const& index, std::string const& reads) {
        auto const full = qmer({"query", "-q", "-o", "-", index, reads});
        ASSERT_EQ(full.exit_code, 0) << full.err;
        std::istringstream rows(tsv_body(full.out));
        std::string row;
        size_t n = 0;
        while (std::getline(rows, row)) {
            if (row.starts_with("read_id")) continue;
            std::istringstream fields(row);
            std::string id;
            uint64_t kmers = 0, hits = 0;
            fields >> id >> kmers >> hits;
            ASSERT_EQ(kmers, 120u) << row;
            ASSERT_EQ(hits, kmers) << row;
            ++n;
        }
        EXPECT_GT(n, 100u);
        auto const quick = qmer({"query", "--quick", "-q", "-o", "-", index, reads});
        ASSERT_EQ(quick.exit_code, 0) << quick.err;
        EXPECT_EQ(tsv_body(quick.out).find("\t0\n"), std::string::npos);  // no read unmatched
    }
};

TEST_F(minimizer_gate, is_written_and_turns_away_no_kmer_of_the_reference) {
    std::string const a = random_fasta(3, 20000, 1);
    write_file("a.fa", a);
    write_file("a_reads.fa", reads_of(a));
    ASSERT_EQ(qmer({"index", "-q", "-o", "a.qmer", "a.fa"}).exit_code, 0);
    auto const info = qmer({"info", "a.qmer"});
    EXPECT_NE(info.out.find("minimizer gate bits per window 32"), std::string::npos) << info.out;
    EXPECT_NE(qmer({"info", "--json", "a.qmer"}).out.find("\"minimizer_gate_bits_per_window\""),
              std::string::npos);
    expect_every_kmer_found("a.qmer", "a_reads.fa");
}

TEST_F(minimizer_gate, an_append_by_merge_keeps_it_with_the_new_kmers_bits) {
    std::string const a = random_fasta(2, 20000, 1), b = random_fasta(2, 30000, 2);
    write_file("a.fa", a);
    write_file("b.fa", b);
    write_file("b_reads.fa", reads_of(b));
    write_file("a_reads.fa", reads_of(a));
    ASSERT_EQ(qmer({"index", "-q", "-o", "x.qmer", "a.fa"}).exit_code, 0);
    auto const appended = qmer({"index", "--append", "-o", "x.qmer", "b.fa"});
    ASSERT_EQ(appended.exit_code, 0) << appended.err;
    EXPECT_NE(appended.err.find("merged into the top level"), std::string::npos) << appended.err;
    EXPECT_NE(qmer({"info", "x.qmer"}).out.find("minimizer gate"), std::string::npos);
    expect_every_kmer_found("x.qmer", "a_reads.fa");
    expect_every_kmer_found("x.qmer", "b_reads.fa");
}

TEST_F(minimizer_gate, an_append_by_inserts_drops_it) {
    std::string const a = random_fasta(2, 20000, 3), b = random_fasta(2, 20000, 4);
    write_file("a.fa", a);
    write_file("b.fa", b);
    write_file("b_reads.fa", reads_of(b));
    ASSERT_EQ(qmer({"index", "-q", "--cascading", "-o", "x.qmer", "a.fa"}).exit_code, 0);
    ASSERT_NE(qmer({"info", "x.qmer"}).out.find("minimizer gate"), std::string::npos);
    auto const appended = qmer({"index", "--append", "-q", "-o", "x.qmer", "b.fa"});
    ASSERT_EQ(appended.exit_code, 0) << appended.err;
    EXPECT_EQ(qmer({"info", "x.qmer"}).out.find("minimizer gate"), std::string::npos);
    expect_every_kmer_found("x.qmer", "b_reads.fa");
}

}  // namespace
}  // namespace qmer::test
