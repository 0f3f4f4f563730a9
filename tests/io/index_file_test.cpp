#include "io/index_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <span>
#include <stdexcept>

#include "core/error.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace {

namespace fs = std::filesystem;

class index_file_test : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string templ = (fs::temp_directory_path() / "qmer-index-XXXXXX").string();
        ASSERT_NE(::mkdtemp(templ.data()), nullptr);
        dir = templ;
    }
    void TearDown() override { fs::remove_all(dir); }

    qmer::io::index_header sample_header() const {
        qmer::io::index_header h;
        h.k = 25;
        h.hash_seed = 0xfeedbeef;
        h.filter = "expandable";
        h.fpr = 0.001;
        h.expected = 12345;
        h.elements = 999;
        h.kmers_scanned = 1500;
        h.filter_params = {3, 1, 4, 1, 5};
        h.qmer_version = "0.1.0";
        h.command = "qmer index -k 25 -o x.qmer a.fa b.fa";
        h.inputs = {"a.fa", "b.fa"};
        return h;
    }

    // Writes an index with two sections; returns its path.
    std::string write_sample(std::string const& name = "x.qmer") {
        std::string const path = (dir / name).string();
        qmer::io::index_writer w(path, sample_header());
        std::vector<uint64_t> a(1000), b(3);
        std::iota(a.begin(), a.end(), 7);
        b = {~0ULL, 0, 42};
        std::vector<uint64_t> pa = {16, 13}, pb = {};
        w.add_section(pa, a);
        w.add_section(pb, b);
        w.commit();
        return path;
    }

    void expect_index_error(std::string const& path, std::string const& fragment) {
        try {
            qmer::io::index_file f(path);
            ADD_FAILURE() << "no error for " << path;
        } catch (qmer::index_error const& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    }

    fs::path dir;
};

TEST_F(index_file_test, round_trip_keeps_header_and_sections) {
    auto const path = write_sample();
    qmer::io::index_file f(path);
    auto const& h = f.header();
    EXPECT_EQ(h.format_version, qmer::io::index_format_version);
    EXPECT_EQ(h.k, 25u);
    EXPECT_EQ(h.hash_seed, 0xfeedbeefu);
    EXPECT_EQ(h.filter, "expandable");
    EXPECT_DOUBLE_EQ(h.fpr, 0.001);
    EXPECT_EQ(h.expected, 12345u);
    EXPECT_EQ(h.elements, 999u);
    EXPECT_EQ(h.kmers_scanned, 1500u);
    EXPECT_EQ(h.filter_params, (std::vector<uint64_t>{3, 1, 4, 1, 5}));
    EXPECT_EQ(h.command, "qmer index -k 25 -o x.qmer a.fa b.fa");
    EXPECT_EQ(h.inputs, (std::vector<std::string>{"a.fa", "b.fa"}));
    ASSERT_EQ(f.sections().size(), 2u);
    EXPECT_EQ(f.sections()[0].params, (std::vector<uint64_t>{16, 13}));
    ASSERT_EQ(f.sections()[0].words.size(), 1000u);
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(f.sections()[0].words[i], i + 7);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(f.sections()[0].words.data()) % 64, 0u);
    EXPECT_TRUE(f.sections()[1].params.empty());
    EXPECT_EQ(std::vector<uint64_t>(f.sections()[1].words.begin(), f.sections()[1].words.end()),
              (std::vector<uint64_t>{~0ULL, 0, 42}));
}

// The header length a file states (bytes 16-23).
uint64_t stated_header_bytes(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(16);
    uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), sizeof n);
    return n;
}

TEST_F(index_file_test, a_preset_and_its_rule_round_trip_after_the_hash_scheme) {
    auto const plain = write_sample("plain.qmer");
    qmer::io::index_header h = sample_header();
    h.preset = "long";
    h.preset_min_containment = 0.02;
    std::string const path = (dir / "long.qmer").string();
    {
        qmer::io::index_writer w(path, h);
        w.commit();
    }
    qmer::io::index_file const f(path);
    EXPECT_EQ(f.header().preset, "long");
    EXPECT_EQ(f.header().preset_min_containment, 0.02);
    EXPECT_EQ(f.header().format_version, qmer::io::index_format_version);
    // Without a preset nothing is written: the header is the preset's shorter by exactly its
    // fields (the name's length word and bytes, the containment), and reads back empty.
    EXPECT_EQ(stated_header_bytes(path), stated_header_bytes(plain) + 8 + 4 + 8);
    qmer::io::index_file const p(plain);
    EXPECT_TRUE(p.header().preset.empty());
    EXPECT_LT(p.header().preset_min_containment, 0);
}

