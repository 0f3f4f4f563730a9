// Reading the references (app/index/reference_reading.hpp) and their census
// (app/index/reference_census.hpp): every k-mer position reaches the sink once, whatever the
// threads and however long the records; a reference without a k-mer is an error naming it unless
// allowed; messages name a reference, not the scratch copy it is read from; the census counts
// positions, bases and distinct k-mers; the files' sizes guess the k-mers.

#include "app/index/reference_reading.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "app/index/reference_census.hpp"
#include "core/error.hpp"
#include "temp_folder.hpp"

namespace {

using namespace qmer::app;
using qmer::insert_result;
using qmer::plain_kmer_hashing;

std::string random_bases(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

std::string write(qmer::test::temp_folder const& dir, std::string const& name,
                  std::string const& text) {
    std::string const path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// Counts every k-mer hash it is handed.
struct counting_sink {
    std::atomic<uint64_t> inserted{0};
    insert_result insert(uint64_t) noexcept {
        inserted.fetch_add(1, std::memory_order_relaxed);
        return insert_result::inserted;
    }
    size_t memory_bytes() const noexcept { return 0; }
    size_t size() const noexcept { return inserted.load(); }
};

// Full after `room` k-mers.
struct small_sink {
    std::atomic<uint64_t> inserted{0};
    uint64_t room = 0;
    insert_result insert(uint64_t) noexcept {
        return inserted.fetch_add(1) < room ? insert_result::inserted : insert_result::full;
    }
    size_t memory_bytes() const noexcept { return 0; }
    size_t size() const noexcept { return inserted.load(); }
};

TEST(reference_reading, every_kmer_position_reaches_the_sink_once) {
    qmer::test::temp_folder const dir;
    unsigned const k = 21;
    // Two files; a record longer than chunk_bases is split into pieces that overlap by k - 1.
    std::string const long_record = random_bases(chunk_bases + 5000, 1);
    std::string const a =
        write(dir, "a.fa", ">long\n" + long_record + "\n>short\n" + random_bases(300, 2) + "\n");
    std::string const b = write(dir, "b.fa", ">b\n" + random_bases(1000, 3) + "\n");
    uint64_t const positions = (long_record.size() - k + 1) + (300 - k + 1) + (1000 - k + 1);
    reference_set const refs{{a, b}, {a, b}, k, false};
    for (unsigned threads : {1u, 2u, 4u}) {
        qmer::app::progress_meter progress("test", true);
        counting_sink sink;
        build_counts counts;
        bool const full =
            insert_references(sink, plain_kmer_hashing(k, 0), {refs, threads, progress}, counts);
        EXPECT_FALSE(full);
        EXPECT_EQ(sink.inserted.load(), positions) << threads << " threads";
        EXPECT_EQ(counts.kmers.load(), positions);
        EXPECT_EQ(counts.records, 3u);
        EXPECT_EQ(counts.bases, long_record.size() + 300 + 1000);
        EXPECT_EQ(counts.longest_record, long_record.size());
    }
}

// A chromosome is one FASTA record: read whole, it was held as text and again parsed (twice its
// size) while the build's own memory was in use. It is read in pieces of reference_piece_bytes,
// each repeating the k - 1 bases before it: every k-mer position reaches the sink once, and the
// record is counted once, at its whole length.
TEST(reference_reading, one_long_record_is_read_in_pieces) {
    qmer::test::temp_folder const dir;
    std::string const chromosome = random_bases(3 * reference_piece_bytes + 777, 21);
    std::string text = ">chr1 a long one\n";
    for (size_t at = 0; at < chromosome.size(); at += 60) text += chromosome.substr(at, 60) + "\n";
    text += ">short\n" + random_bases(100, 22) + "\n";
    std::string const a = write(dir, "chr.fa", text);
    for (unsigned k : {1u, 17u, 31u, 32u}) {
        uint64_t const positions = (chromosome.size() - k + 1) + (100 - k + 1);
        reference_set const refs{{a}, {a}, k, false};
        for (unsigned threads : {1u, 2u, 8u}) {
            qmer::app::progress_meter progress("test", true);
            counting_sink sink;
            build_counts counts;
            EXPECT_FALSE(insert_references(sink, plain_kmer_hashing(k, 0),
                                           {refs, threads, progress}, counts));
            EXPECT_EQ(sink.inserted.load(), positions) << k << ", " << threads << " threads";
            EXPECT_EQ(counts.records, 2u);
            EXPECT_EQ(counts.bases, chromosome.size() + 100);
            EXPECT_EQ(counts.longest_record, chromosome.size());
        }
        // The stream gives the pieces: none holds the whole record's text, and each after the
        // first continues it with k - 1 bases repeated.
        reference_stream stream(refs, {});
        reference_chunk chunk;
        build_counts counts;
        size_t continued = 0;
        std::string joined;
        while (stream.next(chunk)) {
            stream.tally(chunk, counts);
            ASSERT_LE(chunk.batch.sequence_bytes(), 2 * reference_piece_bytes);
            for (size_t i = 0; i < chunk.batch.size(); ++i) {
                std::string_view const seq = chunk.batch[i].sequence;
                if (i == 0 && chunk.text.continues_record()) {
                    ++continued;
                    ASSERT_EQ(chunk.text.repeated_bases(), k - 1);
                    EXPECT_EQ(seq.substr(0, k - 1), joined.substr(joined.size() - (k - 1)));
                    joined += seq.substr(k - 1);
                } else if (chunk.batch[i].name == "chr1") {
                    joined = seq;
                }
            }
        }
        EXPECT_GE(continued, 3u);
        EXPECT_EQ(joined, chromosome);
        EXPECT_EQ(counts.records, 2u);
        EXPECT_EQ(counts.bases, chromosome.size() + 100);
        EXPECT_EQ(counts.longest_record, chromosome.size());
    }
}

TEST(reference_reading, pieces_shrink_with_threads_so_chunks_in_flight_stay_small) {
    EXPECT_EQ(reference_piece_bytes_for(0), reference_piece_bytes);
    EXPECT_EQ(reference_piece_bytes_for(1), reference_piece_bytes);
    EXPECT_EQ(reference_piece_bytes_for(2), size_t{512} << 10);
    EXPECT_EQ(reference_piece_bytes_for(4), size_t{256} << 10);
    EXPECT_EQ(reference_piece_bytes_for(8), size_t{128} << 10);
    EXPECT_EQ(reference_piece_bytes_for(64), size_t{128} << 10);
    // 2 chunks a thread up to 4 threads, then one more a thread.
    EXPECT_EQ(reference_tokens_for(0), 2u);
    EXPECT_EQ(reference_tokens_for(1), 2u);
    EXPECT_EQ(reference_tokens_for(2), 4u);
    EXPECT_EQ(reference_tokens_for(4), 8u);
    EXPECT_EQ(reference_tokens_for(16), 20u);
    EXPECT_EQ(reference_tokens_for(32), 36u);
}

// Pieces smaller than a line, than k: the k-mer positions and the counts are those of the
// records, whatever the piece size.
TEST(reference_reading, any_piece_size_gives_every_kmer_position_once) {
    qmer::test::temp_folder const dir;
    std::string const seq = random_bases(50000, 23);
    std::string text = ">x\n";
    for (size_t at = 0; at < seq.size(); at += 70) text += seq.substr(at, 70) + "\n";
    std::string const a = write(dir, "x.fa", text + ">y\nACGTACGTAC\n");
    for (size_t piece : {size_t{1}, size_t{5}, size_t{100}, size_t{20000}}) {
        unsigned const k = 31;
        reference_set const refs{{a}, {a}, k, false};
        reference_stream stream(refs, {}, piece);
        reference_chunk chunk;
        build_counts counts;
        uint64_t positions = 0;
        while (stream.next(chunk)) {
            stream.tally(chunk, counts);
            for (qmer::io::sequence_record const r : chunk.batch)
                positions += r.sequence.size() >= k ? r.sequence.size() - k + 1 : 0;
        }
        EXPECT_EQ(positions, seq.size() - k + 1) << piece;
        EXPECT_EQ(counts.records, 2u);
        EXPECT_EQ(counts.bases, seq.size() + 10);
        EXPECT_EQ(counts.longest_record, seq.size());
    }
}

TEST(reference_reading, a_full_sink_stops_the_reading) {
    qmer::test::temp_folder const dir;
    std::string text;
    // 40 records of 500 kbp: many chunks.
    for (int r = 0; r < 40; ++r) text += ">r\n" + random_bases(500000, 10 + r) + "\n";
    std::string const a = write(dir, "a.fa", text);
    reference_set const refs{{a}, {a}, 31, false};
    qmer::app::progress_meter progress("test", true);
    small_sink sink;
    sink.room = 1000;
    build_counts counts;
    EXPECT_TRUE(insert_references(sink, plain_kmer_hashing(31, 0), {refs, 1, progress}, counts));
    EXPECT_LT(counts.records, 40u);  // no chunk was taken after the one that filled it
}

TEST(reference_reading, a_reference_without_a_kmer_is_an_error_naming_it_unless_allowed) {
    qmer::test::temp_folder const dir;
    std::string const good = write(dir, "good.fa", ">g\n" + random_bases(500, 4) + "\n");
    std::string const empty =
        write(dir, "empty.fa", ">e\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n");
    qmer::app::progress_meter progress("test", true);
    for (bool allow : {false, true}) {
        reference_set const refs{{good, empty}, {good, empty}, 31, allow};
        counting_sink sink;
        build_counts counts;
        auto read = [&] {
            (void)insert_references(sink, plain_kmer_hashing(31, 0), {refs, 2, progress}, counts);
        };
        if (allow) {
            EXPECT_NO_THROW(read());
            continue;
        }
        try {
            read();
            FAIL() << "no error";
        } catch (qmer::input_error const& e) {
            std::string const what = e.what();
            EXPECT_EQ(what.rfind(empty + ": no k-mer in it (k = 31)", 0), 0u) << what;
        }
    }
}

TEST(reference_reading, messages_name_the_reference_not_its_scratch_copy) {
    qmer::test::temp_folder const dir;
    std::string const copy = write(dir, "copy.fq", "@r\nACGT\n+\nII\n");  // qualities too short
    reference_set const refs{{"-"}, {copy}, 3, false};
    qmer::app::progress_meter progress("test", true);
    counting_sink sink;
    build_counts counts;
    try {
        (void)insert_references(sink, plain_kmer_hashing(3, 0), {refs, 1, progress}, counts);
        FAIL() << "no error";
    } catch (qmer::input_error const& e) {
        std::string const what = e.what();
        EXPECT_EQ(what.rfind("-", 0), 0u) << what;
        EXPECT_EQ(what.find(copy), std::string::npos) << what;
    }
}

TEST(reference_reading, scratch_files_go_to_the_temp_dir_else_the_index_folder) {
    EXPECT_EQ(temp_folder("/scratch", "out/x.qmer"), "/scratch");
    EXPECT_EQ(temp_folder("", "out/x.qmer"), "out");
    EXPECT_EQ(temp_folder("", "x.qmer"), ".");
}

TEST(reference_reading, sizes_guess_the_kmers_gzip_four_times_its_bytes) {
    qmer::test::temp_folder const dir;
    std::string const plain = write(dir, "a.fa", std::string(1000, 'A'));
    std::string const gz = write(dir, "b.fa.gz", std::string("\x1f\x8b") + std::string(98, 'x'));
    EXPECT_EQ(estimate_kmers_from_sizes({plain}), 1000u);
    EXPECT_EQ(estimate_kmers_from_sizes({plain, gz, "-", (dir / "missing").string()}), 1400u);
    EXPECT_TRUE(rereadable(plain));
    EXPECT_FALSE(rereadable("-"));
    EXPECT_FALSE(all_rereadable({plain, "-"}));
}

TEST(reference_census, counts_positions_bases_and_distinct_kmers) {
    qmer::test::temp_folder const dir;
    unsigned const k = 25;
    std::string const seq = random_bases(200000, 5);
    // The same sequence twice: twice the positions, the same distinct k-mers.
    std::string const a = write(dir, "a.fa", ">a\n" + seq + "\n>b\n" + seq + "\n");
    reference_set const refs{{a}, {a}, k, false};
    qmer::app::progress_meter progress("test", true);
    auto const census = count_references({refs, 2, progress}, 7);
    uint64_t const distinct = seq.size() - k + 1;
    EXPECT_EQ(census.kmer_positions, 2 * distinct);
    EXPECT_EQ(census.bases, 2 * seq.size());
    EXPECT_EQ(census.longest_record, seq.size());
    // Raised by 3 standard errors (0.81% each): above the count, within 5% of it.
    EXPECT_GE(census.distinct_estimate, distinct * 99 / 100);
    EXPECT_LE(census.distinct_estimate, distinct * 105 / 100);
    EXPECT_EQ(count_kmer_positions(refs, "bloom"), 2 * distinct);
}

TEST(reference_census, a_fixed_filter_cannot_count_stdin) {
    reference_set const refs{{"-"}, {"/dev/null"}, 31, false};
    try {
        (void)count_kmer_positions(refs, "bloom");
        FAIL() << "no error";
    } catch (qmer::usage_error const& e) {
        EXPECT_NE(std::string(e.what()).find("--filter bloom cannot grow"), std::string::npos);
    }
}

TEST(reference_census, gathering_bins_are_2_to_the_10_to_12) {
    EXPECT_EQ(gathering_bin_bits(20), 10u);
    EXPECT_EQ(gathering_bin_bits(42), 11u);
    EXPECT_EQ(gathering_bin_bits(64), 12u);
}

}  // namespace
