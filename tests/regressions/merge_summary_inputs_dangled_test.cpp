// `qmer merge --summary` must not write the reads' names from views into a temporary string that is
// gone by then: the Snakemake workflow's JSON would hold bytes that are not UTF-8 ("inputs" of long
// absolute paths, whose text lives on the heap and is reused). Whether the freed bytes are
// overwritten depends on the allocator's state, so a release build can pass this test with the bug;
// it is the ASan run (scripts/sanitize asan, .ci/run) that catches it, as a heap-use-after-free.
#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

class merge_summary : public cli_test {};

TEST_F(merge_summary, inputs_dangled) {
    std::string const data = QMER_DATA_DIR;
    auto r = qmer({"index", "-q", "-o", "lambda.qmer", data + "/lambda_virus.fa.gz"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> const reads{data + "/lambda_reads_1.fq.gz",
                                         data + "/lambda_reads_2.fq.gz"};
    for (auto const& [name, out] : {std::pair{"a", "a.tsv"}, std::pair{"b", "b.tsv"}}) {
        std::vector<std::string> args{"query", "-q", "-o",
                                      out,     "-x", std::string(name) + "=lambda.qmer"};
        args.insert(args.end(), reads.begin(), reads.end());
        r = qmer(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    r = qmer({"merge", "-q", "-o", "m.tsv.gz", "--summary", "m.json", "a.tsv", "b.tsv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto const json = slurp(dir() / "m.json");
    EXPECT_NE(json.find("\"inputs\": [\"" + reads[0] + "\", \"" + reads[1] + "\"]"),
              std::string::npos)
        << json;
}

}  // namespace
