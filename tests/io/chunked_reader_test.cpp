// Tests of io/chunked_reader: the records, their numbers and every error of a file read in chunks
// (cut, parsed in any order, settled in order) are those of sequence_reader, byte for byte and word
// for word. Most tests are differential: random FASTA/FASTQ (CRLF, blank lines, empty and long
// records, multi-line records, quality lines starting with '@' or '+'), often damaged on purpose,
// read both ways with chunk sizes down to one byte.

#include "io/chunked_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

// What a reader gave: every record before the first problem, and the problem's message (empty when
// the input was read to its end).
struct reading {
    std::vector<owned_record> records;
    std::string error;
};

void expect_same(reading const& got, reading const& want, std::string const& context) {
    EXPECT_EQ(got.error, want.error) << context;
    ASSERT_EQ(got.records.size(), want.records.size()) << context;
    for (size_t i = 0; i < want.records.size(); ++i)
        ASSERT_EQ(got.records[i], want.records[i]) << context << ", record " << i + 1;
}

// The reference: sequence_reader, a record at a time.
reading read_serially(std::string const& p, reader_options options = {}) {
    reading out;
    record_batch batch;
    try {
        sequence_reader reader(p, options);
        while (reader.read_record(batch)) {
        }
    } catch (input_error const& e) {
        out.error = e.what();
    }
    for (sequence_record const r : batch) out.records.push_back(own(r));
    return out;
}

struct slot {
    text_chunk chunk;
    record_batch batch;
    bool parsed = false;
};

// The sequence bytes a FASTA record cut into pieces repeats at each cut (the reader's
// record_split): what take() holds the pieces to.
size_t split_carry = 0;

// Adds a settled batch's records to out. A record in pieces is put back together: a piece after the
// first has the record's name and comment and repeats its last min(carry, its length so far) bases,
// so that every k-mer (k <= carry + 1) of the record lies whole in exactly one piece.
void take(slot const& s, reading& out) {
    size_t first = 0;
    if (s.chunk.continues_record() && !s.batch.empty()) {
        if (out.records.empty()) {
            ADD_FAILURE() << "a continued record with no record before it";
            return;
        }
        owned_record& whole = out.records.back();
        owned_record const piece = own(s.batch[0]);
        size_t const repeated = s.chunk.repeated_bases();
        EXPECT_EQ(repeated, std::min(split_carry, whole.sequence.size())) << whole.name;
        EXPECT_EQ(piece.name, whole.name);
        EXPECT_EQ(piece.comment, whole.comment);
        EXPECT_EQ(piece.sequence.substr(0, repeated),
                  whole.sequence.substr(whole.sequence.size() -
                                        std::min(repeated, whole.sequence.size())));
        whole.sequence += piece.sequence.substr(std::min(repeated, piece.sequence.size()));
        first = 1;
    }
    for (size_t i = first; i < s.batch.size(); ++i) out.records.push_back(own(s.batch[i]));
}

// Settles the front slot into out; false (and out.error set) when settle() threw.
bool settle_front(chunked_reader& reader, slot& s, reading& out) {
    uint64_t const before = reader.records_read();
    try {
        reader.settle(s.chunk, s.batch);
    } catch (input_error const& e) {
        out.error = e.what();
        // The batch holds the records before the malformed one.
        take(s, out);
        return false;
    }
    if (!s.batch.empty()) {
        EXPECT_EQ(s.batch.first_record_number(), before + 1 - (s.chunk.continues_record() ? 1 : 0));
    }
    take(s, out);
    EXPECT_EQ(reader.records_read(), out.records.size());
    return true;
}

// A pipeline in one thread, its steps in a random order: up to `window` chunks in flight, parsed
// in any order, settled in input order (each parsed before it is settled, as in a pipeline).
reading read_chunked(std::string const& p, reader_options options, chunk_sizes sizes,
                     std::mt19937_64& rng, size_t window) {
    reading out;
    std::unique_ptr<chunked_reader> reader;
    try {
        reader = std::make_unique<chunked_reader>(p, options, sizes);
    } catch (input_error const& e) {
        out.error = e.what();
        return out;
    }
    std::deque<std::unique_ptr<slot>> flight;
    bool more = true;
    for (;;) {
        std::vector<slot*> unparsed;
        for (auto& s : flight)
            if (!s->parsed) unparsed.push_back(s.get());
        unsigned const action = static_cast<unsigned>(rng() % 3);
        if (more && flight.size() < window && (action == 0 || flight.empty())) {
            auto s = std::make_unique<slot>();
            if (reader->cut(s->chunk, s->batch))
                flight.push_back(std::move(s));
            else
                more = false;
        } else if (action == 1 && !unparsed.empty()) {
            slot* s = unparsed[rng() % unparsed.size()];
            chunked_reader::parse(s->chunk, s->batch);
            s->parsed = true;
        } else if (!flight.empty()) {
            slot& front = *flight.front();
            if (!front.parsed) chunked_reader::parse(front.chunk, front.batch);
            if (!settle_front(*reader, front, out)) return out;
            flight.pop_front();
        } else if (!more) {
            return out;
        }
    }
}