TEST_F(index_file_test, a_preset_with_an_impossible_containment_is_refused) {
    for (double bad : {1.5, -0.5, std::nan("")}) {
        qmer::io::index_header h = sample_header();
        h.preset = "long";
        h.preset_min_containment = bad;
        std::string const path = (dir / "bad.qmer").string();
        {
            qmer::io::index_writer w(path, h);
            w.commit();
        }
        expect_index_error(path, "preset");
    }
}

TEST_F(index_file_test, unfinished_writer_leaves_no_file) {
    std::string const path = (dir / "x.qmer").string();
    {
        qmer::io::index_writer w(path, sample_header());
        std::vector<uint64_t> a(100, 1);
        w.add_section({}, a);
        // destroyed without commit(): as on an error or an interrupt
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::is_empty(dir)) << "temporary file left behind";
}

TEST_F(index_file_test, truncated_file_is_refused) {
    auto const path = write_sample();
    auto const size = fs::file_size(path);
    for (auto cut : {size - 1, size / 2, uintmax_t{30}, uintmax_t{8}}) {
        fs::resize_file(path, cut);
        expect_index_error(path, "truncated");
        write_sample();
    }
}

TEST_F(index_file_test, any_flipped_byte_is_caught) {
    auto const path = write_sample();
    auto const size = fs::file_size(path);
    for (uintmax_t pos : {uintmax_t{40}, size / 3, size / 2, size - 20}) {
        {
            std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
            f.seekg(static_cast<std::streamoff>(pos));
            char c = 0;
            f.read(&c, 1);
            c = static_cast<char>(c ^ 0x10);
            f.seekp(static_cast<std::streamoff>(pos));
            f.write(&c, 1);
        }
        try {
            qmer::io::index_file f(path);
            ADD_FAILURE() << "flipped byte at " << pos << " not caught";
        } catch (qmer::index_error const&) {
        }
        write_sample();
    }
}

TEST_F(index_file_test, newer_version_says_to_upgrade) {
    auto const path = write_sample();
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(8);
        uint32_t v = qmer::io::index_format_version + 1;
        f.write(reinterpret_cast<char const*>(&v), 4);
    }
    expect_index_error(path, "newer");
}

TEST_F(index_file_test, foreign_files_are_named_for_what_they_are) {
    std::ofstream(dir / "ref.fa") << ">chr1\nACGT\n";
    expect_index_error((dir / "ref.fa").string(), "FASTA");
    std::ofstream(dir / "empty.qmer");
    expect_index_error((dir / "empty.qmer").string(), "not a qmer index");
    std::ofstream(dir / "text.qmer") << "hello world, this is not an index at all";
    expect_index_error((dir / "text.qmer").string(), "not a qmer index");
    expect_index_error(dir.string(), "not a regular file");
}

TEST_F(index_file_test, missing_file_is_an_input_error) {
    EXPECT_THROW(qmer::io::index_file((dir / "nope.qmer").string()), qmer::input_error);
}

TEST_F(index_file_test, missing_output_folder_is_an_output_error) {
    EXPECT_THROW(qmer::io::index_writer((dir / "no" / "such" / "x.qmer").string(), sample_header()),
                 qmer::output_error);
}

}  // namespace

// The query's ways of opening an index: mapped or copied into huge pages, the checksum at open or
// deferred. Every way reads the same header and words, aligned for cache-line lookups.
TEST_F(index_file_test, every_way_of_opening_reads_the_same) {
    auto const path = write_sample();
    using qmer::io::index_check;
    using qmer::io::index_memory;
    for (auto check : {index_check::at_open, index_check::deferred})
        for (auto memory : {index_memory::mapped, index_memory::huge_pages}) {
            qmer::io::index_file f(path, check, memory);
            EXPECT_EQ(f.header().inputs, (std::vector<std::string>{"a.fa", "b.fa"}));
            ASSERT_EQ(f.sections().size(), 2u);
            ASSERT_EQ(f.sections()[0].words.size(), 1000u);
            for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(f.sections()[0].words[i], i + 7);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(f.sections()[0].words.data()) % 64, 0u);
            EXPECT_TRUE(f.checksum_matches());
            EXPECT_NO_THROW(f.check_checksum());
        }
}

