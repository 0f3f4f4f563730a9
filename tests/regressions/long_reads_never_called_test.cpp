// Regression: a read of 1 Mbp copied exactly from the reference (999,970 of 999,970 k-mers found)
// must match. A threshold started from (1 - p)^n, which underflows to 0 once n p > ~745, would be n
// + 1 and give it `match 0`. Reads of 10 kbp to 4 Mbp cut from a 4.2 Mbp reference match with
// containment 1 (one of them reverse-complemented), random reads of the same lengths do not, and
// --quick gives every read the same verdict.
#include <algorithm>
#include <random>
#include <sstream>

#include "cli/cli_fixture.hpp"

namespace {

using qmer::test::cli_test;

std::string random_bases(std::mt19937_64& rng, size_t length) {
    static constexpr char bases[] = "ACGT";
    std::string s(length, 'A');
    for (auto& c : s) c = bases[rng() & 3];
    return s;
}

std::string reverse_complement(std::string s) {
    std::reverse(s.begin(), s.end());
    for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    return s;
}

struct tsv_row {
    std::string id;
    uint64_t kmers = 0, hits = 0;
    std::string containment;
    int match = -1;
};

std::vector<tsv_row> rows(std::string const& tsv) {
    std::vector<tsv_row> out;
    std::istringstream in(tsv);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.starts_with("read_id")) continue;
        std::istringstream fields(line);
        tsv_row r;
        fields >> r.id >> r.kmers >> r.hits >> r.containment >> r.match;
        out.push_back(r);
    }
    return out;
}

class long_reads_never_called : public cli_test {};

TEST_F(long_reads_never_called, reads_up_to_4_mbp_from_the_reference_match) {
    std::mt19937_64 rng(18);
    std::string const reference = random_bases(rng, 4'200'000);
    write_file("ref.fa", ">ref\n" + reference + "\n");
    std::vector<size_t> const lengths = {10'000, 100'000, 1'000'000, 4'000'000};
    std::string reads, random;
    for (size_t i = 0; i < lengths.size(); ++i) {
        size_t const start = (i * 37'813) % (reference.size() - lengths[i]);
        reads += ">from_ref_" + std::to_string(lengths[i]) + "\n" +
                 reference.substr(start, lengths[i]) + "\n";
        random +=
            ">random_" + std::to_string(lengths[i]) + "\n" + random_bases(rng, lengths[i]) + "\n";
    }
    reads += ">from_ref_rc_1000000\n" + reverse_complement(reference.substr(123, 1'000'000)) + "\n";
    write_file("reads.fa", reads + random);
    ASSERT_EQ(qmer({"index", "-q", "-o", "ref.qmer", "ref.fa"}).exit_code, 0);

    auto const full = qmer({"query", "-q", "ref.qmer", "reads.fa"});
    ASSERT_EQ(full.exit_code, 0) << full.err;
    auto const quick = qmer({"query", "-q", "--quick", "ref.qmer", "reads.fa"});
    ASSERT_EQ(quick.exit_code, 0) << quick.err;
    auto const full_rows = rows(full.out), quick_rows = rows(quick.out);
    ASSERT_EQ(full_rows.size(), 2 * lengths.size() + 1) << full.out;
    ASSERT_EQ(quick_rows.size(), full_rows.size()) << quick.out;
    for (size_t i = 0; i < full_rows.size(); ++i) {
        auto const& r = full_rows[i];
        if (r.id.starts_with("from_ref")) {
            EXPECT_EQ(r.match, 1) << r.id << " " << r.kmers << " " << r.hits;
            EXPECT_EQ(r.hits, r.kmers) << r.id;
            EXPECT_EQ(r.containment, "1.0000") << r.id;
        } else {
            EXPECT_EQ(r.match, 0) << r.id << " " << r.kmers << " " << r.hits;
        }
        size_t const length = std::stoul(r.id.substr(r.id.rfind('_') + 1));
        EXPECT_EQ(r.kmers, length - 30) << r.id;
        EXPECT_EQ(quick_rows[i].id, r.id);
        EXPECT_EQ(quick_rows[i].match, r.match) << r.id;
    }
}

}  // namespace
