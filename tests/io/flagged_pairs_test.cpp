// Tests of SAM/BAM/CRAM files flagged paired (0x1) read as pairs by their flags (paired_reader and
// chunked_paired_reader over one file): the pairs of the lambda mate files written as
// `samtools import -1 R1.fq -2 R2.fq` writes them (by htslib's writer, in the test) equal the two
// FASTQ files' pairs; every way the flags can break the pairing is an input_error naming the file,
// the record and the read; the single-read readers tell flagged_paired() and otherwise read such
// files as before.

#include <gtest/gtest.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/chunked_paired_reader.hpp"
#include "io/chunked_reader.hpp"
#include "io/paired_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

// samtools import's flags: 77 and 141 (with "unmapped" and "mate unmapped", which qmer ignores).
constexpr uint16_t paired = BAM_FPAIRED | BAM_FMUNMAP;
constexpr uint16_t mate1 = paired | BAM_FREAD1;
constexpr uint16_t mate2 = paired | BAM_FREAD2;

struct sam_record {
    std::string name;
    uint16_t flag = 0;
    std::string sequence = "ACGTACGTAC";
    std::string quality = "IIIIIIIIII";  // empty: stored without qualities
};

enum class hts_kind { sam, bam, cram };

char const* write_mode(hts_kind kind) {
    switch (kind) {
        case hts_kind::sam:
            return "w";
        case hts_kind::bam:
            return "wb";
        case hts_kind::cram:
            return "wc";
    }
    return "w";
}

// Writes unaligned records (flagged unmapped, 0x4; CRAM needs no reference for them) through
// htslib's writer.
void write_hts(std::string const& path, hts_kind kind, std::vector<sam_record> const& records) {
    samFile* out = sam_open(path.c_str(), write_mode(kind));
    ASSERT_NE(out, nullptr) << path;
    sam_hdr_t* header = sam_hdr_init();
    ASSERT_NE(header, nullptr);
    ASSERT_EQ(sam_hdr_add_lines(header, "@HD\tVN:1.6\tSO:unknown\n", 0), 0);
    ASSERT_EQ(sam_hdr_write(out, header), 0);
    bam1_t* b = bam_init1();
    std::string phred;
    for (sam_record const& r : records) {
        phred.clear();
        for (char const c : r.quality) phred.push_back(static_cast<char>(c - 33));
        int const set = bam_set1(b, r.name.size(), r.name.c_str(), r.flag | BAM_FUNMAP, -1, -1, 0,
                                 0, nullptr, -1, -1, 0, r.sequence.size(), r.sequence.c_str(),
                                 r.quality.empty() ? nullptr : phred.c_str(), 0);
        ASSERT_GE(set, 0) << r.name;
        ASSERT_GE(sam_write1(out, header, b), 0) << r.name;
    }
    bam_destroy1(b);
    sam_hdr_destroy(header);
    ASSERT_EQ(sam_close(out), 0) << path;
}

using pair_of_records = std::pair<owned_record, owned_record>;

// The pairs a reader gave before it ended or threw, and its message (empty at a clean end).
struct paired_reading {
    std::vector<pair_of_records> pairs;
    std::string error;
};

void collect(paired_batch const& batch, std::vector<pair_of_records>& out) {
    ASSERT_EQ(batch.first.size(), batch.second.size());
    EXPECT_EQ(batch.first_pair_number(), out.size() + 1);
    for (size_t i = 0; i < batch.size(); ++i)
        out.emplace_back(own(batch.first[i]), own(batch.second[i]));
}

paired_reading read_serially(std::function<paired_reader()> const& open) {
    paired_reading out;
    try {
        paired_reader reader = open();
        paired_batch batch;
        while (reader.next_batch(batch)) collect(batch, out.pairs);
    } catch (input_error const& e) {
        out.error = e.what();
    }
    return out;
}

// The pipeline's stages in order, one chunk at a time.
paired_reading read_chunked(std::function<chunked_paired_reader()> const& open) {
    paired_reading out;
    try {
        chunked_paired_reader reader = open();
        paired_chunk chunk;
        paired_batch pairs;
        while (reader.cut(chunk)) {
            chunked_paired_reader::parse(chunk);
            reader.settle(chunk, pairs);
            collect(pairs, out.pairs);
        }
        EXPECT_EQ(reader.pairs_read(), out.pairs.size());
    } catch (input_error const& e) {
        out.error = e.what();
    }
    return out;
}