// Deferred, a damaged word is not read at open (a query answers its first read at once); the
// checksum, computed later (mapped) or while copying (huge pages), still names the damage.
TEST_F(index_file_test, a_deferred_checksum_still_catches_a_damaged_word) {
    auto const path = write_sample();
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));  // inside section 0's words
        f.put('\x5a');
    }
    for (auto memory : {qmer::io::index_memory::mapped, qmer::io::index_memory::huge_pages}) {
        qmer::io::index_file f(path, qmer::io::index_check::deferred, memory);
        EXPECT_FALSE(f.checksum_matches());
        try {
            f.check_checksum();
            ADD_FAILURE() << "a damaged word passed the checksum";
        } catch (qmer::index_error const& e) {
            EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
        }
    }
    expect_index_error(path, "checksum mismatch");  // at open, as before
}

// A copy into huge pages asks poll() between its pieces; an exception from it abandons the load
// (how Ctrl-C stops a query while a host-sized index is still being read, not seconds later).
TEST_F(index_file_test, poll_can_abandon_a_copy) {
    auto const path = write_sample();
    int polls = 0;
    EXPECT_THROW(qmer::io::index_file(path, qmer::io::index_check::deferred,
                                      qmer::io::index_memory::huge_pages,
                                      [&] {
                                          ++polls;
                                          throw qmer::interrupted_error("interrupted by SIGINT");
                                      }),
                 qmer::interrupted_error);
    EXPECT_EQ(polls, 1);
}

// A section streamed while it is written is the same file as one written from a view, and a
// stream that gives a different word count than it announced is refused.
TEST_F(index_file_test, a_streamed_section_equals_one_from_a_view) {
    std::vector<uint64_t> words(5000);
    std::iota(words.begin(), words.end(), 3);
    std::vector<uint64_t> const params = {1, 2};
    auto write = [&](std::string const& name, bool streamed, size_t announced) {
        std::string const path = (dir / name).string();
        qmer::io::index_writer w(path, sample_header());
        if (streamed) {
            w.add_section(params, announced, [&](qmer::io::index_writer::word_sink const& put) {
                for (size_t i = 0; i < words.size(); i += 700)
                    put(std::span<uint64_t const>(words).subspan(
                        i, std::min<size_t>(700, words.size() - i)));
            });
        } else {
            w.add_section(params, words);
        }
        w.commit();
        return path;
    };
    std::ifstream a(write("view.qmer", false, 0), std::ios::binary),
        b(write("stream.qmer", true, words.size()), std::ios::binary);
    std::string const va{std::istreambuf_iterator<char>(a), {}},
        vb{std::istreambuf_iterator<char>(b), {}};
    EXPECT_EQ(va, vb);
    EXPECT_THROW(write("short.qmer", true, words.size() + 1), std::logic_error);
    EXPECT_THROW(write("long.qmer", true, words.size() - 1), std::logic_error);
    EXPECT_FALSE(fs::exists(dir / "short.qmer"));
    EXPECT_FALSE(fs::exists(dir / "long.qmer"));
}

