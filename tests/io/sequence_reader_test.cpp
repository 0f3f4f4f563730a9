// Tests of io/sequence_reader: every format, compression and error on small files written here,
// the real files in data/, a 50 Mbp record and standard input.

#include "io/sequence_reader.hpp"

#include <gtest/gtest.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

using records = std::vector<owned_record>;

class sequence_reader_test : public temp_folder_test {};

// ---- FASTA -------------------------------------------------------------------------------------

TEST_F(sequence_reader_test, fasta_multiline_blank_lines_and_empty_records) {
    std::string const text =
        ">chr1 first record\n"
        "ACGTacgtNN\n"
        "\n"
        "GGCC\n"
        ">empty_header_only\n"
        ">chr3\n"
        "\n"
        "ttttRYKM-.\n"
        "\n";
    std::string const p = write("a.fa", text);
    sequence_reader reader(p);
    EXPECT_EQ(reader.format(), sequence_format::fasta);
    EXPECT_EQ(reader.path(), p);
    records const got = read_all(p);
    records const want = {{"chr1", "first record", "ACGTacgtNNGGCC", ""},
                          {"empty_header_only", "", "", ""},
                          {"chr3", "", "ttttRYKM-.", ""}};
    EXPECT_EQ(got, want);
}

TEST_F(sequence_reader_test, fasta_with_crlf_and_leading_blank_lines) {
    std::string const p = write("crlf.fa", "\n\r\n>r1 c\r\nAC\r\nGT\r\n>r2\r\nTT\r\n");
    records const want = {{"r1", "c", "ACGT", ""}, {"r2", "", "TT", ""}};
    EXPECT_EQ(read_all(p), want);
}

TEST_F(sequence_reader_test, fasta_last_record_without_final_newline) {
    std::string const p = write("nonl.fa", ">a\nAC\n>b\nGGG");
    records const want = {{"a", "", "AC", ""}, {"b", "", "GGG", ""}};
    EXPECT_EQ(read_all(p), want);
}

// ---- FASTQ -------------------------------------------------------------------------------------

TEST_F(sequence_reader_test, fastq_four_line_and_multiline) {
    std::string const text =
        "@r1 1:N:0:ACGT\n"
        "ACGTN\n"
        "+\n"
        "II#I@\n"  // a quality line may start with '@'
        "@r2\n"
        "ACG\n"
        "TTA\n"
        "+r2\n"
        "@@@\n"
        "+++\n"  // and with '+'
        "@empty\n"
        "\n"
        "+\n"
        "\n";
    std::string const p = write("a.fq", text);
    sequence_reader reader(p);
    EXPECT_EQ(reader.format(), sequence_format::fastq);
    records const want = {{"r1", "1:N:0:ACGT", "ACGTN", "II#I@"},
                          {"r2", "", "ACGTTA", "@@@+++"},
                          {"empty", "", "", ""}};
    EXPECT_EQ(read_all(p), want);
}

TEST_F(sequence_reader_test, fastq_with_crlf_line_ends) {
    std::string const p = write("crlf.fq", "@r1\r\nACGT\r\n+\r\nIIII\r\n@r2\r\nGG\r\n+\r\nII\r\n");
    records const want = {{"r1", "", "ACGT", "IIII"}, {"r2", "", "GG", "II"}};
    EXPECT_EQ(read_all(p), want);
}

// ---- compression: the same records from plain, gzip and BGZF, with and without threads ---------

std::string many_fastq(size_t count) {
    std::string text;
    uint64_t state = 12345;
    for (size_t i = 0; i < count; ++i) {
        text += "@read" + std::to_string(i) + "\n";
        std::string seq(50 + i % 100, 'A');
        for (char& c : seq) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            c = "ACGTN"[(state >> 33) % 5];
        }
        text += seq + "\n+\n" + std::string(seq.size(), 'F') + "\n";
    }
    return text;
}

