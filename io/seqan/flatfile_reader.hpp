#pragma once
// GenBank and EMBL records through SeqAn3 (htslib does not read these formats). This header does
// not include SeqAn3: its I/O headers cost ~15 s of compile per translation unit, so only
// io/seqan/flatfile_reader.cpp pays for them.
//
// Sequences are read as characters, exactly as the file has them (GenBank's lowercase kept, the
// line numbers and spaces of the ORIGIN/SQ block removed), never as dna4, which would turn N into
// A. The record's name is the LOCUS name (GenBank) or the ID accession without its ';' (EMBL); the
// comment and quality are empty.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "io/sequence_record.hpp"

namespace qmer::io {

enum class flatfile_format { genbank, embl };

class flatfile_reader {
  public:
    // Reads from in, which must outlive the reader; path names the file in messages.
    flatfile_reader(std::istream& in, flatfile_format format, std::string path);
    ~flatfile_reader();
    flatfile_reader(flatfile_reader const&) = delete;
    flatfile_reader& operator=(flatfile_reader const&) = delete;

    // Appends the next record to batch; false at the end. number is the record's 1-based number,
    // for messages. A malformed record throws input_error naming the file and the record.
    bool read(record_batch& batch, uint64_t number);

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace qmer::io
