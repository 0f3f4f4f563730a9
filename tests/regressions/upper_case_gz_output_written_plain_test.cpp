// `--matched clean.FQ.GZ` must not be written as plain text: the suffix is matched in any case, not
// only as a lower-case ".gz"/".bgz", and ".zst" (any case) is written zstd-compressed; each decodes
// with its own tool to the reads a plain output holds.
#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class upper_case_suffix : public cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        write_file("ref.fa", ">ref\n" + reference + "\n");
        std::string reads;
        for (int i = 0; i < 500; ++i)
            reads += "@r" + std::to_string(i) + "\n" + reference.substr(i % 20, 40) + "\n+\n" +
                     std::string(40, 'I') + "\n";
        write_file("reads.fq", reads);
        ASSERT_EQ(qmer({"index", "-k", "15", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);
    }

    std::string const reference = "ACGTACGTTTGACCATGACGATTACGGATCAGGACTTACGACTAGCATCGACTAGCTTAGGC";
};

TEST_F(upper_case_suffix, gz_and_zst_in_any_case_are_compressed) {
    if (shell("command -v zstd > /dev/null && command -v gzip > /dev/null").exit_code != 0)
        FAIL() << "zstd or gzip is not installed (scripts/install-deps installs them)";
    auto const plain =
        qmer({"query", "-q", "-o", "/dev/null", "--matched", "plain.fq", "ref.qmer", "reads.fq"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    std::string const expected = slurp(dir() / "plain.fq");
    ASSERT_FALSE(expected.empty());
    for (std::string const name : {"clean.FQ.GZ", "clean.fq.Bgz", "clean.fq.zst", "clean.FQ.ZST"}) {
        auto const r =
            qmer({"query", "-q", "-o", "/dev/null", "--matched", name, "ref.qmer", "reads.fq"});
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
        std::string const written = slurp(dir() / name);
        bool const zst = name.ends_with("zst") || name.ends_with("ZST");
        std::string const magic = zst ? "\x28\xb5\x2f\xfd" : "\x1f\x8b";
        EXPECT_TRUE(written.starts_with(magic)) << name << " is not compressed";
        std::string const tool = zst ? "zstd -q" : "gzip";
        ASSERT_EQ(shell(tool + " -dc '" + name + "' > back.fq").exit_code, 0) << name;
        EXPECT_EQ(slurp(dir() / "back.fq"), expected) << name;
    }
}

}  // namespace