TEST_F(sequence_reader_test, plain_gzip_and_bgzf_give_the_same_records) {
    std::string const text = many_fastq(3000);  // ~450 KB: several BGZF blocks
    records const plain = read_all(write("r.fq", text));
    ASSERT_EQ(plain.size(), 3000u);
    EXPECT_EQ(plain[2999].name, "read2999");
    std::string const gz = write("r.fq.gz", text, compression::gzip);
    std::string const bgz = write("r.fq.bgz", text, compression::bgzf);
    // A file named .fa holding FASTQ: the content decides, not the name.
    std::string const misnamed = write("r.fa", text, compression::bgzf);
    EXPECT_EQ(sequence_reader(gz).format(), sequence_format::fastq);
    EXPECT_EQ(sequence_reader(misnamed).format(), sequence_format::fastq);
    EXPECT_EQ(read_all(gz), plain);
    EXPECT_EQ(read_all(bgz), plain);
    EXPECT_EQ(read_all(misnamed), plain);
    reader_options threaded;
    threaded.decompression_threads = 3;
    EXPECT_EQ(read_all(bgz, threaded), plain);
    EXPECT_EQ(read_all(gz, threaded), plain);  // plain gzip ignores the threads
}

// ---- empty input --------------------------------------------------------------------------------

TEST_F(sequence_reader_test, empty_files_are_empty_inputs) {
    for (std::string const& p :
         {write("empty", ""), write("blank", "\n \n\t\r\n"),
          write("empty.gz", "", compression::gzip), write("empty.bgz", "", compression::bgzf)}) {
        sequence_reader reader(p);
        EXPECT_EQ(reader.format(), sequence_format::empty) << p;
        record_batch batch;
        EXPECT_FALSE(reader.next_batch(batch)) << p;
        EXPECT_TRUE(batch.empty());
        EXPECT_FALSE(reader.next_batch(batch)) << p;
        EXPECT_EQ(reader.records_read(), 0u);
    }
}

// ---- batches ------------------------------------------------------------------------------------

TEST_F(sequence_reader_test, batches_respect_the_byte_budget_and_number_records) {
    std::string text;
    std::string const forty(40, 'C');
    for (int i = 1; i <= 10; ++i) text += ">s" + std::to_string(i) + "\n" + forty + "\n";
    text += ">long\n" + std::string(1000, 'G') + "\n>last\nA\n";
    reader_options options;
    options.batch_bytes = 100;  // 40-base records: a batch closes at 120 bytes, after 3 records
    sequence_reader reader(write("b.fa", text), options);
    record_batch batch;
    std::vector<uint64_t> firsts;
    std::vector<size_t> sizes;
    while (reader.next_batch(batch)) {
        firsts.push_back(batch.first_record_number());
        sizes.push_back(batch.size());
    }
    // 3+3+3, then s10 with "long" (40 + 1000 >= 100), then "last" alone.
    EXPECT_EQ(firsts, (std::vector<uint64_t>{1, 4, 7, 10, 12}));
    EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 3, 2, 1}));
    EXPECT_EQ(reader.records_read(), 12u);
    EXPECT_FALSE(reader.next_batch(batch));
}

TEST_F(sequence_reader_test, refilling_a_batch_reuses_its_memory) {
    reader_options options;
    options.batch_bytes = 20000;
    sequence_reader reader(write("u.fq", many_fastq(4000)), options);
    record_batch batch;
    ASSERT_TRUE(reader.next_batch(batch));
    char const* const storage = batch[0].name.data();
    size_t batches = 1;
    // The flat buffer was sized by the first batch; later batches of the same shape must fit in
    // it, so their first record starts at the same address (no reallocation, no per-record heap).
    while (reader.next_batch(batch)) {
        ++batches;
        EXPECT_EQ(batch[0].name.data(), storage) << "batch " << batches;
    }
    EXPECT_GT(batches, 10u);
}

