// Tests of io/chunked_paired_reader: two mate files and interleaved files read in chunks (cut,
// parsed in any order, paired in order) give paired_reader's pairs and paired_reader's first error,
// word for word: random pairs of files (FASTQ and FASTA, mates of different lengths, CRLF, blank
// lines, multi-line records), often damaged (names out of step, a record missing in one file, a
// malformed record, a file cut short), with chunk sizes down to one byte.

#include "io/chunked_paired_reader.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

using pair_of_records = std::pair<owned_record, owned_record>;

// What a reader gave: the pairs before the first problem, and its message (empty at a clean end).
struct paired_reading {
    std::vector<pair_of_records> pairs;
    std::string error;
};

void collect(paired_batch const& batch, std::vector<pair_of_records>& out) {
    EXPECT_EQ(batch.first.size(), batch.second.size());
    EXPECT_EQ(batch.first_pair_number(), out.size() + 1);
    EXPECT_EQ(batch.second.first_record_number(), out.size() + 1);
    for (size_t i = 0; i < batch.size(); ++i)
        out.emplace_back(own(batch.first[i]), own(batch.second[i]));
}

// Options for the reference: a pair per batch, so that every pair before an error is seen.
reader_options const one_pair{.decompression_threads = 0, .batch_bytes = 1};

// The reference: paired_reader.
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

struct slot {
    paired_chunk chunk;
    bool parsed = false;
};

// A pipeline in one thread, its steps in a random order (see chunked_reader_test.cpp).
paired_reading read_chunked(std::function<std::unique_ptr<chunked_paired_reader>()> const& open,
                            std::mt19937_64& rng, size_t window) {
    paired_reading out;
    std::unique_ptr<chunked_paired_reader> reader;
    try {
        reader = open();
    } catch (input_error const& e) {
        out.error = e.what();
        return out;
    }
    std::deque<std::unique_ptr<slot>> flight;
    bool more = true;
    paired_batch pairs;
    for (;;) {
        std::vector<slot*> unparsed;
        for (auto& s : flight)
            if (!s->parsed) unparsed.push_back(s.get());
        unsigned const action = static_cast<unsigned>(rng() % 3);
        if (more && flight.size() < window && (action == 0 || flight.empty())) {
            auto s = std::make_unique<slot>();
            if (reader->cut(s->chunk))
                flight.push_back(std::move(s));
            else
                more = false;
        } else if (action == 1 && !unparsed.empty()) {
            slot* s = unparsed[rng() % unparsed.size()];
            chunked_paired_reader::parse(s->chunk);
            s->parsed = true;
        } else if (!flight.empty()) {
            slot& front = *flight.front();
            if (!front.parsed) chunked_paired_reader::parse(front.chunk);
            try {
                reader->settle(front.chunk, pairs);
            } catch (input_error const& e) {
                out.error = e.what();
                return out;
            }
            collect(pairs, out.pairs);
            EXPECT_EQ(reader->pairs_read(), out.pairs.size());
            flight.pop_front();
        } else if (!more) {
            return out;
        }
    }
}

// The chunked reading must give the reference's error, and its pairs (all of them at a clean
// end, the first of them otherwise: the pairs of a chunk with an error are not handed out).
void expect_same(paired_reading const& got, paired_reading const& want,
                 std::string const& context) {
    EXPECT_EQ(got.error, want.error) << context;
    if (want.error.empty()) {
        ASSERT_EQ(got.pairs.size(), want.pairs.size()) << context;
    } else {
        ASSERT_LE(got.pairs.size(), want.pairs.size()) << context;
    }
    for (size_t i = 0; i < got.pairs.size(); ++i)
        ASSERT_EQ(got.pairs[i], want.pairs[i]) << context << ", pair " << i + 1;
}

// ---- random mates -------------------------------------------------------------------------------

struct mate_texts {
    std::string first, second, interleaved;
};

