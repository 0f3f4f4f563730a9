// Tests of io/detail/stream_decoder: zstd, xz and bzip2 data written by the real tools decode to
// the bytes that went in, in blocks of any size, across concatenated streams; data cut short,
// damaged, followed by garbage or asking for too much memory fails with a message that says so.

#include "io/detail/stream_decoder.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "io/sequence_test_files.hpp"
#include "sanitized.hpp"

namespace qmer::io::test {
namespace {

using detail::compression;
using detail::make_stream_decoder;

struct decoded {
    std::string text;
    std::string error;  // empty when the data ended cleanly
};

// Decodes `data` as text_stream does: the decoder sees `in_block` new raw bytes at a time (more
// when it asks for them) and writes at most `out_block` bytes per call.
decoded decode(compression kind, std::string_view data, size_t in_block, size_t out_block) {
    auto const decoder = make_stream_decoder(kind);
    decoded out;
    std::vector<char> buffer(out_block);
    size_t pos = 0, end = std::min(in_block, data.size());
    for (size_t calls = 0;; ++calls) {
        if (calls > 100 * (data.size() + 10)) {
            out.error = "no progress";
            return out;
        }
        bool const last = end == data.size();
        auto const s = decoder->decode(data.substr(pos, end - pos), buffer, last);
        out.text.append(buffer.data(), s.produced);
        pos += s.consumed;
        if (decoder->failed()) {
            out.error = decoder->failure("FILE");
            EXPECT_EQ(out.error.find('\n'), std::string::npos) << out.error;
            return out;
        }
        if (s.ended) {
            EXPECT_EQ(pos, data.size());
            return out;
        }
        if (s.consumed == 0 && s.produced == 0) {
            if (last) {
                out.error = "stalled at the end";
                return out;
            }
            end = std::min(end + in_block, data.size());
        } else if (pos == end) {
            end = std::min(end + in_block, data.size());
        }
    }
}

std::vector<compression> const kinds = {compression::zstd, compression::xz, compression::bzip2};

class stream_decoder_test : public temp_folder_test {
  protected:
    // `plain` compressed by `command` (a shell command from stdin to stdout, e.g. "xz -c").
    std::string compressed(std::string const& command, std::string_view plain) {
        write("in", plain);
        std::string const line =
            "cd '" + dir_.string() + "' && (" + command + ") < in > out 2> /dev/null";
        EXPECT_EQ(std::system(line.c_str()), 0) << line;
        return read_bytes(path("out"));
    }
    std::string compressed(compression kind, std::string_view plain) {
        return compressed(std::string(detail::compression_name(kind)) + " -c", plain);
    }

