// Tests of io/paired_reader: lockstep files and interleaved FASTQ, mate name checks, files out of
// step, and the real lambda read pairs in data/.

#include "io/paired_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

class paired_reader_test : public temp_folder_test {};

std::string fastq(std::vector<std::string> const& names) {
    std::string text;
    for (std::string const& name : names) text += "@" + name + "\nACGTACGT\n+\nIIIIIIII\n";
    return text;
}

// prefix + i + suffix, appended piece by piece: GCC 12 warns falsely (-Wrestrict) on
// "literal" + std::to_string(i).
std::string numbered(char const* prefix, int i, char const* suffix) {
    std::string name(prefix);
    name.append(std::to_string(i)).append(suffix);
    return name;
}

struct pair_names {
    std::vector<std::string> first, second;
    std::vector<uint64_t> batch_starts;
};

pair_names read_pairs(paired_reader& reader) {
    pair_names out;
    paired_batch batch;
    while (reader.next_batch(batch)) {
        EXPECT_EQ(batch.first.size(), batch.second.size());
        EXPECT_EQ(batch.first_pair_number(), out.first.size() + 1);
        EXPECT_EQ(batch.second.first_record_number(), batch.first_pair_number());
        out.batch_starts.push_back(batch.first_pair_number());
        for (size_t i = 0; i < batch.size(); ++i) {
            out.first.emplace_back(batch.first[i].name);
            out.second.emplace_back(batch.second[i].name);
        }
    }
    EXPECT_TRUE(batch.empty());
    EXPECT_EQ(reader.pairs_read(), out.first.size());
    return out;
}

TEST(mate_names, strip_only_a_trailing_slash_one_or_two) {
    EXPECT_EQ(mate_base_name("read7/1"), "read7");
    EXPECT_EQ(mate_base_name("read7/2"), "read7");
    EXPECT_EQ(mate_base_name("read7"), "read7");
    EXPECT_EQ(mate_base_name("read7/3"), "read7/3");
    EXPECT_EQ(mate_base_name("read/1x"), "read/1x");
    EXPECT_EQ(mate_base_name("/1"), "");
    EXPECT_EQ(mate_base_name("1"), "1");
}

TEST_F(paired_reader_test, two_files_in_lockstep_with_small_batches) {
    std::vector<std::string> n1, n2;
    for (int i = 0; i < 25; ++i) {
        n1.push_back(numbered("p", i, "/1"));
        n2.push_back(numbered("p", i, i % 2 == 0 ? "/2" : ""));  // the suffix is optional
    }
    std::string const a = write("a_1.fq", fastq(n1));
    std::string const b = write("a_2.fq.gz", fastq(n2), compression::gzip);
    reader_options options;
    options.batch_bytes = 40;  // 8 + 8 bases per pair: a batch closes after 3 pairs (48 bytes)
    paired_reader reader(a, b, options);
    EXPECT_FALSE(reader.interleaved());
    EXPECT_EQ(reader.path1(), a);
    EXPECT_EQ(reader.path2(), b);
    pair_names const got = read_pairs(reader);
    EXPECT_EQ(got.first, n1);
    EXPECT_EQ(got.second, n2);
    EXPECT_EQ(got.batch_starts, (std::vector<uint64_t>{1, 4, 7, 10, 13, 16, 19, 22, 25}));
}

TEST_F(paired_reader_test, interleaved_fastq) {
    std::vector<std::string> names, n1, n2;
    for (int i = 0; i < 10; ++i) {
        names.push_back(numbered("q", i, "/1"));
        names.push_back(numbered("q", i, "/2"));
        n1.push_back(names[names.size() - 2]);
        n2.push_back(names.back());
    }
    std::string const p = write("i.fq", fastq(names));
    paired_reader reader(p);
    EXPECT_TRUE(reader.interleaved());
    EXPECT_EQ(reader.path1(), p);
    EXPECT_EQ(reader.path2(), "");
    pair_names const got = read_pairs(reader);
    EXPECT_EQ(got.first, n1);
    EXPECT_EQ(got.second, n2);
}

TEST_F(paired_reader_test, empty_inputs_are_empty_pairs) {
    std::string const e1 = write("e1.fq", "");
    std::string const e2 = write("e2.fq", "");
    paired_reader two(e1, e2);
    EXPECT_TRUE(read_pairs(two).first.empty());
    paired_reader one(e1);
    EXPECT_TRUE(read_pairs(one).first.empty());
}

TEST_F(paired_reader_test, mate_names_out_of_step) {
    std::string const a = write("m_1.fq", fastq({"r1/1", "r2/1", "r3/1"}));
    std::string const b = write("m_2.fq", fastq({"r1/2", "r3/2", "r2/2"}));
    paired_reader reader(a, b);
    expect_input_error([&] { read_pairs(reader); },
                       {a, b, "pair 2", "mate names differ", "'r2/1'", "'r3/2'"});
}

TEST_F(paired_reader_test, second_file_ends_early_or_late) {
    std::string const three = write("three.fq", fastq({"r1", "r2", "r3"}));
    std::string const two = write("two.fq.gz", fastq({"r1", "r2"}), compression::bgzf);
    {
        paired_reader reader(three, two);
        expect_input_error([&] { read_pairs(reader); },
                           {two, "ends after 2 records", three, "out of step"});
    }
    {
        paired_reader reader(two, three);
        expect_input_error([&] { read_pairs(reader); },
                           {two, "ends after 2 records", three, "out of step"});
    }
    std::string const empty = write("empty.fq", "");
    paired_reader reader(empty, three);
    expect_input_error([&] { read_pairs(reader); }, {empty, "ends after 0 records", three});
}

TEST_F(paired_reader_test, interleaved_odd_count_and_bad_names) {
    std::string const odd = write("odd.fq", fastq({"a/1", "a/2", "b/1"}));
    paired_reader odd_reader(odd);
    expect_input_error([&] { read_pairs(odd_reader); },
                       {odd, "record 3", "odd number of records", "'b/1'"});
    std::string const shifted = write("shift.fq", fastq({"a/1", "b/1", "b/2", "a/2"}));
    paired_reader shifted_reader(shifted);
    expect_input_error([&] { read_pairs(shifted_reader); },
                       {shifted, "records 1 and 2", "mate names differ", "'a/1'", "'b/1'"});
}

TEST_F(paired_reader_test, a_malformed_record_in_either_file_is_reported_with_its_number) {
    std::string const good = write("g.fq", fastq({"r1", "r2"}));
    std::string const bad = write("b.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII\n");
    paired_reader reader(good, bad);
    expect_input_error([&] { read_pairs(reader); }, {bad, "record 2", "quality length"});
}

TEST_F(paired_reader_test, lambda_read_pairs) {
    std::string const dir = QMER_DATA_DIR;
    paired_reader reader(dir + "/lambda_reads_1.fq.gz", dir + "/lambda_reads_2.fq.gz");
    pair_names const got = read_pairs(reader);
    EXPECT_EQ(got.first.size(), 10000u);
    EXPECT_GT(got.batch_starts.size(), 0u);
}

}  // namespace
}  // namespace qmer::io::test
