// End to end: the minimizer-local hash scheme (core/kmer/sequence_hashing.hpp) that `qmer index`
// gives a counted default build. No k-mer is ever lost to it: reads cut from the reference, on
// either strand, find every k-mer, on a random reference and on a repetitive one (whose overloaded
// windows take the plain hash), after --append too; and it is recorded in the index.

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

class locality : public qmer::test::cli_test {
  protected:
    static std::string random_bases(std::mt19937_64& rng, size_t n) {
        std::string s(n, 'A');
        for (auto& c : s) c = "ACGT"[rng() & 3];
        return s;
    }
    static std::string reverse_complement(std::string s) {
        std::reverse(s.begin(), s.end());
        for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
        return s;
    }
    // A reference of `units` repeat units of 300 bases, each copied `copies` times with 3% of the
    // bases changed, between stretches of random sequence: what makes minimizers skewed (one
    // minimizer shared by the k-mers of many mutated copies).
    static std::string repetitive(std::mt19937_64& rng, int units, int copies) {
        std::string out;
        for (int u = 0; u < units; ++u) {
            std::string const unit = random_bases(rng, 300);
            for (int c = 0; c < copies; ++c) {
                std::string copy = unit;
                for (auto& b : copy)
                    if (rng() % 100 < 3) b = "ACGT"[rng() & 3];
                out += copy + random_bases(rng, 50);
            }
        }
        return out;
    }
    // Reads of 150 bases cut every 37 bases from `ref`, every other one reverse complemented.
    static std::string reads_from(std::string const& ref) {
        std::string fq;
        int n = 0;
        for (size_t at = 0; at + 150 <= ref.size(); at += 37, ++n) {
            std::string seq = ref.substr(at, 150);
            if (n % 2) seq = reverse_complement(seq);
            fq += "@r" + std::to_string(n) + "\n" + seq + "\n+\n" + std::string(150, 'I') + "\n";
        }
        return fq;
    }
    // Every read's hits equal its k-mers.
    void expect_every_kmer_found(std::string const& index, std::string const& reads) {
        auto const r = qmer({"query", "-o", "-", index, reads});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::istringstream in(r.out);
        std::string line;
        size_t rows = 0;
        while (std::getline(in, line)) {
            if (line.starts_with("#") || line.starts_with("read_id")) continue;
            std::istringstream fields(line);
            std::string id;
            uint64_t kmers = 0, hits = 0;
            fields >> id >> kmers >> hits;
            ASSERT_EQ(hits, kmers) << line;
            ++rows;
        }
        EXPECT_GT(rows, 100u);
    }
    std::string info(std::string const& index) {
        auto const r = qmer({"info", index});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    }
};

TEST_F(locality, a_counted_build_is_minimizer_local_and_loses_no_kmer) {
    std::mt19937_64 rng(15);
    std::string const ref = random_bases(rng, 200'000);
    write_file("ref.fa", ">ref\n" + ref + "\n");
    write_file("reads.fq", reads_from(ref));
    ASSERT_EQ(qmer({"index", "-q", "-t", "2", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    EXPECT_NE(info("ref.qmer").find("hash scheme:    minimizer-local (m = 20"), std::string::npos)
        << info("ref.qmer");
    expect_every_kmer_found("ref.qmer", "reads.fq");
    // --mmap answers from the same words the same way.
    auto const a = qmer({"query", "-o", "-", "ref.qmer", "reads.fq"});
    auto const b = qmer({"query", "--mmap", "-o", "-", "ref.qmer", "reads.fq"});
    EXPECT_EQ(a.out, b.out);
}

TEST_F(locality, repeats_overload_windows_and_lose_no_kmer) {
    std::mt19937_64 rng(16);
    std::string const ref = repetitive(rng, 20, 60) + random_bases(rng, 100'000);
    write_file("ref.fa", ">rep\n" + ref + "\n");
    write_file("reads.fq", reads_from(ref));
    ASSERT_EQ(qmer({"index", "-q", "-t", "2", "-o", "rep.qmer", "ref.fa"}).exit_code, 0);
    std::string const text = info("rep.qmer");
    auto const at = text.find("windows, ");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_GT(std::stoull(text.substr(at + 9)), 0u) << "no window overloaded: " << text;
    expect_every_kmer_found("rep.qmer", "reads.fq");
}

TEST_F(locality, append_keeps_the_scheme_and_every_kmer) {
    std::mt19937_64 rng(17);
    std::string const first = random_bases(rng, 100'000), second = random_bases(rng, 150'000);
    write_file("first.fa", ">a\n" + first + "\n");
    write_file("second.fa", ">b\n" + second + "\n");
    write_file("reads.fq", reads_from(first) + reads_from(second));
    ASSERT_EQ(qmer({"index", "-q", "-o", "idx.qmer", "first.fa"}).exit_code, 0);
    std::string const before = info("idx.qmer");
    auto const r = qmer({"index", "--append", "-q", "-o", "idx.qmer", "second.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string const after = info("idx.qmer");
    auto scheme = [](std::string const& text) {
        auto const at = text.find("hash scheme:");
        return text.substr(at, text.find('\n', at) - at);
    };
    EXPECT_EQ(scheme(before), scheme(after));
    expect_every_kmer_found("idx.qmer", "reads.fq");
}

TEST_F(locality, plain_hash_builds_the_plain_scheme_with_the_same_kmers) {
    std::mt19937_64 rng(19);
    std::string const ref = random_bases(rng, 50'000);
    write_file("ref.fa", ">ref\n" + ref + "\n");
    write_file("reads.fq", reads_from(ref));
    ASSERT_EQ(qmer({"index", "-q", "--plain-hash", "-o", "plain.qmer", "ref.fa"}).exit_code, 0);
    ASSERT_EQ(qmer({"index", "-q", "-o", "local.qmer", "ref.fa"}).exit_code, 0);
    EXPECT_NE(info("plain.qmer").find("hash scheme:    plain"), std::string::npos);
    expect_every_kmer_found("plain.qmer", "reads.fq");
    // Appending to a minimizer-local index must hash its way: --plain-hash is refused.
    auto const r = qmer({"index", "--append", "-q", "--plain-hash", "-o", "local.qmer", "ref.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

// Regression: an --append must not hash the new k-mers with --seed (default 0) whatever seed the
// index was built with, or an index built with --seed 7 loses every appended k-mer; a --seed other
// than the index's is refused.
TEST_F(locality, append_with_another_seed_is_refused) {
    std::mt19937_64 rng(18);
    write_file("a.fa", ">a\n" + random_bases(rng, 5000) + "\n");
    write_file("b.fa", ">b\n" + random_bases(rng, 5000) + "\n");
    ASSERT_EQ(qmer({"index", "-q", "--seed", "7", "-o", "idx.qmer", "a.fa"}).exit_code, 0);
    auto const before = slurp(dir() / "idx.qmer");
    auto const r = qmer({"index", "--append", "-q", "-o", "idx.qmer", "b.fa"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--seed 7"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(dir() / "idx.qmer"), before);
    EXPECT_EQ(qmer({"index", "--append", "-q", "--seed", "7", "-o", "idx.qmer", "b.fa"}).exit_code,
              0);
}

}  // namespace
