// qmer query on an index of format 3 answers from the file's bytes in place: read into huge pages
// (the default) or mapped (--mmap). Both give the same lines; a byte damaged in the level words
// (which neither mode reads in full before the first lookup with --mmap) is still refused as a
// checksum mismatch, exit 4, with no output left under its final name.

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_fixture.hpp"

namespace qmer::test {
namespace {

class in_place_query : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        ASSERT_EQ(qmer({"index", "-q", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()})
                      .exit_code,
                  0);
    }
};

TEST_F(in_place_query, mapped_and_copied_answer_the_same) {
    auto const reads = data("lambda_reads_1.fq.gz").string();
    auto const copied = qmer({"query", "-q", "-o", "-", "lambda.qmer", reads});
    auto const mapped = qmer({"query", "--mmap", "-q", "-o", "-", "lambda.qmer", reads});
    ASSERT_EQ(copied.exit_code, 0) << copied.err;
    ASSERT_EQ(mapped.exit_code, 0) << mapped.err;
    EXPECT_EQ(copied.out, mapped.out);
    EXPECT_GT(copied.out.size(), 100000u);
}

TEST_F(in_place_query, a_damaged_word_is_refused_before_any_output_is_final) {
    // Flip one byte in the middle of the file: inside level 0's words.
    auto const size = std::filesystem::file_size(dir() / "lambda.qmer");
    {
        std::fstream f(dir() / "lambda.qmer", std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(static_cast<std::streamoff>(size / 2));
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x5a);
        f.seekp(static_cast<std::streamoff>(size / 2));
        f.write(&c, 1);
    }
    for (std::string mode : {"", "--mmap"}) {
        std::vector<std::string> args{"query", "-q", "-o", "out.tsv", "--summary", "s.json"};
        if (!mode.empty()) args.push_back(mode);
        args.push_back("lambda.qmer");
        args.push_back(data("lambda_reads_1.fq.gz").string());
        auto const r = qmer(args);
        EXPECT_EQ(r.exit_code, 4) << mode << ": " << r.err;
        EXPECT_NE(r.err.find("'lambda.qmer': damaged index: checksum mismatch"), std::string::npos)
            << mode << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "out.tsv")) << mode;
        EXPECT_FALSE(std::filesystem::exists(dir() / "s.json")) << mode;
        for (auto const& e : std::filesystem::directory_iterator(dir()))
            EXPECT_EQ(e.path().filename().string().find("tmp"), std::string::npos) << e.path();
    }
}

// The reads are opened before the index is read: a typo in a reads path is reported at once, not
// after seconds of reading a host-sized index. With both missing, the reads are named.
TEST_F(in_place_query, a_missing_reads_file_is_reported_before_the_index_is_read) {
    auto const r = qmer({"query", "-q", "-o", "out.tsv", "no-such-index.qmer", "no-such-reads.fq"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("no-such-reads.fq"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no-such-index.qmer"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "out.tsv"));
}

}  // namespace
}  // namespace qmer::test