// All chunks cut first, parsed by several threads at once (each from the far end), then settled.
reading read_chunked_on_threads(std::string const& p, chunk_sizes sizes, unsigned threads) {
    reading out;
    chunked_reader reader(p, {}, sizes);
    std::vector<std::unique_ptr<slot>> slots;
    for (;;) {
        auto s = std::make_unique<slot>();
        if (!reader.cut(s->chunk, s->batch)) break;
        slots.push_back(std::move(s));
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (size_t i = slots.size(); i-- > 0;)
                if (i % threads == t) chunked_reader::parse(slots[i]->chunk, slots[i]->batch);
        });
    }
    for (auto& thread : pool) thread.join();
    for (auto& s : slots)
        if (!settle_front(reader, *s, out)) break;
    return out;
}

// ---- random text
// ----------------------------------------------------------------------------------

std::string random_text(std::mt19937_64& rng, bool fastq, size_t records_at_most = 60) {
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    bool const crlf = pick(4) == 0;
    bool const mixed_line_ends = pick(8) == 0;
    bool const multi_line = pick(3) == 0;
    bool const blank_lines = pick(3) == 0;
    auto eol = [&]() -> char const* {
        if (mixed_line_ends) return pick(2) ? "\r\n" : "\n";
        return crlf ? "\r\n" : "\n";
    };
    auto letters = [&](size_t n, std::string_view alphabet) {
        std::string s(n, ' ');
        for (char& c : s) c = alphabet[pick(alphabet.size())];
        return s;
    };
    std::string text;
    size_t const records = 1 + pick(records_at_most);
    for (size_t i = 0; i < records; ++i) {
        if (blank_lines && pick(4) == 0) text += pick(2) ? eol() : " \t";
        if (blank_lines && pick(6) == 0) text += eol();
        text += fastq ? '@' : '>';
        text += "r" + std::to_string(i);
        if (pick(3) == 0) text += pick(2) ? " some comment" : "\tx=1 y=2";
        text += eol();
        size_t const length = pick(6) == 0 ? 0 : pick(12) == 0 ? 1000 + pick(25000) : pick(300);
        std::string const sequence = letters(length, "ACGTNacgtn");
        size_t const width = multi_line ? 1 + pick(90) : length + 1;
        auto lines = [&](std::string const& s, bool quality) {
            if (s.empty()) text += eol();
            for (size_t at = 0; at < s.size(); at += width) {
                std::string line = s.substr(at, width);
                // Quality lines that start like headers or '+' lines.
                if (quality && pick(4) == 0) line[0] = pick(2) ? '@' : '+';
                text += line;
                text += eol();
                if (!fastq && blank_lines && pick(10) == 0) text += eol();
            }
        };
        lines(sequence, false);
        if (fastq) {
            text += '+';
            if (pick(3) == 0) text += "r" + std::to_string(i);
            text += eol();
            std::string quality(length, 'I');
            for (char& c : quality) c = static_cast<char>('!' + pick(94));
            lines(quality, true);
        }
    }
    if (pick(4) == 0) {
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    }
    return text;
}

// Damages text in one of the ways files get damaged (or made wrongly).
void damage(std::mt19937_64& rng, std::string& text) {
    if (text.empty()) return;
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    size_t const at = pick(text.size());
    size_t const line = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    size_t const line_end = std::min(text.find('\n', line), text.size());
    switch (pick(7)) {
        case 0:
            text[at] = '\0';
            break;
        case 1:  // a line gone (a '+' line, a header, a quality line...)
            text.erase(line, line_end + 1 - line);
            break;
        case 2:  // a line twice
            text.insert(line, text.substr(line, line_end + 1 - line));
            break;
        case 3:
            text.insert(line, "junk\n");
            break;
        case 4:  // cut short
            text.resize(at);
            break;
        case 5:
            text[at] = "@+>\nA"[pick(5)];
            break;
        default:  // a quality line one shorter
            if (line_end > line) text.erase(line_end - 1, 1);
            break;
    }
}