// A header whose counts are known only after a streamed section (the default build's level):
// written with placeholders, rewritten before commit, the file is byte for byte the one written
// with the final header from the start (so the checksum, summed as written with the rewritten
// head summed again, matches), and the words written so far can be read back. A rewrite that
// changes a size, and one on a writer not made for it, are refused; a stream (stdout, a device)
// cannot be rewritten.
TEST_F(index_file_test, a_header_rewritten_after_a_streamed_section_equals_the_final_one) {
    using qmer::io::header_counts;
    using qmer::io::index_writer;
    std::vector<uint64_t> words(300000);  // 2.3 MiB: the read-back sums several pieces
    std::iota(words.begin(), words.end(), 11);
    std::vector<uint64_t> const stack = {9, 8}, first = {1, 0, 7}, final_level = {1, 299999, 7};
    auto final_header = sample_header();
    final_header.elements = 299999;
    final_header.kmers_scanned = 4242;

    std::string const direct = (dir / "direct.qmer").string();
    {
        index_writer w(direct, final_header);
        w.add_section(stack, {});
        w.add_section(final_level, words);
        w.commit();
    }
    std::string const rewritten = (dir / "rewritten.qmer").string();
    {
        index_writer w(rewritten, sample_header(), header_counts::rewritten_later);
        w.add_section(stack, {});
        w.begin_section(first, words.size());
        w.put(std::span<uint64_t const>(words).first(1000));
        EXPECT_EQ(w.words_of(1), std::vector<uint64_t>(words.begin(), words.begin() + 1000));
        w.put(std::span<uint64_t const>(words).subspan(1000));
        w.end_section();
        EXPECT_EQ(w.words_of(1), words);
        auto longer = final_header;
        longer.command += " --more";
        std::vector<std::vector<uint64_t>> const params = {stack, final_level};
        EXPECT_THROW(w.rewrite(longer, params), std::logic_error);
        std::vector<std::vector<uint64_t>> const fewer = {stack, {1, 2}};
        EXPECT_THROW(w.rewrite(final_header, fewer), std::logic_error);
        w.rewrite(final_header, params);
        w.commit();
    }
    std::ifstream a(direct, std::ios::binary), b(rewritten, std::ios::binary);
    std::string const va{std::istreambuf_iterator<char>(a), {}},
        vb{std::istreambuf_iterator<char>(b), {}};
    EXPECT_EQ(va, vb);
    qmer::io::index_file f(rewritten);  // the checksum is checked at open
    EXPECT_EQ(f.header().elements, 299999u);
    EXPECT_EQ(f.sections()[1].params, final_level);

    {
        index_writer w((dir / "plain.qmer").string(), sample_header());
        std::vector<std::vector<uint64_t>> const none;
        EXPECT_THROW(w.rewrite(sample_header(), none), std::logic_error);
    }
    EXPECT_FALSE(index_writer::can_rewrite("-"));
    EXPECT_FALSE(index_writer::can_rewrite("/dev/null"));
    EXPECT_TRUE(index_writer::can_rewrite((dir / "new.qmer").string()));
}

// Format 7's checksum, by its definition: the XXH3-64 of the XXH3-64 digests of 64 MiB pieces,
// the last one shorter; format 6 and older: one XXH3-64. The stream gives the same sum whatever
// the sizes it is fed in, and a replaced piece's digest stands for that piece's new bytes.
TEST(index_checksum, is_the_sum_of_the_pieces_sums_from_format_7) {
    using qmer::io::checksum_piece_bytes;
    std::vector<uint8_t> bytes(2 * checksum_piece_bytes + 12345);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
    auto by_definition = [&] {
        std::vector<uint64_t> pieces;
        for (size_t at = 0; at < bytes.size(); at += checksum_piece_bytes)
            pieces.push_back(XXH3_64bits(
                bytes.data() + at, std::min<size_t>(checksum_piece_bytes, bytes.size() - at)));
        return XXH3_64bits(pieces.data(), pieces.size() * 8);
    };
    uint64_t const expected = by_definition();
    EXPECT_EQ(qmer::io::index_checksum(7, bytes.data(), bytes.size()), expected);
    EXPECT_EQ(qmer::io::index_checksum(6, bytes.data(), bytes.size()),
              XXH3_64bits(bytes.data(), bytes.size()));
    EXPECT_NE(expected, XXH3_64bits(bytes.data(), bytes.size()));
    // Exactly one piece, and none.
    EXPECT_EQ(qmer::io::index_checksum(7, bytes.data(), checksum_piece_bytes), [&] {
        uint64_t const one = XXH3_64bits(bytes.data(), checksum_piece_bytes);
        return XXH3_64bits(&one, 8);
    }());
    EXPECT_EQ(qmer::io::index_checksum(7, bytes.data(), 0), XXH3_64bits(nullptr, 0));

    qmer::io::index_checksum_stream stream(7);
    for (size_t at = 0, step = 1; at < bytes.size(); at += step, step = step * 3 + 1)
        stream.update(bytes.data() + at, std::min(step, bytes.size() - at));
    EXPECT_EQ(stream.digest(), expected);
    // Piece 1 rewritten after it was summed: its new digest in place of the old one.
    bytes[checksum_piece_bytes + 99] ^= 1;
    uint64_t const piece1 = XXH3_64bits(bytes.data() + checksum_piece_bytes, checksum_piece_bytes);
    std::vector<std::pair<uint64_t, uint64_t>> const replaced = {{1, piece1}};
    EXPECT_EQ(stream.digest(replaced), by_definition());
    EXPECT_NE(stream.digest(replaced), expected);
}