TEST_F(sequence_reader_test, batch_copy_and_move_keep_records) {
    record_batch a;
    a.clear(7);
    a.append("n", "c", "ACGT", "IIII");
    a.append("m", "", "", "");
    record_batch b = a;
    EXPECT_EQ(own(b[0]), (owned_record{"n", "c", "ACGT", "IIII"}));
    EXPECT_EQ(b.first_record_number(), 7u);
    record_batch c = std::move(a);
    EXPECT_EQ(c.size(), 2u);
    EXPECT_EQ(own(c[1]), (owned_record{"m", "", "", ""}));
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is documented empty
    a.append("x", "", "A", "");
    EXPECT_EQ(own(a[0]), (owned_record{"x", "", "A", ""}));
    c.pop_back();
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(c.sequence_bytes(), 4u);
}

// ---- a single record of 50 Mbp
// --------------------------------------------------------------------

TEST_F(sequence_reader_test, one_fasta_record_of_50_mbp) {
    size_t const length = 50'000'000;
    std::string sequence(length, 'A');
    uint64_t state = 99;
    for (char& c : sequence) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        c = "ACGTNacgt"[(state >> 40) % 9];
    }
    std::string text = ">big one\n";
    text.reserve(length + length / 60 + 16);
    for (size_t at = 0; at < length; at += 60) text.append(sequence, at, 60).push_back('\n');
    std::string const p = write("big.fa", text);
    text.clear();
    text.shrink_to_fit();
    sequence_reader reader(p);
    record_batch batch;
    ASSERT_TRUE(reader.next_batch(batch));
    ASSERT_EQ(batch.size(), 1u);
    EXPECT_EQ(batch[0].name, "big");
    EXPECT_EQ(batch[0].sequence.size(), length);
    EXPECT_TRUE(batch[0].sequence == sequence);  // not EXPECT_EQ: no 50 MB failure message
    EXPECT_FALSE(reader.next_batch(batch));
}

// ---- standard input
// ------------------------------------------------------------------------------

TEST_F(sequence_reader_test, standard_input_plain_and_gzip) {
    std::string const text = many_fastq(2000);
    records const want = read_all(write("s.fq", text));
    {
        stdin_feed feed(text);
        sequence_reader reader("-");
        EXPECT_EQ(reader.path(), "-");
        EXPECT_EQ(reader.format(), sequence_format::fastq);
        record_batch batch;
        records got;
        while (reader.next_batch(batch)) {
            for (sequence_record const r : batch) got.push_back(own(r));
        }
        EXPECT_EQ(got, want);
    }
    {
        stdin_feed feed(read_bytes(write("s.fq.gz", text, compression::gzip)));
        EXPECT_EQ(read_all("-"), want);
    }
}

// ---- SAM, BAM, CRAM
// ------------------------------------------------------------------------------

std::string const sam_header = "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:1000\n";
// r2 is aligned to the reverse strand: SAM stores its reverse complement, the reader restores it.
std::string const sam_body =
    "r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGTN\tII#I5\n"
    "r2\t16\tchr1\t10\t60\t5M\t*\t0\t0\tAACRN\tABCDE\n"
    "r2\t256\tchr1\t20\t0\t5M\t*\t0\t0\t*\t*\n"
    "r2\t2048\tchr1\t30\t60\t5M\t*\t0\t0\tAACRN\tABCDE\n"
    "r3\t4\t*\t0\t0\t*\t*\t0\t0\tGGTT\t*\n";
records const sam_want = {{"r1", "", "ACGTN", "II#I5"},
                          {"r2", "", "NYGTT", "EDCBA"},  // complement of R is Y
                          {"r3", "", "GGTT", ""}};

// Writes the SAM text above as BAM ("wb") or CRAM ("wc") with htslib.
void write_binary_alignments(std::string const& p, char const* mode, std::string const& header,
                             std::string const& body) {
    samFile* out = sam_open(p.c_str(), mode);
    ASSERT_NE(out, nullptr);
    sam_hdr_t* hdr = sam_hdr_parse(header.size(), header.c_str());
    ASSERT_NE(hdr, nullptr);
    ASSERT_EQ(sam_hdr_write(out, hdr), 0);
    bam1_t* b = bam_init1();
    size_t start = 0;
    while (start < body.size()) {
        size_t const end = body.find('\n', start);
        std::string line = body.substr(start, end - start);
        kstring_t ks = {line.size(), line.size() + 1, line.data()};
        ASSERT_GE(sam_parse1(&ks, hdr, b), 0) << line;
        ASSERT_GE(sam_write1(out, hdr, b), 0);
        start = end + 1;
    }
    bam_destroy1(b);
    sam_hdr_destroy(hdr);
    ASSERT_EQ(sam_close(out), 0);
}

