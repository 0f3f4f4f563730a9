#pragma once
// A sequence file opened and its format recognised from its content (the rules are in
// sequence_reader.hpp): what sequence_reader and chunked_reader are both built from, so that both
// open, recognise and refuse files in the same way and with the same messages.

#include <sys/types.h>

#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "io/detail/record_source.hpp"
#include "io/detail/text_stream.hpp"
#include "io/sequence_reader.hpp"

struct stat;

namespace qmer::io::detail {

// What identifies a regular file's version: a file that another process appends to, truncates or
// replaces while qmer reads it gives results that describe neither version, and a truncation at a
// record boundary cannot be told from the data alone.
struct file_version {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};

    static file_version of(struct stat const& info);
    bool operator==(file_version const& o) const;
};

// Throws input_error if the regular file at path is no longer the version that was opened.
void check_unchanged(std::string const& path, file_version const& opened);

struct opened_input {
    sequence_format format = sequence_format::empty;
    std::unique_ptr<text_stream> text;       // FASTA, FASTQ, GenBank, EMBL
    std::unique_ptr<record_source> records;  // SAM, BAM, CRAM
    // Set for regular files: checked again when the last record has been read.
    std::optional<file_version> version;
};

// Opens path ("-" is standard input), starts options.decompression_threads for BGZF, and
// recognises the format from the text (decompressed from gzip, BGZF, zstd, xz or bzip2 first).
// Throws input_error (a missing file, a directory, binary data, SAM in zstd/xz/bzip2, a damaged
// start).
opened_input open_input(std::string const& path, reader_options const& options);

}  // namespace qmer::io::detail