// A section of more than one checksum piece streamed, a later section, then the header and both
// sections' parameters rewritten: the head (the header, the first section's parameters) and the
// piece after the first 64 MiB of words (the later section's), which the writer reads back. The
// file equals one written with the final values from the start; the writer sums it without
// reading it all back; a damaged byte in any piece is caught.
TEST_F(index_file_test, a_rewrite_across_checksum_pieces_seals_the_final_bytes) {
    using qmer::io::header_counts;
    using qmer::io::index_writer;
    std::vector<uint64_t> words(qmer::io::checksum_piece_bytes / 8 + 100000);
    std::iota(words.begin(), words.end(), 3);
    std::vector<uint64_t> const small = {5, 6, 7};
    std::vector<uint64_t> const first = {1, 0}, final_level = {1, words.size()};
    std::vector<uint64_t> const first_tail = {0}, final_tail = {77};
    auto final_header = sample_header();
    final_header.elements = words.size();

    std::string const direct = (dir / "direct.qmer").string();
    {
        index_writer w(direct, final_header);
        w.add_section(final_level, words);
        w.add_section(final_tail, small);
        w.commit();
    }
    std::string const rewritten = (dir / "rewritten.qmer").string();
    {
        index_writer w(rewritten, sample_header(), header_counts::rewritten_later);
        w.begin_section(first, words.size());
        for (size_t at = 0; at < words.size(); at += 65536)
            w.put(std::span<uint64_t const>(words).subspan(
                at, std::min<size_t>(65536, words.size() - at)));
        w.end_section();
        w.add_section(first_tail, small);
        std::vector<std::vector<uint64_t>> const params = {final_level, final_tail};
        w.rewrite(final_header, params);
        w.commit();
    }
    std::ifstream a(direct, std::ios::binary), b(rewritten, std::ios::binary);
    std::string const va{std::istreambuf_iterator<char>(a), {}},
        vb{std::istreambuf_iterator<char>(b), {}};
    ASSERT_GT(va.size(), qmer::io::checksum_piece_bytes);
    EXPECT_TRUE(va == vb);
    {
        qmer::io::index_file f(rewritten);  // the checksum is checked at open
        EXPECT_EQ(f.header().elements, words.size());
        EXPECT_EQ(f.sections()[1].params, final_tail);
    }
    for (size_t at : {size_t{30}, size_t{qmer::io::checksum_piece_bytes + 5}, vb.size() - 40}) {
        std::string damaged = vb;
        damaged[at] ^= 0x10;
        std::ofstream((dir / "damaged.qmer").string(), std::ios::binary) << damaged;
        EXPECT_THROW(qmer::io::index_file((dir / "damaged.qmer").string()), qmer::index_error)
            << "byte " << at;
    }
}

// An index named like a compressed file (x.qmer.gz) is written as an index, not BGZF: compressed by
// its name, it would be refused by every command as "a gzip file, not a qmer index".
TEST_F(index_file_test, an_index_named_gz_is_written_uncompressed) {
    auto const path = write_sample("x.qmer.gz");
    qmer::io::index_file f(path);
    EXPECT_EQ(f.header().elements, 999u);
}