TEST_F(sequence_reader_test, sam_text_skips_secondary_and_restores_reverse_reads) {
    std::string const p = write("a.sam", sam_header + sam_body);
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::sam);
    EXPECT_EQ(read_all(p), sam_want);
}

TEST_F(sequence_reader_test, bam_and_threaded_bam) {
    std::string const p = path("a.bam");
    write_binary_alignments(p, "wb", sam_header, sam_body);
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::bam);
    EXPECT_EQ(read_all(p), sam_want);
    reader_options threaded;
    threaded.decompression_threads = 2;
    EXPECT_EQ(read_all(p, threaded), sam_want);
}

TEST_F(sequence_reader_test, unaligned_cram) {
    // Unaligned reads need no reference to encode or decode.
    std::string const header = "@HD\tVN:1.6\tSO:unsorted\n";
    std::string const body =
        "u1\t77\t*\t0\t0\t*\t*\t0\t0\tACGTACGTNN\tIIIIIIII##\n"
        "u1\t141\t*\t0\t0\t*\t*\t0\t0\tTTGGCCAA\tFFFFFFFF\n";
    std::string const p = path("u.cram");
    write_binary_alignments(p, "wc", header, body);
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::cram);
    records const want = {{"u1", "", "ACGTACGTNN", "IIIIIIII##"},
                          {"u1", "", "TTGGCCAA", "FFFFFFFF"}};
    EXPECT_EQ(read_all(p), want);
}

// ---- GenBank and EMBL
// ----------------------------------------------------------------------------

// An oracle independent of SeqAn3: the letters between the sequence-block keyword and "//".
std::string flatfile_letters(std::string const& text, std::string const& start_keyword) {
    size_t at = text.find("\n" + start_keyword);
    EXPECT_NE(at, std::string::npos);
    at = text.find('\n', at + 1) + 1;
    size_t const end = text.find("\n//", at - 1);
    std::string letters;
    for (size_t i = at; i < end; ++i) {
        if (std::isalpha(static_cast<unsigned char>(text[i]))) letters.push_back(text[i]);
    }
    return letters;
}

TEST_F(sequence_reader_test, genbank_data_file) {
    std::string const p = std::string(QMER_DATA_DIR) + "/leptospira_contig.gbk";
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::genbank);
    records const got = read_all(p);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].name, "NZ_AHMY02000075");
    EXPECT_EQ(got[0].sequence.size(), 683u);
    EXPECT_EQ(got[0].sequence, flatfile_letters(read_bytes(p), "ORIGIN"));
    EXPECT_TRUE(got[0].quality.empty());
}

TEST_F(sequence_reader_test, embl_data_file) {
    // The file holds two records of 569 bp (K02675 and L02679).
    std::string const p = std::string(QMER_DATA_DIR) + "/plasmid_pWM5.embl";
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::embl);
    records const got = read_all(p);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].name, "K02675");
    EXPECT_EQ(got[1].name, "L02679");
    std::string const text = read_bytes(p);
    size_t const second = text.find("\nID   ");
    ASSERT_NE(second, std::string::npos);
    EXPECT_EQ(got[0].sequence.size(), 569u);
    EXPECT_EQ(got[0].sequence, flatfile_letters(text.substr(0, second + 1), "SQ"));
    EXPECT_EQ(got[1].sequence, flatfile_letters(text.substr(second), "SQ"));
}