// Both readers over one file, with batches of `batch_bytes`: the same pairs and the same error.
paired_reading read_both(std::string const& path, size_t batch_bytes = 1) {
    reader_options const options{.decompression_threads = 0, .batch_bytes = batch_bytes};
    paired_reading const serial = read_serially([&] { return paired_reader(path, options); });
    paired_reading const chunked =
        read_chunked([&] { return chunked_paired_reader(path, options); });
    EXPECT_EQ(chunked.error, serial.error) << path;
    EXPECT_EQ(chunked.pairs, serial.pairs) << path;
    return serial;
}

class flagged_pairs_test : public temp_folder_test {
  protected:
    // The records as a SAM file in the test's folder.
    std::string sam(std::string const& name, std::vector<sam_record> const& records) {
        std::string const p = path(name);
        write_hts(p, hts_kind::sam, records);
        return p;
    }
};

// The lambda mates, as `samtools import` stores them: mate 1 then mate 2, flagged 0x41 and 0x81.
std::vector<sam_record> lambda_as_imported(std::vector<owned_record> const& first,
                                           std::vector<owned_record> const& second,
                                           bool slash_suffixes) {
    std::vector<sam_record> records;
    for (size_t i = 0; i < first.size(); ++i) {
        std::string name1 = first[i].name, name2 = second[i].name;
        if (slash_suffixes) {
            name1 += "/1";
            name2 += "/2";
        }
        records.push_back({name1, mate1, first[i].sequence, first[i].quality});
        records.push_back({name2, mate2, second[i].sequence, second[i].quality});
    }
    return records;
}

TEST_F(flagged_pairs_test, imported_lambda_pairs_equal_the_two_fastq_files) {
    std::string const dir = QMER_DATA_DIR;
    std::string const fq1 = dir + "/lambda_reads_1.fq.gz", fq2 = dir + "/lambda_reads_2.fq.gz";
    std::vector<owned_record> const first = read_all(fq1), second = read_all(fq2);
    ASSERT_EQ(first.size(), 10000u);
    ASSERT_EQ(second.size(), first.size());
    paired_reading const want = read_serially([&] { return paired_reader(fq1, fq2); });
    ASSERT_EQ(want.error, "");
    ASSERT_EQ(want.pairs.size(), 10000u);

    struct variant {
        char const* file;
        hts_kind kind;
        bool slash_suffixes;
    };
    for (variant const v :
         {variant{"pairs.sam", hts_kind::sam, false}, variant{"pairs.bam", hts_kind::bam, false},
          variant{"pairs.cram", hts_kind::cram, false},
          variant{"slashed.bam", hts_kind::bam, true}}) {
        std::string const p = path(v.file);
        write_hts(p, v.kind, lambda_as_imported(first, second, v.slash_suffixes));
        // Batches of the default budget, and small ones that end between the mates of a pair.
        for (size_t const budget : {record_batch::default_byte_budget, size_t{1000}}) {
            SCOPED_TRACE(std::string(v.file) + ", batches of " + std::to_string(budget));
            paired_reading got = read_both(p, budget);
            EXPECT_EQ(got.error, "");
            ASSERT_EQ(got.pairs.size(), want.pairs.size());
            if (v.slash_suffixes) {
                // The names keep their suffixes; the mate-name rule pairs them.
                EXPECT_EQ(got.pairs[0].first.name, want.pairs[0].first.name + "/1");
                EXPECT_EQ(got.pairs[0].second.name, want.pairs[0].second.name + "/2");
                for (auto& [a, b] : got.pairs) {
                    a.name = std::string(mate_base_name(a.name));
                    b.name = std::string(mate_base_name(b.name));
                }
            }
            EXPECT_EQ(got.pairs, want.pairs);
        }
        paired_reader reader(p);
        EXPECT_TRUE(reader.interleaved());
        EXPECT_TRUE(reader.mates_by_flags());
        EXPECT_TRUE(chunked_paired_reader(p).mates_by_flags());
    }
}

TEST_F(flagged_pairs_test, single_read_readers_tell_flagged_paired_and_read_every_record) {
    std::string const pairs = sam("pairs.sam", {{"a", mate1}, {"a", mate2}, {"b", mate1}});
    std::string const singles = sam("singles.sam", {{"a", 0}, {"b", paired}});
    std::string const fastq = write("r.fq", "@a\nACGT\n+\nIIII\n");
    std::string const empty = write("empty.fq", "");
    std::string const no_records = sam("none.sam", {});
    // The first record that counts: secondary and supplementary records repeat a read.
    std::string const after_secondary =
        sam("secondary.sam", {{"a", mate1 | BAM_FSECONDARY}, {"a", 0}});

    EXPECT_TRUE(sequence_reader(pairs).flagged_paired());
    EXPECT_TRUE(chunked_reader(pairs).flagged_paired());
    for (std::string const& p : {singles, fastq, empty, no_records, after_secondary}) {
        EXPECT_FALSE(sequence_reader(p).flagged_paired()) << p;
        EXPECT_FALSE(chunked_reader(p).flagged_paired()) << p;
    }
    // By default a reader of single reads ignores the flags: an odd flagged file and
    // a mixed one are read record by record.
    std::vector<owned_record> const got = read_all(pairs);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[2].name, "b");
    EXPECT_EQ(read_all(singles).size(), 2u);
}