namespace {

// Bytes the whole process has read so far (read, pread and the like: /proc/self/io's rchar).
uint64_t bytes_read_by_process() {
    std::ifstream in("/proc/self/io");
    std::string key;
    uint64_t value = 0;
    while (in >> key >> value)
        if (key == "rchar:") return value;
    ADD_FAILURE() << "no rchar in /proc/self/io";
    return 0;
}

std::string file_bytes(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A layout's words, little-endian, at `at` of bytes.
void put_word(std::string& bytes, size_t at, uint64_t w) {
    std::memcpy(bytes.data() + at, &w, sizeof w);
}

}  // namespace

// Format 8's checksum, by its definition: the head (every byte before the first section words)
// is the first piece, then 64 MiB pieces from there, the last one shorter. Through the stream the
// head is given by its length or ended where it ends, with the same sum; bytes of another layout
// still have one head.
TEST(index_checksum, from_format_8_the_head_is_the_first_piece) {
    using qmer::io::checksum_piece_bytes;
    std::string bytes(2 * checksum_piece_bytes + 12345, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 13);
    // A header of 100 bytes (ending at 128), a section of no words, then one of 5 words, whose
    // words start at 256.
    constexpr uint64_t section_tag = 0x5443455352454d51ULL;  // "QMERSECT"
    put_word(bytes, 16, 100);
    put_word(bytes, 128, section_tag);
    put_word(bytes, 136, 2);  // parameters
    put_word(bytes, 160, 0);  // words
    put_word(bytes, 192, section_tag);
    put_word(bytes, 200, 1);
    put_word(bytes, 216, 5);
    uint64_t const head = 256;
    ASSERT_EQ(qmer::io::index_checksum_head(bytes.data(), bytes.size()), head);
    std::vector<uint64_t> pieces = {XXH3_64bits(bytes.data(), head)};
    for (size_t at = head; at < bytes.size(); at += checksum_piece_bytes)
        pieces.push_back(XXH3_64bits(bytes.data() + at,
                                     std::min<size_t>(checksum_piece_bytes, bytes.size() - at)));
    uint64_t const expected = XXH3_64bits(pieces.data(), pieces.size() * 8);
    EXPECT_EQ(qmer::io::index_checksum(8, bytes.data(), bytes.size()), expected);
    EXPECT_NE(qmer::io::index_checksum(7, bytes.data(), bytes.size()), expected);

    qmer::io::index_checksum_stream given(8, head), ended(8);
    for (size_t at = 0, step = 1; at < bytes.size(); at += step, step = step * 3 + 1) {
        size_t const n = std::min(step, bytes.size() - at);
        given.update(bytes.data() + at, n);
        if (at <= head && head < at + n) {  // the writer's way: it ends the head where it ends
            ended.update(bytes.data() + at, head - at);
            ended.end_head();
            ended.update(bytes.data() + head, at + n - head);
        } else {
            ended.update(bytes.data() + at, n);
        }
    }
    EXPECT_EQ(given.digest(), expected);
    EXPECT_EQ(ended.digest(), expected);
    EXPECT_THROW(ended.end_head(), std::logic_error);
    // The head rewritten after it was summed: its new digest in place of the old one.
    bytes[40] ^= 1;
    std::vector<std::pair<uint64_t, uint64_t>> const replaced = {
        {0, XXH3_64bits(bytes.data(), head)}};
    EXPECT_EQ(given.digest(replaced), qmer::io::index_checksum(8, bytes.data(), bytes.size()));

    // Other layouts: too short for a header length; a header running past the end; sections of
    // no words, then one with words (a third section, cut short), or the end marker; no section
    // marker after the header.
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), 23), 23u);
    put_word(bytes, 16, bytes.size());
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), bytes.size()), bytes.size());
    put_word(bytes, 16, 100);
    put_word(bytes, 216, 0);
    put_word(bytes, 256, section_tag);
    put_word(bytes, 264, 0);
    put_word(bytes, 272, 3);
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), bytes.size()), 320u);
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), 300), 300u);
    put_word(bytes, 256, 0x444e4552454d51ULL);  // "QMEREND"
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), bytes.size()), 256u);
    put_word(bytes, 128, 0);
    EXPECT_EQ(qmer::io::index_checksum_head(bytes.data(), bytes.size()), 128u);
    EXPECT_EQ(qmer::io::index_checksum(8, bytes.data(), 0), XXH3_64bits(nullptr, 0));

    // Random layouts (section markers, small counts and lengths at random word offsets), each in
    // memory of exactly its size: the walk stays inside the bytes, and the head inside them.
    uint64_t state = 12345;
    auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
    for (int round = 0; round < 5000; ++round) {
        std::vector<uint64_t> words(next() % 40);
        for (auto& w : words) {
            uint64_t const r = next();
            w = r % 3 == 0 ? section_tag : r % 3 == 1 ? (r >> 32) % 9 : r;
        }
        size_t const size = std::min<size_t>(words.size() * 8, next() % 330);
        auto const* data = reinterpret_cast<char const*>(words.data());
        std::vector<char> exact(data, data + size);
        uint64_t const h = qmer::io::index_checksum_head(exact.data(), exact.size());
        ASSERT_LE(h, size) << "round " << round;
        (void)qmer::io::index_checksum(8, exact.data(), exact.size());
    }
}