TEST_F(sequence_reader_test, genbank_keeps_n_and_case_and_reads_every_record_gzipped) {
    std::string const text =
        "LOCUS       TEST1                     14 bp    DNA     linear   UNK 01-JAN-2000\n"
        "DEFINITION  first.\n"
        "ORIGIN\n"
        "        1 acgtnnacgt acNN\n"
        "//\n"
        "LOCUS       TEST2                      6 bp    DNA     linear   UNK 01-JAN-2000\n"
        "DEFINITION  second.\n"
        "ORIGIN\n"
        "        1 NNNNRY\n"
        "//\n";
    std::string const p = write("t.gbk.gz", text, compression::gzip);
    EXPECT_EQ(sequence_reader(p).format(), sequence_format::genbank);
    records const want = {{"TEST1", "", "acgtnnacgtacNN", ""}, {"TEST2", "", "NNNNRY", ""}};
    EXPECT_EQ(read_all(p), want);
}

// ---- the real data files
// -------------------------------------------------------------------------

TEST_F(sequence_reader_test, lambda_genome_and_reads) {
    records const genome = read_all(std::string(QMER_DATA_DIR) + "/lambda_virus.fa.gz");
    ASSERT_EQ(genome.size(), 1u);
    EXPECT_EQ(genome[0].sequence.size(), 48502u);
    EXPECT_TRUE(std::all_of(genome[0].sequence.begin(), genome[0].sequence.end(),
                            [](char c) { return c == 'A' || c == 'C' || c == 'G' || c == 'T'; }));
    for (char const* name : {"/lambda_reads_1.fq.gz", "/lambda_reads_2.fq.gz"}) {
        records const reads = read_all(std::string(QMER_DATA_DIR) + name);
        EXPECT_EQ(reads.size(), 10000u) << name;
        for (owned_record const& r : reads) {
            ASSERT_EQ(r.quality.size(), r.sequence.size()) << r.name;
            ASSERT_FALSE(r.sequence.empty()) << r.name;
        }
    }
}

// ---- errors
// ---------------------------------------------------------------------------------------

TEST_F(sequence_reader_test, missing_file_and_directory) {
    std::string const missing = path("nope.fq");
    expect_input_error([&] { sequence_reader r(missing); }, {missing, "No such file"});
    expect_input_error([&] { sequence_reader r(dir_.string()); },
                       {dir_.string(), "is a directory"});
    expect_input_error([&] { sequence_reader r(""); }, {"empty"});
}

TEST_F(sequence_reader_test, file_without_read_permission) {
    std::string const p = write("secret.fq", "@r\nA\n+\nI\n");
    ASSERT_EQ(::chmod(p.c_str(), 0), 0);
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    // Tests run as root in CI, and root reads anything: the check runs in a child that gives up
    // root for 'nobody' first, so it tests what a normal user sees.
    pid_t const child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && ::setuid(65534) != 0) ::_exit(3);
        try {
            sequence_reader r(p);
            ::_exit(1);
        } catch (input_error const& e) {
            std::string const message = e.what();
            bool const good = message.find(p) != std::string::npos &&
                              message.find("Permission denied") != std::string::npos;
            ::_exit(good ? 0 : 2);
        } catch (...) {
            ::_exit(4);
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "1: opened anyway, 2: wrong message, 3: setuid failed, 4: other exception";
}

TEST_F(sequence_reader_test, truncated_gzip_and_bgzf) {
    std::string const text = many_fastq(3000);
    for (compression how : {compression::gzip, compression::bgzf}) {
        std::string const whole = read_bytes(write("whole.gz", text, how));
        for (size_t keep : {whole.size() / 2, whole.size() - 5}) {
            std::string const p = write("cut.gz", whole.substr(0, keep));
            if (how == compression::gzip) {
                expect_input_error([&] { read_all(p); }, {p, "record ", "truncated"});
            } else {
                // A seekable BGZF file is seen to lack its EOF marker when it is opened.
                expect_input_error([&] { read_all(p); }, {p, "truncated"});
                // Through a pipe, the cut block itself is the error, at the record it falls in.
                stdin_feed feed(whole.substr(0, keep));
                expect_input_error([&] { read_all("-"); }, {"-: record ", "truncated"});
            }
        }
    }
}