chunk_sizes random_sizes(std::mt19937_64& rng) {
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    size_t const target = pick(4) == 0 ? 1 : pick(2) == 0 ? 1 + pick(200) : 1 + pick(20000);
    // Small limits make FASTQ chunks cut blind (parsed serially when settled) now and then.
    size_t const most = pick(3) == 0 ? target + pick(64) : target * (1 + pick(8));
    return {target, most};
}

class chunked_reader_test : public temp_folder_test {};

// ---- the same records and errors as sequence_reader ---------------------------------------------

TEST_F(chunked_reader_test, random_valid_and_damaged_text_reads_as_serially) {
    std::mt19937_64 rng(2040);
    int damaged_rounds = 0, errors_seen = 0;
    for (int round = 0; round < 400; ++round) {
        bool const fastq = round % 2 == 0;
        std::string text = random_text(rng, fastq);
        int const damages = round % 3 == 0 ? 0 : 1 + static_cast<int>(rng() % 2);
        for (int d = 0; d < damages; ++d) damage(rng, text);
        damaged_rounds += damages > 0;
        compression const how = round % 10 == 7   ? compression::gzip
                                : round % 10 == 8 ? compression::bgzf
                                                  : compression::none;
        std::string const p = write(fastq ? "r.fq" : "r.fa", text, how);
        reading const want = read_serially(p);
        errors_seen += !want.error.empty();
        chunk_sizes const sizes = random_sizes(rng);
        size_t const window = 1 + rng() % 6;
        std::string const context = "round " + std::to_string(round) + ", target " +
                                    std::to_string(sizes.target) + ", most " +
                                    std::to_string(sizes.most);
        expect_same(read_chunked(p, {}, sizes, rng, window), want, context);
        if (::testing::Test::HasFatalFailure()) return;
    }
    // The damage must have made errors to compare, and not only errors.
    EXPECT_GT(errors_seen, 100);
    EXPECT_LT(errors_seen, damaged_rounds + 1);
}

// The references of an index: FASTA records cut into pieces (the reader's record_split) read as the
// serial reader reads them whole, with the same errors at the same record numbers; FASTQ (which
// the split leaves alone) too.
TEST_F(chunked_reader_test, records_cut_into_pieces_read_as_serially) {
    std::mt19937_64 rng(4111);
    int pieces_seen = 0, errors_seen = 0;
    for (int round = 0; round < 400; ++round) {
        bool const fastq = round % 5 == 0;
        std::string text = random_text(rng, fastq, 12);
        int const damages = round % 3 == 0 ? static_cast<int>(1 + rng() % 2) : 0;
        for (int d = 0; d < damages; ++d) damage(rng, text);
        std::string const p = write(fastq ? "r.fq" : "r.fa", text,
                                    round % 10 == 7 ? compression::gzip : compression::none);
        reading const want = read_serially(p);
        errors_seen += !want.error.empty();
        chunk_sizes const sizes = random_sizes(rng);
        split_carry = rng() % 40;
        detail::record_split const split{1 + rng() % 400, split_carry};
        std::string const context =
            "round " + std::to_string(round) + ", target " + std::to_string(sizes.target) +
            ", split " + std::to_string(split.bytes) + ", carry " + std::to_string(split_carry);
        reading got;
        try {
            chunked_reader reader(p, {}, sizes, split);
            for (;;) {
                slot s;
                if (!reader.cut(s.chunk, s.batch)) break;
                chunked_reader::parse(s.chunk, s.batch);
                if (!settle_front(reader, s, got)) break;
                EXPECT_FALSE(fastq && s.chunk.continues_record()) << context;
                pieces_seen += s.chunk.continues_record();
            }
        } catch (input_error const& e) {
            got.error = e.what();  // the file does not open
        }
        // The serial reader keeps nothing of a malformed record; the pieces of one before the
        // piece where its problem shows were given out already (an index build stops all the
        // same, with the same message).
        if (!want.error.empty() && got.records.size() == want.records.size() + 1)
            got.records.pop_back();
        expect_same(got, want, context);
        if (::testing::Test::HasFatalFailure()) return;
    }
    split_carry = 0;
    EXPECT_GT(pieces_seen, 100);
    EXPECT_GT(errors_seen, 20);
}