    // About 2.3 MB of FASTQ: many blocks of every format.
    static std::string reads() {
        static std::string const text = [] {
            std::string out;
            BGZF* fp =
                bgzf_open((std::string(QMER_DATA_DIR) + "/lambda_reads_1.fq.gz").c_str(), "r");
            char buf[65536];
            ssize_t n;
            while ((n = bgzf_read(fp, buf, sizeof buf)) > 0) out.append(buf, n);
            bgzf_close(fp);
            return out;
        }();
        return text;
    }
};

TEST_F(stream_decoder_test, magic_numbers) {
    EXPECT_EQ(detail::compression_of("\x28\xb5\x2f\xfd\x04\x58"), compression::zstd);
    EXPECT_EQ(detail::compression_of("\x5e\x2a\x4d\x18\x04\x00"), compression::zstd);  // skippable
    EXPECT_EQ(detail::compression_of(std::string("\xfd"
                                                 "7zXZ\0",
                                                 6)),
              compression::xz);
    EXPECT_EQ(detail::compression_of("BZh91AY"), compression::bzip2);
    for (std::string_view not_compressed :
         {"", "BZh0AY", "BZh", ">BZh9", "@r1\nACGT", "\x1f\x8b\x08\x04", "\x28\xb5\x2f",
          "\xfd"
          "7zXZ"})
        EXPECT_EQ(detail::compression_of(not_compressed), compression::none) << not_compressed;
}

TEST_F(stream_decoder_test, same_bytes_as_the_plain_text_in_blocks_of_any_size) {
    std::string const text = reads();
    std::string const small = text.substr(0, 30000);
    for (compression kind : kinds) {
        std::string const name = detail::compression_name(kind);
        std::string const data = compressed(kind, text);
        decoded const big = decode(kind, data, 128 << 10, 64 << 10);
        EXPECT_EQ(big.error, "") << name;
        EXPECT_TRUE(big.text == text) << name << ": " << big.text.size() << " bytes";
        std::string const data_small = compressed(kind, small);
        for (auto const& [in, out] : {std::pair<size_t, size_t>{1, 1}, {3, 1000}, {1000, 7}}) {
            decoded const got = decode(kind, data_small, in, out);
            EXPECT_EQ(got.error, "") << name << " " << in << "/" << out;
            EXPECT_TRUE(got.text == small) << name << " " << in << "/" << out;
        }
    }
}

TEST_F(stream_decoder_test, concatenated_streams_read_whole) {
    std::string const text = reads().substr(0, 200000);
    std::string const a = text.substr(0, 70000), b = text.substr(70000);
    for (compression kind : kinds) {
        std::string const name = detail::compression_name(kind);
        // Two streams, with an empty one between them.
        std::string const data = compressed(kind, a) + compressed(kind, "") + compressed(kind, b);
        for (size_t in : {size_t{5}, size_t{128} << 10}) {
            decoded const got = decode(kind, data, in, 4096);
            EXPECT_EQ(got.error, "") << name;
            EXPECT_TRUE(got.text == text) << name << ": " << got.text.size() << " bytes";
        }
    }
    // Multi-stream writers: pzstd (a skippable frame before each of its frames; two frames for
    // these 2.3 MB at level 1), xz's stream padding.
    std::string const pzstd = compressed("pzstd -1 -p 2 -c", reads());
    EXPECT_EQ(pzstd.substr(0, 1), "\x50");
    decoded const parallel = decode(compression::zstd, pzstd, 1000, 1 << 16);
    EXPECT_EQ(parallel.error, "");
    EXPECT_TRUE(parallel.text == reads());
    std::string const padded =
        compressed(compression::xz, a) + std::string(8, '\0') + compressed(compression::xz, b);
    decoded const got = decode(compression::xz, padded + std::string(4, '\0'), 3, 4096);
    EXPECT_EQ(got.error, "");
    EXPECT_TRUE(got.text == text);
    EXPECT_NE(decode(compression::xz, padded + std::string(3, '\0'), 3, 4096)
                  .error.find("corrupt xz data (stream padding"),
              std::string::npos);
}

TEST_F(stream_decoder_test, an_empty_compressed_file_is_empty_text) {
    for (compression kind : kinds) {
        decoded const got = decode(kind, compressed(kind, ""), 1 << 17, 1 << 16);
        EXPECT_EQ(got.error, "") << detail::compression_name(kind);
        EXPECT_EQ(got.text, "");
    }
}

TEST_F(stream_decoder_test, data_cut_short_is_truncated_wherever_it_is_cut) {
    std::string const text = reads().substr(0, 3000);
    for (compression kind : kinds) {
        std::string const name = detail::compression_name(kind);
        // One stream, then two: a cut in the second stream's magic number too.
        std::string const one = compressed(kind, text);
        std::string const two = one + one;
        // Under a sanitizer every cut within 64 bytes of a stream's start or end (headers, magic
        // numbers, trailers) and every 7th between: a fifth of the decodes, the same edges.
        auto const near_edge = [&](size_t keep) {
            size_t const in = keep % one.size();
            return in < 64 || in + 64 > one.size();
        };
        for (size_t keep = 1; keep < two.size(); ++keep) {
            if (keep == one.size()) continue;  // one whole stream
            if (QMER_TEST_SANITIZED && !near_edge(keep) && keep % 7 != 0) continue;
            decoded const got = decode(kind, std::string_view(two).substr(0, keep), 1 << 17, 4096);
            EXPECT_EQ(got.error, "truncated " + name + " data: it ends inside a " +
                                     (kind == compression::zstd ? "frame" : "stream"))
                << name << ", " << keep << " of " << two.size() << " bytes";
            EXPECT_LE(got.text.size(), 2 * text.size());
        }
    }
}

TEST_F(stream_decoder_test, damage_is_an_error) {
    std::string const text = reads().substr(0, 100000);
    std::mt19937_64 rng(7);
    for (compression kind : kinds) {
        std::string const name = detail::compression_name(kind);
        std::string const data = compressed(kind, text);
        for (int round = 0; round < 50; ++round) {
            std::string damaged = data;
            size_t const at = 4 + rng() % (damaged.size() - 4);
            damaged[at] = static_cast<char>(damaged[at] ^ (1 + rng() % 255));
            decoded const got = decode(kind, damaged, 1 << 17, 1 << 16);
            EXPECT_NE(got.error.find(name + " data"), std::string::npos)
                << name << ", byte " << at << ": '" << got.error << "'";
            EXPECT_NE(got.error, "stalled at the end");
        }
    }
}

TEST_F(stream_decoder_test, trailing_garbage_is_an_error) {
    for (compression kind : kinds) {
        std::string const name = detail::compression_name(kind);
        std::string const data = compressed(kind, ">a\nACGT\n");
        for (std::string const& garbage : {std::string("garbage\n"), std::string(8, '\0'),
                                           std::string("\x01\x02\x03\x04\x05\x06\x07")}) {
            if (kind == compression::xz && garbage[0] == '\0') continue;  // stream padding
            decoded const got = decode(kind, data + garbage, 1 << 17, 4096);
            EXPECT_EQ(got.error, name + " data followed by bytes that are not " + name +
                                     " (trailing garbage after its last " +
                                     (kind == compression::zstd ? "frame" : "stream") + ")");
        }
    }
}

TEST_F(stream_decoder_test, zstd_long_windows_are_refused_in_words) {
    std::string const data = compressed("zstd --long=31 -c", ">a\nACGT\n");
    decoded const got = decode(compression::zstd, data, 1 << 17, 4096);
    EXPECT_EQ(got.error,
              "zstd data with a 2048 MiB window, larger than the 128 MiB qmer decodes (as the "
              "zstd tool does by default; 'zstd --long=31' writes 2048 MiB windows): decompress "
              "it into a pipe, e.g. 'zstd -dc --long=31 FILE | qmer ... -'");
    // 128 MiB windows (zstd --long, --ultra -22) are read.
    std::string const text = reads().substr(0, 10000);
    EXPECT_EQ(decode(compression::zstd, compressed("zstd --long=27 -c", text), 1 << 17, 4096).text,
              text);
}

// CRC-32 (ISO-HDLC), which xz block headers carry.
uint32_t crc32(std::string_view bytes) {
    uint32_t crc = 0xffffffff;
    for (unsigned char c : bytes) {
        crc ^= c;
        for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0xedb88320 & (0 - (crc & 1)));
    }
    return ~crc;
}

TEST_F(stream_decoder_test, xz_needing_too_much_memory_is_refused_in_words) {
    // Compressing with a 1 GiB dictionary would take 10 GiB: the header of a small stream is
    // changed to ask for one instead (what a hostile file can do).
    std::string data = compressed(compression::xz, ">a\nACGT\n");
    size_t const header = 12, length = (static_cast<unsigned char>(data[header]) + 1) * 4;
    ASSERT_EQ(data[header + 1], 0) << "one filter, no sizes";
    ASSERT_EQ(data[header + 2], 0x21) << "LZMA2";
    data[header + 4] = 36;  // a dictionary of 2^(36/2 + 12) bytes
    uint32_t const crc = crc32(std::string_view(data).substr(header, length - 4));
    for (int i = 0; i < 4; ++i) data[header + length - 4 + i] = static_cast<char>(crc >> (8 * i));
    decoded const got = decode(compression::xz, data, 1 << 17, 4096);
    EXPECT_NE(got.error.find("xz data that needs 10"), std::string::npos) << got.error;
    EXPECT_NE(got.error.find(" MiB of memory to decode, more than the 256 MiB qmer allows"),
              std::string::npos)
        << got.error;
    EXPECT_NE(got.error.find("'xz -dc FILE | qmer ... -'"), std::string::npos) << got.error;
}

}  // namespace
}  // namespace qmer::io::test