TEST_F(sequence_reader_test, bgzf_without_end_of_file_marker) {
    // A BGZF file cut exactly at a block boundary is only recognisable by its missing EOF block.
    std::string const whole = read_bytes(write("whole.bgz", many_fastq(3000), compression::bgzf));
    ASSERT_GT(whole.size(), 28u);
    std::string const p = write("noeof.bgz", whole.substr(0, whole.size() - 28));
    for (unsigned threads : {0u, 2u}) {
        reader_options options;
        options.decompression_threads = threads;
        expect_input_error([&] { read_all(p, options); }, {p, "end-of-file marker"});
    }
    // Through a pipe the marker cannot be looked up front; the end of the stream shows it.
    stdin_feed feed(read_bytes(p));
    expect_input_error([&] { read_all("-"); }, {"-: record 3001", "end-of-file marker"});
}

TEST_F(sequence_reader_test, fastq_quality_length_differs) {
    std::string const p = write("q.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n");
    expect_input_error([&] { read_all(p); },
                       {p, "record 2", "quality length 3 differs from sequence length 4"});
    std::string const longer = write("q2.fq", "@r1\nACGT\n+\nIIIII\n");
    expect_input_error([&] { read_all(longer); }, {longer, "record 1", "quality length 5"});
}

TEST_F(sequence_reader_test, fastq_missing_plus_line) {
    std::string const p = write("p.fq", "@r1\nACGT\nIIII\n@r2\nACGT\n+\nIIII\n");
    expect_input_error([&] { read_all(p); }, {p, "record 1", "no '+' line"});
    std::string const at_end = write("p2.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n");
    expect_input_error([&] { read_all(at_end); }, {at_end, "record 2", "no '+' line"});
}

TEST_F(sequence_reader_test, fastq_ends_after_plus_line) {
    for (std::string const& text : {std::string("@r1\nACGT\n+\n"), std::string("@r1\nACGT\n+")}) {
        std::string const p = write("e.fq", text);
        expect_input_error([&] { read_all(p); }, {p, "record 1", "before the quality line"});
    }
}

TEST_F(sequence_reader_test, text_between_fastq_records_is_not_skipped) {
    std::string const p = write("j.fq", "@r1\nACGT\n+\nIIII\njunk\n@r2\nACGT\n+\nIIII\n");
    expect_input_error([&] { read_all(p); }, {p, "record 2", "expected '@'", "'j'"});
}

TEST_F(sequence_reader_test, fasta_errors) {
    std::string const plus = write("plus.fa", ">r1\nACGT\n+\nIIII\n");
    expect_input_error([&] { read_all(plus); }, {plus, "record 1", "'+'"});
    std::string const mixed = write("mixed.fa", ">r1\nACGT\n@r2\nACGT\n");
    expect_input_error([&] { read_all(mixed); }, {mixed, "record 2", "expected '>'", "'@'"});
    std::string const cut = write("cut.fa", ">r1\nACGT\n>");
    expect_input_error([&] { read_all(cut); }, {cut, "record 2", "inside the header"});
}

TEST_F(sequence_reader_test, binary_garbage) {
    std::string const nul = write("nul.fq", std::string("@r1\nAC\0T\n+\nIIII\n", 16));
    expect_input_error([&] { read_all(nul); },
                       {nul, "record 1", "binary data", "NUL", "position 3 of the sequence"});
    std::string const in_fasta = write("nul.fa", std::string(">r1\nACGT\n>r2\nAC\0\n", 17));
    expect_input_error([&] { read_all(in_fasta); }, {in_fasta, "record 2", "NUL"});
    std::string const in_quality = write("nulq.fq", std::string("@r1\nACGT\n+\nI\0II\n", 16));
    expect_input_error([&] { read_all(in_quality); },
                       {in_quality, "record 1", "position 2 of the quality"});
    std::string const in_name = write("nuln.fa", std::string(">r\0x\nACGT\n", 10));
    expect_input_error([&] { read_all(in_name); }, {in_name, "record 1", "of the name"});
    std::string const first = write("bin", std::string("\x01\x02\x03\x00\xff", 5));
    expect_input_error([&] { sequence_reader r(first); },
                       {first, "not a sequence file", "0x01", "binary"});
    std::string const text = write("text.txt", "hello world\n");
    expect_input_error([&] { sequence_reader r(text); }, {text, "not a sequence file", "'h'"});
    std::string const gz =
        write("bin.gz", std::string("\x7f\x45\x4c\x46\x02", 5), compression::gzip);
    expect_input_error([&] { sequence_reader r(gz); }, {gz, "not a sequence file"});
}