// All k-length windows of each record (of every piece of it), bases or not: the scanner decides
// what a k-mer is, so this holds the pieces to every window the whole record has.
std::multiset<std::string> windows_of(std::vector<owned_record> const& pieces, size_t k) {
    std::multiset<std::string> out;
    for (auto const& r : pieces)
        for (size_t at = 0; at + k <= r.sequence.size(); ++at) out.insert(r.sequence.substr(at, k));
    return out;
}

// A record cut at every place near a piece boundary (pieces from 1 to 90 bytes: every byte of the
// record is the last of a piece for some size) has, over its pieces, exactly the k-length windows
// of the whole record, for every k an index allows: none lost at a cut, none counted twice. The
// sequence has N runs across the cuts, lower case, IUPAC codes, short lines and blank lines.
TEST_F(chunked_reader_test, a_record_cut_anywhere_keeps_exactly_its_windows) {
    std::mt19937_64 rng(99);
    std::string sequence;
    for (int i = 0; i < 400; ++i) {
        size_t const r = rng() % 20;
        sequence += r == 0   ? std::string(1 + rng() % 40, 'N')
                    : r == 1 ? "acgT"
                    : r == 2 ? "RY"
                             : "";
        sequence += "ACGT"[rng() % 4];
    }
    std::string text = ">long the comment\n";
    for (size_t at = 0; at < sequence.size(); at += 7) {
        text += sequence.substr(at, 7) + "\n";
        if (at % 91 == 0) text += "\n";
    }
    text += ">next\nACGTACGT\n";
    std::string const p = write("long.fa", text);
    std::vector<owned_record> const whole = read_serially(p).records;
    ASSERT_EQ(whole.size(), 2u);
    ASSERT_EQ(whole[0].sequence, sequence);
    for (size_t k : {1, 2, 3, 16, 17, 31, 32}) {
        for (size_t piece = 1; piece <= 90; ++piece) {
            chunked_reader reader(p, {}, chunk_sizes{1000000, 0}, {piece, k - 1});
            std::vector<owned_record> pieces;
            size_t continued = 0;
            for (;;) {
                slot s;
                if (!reader.cut(s.chunk, s.batch)) break;
                chunked_reader::parse(s.chunk, s.batch);
                reader.settle(s.chunk, s.batch);
                continued += s.chunk.continues_record();
                for (sequence_record const r : s.batch) pieces.push_back(own(r));
            }
            EXPECT_GT(continued, 0u) << k << ", " << piece;
            EXPECT_EQ(reader.records_read(), 2u);
            ASSERT_EQ(windows_of(pieces, k), windows_of(whole, k)) << k << ", " << piece;
        }
    }
}

// Reads reach a query whole: without a split (the default, and what a query's reader gets), a
// FASTA record many times the chunk target is one record of one chunk.
TEST_F(chunked_reader_test, without_a_split_a_long_record_is_never_cut) {
    std::string const big(200000, 'A');
    std::string const p = write("reads.fa", ">a\nAC\n>big\n" + big + "\n>c\nT\n");
    chunked_reader reader(p, {}, chunk_sizes{100, 0});
    reading got;
    for (;;) {
        slot s;
        if (!reader.cut(s.chunk, s.batch)) break;
        chunked_reader::parse(s.chunk, s.batch);
        EXPECT_FALSE(s.chunk.continues_record());
        ASSERT_TRUE(settle_front(reader, s, got));
    }
    ASSERT_EQ(got.records.size(), 3u);
    EXPECT_EQ(got.records[1].sequence, big);
}

TEST_F(chunked_reader_test, chunks_parsed_by_several_threads_at_once) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 30; ++round) {
        bool const fastq = round % 2 == 0;
        std::string text = random_text(rng, fastq, 400);
        if (round % 3 == 1) damage(rng, text);
        std::string const p = write("t.fx", text);
        expect_same(read_chunked_on_threads(p, random_sizes(rng), 4), read_serially(p),
                    "round " + std::to_string(round));
    }
}

TEST_F(chunked_reader_test, plain_gzip_and_bgzf_with_threads) {
    std::mt19937_64 rng(11);
    std::string text;
    while (text.size() < (300 << 10)) text += random_text(rng, true, 200) + "\n";
    reading const want = read_serially(write("r.fq", text));
    ASSERT_TRUE(want.error.empty()) << want.error;
    for (compression how : {compression::none, compression::gzip, compression::bgzf}) {
        std::string const p = write("c.fq", text, how);
        for (unsigned threads : {0u, 2u}) {
            reader_options options;
            options.decompression_threads = threads;
            expect_same(read_chunked(p, options, {4096, 0}, rng, 4), want,
                        "threads " + std::to_string(threads));
        }
    }
}