TEST_F(flagged_pairs_test, uniform_pairing_refuses_a_later_paired_record_in_a_single_read_file) {
    std::string const mixed = sam("mixed.sam", {{"a", 0}, {"b", 0}, {"c", mate1}});
    reader_options options;
    options.uniform_pairing = true;
    expect_input_error([&] { read_all(mixed, options); },
                       {mixed, "record 3 ('c')", "flagged paired (0x1), unlike the file's first",
                        "mixes single reads and pairs"});
    std::vector<std::string> const want = {
        mixed +
        ": record 3 ('c'): flagged paired (0x1), unlike the file's first record: the file "
        "mixes single reads and pairs"};
    // chunked_reader gives the same error from settle(), after the records before it.
    chunked_reader reader(mixed, options);
    EXPECT_FALSE(reader.flagged_paired());
    text_chunk chunk;
    record_batch batch;
    ASSERT_TRUE(reader.cut(chunk, batch));
    chunked_reader::parse(chunk, batch);
    expect_input_error([&] { reader.settle(chunk, batch); }, want);
    EXPECT_EQ(batch.size(), 2u);
    // A file flagged paired read as single reads: every record must be flagged paired.
    std::string const paired_then_not = sam("paired_then_not.sam", {{"a", mate1}, {"b", 0}});
    expect_input_error([&] { read_all(paired_then_not, options); },
                       {paired_then_not, "record 2 ('b')", "not flagged paired (0x1)"});
    // Uniform files pass.
    EXPECT_EQ(read_all(sam("uniform.sam", {{"a", 0}, {"b", 0}}), options).size(), 2u);
    EXPECT_EQ(read_all(sam("all_paired.sam", {{"a", mate1}, {"a", mate2}}), options).size(), 2u);
}

// Each break of the flags, its message word for word (both readers give the same, read_both).
TEST_F(flagged_pairs_test, broken_pairing_is_an_error_naming_the_file_the_record_and_the_read) {
    std::string const hint =
        ": the mates of a pair must be adjacent, first then second (samtools collate or samtools "
        "sort -n puts them so)";
    struct broken {
        char const* file;
        std::vector<sam_record> records;
        std::string message;  // after "<path>: "
        size_t pairs_before;
    };
    std::vector<broken> const cases = {
        {"unpaired_record.sam",
         {{"a", mate1}, {"a", mate2}, {"b", 0}, {"b", mate2}},
         "record 3 ('b'): not flagged paired (0x1), unlike the file's first record: the file "
         "mixes single reads and pairs",
         1},
        {"first_not_followed_by_second.sam",
         {{"a", mate1}, {"a", mate2}, {"b", mate1}, {"c", mate1}, {"c", mate2}},
         "record 4 ('c'): a first mate (0x40) where the second mate (0x80) of record 3 ('b') "
         "should follow" +
             hint,
         1},
        {"second_first.sam",
         {{"a", mate2}, {"a", mate1}},
         "record 1 ('a'): a second mate (0x80) with no first mate (0x40) before it" + hint,
         0},
        {"names_differ.sam",
         {{"a", mate1}, {"a", mate2}, {"b", mate1}, {"c", mate2}},
         "records 3 and 4: mate names differ ('b' and 'c'): the mates are out of step",
         1},
        {"both_mates.sam",
         {{"a", mate1}, {"a", mate1 | mate2}},
         "record 2 ('a'): flagged both first mate (0x40) and second mate (0x80)",
         0},
        {"neither_mate.sam",
         {{"a", paired}, {"a", mate2}},
         "record 1 ('a'): flagged paired (0x1) but neither first mate (0x40) nor second mate "
         "(0x80)",
         0},
        {"ends_after_first_mate.sam",
         {{"a", mate1}, {"a", mate2}, {"b", mate1}},
         "record 3 ('b'): a first mate (0x40) ends the file, with no second mate (0x80) after it",
         1},
        // Not flagged paired at first, so read as interleaved: a paired record later is refused.
        {"unpaired_then_paired.sam",
         {{"a/1", 0}, {"a/2", 0}, {"b", mate1}, {"b", mate2}},
         "record 3 ('b'): flagged paired (0x1), unlike the file's first record: the file mixes "
         "single reads and pairs",
         1},
    };
    for (broken const& c : cases) {
        SCOPED_TRACE(c.file);
        std::string const p = sam(c.file, c.records);
        paired_reading const got = read_both(p);
        EXPECT_EQ(got.error, p + ": " + c.message);
        EXPECT_EQ(got.pairs.size(), c.pairs_before);
    }
}

