// Unaligned SAM/BAM/CRAM whose records are flagged paired (0x1, 0x40 then 0x80: what
// `samtools import -1 R1.fq -2 R2.fq` writes) is read as pairs by `qmer query`: one verdict per
// pair, both mates written, the same answers as the two FASTQ files. The readers' own tests
// (tests/io/flagged_pairs_test.cpp) cover BAM, CRAM and every broken pairing.
#include <algorithm>
#include <filesystem>
#include <string>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::tsv_body;

class paired_sam : public qmer::test::cli_test {
  protected:
    void SetUp() override {
        cli_test::SetUp();
        auto r = qmer({"index", "-q", "-o", "ref.qmer", data("lambda_virus.fa.gz").string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        // The two mate files as one unaligned SAM, mates adjacent, under one name.
        std::string const script =
            "import gzip, sys\n"
            "def records(path):\n"
            "    with gzip.open(path, 'rt') as f:\n"
            "        lines = f.read().split('\\n')\n"
            "    for i in range(0, len(lines) - 3, 4):\n"
            "        yield lines[i][1:].split()[0], lines[i + 1], lines[i + 3]\n"
            "out = open('pairs.sam', 'w')\n"
            "out.write('@HD\\tVN:1.6\\tSO:unsorted\\n')\n"
            "for (n1, s1, q1), (n2, s2, q2) in zip(records(sys.argv[1]), records(sys.argv[2])):\n"
            "    name = n1[:-2] if n1.endswith('/1') else n1\n"
            "    out.write(f'{name}\\t77\\t*\\t0\\t0\\t*\\t*\\t0\\t0\\t{s1}\\t{q1}\\n')\n"
            "    out.write(f'{name}\\t141\\t*\\t0\\t0\\t*\\t*\\t0\\t0\\t{s2}\\t{q2}\\n')\n";
        write_file("to_sam.py", script);
        ASSERT_EQ(shell("python3 to_sam.py '" + data("lambda_reads_1.fq.gz").string() + "' '" +
                        data("lambda_reads_2.fq.gz").string() + "'")
                      .exit_code,
                  0);
    }
};

TEST_F(paired_sam, flagged_pairs_answer_as_the_two_mate_files) {
    auto r = qmer({"query", "-q", "-o", "files.tsv", "--summary", "files.json", "ref.qmer",
                   data("lambda_reads_1.fq.gz").string(), data("lambda_reads_2.fq.gz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (std::string const threads : {"1", "2", "5"}) {
        r = qmer({"query", "-q", "-t", threads, "-o", "sam.tsv", "--summary", "sam.json",
                  "--unmatched", "u.fq", "--matched", "m.fq", "ref.qmer", "pairs.sam"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        auto const files = tsv_body(slurp(dir() / "files.tsv"));
        EXPECT_EQ(tsv_body(slurp(dir() / "sam.tsv")), files) << "-t " << threads;
        auto const json = slurp(dir() / "sam.json");
        EXPECT_EQ(json.find("\"pairs\": 0,"), std::string::npos) << json;
        auto const pairs_at = slurp(dir() / "files.json").find("\"pairs\": ");
        ASSERT_NE(pairs_at, std::string::npos);
        std::string const pairs_line =
            slurp(dir() / "files.json")
                .substr(pairs_at, slurp(dir() / "files.json").find('\n', pairs_at) - pairs_at);
        EXPECT_NE(json.find(pairs_line), std::string::npos) << pairs_line << "\n" << json;
        // Both mates of every pair are written, mate 1 then mate 2: an even number of records.
        for (char const* out : {"u.fq", "m.fq"}) {
            auto const text = slurp(dir() / out);
            auto const lines = std::count(text.begin(), text.end(), '\n');
            EXPECT_EQ(lines % 8, 0) << out;
        }
    }
    // Standard input is opened once and read as pairs too.
    r = qmer({"query", "-q", "-o", "stdin.tsv", "ref.qmer", "-"}, "pairs.sam");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(tsv_body(slurp(dir() / "stdin.tsv")), tsv_body(slurp(dir() / "files.tsv")));
}

TEST_F(paired_sam, an_orphan_mate_is_an_input_error) {
    // The last record (a second mate) dropped: the file ends after a first mate.
    ASSERT_EQ(shell("head -n -1 pairs.sam > broken.sam").exit_code, 0);
    auto const r = qmer({"query", "-q", "-o", "t.tsv", "ref.qmer", "broken.sam"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("broken.sam"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "t.tsv"));
}

}  // namespace