// ---- errors in chunks ---------------------------------------------------------------------------

std::string fastq_records(size_t from, size_t count) {
    std::string text;
    for (size_t i = from; i < from + count; ++i)
        text += "@read" + std::to_string(i) + "\nACGTACGTAC\n+\n@IIIIIIIII\n";
    return text;
}

TEST_F(chunked_reader_test, an_error_in_a_later_chunk_after_good_chunks) {
    std::string const text =
        fastq_records(1, 500) + "@bad\nACGT\n+\nIII\n" + fastq_records(502, 10);
    std::string const p = write("late.fq", text);
    reading const want = read_serially(p);
    ASSERT_NE(want.error.find("record 501: quality length"), std::string::npos) << want.error;
    std::mt19937_64 rng(1);
    for (size_t target : {1, 100, 3000}) {
        reading const got = read_chunked(p, {}, {target, 0}, rng, 4);
        expect_same(got, want, "target " + std::to_string(target));
        EXPECT_EQ(got.records.size(), 500u);
    }
}

TEST_F(chunked_reader_test, of_two_errors_in_different_chunks_the_first_is_reported) {
    std::string const text = fastq_records(1, 99) + "@r100\nACGT\nIIII\n" +
                             fastq_records(101, 300) + std::string("@r401\nAC\0T\n+\nIIII\n", 19) +
                             fastq_records(402, 5);
    std::string const p = write("two.fq", text);
    reading const want = read_serially(p);
    ASSERT_NE(want.error.find(": record 100: no '+' line"), std::string::npos) << want.error;
    // Every chunk parsed before any is settled, the later ones first.
    chunked_reader reader(p, {}, {300, 0});
    std::vector<std::unique_ptr<slot>> slots;
    for (;;) {
        auto s = std::make_unique<slot>();
        if (!reader.cut(s->chunk, s->batch)) break;
        slots.push_back(std::move(s));
    }
    ASSERT_GT(slots.size(), 20u);
    for (size_t i = slots.size(); i-- > 0;) chunked_reader::parse(slots[i]->chunk, slots[i]->batch);
    reading got;
    for (auto& s : slots)
        if (!settle_front(reader, *s, got)) break;
    expect_same(got, want, "reverse parse");
}

TEST_F(chunked_reader_test, truncated_gzip_reports_the_damage_at_the_same_record) {
    std::mt19937_64 rng(5);
    std::string text;
    while (text.size() < (200 << 10)) text += fastq_records(text.size(), 50) + "\n";
    for (compression how : {compression::gzip, compression::bgzf}) {
        std::string const whole = read_bytes(write("whole.gz", text, how));
        for (int cut = 0; cut < 12; ++cut) {
            size_t const keep = 20 + rng() % (whole.size() - 40);
            std::string const p = write("cut.gz", whole.substr(0, keep));
            reading const want = read_serially(p);
            ASSERT_NE(want.error.find("truncated"), std::string::npos) << want.error;
            expect_same(read_chunked(p, {}, random_sizes(rng), rng, 3), want,
                        "keep " + std::to_string(keep));
        }
    }
}

TEST_F(chunked_reader_test, bgzf_without_end_of_file_marker_through_a_pipe) {
    std::string const whole =
        read_bytes(write("whole.bgz", fastq_records(1, 3000), compression::bgzf));
    std::string const cut = whole.substr(0, whole.size() - 28);  // the marker block gone
    std::string serial_error;
    {
        stdin_feed feed(cut);
        serial_error = read_serially("-").error;
    }
    EXPECT_NE(serial_error.find("-: record 3001: truncated BGZF data"), std::string::npos)
        << serial_error;
    stdin_feed feed(cut);
    std::mt19937_64 rng(3);
    reading const got = read_chunked("-", {}, {5000, 0}, rng, 4);
    EXPECT_EQ(got.error, serial_error);
    EXPECT_EQ(got.records.size(), 3000u);
}

TEST_F(chunked_reader_test, file_changed_while_it_was_read) {
    std::string const text = fastq_records(1, 50);
    std::string const p = write("grow.fq", text);
    chunked_reader reader(p, {}, {100, 0});
    slot first;
    ASSERT_TRUE(reader.cut(first.chunk, first.batch));
    {
        std::ofstream out(p, std::ios::app);
        out << "@late\nA\n+\nI\n";
    }
    reading got;
    chunked_reader::parse(first.chunk, first.batch);
    ASSERT_TRUE(settle_front(reader, first, got));
    for (;;) {
        slot s;
        if (!reader.cut(s.chunk, s.batch)) break;
        chunked_reader::parse(s.chunk, s.batch);
        if (!settle_front(reader, s, got)) break;
    }
    EXPECT_NE(got.error.find("grow.fq: grew from"), std::string::npos) << got.error;
    EXPECT_EQ(got.records.size(), 50u);  // the error comes after the last record, as serially
}

