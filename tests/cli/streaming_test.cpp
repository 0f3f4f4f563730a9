// Memory stays bounded while streaming: a query over 4x more reads does not raise peak RSS, because
// the pipeline holds a fixed number of batches (2 x threads + 1, of ~1 MB of sequence each)
// whatever the input size. Both inputs are larger than those batches together, so both runs reach
// the steady state (a smaller input uses less, which is why a 10,000-read file is no baseline).
#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;
using streaming = cli_test;

uint64_t json_value(std::string const& json, std::string const& key) {
    auto const at = json.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key;
    return std::stoull(json.substr(at + key.size() + 4));
}

TEST_F(streaming, four_times_more_reads_do_not_raise_peak_memory) {
    std::string const r1 = data("lambda_reads_1.fq.gz").string();
    ASSERT_EQ(qmer({"index", "-o", "lambda.qmer", data("lambda_virus.fa.gz").string()}).exit_code,
              0);
    // Concatenated gzip members are one valid gzip stream: 4 and 16 copies of the 10,000 reads.
    ASSERT_EQ(shell("for i in $(seq 4); do cat '" + r1 + "'; done > one.fq.gz").exit_code, 0);
    ASSERT_EQ(shell("for i in 1 2 3 4; do cat one.fq.gz; done > ten.fq.gz").exit_code, 0);
    auto const one = qmer({"query", "-t", "2", "-o", "/dev/null", "--summary", "one.json",
                           "lambda.qmer", "one.fq.gz"});
    auto const ten = qmer({"query", "-t", "2", "-o", "/dev/null", "--summary", "ten.json",
                           "lambda.qmer", "ten.fq.gz"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_EQ(ten.exit_code, 0) << ten.err;
    std::string const a = slurp(dir() / "one.json"), b = slurp(dir() / "ten.json");
    EXPECT_EQ(json_value(b, "reads"), 4 * json_value(a, "reads"));
    double const rss_one = static_cast<double>(json_value(a, "peak_rss_bytes"));
    double const rss_ten = static_cast<double>(json_value(b, "peak_rss_bytes"));
    std::printf("peak RSS: %.1f MiB for 40,000 reads, %.1f MiB for 160,000\n", rss_one / 1048576,
                rss_ten / 1048576);
    EXPECT_LT(rss_ten, rss_one * 1.15 + 4 * 1048576.0);
}

}  // namespace
