#include "io/detail/opened_input.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "io/detail/hts_source.hpp"

namespace qmer::io::detail {
namespace {

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string describe_first_byte(unsigned char c) {
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(c));
    return std::string("byte ") + hex + " (binary data)";
}

// Whether decoded text starts like SAM: htslib recognises SAM by its header lines, but reads SAM
// only plain or gzip/BGZF-compressed, not from text decoded here.
bool looks_like_sam(std::string_view head) {
    for (std::string_view tag : {"@HD\t", "@SQ\t", "@RG\t", "@PG\t", "@CO\t"})
        if (head.starts_with(tag)) return true;
    return false;
}

[[noreturn]] void fail_open(std::string const& path, int error) {
    throw input_error(path + ": cannot open: " + std::strerror(error));
}

}  // namespace

file_version file_version::of(struct stat const& info) {
    return {info.st_dev, info.st_ino, info.st_size, info.st_mtim};
}

bool file_version::operator==(file_version const& o) const {
    return device == o.device && inode == o.inode && size == o.size &&
           modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
}

void check_unchanged(std::string const& path, file_version const& opened) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw input_error(path + ": removed or renamed while it was read: the results may be " +
                          "incomplete; run again on a finished file");
    auto const now = file_version::of(info);
    if (now == opened) return;
    std::string what = now.device != opened.device || now.inode != opened.inode
                           ? "replaced by another file"
                       : now.size > opened.size ? "grew from " + std::to_string(opened.size) +
                                                      " to " + std::to_string(now.size) + " bytes"
                       : now.size < opened.size ? "shrank from " + std::to_string(opened.size) +
                                                      " to " + std::to_string(now.size) + " bytes"
                                                : "rewritten (its modification time changed)";
    throw input_error(path + ": " + what + " while it was read: the results would describe " +
                      "neither version; run again on a finished file");
}

opened_input open_input(std::string const& path, reader_options const& options) {
    opened_input in;
    if (path.empty()) throw input_error("an input file name is empty");
    if (path != "-") {
        // htslib opens a directory without complaint and then fails on read; say it plainly.
        struct stat info {};
        if (::stat(path.c_str(), &info) != 0) fail_open(path, errno);
        if (S_ISDIR(info.st_mode)) throw input_error(path + ": cannot open: is a directory");
        if (S_ISREG(info.st_mode)) in.version = file_version::of(info);
    }
    hFILE* raw = hopen(path.c_str(), "r");
    if (raw == nullptr) fail_open(path, errno);

    // hts_detect_format peeks (decompressing a gzip start if need be) without consuming anything.
    htsFormat detected{};
    if (hts_detect_format(raw, &detected) < 0) {
        int const error = errno;
        hclose_abruptly(raw);
        throw input_error(path + ": cannot read: " + std::strerror(error));
    }

    // htslib 1.16 looks inside xz (it recognises an xz-compressed SAM) but cannot read SAM from
    // it: sam_hdr_read then aborts the process. Such files go the text way, which refuses them.
    bool const htslib_reads = detected.compression != xz_compression &&
                              detected.compression != bzip2_compression &&
                              detected.compression != zstd_compression;
    if (htslib_reads &&
        (detected.format == sam || detected.format == bam || detected.format == cram)) {
        htsFile* fp = hts_hopen(raw, path.c_str(), "r");
        if (fp == nullptr) {
            hclose_abruptly(raw);
            throw input_error(path + ": cannot open as " + hts_format_description(&detected));
        }
        in.format = detected.format == sam   ? sequence_format::sam
                    : detected.format == bam ? sequence_format::bam
                                             : sequence_format::cram;
        in.records = make_hts_source(fp, path, options.decompression_threads);
        return in;
    }

    BGZF* fp = bgzf_hopen(raw, "r");
    if (fp == nullptr) {
        hclose_abruptly(raw);
        throw input_error(path + ": cannot read: not a readable (compressed) text file");
    }
    bool const is_bgzf = fp->is_compressed && !fp->is_gzip;
    // The EOF marker of a seekable BGZF file is checked up front (threaded reading cannot see it at
    // the end); for a pipe text_stream checks it at the end of a single-threaded read.
    if (is_bgzf && bgzf_check_EOF(fp) == 0) {
        bgzf_close(fp);
        throw input_error(path + ": truncated BGZF data: the end-of-file marker block is missing");
    }
    // Only BGZF can be inflated by several threads (its blocks are independent); plain gzip is one
    // deflate stream. The first block is read before the threads start: htslib 1.16's threaded
    // reader takes a first block it cannot parse for the start of a plain gzip stream, falls back
    // to reading the file so, and accepted an input that a read without threads refuses (found
    // by fuzz/sequence_reader_fuzz;
    // tests/regressions/bgzf_threads_accept_a_bad_first_block_test.cpp). The threads go on from the
    // next block, as hts_source's do after a BAM header.
    if (options.decompression_threads > 0 && is_bgzf) {
        if (bgzf_peek(fp) < -1) {
            int const error = fp->errcode;
            bgzf_close(fp);
            throw input_error(path + ": " + bgzf_failure(error));
        }
        if (bgzf_mt(fp, static_cast<int>(options.decompression_threads), 256) != 0) {
            bgzf_close(fp);
            throw input_error(path + ": cannot start decompression threads");
        }
    }
    auto stream = std::make_unique<text_stream>(fp, path);

    // The first non-blank byte decides. Blank prefixes are rare; the look-ahead doubles until it
    // finds a byte or the end of the input.
    size_t want = 4096;
    std::string_view head;
    size_t start = 0;
    for (;;) {
        head = stream->peek(want);
        while (start < head.size() && is_blank(head[start])) ++start;
        if (start < head.size() || head.size() < want) break;
        want *= 2;
    }
    if (start == head.size()) {
        in.format = sequence_format::empty;  // an empty file is an empty input, not an error
        return in;
    }
    head = stream->peek(start + 5).substr(start);
    std::string const tool = compression_name(stream->decoded());
    if (!tool.empty() && looks_like_sam(head)) {
        std::string const shown = path == "-" ? std::string("FILE") : path;
        throw input_error(path + ": " + tool + "-compressed SAM, which qmer does not read (it " +
                          "reads SAM plain or gzip/BGZF-compressed): decompress it into a pipe, " +
                          "e.g. '" + tool + " -dc " + shown + " | qmer ... -'");
    }
    if (head[0] == '>') {
        in.format = sequence_format::fasta;
    } else if (head[0] == '@') {
        in.format = sequence_format::fastq;
    } else if (head.starts_with("LOCUS")) {
        in.format = sequence_format::genbank;
    } else if (head.starts_with("ID   ")) {
        in.format = sequence_format::embl;
    } else {
        throw input_error(
            path + ": not a sequence file" +
            (tool.empty() ? "" : " after " + tool + " decompression") + ": it starts with " +
            describe_first_byte(static_cast<unsigned char>(head[0])) +
            ", not '>' (FASTA), '@' (FASTQ), 'LOCUS' (GenBank), 'ID' (EMBL) or SAM/BAM/CRAM");
    }
    in.text = std::move(stream);
    return in;
}

}  // namespace qmer::io::detail