// ---- what cannot be cut safely
// --------------------------------------------------------------------

TEST_F(chunked_reader_test, multi_line_fastq_with_at_and_plus_quality_lines) {
    // Quality lines starting with '@' and '+' in wrapped records: "@AAA / BBBB / +CCC / DDDD" even
    // looks like a four-line record to the cutter, but for its lengths.
    std::string text;
    for (int i = 0; i < 3000; ++i) {
        text += "@m" + std::to_string(i) + "\nACGTACGTACGTAC\nGTACGTACGTACGT\n+\n";
        text +=
            i % 2 ? "@AAAAAAAAAAAAA\n+BBBBBBBBBBBBB\n" : "@AAA\nBBBB\n+CCC\nDDDD\n@EEEEEEEEEEE\n";
    }
    std::string const p = write("multi.fq", text);
    reading const want = read_serially(p);
    ASSERT_TRUE(want.error.empty()) << want.error;
    ASSERT_EQ(want.records.size(), 3000u);
    std::mt19937_64 rng(9);
    for (chunk_sizes sizes :
         {chunk_sizes{1, 1}, chunk_sizes{64, 256}, chunk_sizes{1000, 20000}, chunk_sizes{20000, 0}})
        expect_same(read_chunked(p, {}, sizes, rng, 5), want,
                    "target " + std::to_string(sizes.target));
}

TEST_F(chunked_reader_test, records_larger_than_a_chunk) {
    std::mt19937_64 rng(13);
    std::string const big(300000, 'G');
    std::string const fq =
        "@a\nAC\n+\nII\n@big\n" + big + "\n+\n" + std::string(big.size(), 'I') + "\n@c\nT\n+\nI\n";
    std::string const fa = ">a\nAC\n>big\n" + big + "\n" + big + "\n>c\nT\n";
    for (std::string const& p : {write("big.fq", fq), write("big.fa", fa)}) {
        reading const want = read_serially(p);
        ASSERT_EQ(want.records.size(), 3u);
        for (chunk_sizes sizes : {chunk_sizes{1, 0}, chunk_sizes{1000, 0}, chunk_sizes{100, 500}})
            expect_same(read_chunked(p, {}, sizes, rng, 3), want, p);
    }
}

// ---- other formats and files
// ------------------------------------------------------------------------

TEST_F(chunked_reader_test, data_files_and_formats_read_serially) {
    std::mt19937_64 rng(17);
    for (char const* name : {"lambda_reads_1.fq.gz", "lambda_virus.fa.gz", "unrelated_reads.fq.gz",
                             "leptospira_contig.gbk", "plasmid_pWM5.embl"}) {
        std::string const p = std::string(QMER_DATA_DIR) + "/" + name;
        reading const want = read_serially(p);
        ASSERT_TRUE(want.error.empty()) << want.error;
        expect_same(read_chunked(p, {}, {}, rng, 3), want, name);
        expect_same(read_chunked(p, {}, {5000, 0}, rng, 3), want, name);
        chunked_reader const reader(p);
        bool const text = std::string(name).find(".f") != std::string::npos;
        EXPECT_EQ(reader.chunked(), text) << name;
    }
    for (std::string const& p :
         {write("empty", ""), write("blank", "\n\n"), write("empty.gz", "", compression::gzip)}) {
        chunked_reader reader(p);
        EXPECT_EQ(reader.format(), sequence_format::empty);
        EXPECT_TRUE(read_chunked(p, {}, {}, rng, 2).records.empty());
    }
}

TEST_F(chunked_reader_test, opening_errors_are_those_of_sequence_reader) {
    std::mt19937_64 rng(19);
    for (std::string const& p : {path("missing.fq"), dir_.string(), write("text.txt", "hello\n"),
                                 write("bin", std::string("\x01\x02\x00", 3))}) {
        reading const want = read_serially(p);
        ASSERT_FALSE(want.error.empty());
        EXPECT_EQ(read_chunked(p, {}, {}, rng, 2).error, want.error);
    }
}

}  // namespace
}  // namespace qmer::io::test