// `pairs` mates in two files (and interleaved), each file's records of its own length range.
mate_texts random_mates(std::mt19937_64& rng, size_t pairs) {
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    bool const fastq1 = pick(4) != 0, fastq2 = pick(4) != 0 ? fastq1 : !fastq1;
    bool const crlf = pick(4) == 0;
    bool const blank_lines = pick(4) == 0;
    bool const multi_line = pick(5) == 0;
    // Mates of different lengths make one file's chunks hold more records than the other's.
    size_t const longest1 = pick(3) == 0 ? 20 : 300, longest2 = pick(3) == 0 ? 20 : 300;
    bool const illumina = pick(2) == 0;
    char const* eol = crlf ? "\r\n" : "\n";
    auto record = [&](std::string const& name, size_t longest, bool fastq) {
        std::string text;
        if (blank_lines && pick(5) == 0) text += eol;
        text += fastq ? '@' : '>';
        text += name;
        text += eol;
        size_t const length = pick(8) == 0 ? 0 : pick(longest);
        std::string sequence(length, 'A');
        for (char& c : sequence) c = "ACGTN"[pick(5)];
        size_t const width = multi_line ? 1 + pick(60) : length + 1;
        auto lines = [&](std::string const& s, bool quality) {
            if (s.empty()) text += eol;
            for (size_t at = 0; at < s.size(); at += width) {
                std::string line = s.substr(at, width);
                if (quality && pick(4) == 0) line[0] = pick(2) ? '@' : '+';
                text += line + eol;
            }
        };
        lines(sequence, false);
        if (fastq) {
            text += std::string("+") + eol;
            std::string quality(length, 'I');
            for (char& c : quality) c = static_cast<char>('!' + pick(90));
            lines(quality, true);
        }
        return text;
    };
    mate_texts out;
    for (size_t i = 0; i < pairs; ++i) {
        std::string const base = "p" + std::to_string(i);
        std::string const a = record(illumina ? base + " 1:N:0" : base + "/1", longest1, fastq1);
        std::string const b = record(illumina ? base + " 2:N:0" : base + "/2", longest2, fastq2);
        out.first += a;
        out.second += b;
        out.interleaved += a + b;
    }
    return out;
}

// Damages one text the way paired files go wrong.
void damage(std::mt19937_64& rng, std::string& text) {
    if (text.empty()) return;
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    size_t const at = pick(text.size());
    size_t const line = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    size_t const line_end = std::min(text.find('\n', line), text.size());
    switch (pick(6)) {
        case 0:  // a mate's name changed
            if (text.find('p', line) < line_end) text[text.find('p', line)] = 'q';
            break;
        case 1:  // cut short
            text.resize(at);
            break;
        case 2:  // a line gone
            text.erase(line, line_end + 1 - line);
            break;
        case 3:
            text[at] = '\0';
            break;
        case 4:  // a line twice
            text.insert(line, text.substr(line, line_end + 1 - line));
            break;
        default:
            text.insert(line, "junk\n");
            break;
    }
}

chunk_sizes random_sizes(std::mt19937_64& rng) {
    size_t const target = rng() % 3 == 0 ? 1 : 1 + rng() % (rng() % 2 ? 300 : 30000);
    return {target, rng() % 3 == 0 ? target + rng() % 64 : 0};
}

class chunked_paired_reader_test : public temp_folder_test {};

