#include "io/index_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
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
// piece summed again, matches), and the words written so far can be read back. A rewrite that
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

// The default build's way at host size: a section of more than one checksum piece streamed, a
// later section, then the header and both sections' parameters rewritten (pieces 0 and 1). The
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