TEST_F(flagged_pairs_test, secondary_and_supplementary_records_between_mates_are_skipped) {
    std::string const p = sam("with_secondary.sam", {{"a", mate1},
                                                     {"a", mate1 | BAM_FSECONDARY},
                                                     {"a", mate2, "TTTTGGGG", "ABCDEFGH"},
                                                     {"a", mate2 | BAM_FSUPPLEMENTARY}});
    paired_reading const got = read_both(p);
    EXPECT_EQ(got.error, "");
    ASSERT_EQ(got.pairs.size(), 1u);
    EXPECT_EQ(got.pairs[0].first, (owned_record{"a", "", "ACGTACGTAC", "IIIIIIIIII"}));
    EXPECT_EQ(got.pairs[0].second, (owned_record{"a", "", "TTTTGGGG", "ABCDEFGH"}));
}

TEST_F(flagged_pairs_test, an_unflagged_file_is_still_read_as_interleaved) {
    std::string const p = sam("interleaved.sam", {{"a/1", 0, "ACGT", ""},
                                                  {"a/2", 0, "GGCC", ""},
                                                  {"b/1", 0, "TTAA", ""},
                                                  {"b/2", 0, "CCAA", ""}});
    paired_reading const got = read_both(p);
    EXPECT_EQ(got.error, "");
    ASSERT_EQ(got.pairs.size(), 2u);
    EXPECT_EQ(got.pairs[1].first, (owned_record{"b/1", "", "TTAA", ""}));
    EXPECT_EQ(got.pairs[1].second, (owned_record{"b/2", "", "CCAA", ""}));
    EXPECT_FALSE(paired_reader(p).mates_by_flags());
    EXPECT_FALSE(chunked_paired_reader(p).mates_by_flags());
    // Two files keep the lockstep reading whatever their flags (mate 1 only in one, mate 2 in the
    // other, as `samtools view -f 64` and `-f 128` split a file).
    std::string const r1 = sam("r1.sam", {{"a", mate1}, {"b", mate1}});
    std::string const r2 = sam("r2.sam", {{"a", mate2}, {"b", mate2}});
    paired_reading const two = read_serially([&] { return paired_reader(r1, r2); });
    EXPECT_EQ(two.error, "");
    EXPECT_EQ(two.pairs.size(), 2u);
}

// Standard input can be opened once: the reader that told flagged_paired() is the one paired.
TEST_F(flagged_pairs_test, standard_input_opened_once_then_read_as_pairs) {
    std::vector<sam_record> records;
    for (int i = 0; i < 300; ++i) {
        std::string name("p");  // not "p" + to_string(i): GCC 12 warns falsely (-Wrestrict)
        name.append(std::to_string(i));
        records.push_back({name, mate1, "ACGTTGCA", "IIIIIIII"});
        records.push_back({name, mate2, "GGGGCCCC", "HHHHHHHH"});
    }
    std::string const p = path("pairs.bam");
    write_hts(p, hts_kind::bam, records);
    paired_reading const want = read_both(p);
    ASSERT_EQ(want.error, "");
    ASSERT_EQ(want.pairs.size(), 300u);

    stdin_feed feed(read_bytes(p));
    paired_reading const got = read_chunked([] {
        chunked_reader reader("-", reader_options{.decompression_threads = 0, .batch_bytes = 100});
        EXPECT_TRUE(reader.flagged_paired());
        return chunked_paired_reader(std::move(reader));
    });
    EXPECT_EQ(got.error, "");
    EXPECT_EQ(got.pairs, want.pairs);
}

// A text file handed over opened is interleaved, as the path constructor reads it.
TEST_F(flagged_pairs_test, an_opened_text_file_is_read_as_interleaved) {
    std::string const p = write("i.fq", "@a/1\nACGT\n+\nIIII\n@a/2\nTTTT\n+\nIIII\n");
    chunked_reader reader(p);
    EXPECT_FALSE(reader.flagged_paired());
    paired_reading const got =
        read_chunked([&] { return chunked_paired_reader(std::move(reader)); });
    EXPECT_EQ(got.error, "");
    ASSERT_EQ(got.pairs.size(), 1u);
    EXPECT_EQ(got.pairs[0].second.sequence, "TTTT");
}

}  // namespace
}  // namespace qmer::io::test
