// zstd, xz and bzip2 inputs through io::sequence_reader and io::chunked_reader (both open files
// with io/detail/open_input): the records, the format and the errors of a compressed file are those
// of the plain file, from a file or from standard input; damage to the compression is an
// input_error naming the file, found by both readers at the same record.

#include "io/detail/opened_input.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "io/chunked_reader.hpp"
#include "io/sequence_test_files.hpp"

namespace qmer::io::test {
namespace {

// Every record before the first problem, and the problem's message (empty when read to the end).
struct reading {
    sequence_format format = sequence_format::empty;
    std::vector<owned_record> records;
    std::string error;
};

reading read_serially(std::string const& p) {
    reading out;
    record_batch batch;
    try {
        sequence_reader reader(p);
        out.format = reader.format();
        while (reader.read_record(batch)) {
        }
    } catch (input_error const& e) {
        out.error = e.what();
    }
    for (sequence_record const r : batch) out.records.push_back(own(r));
    return out;
}

// Cut, parsed and settled one chunk after the other, in chunks of about `target` bytes.
reading read_chunked(std::string const& p, size_t target = 5000) {
    reading out;
    try {
        chunked_reader reader(p, {}, {target, 0});
        out.format = reader.format();
        text_chunk chunk;
        record_batch batch;
        while (reader.cut(chunk, batch)) {
            chunked_reader::parse(chunk, batch);
            try {
                reader.settle(chunk, batch);
            } catch (input_error const& e) {
                out.error = e.what();
            }
            for (sequence_record const r : batch) out.records.push_back(own(r));
            if (!out.error.empty()) break;
        }
    } catch (input_error const& e) {
        out.error = e.what();
    }
    return out;
}

std::vector<std::string> const tools = {"zstd", "xz", "bzip2"};

class opened_input_test : public temp_folder_test {
  protected:
    // Writes `name` holding `plain` compressed by `command` (stdin to stdout, e.g. "xz -c").
    std::string compress(std::string const& name, std::string_view plain,
                         std::string const& command) {
        write("plain", plain);
        std::string const line =
            "cd '" + dir_.string() + "' && (" + command + ") < plain > '" + name + "'";
        EXPECT_EQ(std::system(line.c_str()), 0) << line;
        return path(name);
    }
    // The text of a data/ file (gzip-compressed or not).
    static std::string data_text(std::string const& name) {
        std::string out;
        BGZF* fp = bgzf_open((std::string(QMER_DATA_DIR) + "/" + name).c_str(), "r");
        char buf[65536];
        ssize_t n;
        while ((n = bgzf_read(fp, buf, sizeof buf)) > 0) out.append(buf, n);
        bgzf_close(fp);
        return out;
    }
};

// The message of `error` without the path it starts with.
std::string after_path(std::string const& error, std::string const& p) {
    EXPECT_EQ(error.substr(0, p.size()), p) << error;
    return error.substr(std::min(p.size(), error.size()));
}

void expect_same(reading const& got, reading const& want, std::string const& context) {
    EXPECT_EQ(got.format, want.format) << context;
    EXPECT_EQ(got.error, want.error) << context;
    ASSERT_EQ(got.records.size(), want.records.size()) << context;
    for (size_t i = 0; i < want.records.size(); ++i)
        ASSERT_EQ(got.records[i], want.records[i]) << context << ", record " << i + 1;
}

TEST_F(opened_input_test, data_files_read_as_the_plain_ones_by_both_readers) {
    for (std::string const name : {"lambda_reads_1.fq.gz", "lambda_virus.fa.gz",
                                   "leptospira_contig.gbk", "plasmid_pWM5.embl"}) {
        std::string const text = data_text(name);
        std::string const plain = write("plain.txt", text);
        reading const want = read_serially(plain);
        ASSERT_EQ(want.error, "") << name;
        ASSERT_FALSE(want.records.empty()) << name;
        for (std::string const& tool : tools) {
            std::string const p = compress("in." + tool, text, tool + " -c");
            std::string const context = name + " in " + tool;
            expect_same(read_serially(p), want, context);
            expect_same(read_chunked(p), want, context + ", chunked");
            stdin_feed feed(read_bytes(p));
            expect_same(read_serially("-"), want, context + ", standard input");
        }
    }
}

TEST_F(opened_input_test, chunked_reading_of_standard_input) {
    std::string const text = data_text("lambda_reads_1.fq.gz");
    reading const want = read_serially(write("plain.fq", text));
    for (std::string const& tool : tools) {
        stdin_feed feed(read_bytes(compress("in", text, tool + " -c")));
        expect_same(read_chunked("-", 1 << 16), want, tool);
    }
}

TEST_F(opened_input_test, errors_in_the_text_are_those_of_the_plain_file) {
    std::string const text = data_text("lambda_reads_1.fq.gz").substr(0, 40000);
    // A quality line one byte short in the middle, and a file that is not a sequence file.
    std::string bad = text;
    size_t const line = bad.find("\n+\n", 20000) + 3;
    bad.erase(line, 1);
    for (std::string_view const content : {std::string_view(bad), std::string_view("hello\n")}) {
        std::string const plain = write("bad", content);
        reading const want = read_serially(plain);
        ASSERT_NE(want.error, "");
        for (std::string const& tool : tools) {
            std::string const p = compress("bad." + tool, content, tool + " -c");
            for (reading const& got : {read_serially(p), read_chunked(p)}) {
                EXPECT_EQ(got.records, want.records) << tool;
                std::string const expected = content == "hello\n"
                                                 ? ": not a sequence file after " + tool +
                                                       " decompression: it starts with 'h'"
                                                 : after_path(want.error, plain);
                EXPECT_EQ(after_path(got.error, p).substr(0, expected.size()), expected) << tool;
            }
        }
    }
}

TEST_F(opened_input_test, damage_is_an_error_at_the_same_record_for_both_readers) {
    std::string const text = data_text("lambda_reads_1.fq.gz").substr(0, 300000);
    size_t const records = read_serially(write("plain.fq", text)).records.size();
    for (std::string const& tool : tools) {
        std::string const whole = read_bytes(compress("whole", text, tool + " -c"));
        for (size_t keep : {whole.size() / 3, whole.size() / 2, whole.size() - 1}) {
            std::string const p = write("cut", whole.substr(0, keep));
            reading const serial = read_serially(p);
            // A cut before the end of the first block is found when the file is opened.
            EXPECT_EQ(serial.error.substr(0, p.size() + 2), p + ": ") << serial.error;
            EXPECT_NE(serial.error.find("truncated " + tool + " data: it ends inside a "),
                      std::string::npos)
                << serial.error;
            // Cut in the final checksum, every record is read before the error.
            EXPECT_LE(serial.records.size(), keep < whole.size() - 1 ? records - 1 : records);
            expect_same(read_chunked(p), serial, tool + " cut at " + std::to_string(keep));
        }
        std::string const p = write("trailing", whole + "@r\nACGT\n+\nIIII\n");
        reading const serial = read_serially(p);
        EXPECT_NE(serial.error.find(tool + " data followed by bytes that are not " + tool),
                  std::string::npos)
            << serial.error;
        expect_same(read_chunked(p), serial, tool + " with trailing text");
    }
}

TEST_F(opened_input_test, empty_compressed_files_are_empty_inputs) {
    for (std::string const& tool : tools) {
        for (std::string_view const content : {"", "\n\n"}) {
            std::string const p = compress("empty", content, tool + " -c");
            EXPECT_NE(read_bytes(p).size(), 0u);
            reading const got = read_serially(p);
            EXPECT_EQ(got.format, sequence_format::empty) << tool;
            EXPECT_EQ(got.error, "") << tool;
            EXPECT_TRUE(got.records.empty());
            expect_same(read_chunked(p), got, tool);
        }
    }
}

TEST_F(opened_input_test, one_layer_of_compression_inside_gzip_and_sam_refused_in_words) {
    std::string const text = data_text("lambda_virus.fa.gz");
    reading const want = read_serially(write("plain.fa", text));
    // gzip around zstd: the BGZF layer inflates the gzip, the zstd is decoded here.
    expect_same(read_serially(compress("zstd.gz", text, "zstd -c | gzip -c")), want, "gzip(zstd)");
    // zstd around gzip: the text decoded here is gzip, which is not decoded again.
    std::string const p = compress("gz.zst", text, "gzip -c | zstd -c");
    expect_input_error([&] { sequence_reader reader(p); },
                       {p + ": not a sequence file after zstd decompression: it starts with byte "
                            "0x1f (binary data)"});
    for (std::string const& tool : tools) {
        std::string const sam =
            compress("reads.sam." + tool, "@HD\tVN:1.6\nr\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n",
                     tool + " -c");
        expect_input_error([&] { sequence_reader reader(sam); },
                           {sam + ": " + tool + "-compressed SAM, which qmer does not read",
                            "'" + tool + " -dc " + sam + " | qmer ... -'"});
    }
}

}  // namespace
}  // namespace qmer::io::test