TEST_F(sequence_reader_test, truncated_bam) {
    std::string body;
    for (int i = 0; i < 3000; ++i) {
        // Appended piece by piece: GCC 12 gives a false -Wrestrict on a chain of string '+'.
        body.append("q").append(std::to_string(i)).append("\t4\t*\t0\t0\t*\t*\t0\t0\t");
        body.append(100, 'A').append("\t").append(100, 'I').append("\n");
    }
    std::string const whole_path = path("w.bam");
    write_binary_alignments(whole_path, "wb", sam_header, body);
    std::string const whole = read_bytes(whole_path);
    std::string const p = write("cut.bam", whole.substr(0, whole.size() / 2));
    // Refused when opened: a BGZF file cut short lacks its end-of-file marker block (the same rule
    // as for text input; without it a threaded reader could take damage for a clean end).
    expect_input_error([&] { read_all(p); }, {p, "truncated"});
    for (unsigned threads : {1u, 2u}) {
        expect_input_error([&] { read_all(p, reader_options{.decompression_threads = threads}); },
                           {p, "truncated"});
    }
}

// A reads file that grows, shrinks or is replaced while it is read. Each change comes after the
// first record was handed out and the file is small enough to be buffered whole, so the records
// read are those of the first version: only the check at the end can tell.
TEST_F(sequence_reader_test, file_changed_while_it_was_read) {
    std::string const text = "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIII\n";
    auto const after_first_record = [&](std::string const& name, auto&& change) {
        std::string const p = write(name, text);
        sequence_reader reader(p);
        record_batch batch;
        EXPECT_TRUE(reader.read_record(batch));
        change(p);
        return [p, r = std::make_shared<sequence_reader>(std::move(reader))] {
            record_batch b;
            while (r->read_record(b)) {
            }
        };
    };
    expect_input_error(after_first_record("grow.fq",
                                          [](std::string const& p) {
                                              std::FILE* f = std::fopen(p.c_str(), "a");
                                              std::fputs("@r3\nACGT\n+\nIIII\n", f);
                                              std::fclose(f);
                                          }),
                       {"grow.fq", "grew from 32 to 48 bytes", "while it was read"});
    expect_input_error(
        after_first_record("shrink.fq",
                           [](std::string const& p) { std::filesystem::resize_file(p, 16); }),
        {"shrink.fq", "shrank from 32 to 16 bytes"});
    expect_input_error(after_first_record("replace.fq",
                                          [&](std::string const& p) {
                                              std::string const other = write("other.fq", text);
                                              std::filesystem::rename(other, p);
                                          }),
                       {"replace.fq", "replaced by another file"});
    expect_input_error(
        after_first_record("gone.fq", [](std::string const& p) { std::filesystem::remove(p); }),
        {"gone.fq", "removed or renamed while it was read"});
    // Same size, new contents: the modification time tells (set explicitly: a rewrite within the
    // file system's time granularity would not show).
    expect_input_error(after_first_record("rewrite.fq",
                                          [](std::string const& p) {
                                              std::FILE* f = std::fopen(p.c_str(), "r+");
                                              std::fputs("@x1", f);
                                              std::fclose(f);
                                              auto const t = std::filesystem::last_write_time(p);
                                              std::filesystem::last_write_time(
                                                  p, t + std::chrono::seconds(5));
                                          }),
                       {"rewrite.fq", "rewritten"});
    // Unchanged, the same reading ends cleanly.
    EXPECT_NO_THROW(after_first_record("same.fq", [](std::string const&) {})());
    EXPECT_EQ(read_all(write("plain.fq", text)).size(), 2u);
}

}  // namespace
}  // namespace qmer::io::test