TEST_F(chunked_paired_reader_test, random_mate_files_pair_as_paired_reader_pairs_them) {
    std::mt19937_64 rng(4040);
    int errors = 0;
    for (int round = 0; round < 300; ++round) {
        mate_texts texts = random_mates(rng, 1 + rng() % 150);
        if (round % 3 != 0) damage(rng, rng() % 2 ? texts.first : texts.second);
        if (round % 7 == 1) damage(rng, texts.first);
        compression const how = round % 10 == 3 ? compression::gzip : compression::none;
        std::string const p1 = write("r1.fx", texts.first, how);
        std::string const p2 = write("r2.fx", texts.second, how);
        paired_reading const want = read_serially([&] { return paired_reader(p1, p2, one_pair); });
        errors += !want.error.empty();
        chunk_sizes const sizes = random_sizes(rng);
        expect_same(
            read_chunked(
                [&] {
                    return std::make_unique<chunked_paired_reader>(p1, p2, reader_options{}, sizes);
                },
                rng, 1 + rng() % 6),
            want, "round " + std::to_string(round) + ", target " + std::to_string(sizes.target));
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(errors, 80);
}

TEST_F(chunked_paired_reader_test, random_interleaved_files_pair_as_paired_reader_pairs_them) {
    std::mt19937_64 rng(4041);
    int errors = 0;
    for (int round = 0; round < 300; ++round) {
        mate_texts texts = random_mates(rng, 1 + rng() % 150);
        if (round % 3 != 0) damage(rng, texts.interleaved);
        if (round % 5 == 2) {  // an odd number of records
            texts.interleaved += texts.first.substr(0, texts.first.find("\np1"));
        }
        std::string const p = write("i.fx", texts.interleaved);
        paired_reading const want = read_serially([&] { return paired_reader(p, one_pair); });
        errors += !want.error.empty();
        chunk_sizes const sizes = random_sizes(rng);
        expect_same(
            read_chunked(
                [&] { return std::make_unique<chunked_paired_reader>(p, reader_options{}, sizes); },
                rng, 1 + rng() % 6),
            want, "round " + std::to_string(round) + ", target " + std::to_string(sizes.target));
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(errors, 80);
}

TEST_F(chunked_paired_reader_test, mates_of_different_lengths_keep_little_back) {
    // Mate 1 of 300 bases, mate 2 of 10: a chunk of file 2 holds ~20 times the records of a chunk
    // of file 1. The pairs are right, and file 2 is held back rather than read ahead unbounded.
    std::string first, second;
    for (int i = 0; i < 4000; ++i) {
        std::string const name = "@m" + std::to_string(i);
        first += name + "/1\n" + std::string(300, 'A') + "\n+\n" + std::string(300, 'I') + "\n";
        second += name + "/2\n" + std::string(10, 'C') + "\n+\n" + std::string(10, 'I') + "\n";
    }
    std::string const p1 = write("long.fq", first), p2 = write("short.fq", second);
    paired_reading const want = read_serially([&] { return paired_reader(p1, p2, one_pair); });
    ASSERT_TRUE(want.error.empty()) << want.error;
    chunked_paired_reader reader(p1, p2, {}, {20000, 0});
    paired_chunk chunk;
    paired_batch pairs;
    paired_reading got;
    size_t most_waiting = 0;
    while (reader.cut(chunk)) {
        chunked_paired_reader::parse(chunk);
        reader.settle(chunk, pairs);
        collect(pairs, got.pairs);
        most_waiting = std::max(most_waiting, reader.waiting_bytes());
    }
    expect_same(got, want, "lengths");
    EXPECT_EQ(reader.waiting_bytes(), 0u);
    // A 20 kB chunk of file 1 holds ~33 records, one of file 2 ~650: without holding file 2 back,
    // nearly all of file 2 (~120 kB of records) would wait for mates. Held back, what waits stays
    // within about a chunk of each.
    EXPECT_GT(most_waiting, 0u);
    EXPECT_LT(most_waiting, 50000u);
}

TEST_F(chunked_paired_reader_test, the_first_problem_in_paired_readers_order) {
    std::mt19937_64 rng(3);
    auto fq = [](char const* name, char const* seq, char const* qual) {
        return std::string("@") + name + "\n" + seq + "\n+\n" + qual + "\n";
    };
    std::string good1, good2;
    for (int i = 0; i < 300; ++i) {
        std::string const n = std::string("g").append(std::to_string(i));
        good1 += fq((n + "/1").c_str(), "ACGT", "IIII");
        good2 += fq((n + "/2").c_str(), "ACGT", "IIII");
    }
    struct case_ {
        std::string first, second, expected;
    };
    std::vector<case_> const cases = {
        // Mate 2 malformed at pair 301, mate 1 malformed at pair 302: mate 2's comes first.
        {good1 + fq("x/1", "AC", "II") + fq("y/1", "AC", "I"),
         good2 + fq("x/2", "AC", "I") + fq("y/2", "AC", "II"), "r2.fq: record 301"},
        // Mate 1 malformed at 301, mate 2 at 301 as well: mate 1 is read first.
        {good1 + fq("x/1", "AC", "I"), good2 + fq("x/2", "AC", "I"), "r1.fq: record 301"},
        // Names differ at pair 5 and file 2 is malformed at 200: the names come first.
        {good1,
         good2.substr(0, good2.find("@g4/2")) + "@h4/2" +
             good2.substr(good2.find("@g4/2") + 5,
                          good2.find("@g199/2") - good2.find("@g4/2") - 5) +
             "@g199/2\nAC\n+\nI\n",
         "pair 5: mate names differ"},
        // File 2 ends early: out of step at pair 251.
        {good1, good2.substr(0, good2.find("@g250/2")), "ends after 250 records"},
    };
    for (case_ const& c : cases) {
        std::string const p1 = write("r1.fq", c.first), p2 = write("r2.fq", c.second);
        paired_reading const want = read_serially([&] { return paired_reader(p1, p2, one_pair); });
        EXPECT_NE(want.error.find(c.expected), std::string::npos) << want.error;
        for (size_t target : {1, 50, 1000, 100000}) {
            expect_same(read_chunked(
                            [&] {
                                return std::make_unique<chunked_paired_reader>(
                                    p1, p2, reader_options{}, chunk_sizes{target, 0});
                            },
                            rng, 4),
                        want, c.expected + ", target " + std::to_string(target));
        }
    }
}

TEST_F(chunked_paired_reader_test, bundled_mates_and_formats_read_serially) {
    std::mt19937_64 rng(5);
    std::string const r1 = std::string(QMER_DATA_DIR) + "/lambda_reads_1.fq.gz";
    std::string const r2 = std::string(QMER_DATA_DIR) + "/lambda_reads_2.fq.gz";
    paired_reading const want = read_serially([&] { return paired_reader(r1, r2, one_pair); });
    ASSERT_TRUE(want.error.empty()) << want.error;
    ASSERT_EQ(want.pairs.size(), 10000u);
    for (chunk_sizes sizes : {chunk_sizes{}, chunk_sizes{30000, 0}}) {
        expect_same(read_chunked(
                        [&] {
                            return std::make_unique<chunked_paired_reader>(r1, r2, reader_options{},
                                                                           sizes);
                        },
                        rng, 4),
                    want, "lambda");
    }
    // A GenBank file (read serially) against itself, and an empty file against a FASTQ file.
    std::string const gbk = std::string(QMER_DATA_DIR) + "/leptospira_contig.gbk";
    expect_same(
        read_chunked([&] { return std::make_unique<chunked_paired_reader>(gbk, gbk); }, rng, 2),
        read_serially([&] { return paired_reader(gbk, gbk, one_pair); }), "gbk");
    std::string const empty = write("empty.fq", "");
    expect_same(
        read_chunked([&] { return std::make_unique<chunked_paired_reader>(empty, r1); }, rng, 2),
        read_serially([&] { return paired_reader(empty, r1, one_pair); }), "empty");
    expect_same(
        read_chunked([&] { return std::make_unique<chunked_paired_reader>(empty); }, rng, 2),
        read_serially([&] { return paired_reader(empty, one_pair); }), "empty interleaved");
}

}  // namespace
}  // namespace qmer::io::test
