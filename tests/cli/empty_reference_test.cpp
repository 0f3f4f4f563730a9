// A reference with no k-mer (empty, only N, every record shorter than k) is an input error naming
// it (exit 3, no index written) unless --allow-empty; `qmer info` and a query say when an index is
// empty. A failed download must not silently turn depletion into a no-op.
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_fixture.hpp"

namespace {

class empty_reference : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("empty.fa", "");
        write_file("blank.fa", "\n\n");
        write_file("only_n.fa", ">a\n" + std::string(500, 'N') + "\n>b\nNNNNACGTNNNN\n");
        write_file("short.fa",
                   ">a\n" + std::string(30, 'A') + "\n>b\nACGTACGTACGTACGTACGTACGTACGTAC\n");
        write_file("short.fq", "@a\nACGTACGTAC\n+\nIIIIIIIIII\n");
        write_file("ref.fa", random_fasta(2, 2000, 7));
        ASSERT_EQ(shell("gzip -c empty.fa > empty.fa.gz").exit_code, 0);
    }
};

TEST_F(empty_reference, a_reference_without_kmers_is_refused_by_name) {
    for (std::string const name :
         {"empty.fa", "blank.fa", "only_n.fa", "short.fa", "short.fq", "empty.fa.gz"}) {
        auto const r = qmer({"index", "-q", "-o", "x.qmer", name});
        EXPECT_EQ(r.exit_code, 3) << name << ": " << r.err;
        EXPECT_NE(r.err.find("qmer: error: " + name + ": no k-mer in it (k = 31)"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("--allow-empty"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer")) << name;
    }
    // Records of exactly k bases hold one k-mer each: fine.
    write_file("exact.fa", ">a\n" + std::string(31, 'C') + "\n");
    EXPECT_EQ(qmer({"index", "-q", "-o", "x.qmer", "exact.fa"}).exit_code, 0);
    // A smaller k makes the short records fine too.
    EXPECT_EQ(qmer({"index", "-q", "-k", "21", "-o", "y.qmer", "short.fa"}).exit_code, 0);
}

TEST_F(empty_reference, one_empty_reference_among_several_is_named) {
    for (std::vector<std::string> const& filter :
         {std::vector<std::string>{}, {"--filter", "bloom"}, {"--filter", "locally-locked"}}) {
        std::vector<std::string> args{"index", "-q", "-o", "x.qmer"};
        args.insert(args.end(), filter.begin(), filter.end());
        for (auto const* ref : {"ref.fa", "only_n.fa", "ref.fa"}) args.push_back(ref);
        // The same file twice is refused: give the second under another name.
        std::filesystem::copy_file(dir() / "ref.fa", dir() / "ref2.fa",
                                   std::filesystem::copy_options::overwrite_existing);
        args.back() = "ref2.fa";
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find("only_n.fa: no k-mer in it"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "x.qmer"));
    }
}

TEST_F(empty_reference, allow_empty_writes_an_index_that_says_it_is_empty) {
    auto r = qmer({"index", "-q", "--allow-empty", "-o", "e.qmer", "empty.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = qmer({"info", "e.qmer"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("empty:          yes"), std::string::npos) << r.out;
    r = qmer({"info", "--json", "e.qmer"});
    EXPECT_NE(r.out.find("\"empty\": true"), std::string::npos) << r.out;
    write_file("reads.fq", "@r1\n" + random_fasta(1, 100, 3).substr(4, 100) + "\n+\n" +
                               std::string(100, 'I') + "\n");
    r = qmer({"query", "-o", "t.tsv", "e.qmer", "reads.fq"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: index 'e.qmer' is empty"), std::string::npos) << r.err;
    EXPECT_NE(slurp(dir() / "t.tsv").find("r1\t70\t0\t0.0000\t0"), std::string::npos)
        << slurp(dir() / "t.tsv");
    // An index with k-mers says nothing of the kind.
    r = qmer({"index", "-q", "-o", "ref.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = qmer({"info", "ref.qmer"});
    EXPECT_EQ(r.out.find("empty:"), std::string::npos) << r.out;
    r = qmer({"query", "-o", "t2.tsv", "ref.qmer", "reads.fq"});
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST_F(empty_reference, append_of_an_empty_reference_is_refused_too) {
    auto r = qmer({"index", "-q", "-o", "ref.qmer", "ref.fa"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const before = slurp(dir() / "ref.qmer");
    r = qmer({"index", "-q", "--append", "-o", "ref.qmer", "empty.fa"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("empty.fa: no k-mer in it"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(dir() / "ref.qmer"), before);
}

}  // namespace