// The default build's last write: its header and the sections' parameters rewritten after a
// streamed section lie in the checksum's head, which the writer sums again from memory: commit()
// reads none of the file back (format 7 read back the first 64 MiB), and the seal is
// index_checksum over the file. The file's head is the one its layout gives.
TEST_F(index_file_test, a_rewritten_head_is_summed_without_reading_the_file_back) {
    using qmer::io::header_counts;
    using qmer::io::index_writer;
    std::vector<uint64_t> words(1 << 20);  // 8 MiB
    std::iota(words.begin(), words.end(), 11);
    std::vector<uint64_t> const stack = {9, 8}, first = {1, 0, 7}, final_level = {1, 12345, 7};
    auto final_header = sample_header();
    final_header.elements = 12345;
    std::string const path = (dir / "rewritten.qmer").string();
    uint64_t read_back = 0;
    {
        index_writer w(path, sample_header(), header_counts::rewritten_later);
        w.add_section(stack, {});
        w.begin_section(first, words.size());
        for (size_t at = 0; at < words.size(); at += 100000)
            w.put(std::span<uint64_t const>(words).subspan(
                at, std::min<size_t>(100000, words.size() - at)));
        w.end_section();
        std::vector<std::vector<uint64_t>> const params = {stack, final_level};
        uint64_t const before = bytes_read_by_process();
        w.rewrite(final_header, params);
        w.commit();
        read_back = bytes_read_by_process() - before;
    }
    EXPECT_LT(read_back, 4096u) << "the writer read the file back";  // /proc/self/io's own text

    std::string const bytes = file_bytes(path);
    ASSERT_GT(bytes.size(), words.size() * 8);
    uint64_t stored;
    std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
    EXPECT_EQ(stored, qmer::io::index_checksum(8, bytes.data(), bytes.size() - 8));
    // The head ends where the streamed section's words begin.
    uint64_t const head = qmer::io::index_checksum_head(bytes.data(), bytes.size() - 8);
    ASSERT_LE(head + 16, bytes.size());
    uint64_t w0, w1;
    std::memcpy(&w0, bytes.data() + head, 8);
    std::memcpy(&w1, bytes.data() + head + 8, 8);
    EXPECT_EQ(w0, 11u);
    EXPECT_EQ(w1, 12u);
    EXPECT_EQ(head % 64, 0u);
    qmer::io::index_file const f(path);  // the checksum is checked at open
    EXPECT_EQ(f.header().format_version, qmer::io::index_format_version);
    EXPECT_EQ(f.header().elements, 12345u);
    EXPECT_EQ(f.sections()[1].params, final_level);
}

// A format-7 file (its seal by format 7's rule: 64 MiB pieces from the start) loads and checks in
// every way of opening; sealed by the other format's rule, either version is refused as damaged.
TEST_F(index_file_test, a_format_7_file_is_checked_by_its_own_rule) {
    std::string bytes = file_bytes(write_sample());
    auto seal = [&](uint32_t version, uint64_t sum) {
        std::memcpy(bytes.data() + 8, &version, 4);
        std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
        std::string const path = (dir / ("v" + std::to_string(version) + ".qmer")).string();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    };
    size_t const summed = bytes.size() - 8;
    ASSERT_LT(summed, qmer::io::checksum_piece_bytes);  // format 7: one piece
    auto const format_7_sum = [&] {
        uint64_t const one = XXH3_64bits(bytes.data(), summed);
        return XXH3_64bits(&one, 8);
    };
    seal(7, 0);
    auto const v7 = seal(7, format_7_sum());
    using qmer::io::index_check;
    using qmer::io::index_memory;
    for (auto check : {index_check::at_open, index_check::deferred})
        for (auto memory : {index_memory::mapped, index_memory::huge_pages}) {
            qmer::io::index_file f(v7, check, memory);
            EXPECT_EQ(f.header().format_version, 7u);
            EXPECT_TRUE(f.checksum_matches());
            ASSERT_EQ(f.sections().size(), 2u);
            EXPECT_EQ(f.sections()[0].words[999], 1006u);
        }
    seal(8, 0);
    expect_index_error(seal(8, format_7_sum()), "checksum mismatch");
    seal(7, 0);
    expect_index_error(seal(7, qmer::io::index_checksum(8, bytes.data(), summed)),
                       "checksum mismatch");
}
