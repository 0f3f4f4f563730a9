#pragma once
// Paired-end input: two files read in lockstep (mate 1 in one, mate 2 in the other, same order), or
// one interleaved file (mate 1, mate 2, mate 1, ...). Any format sequence_reader takes. One
// SAM/BAM/CRAM file whose first record is flagged paired (0x1) is read by its flags, as
// `samtools import -1 R1.fq -2 R2.fq` writes pairs: every record flagged paired, each first mate
// (0x40) followed at once by its second (0x80); otherwise one SAM/BAM/CRAM file is interleaved
// and none of its records may be flagged paired (sequence_reader.hpp, mate_flags).
//
// Each batch holds the same number of records on both sides: first[i] and second[i] are mates.
// Mates must have the same name once a trailing "/1" or "/2" is removed (names end at the first
// whitespace, so Illumina's "name 1:N:0" / "name 2:N:0" pairs compare equal). These throw
// qmer::input_error naming the file(s) and the pair (and record) number:
//   - mate names that differ (the files are out of step, or not mates at all),
//   - one of two files ending before the other (either way round),
//   - an interleaved file with an odd number of records,
//   - a file flagged paired whose flags break those rules (named by the record and its name).
// Two empty inputs (or one empty interleaved input) are an empty paired input.
// Not thread-safe. The pipelines read pairs through io/chunked_paired_reader.hpp, whose pairs and
// errors are this reader's (its tests hold it to this one).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/sequence_reader.hpp"
#include "io/sequence_record.hpp"

namespace qmer::io {

struct paired_batch {
    record_batch first;   // mate 1 of each pair
    record_batch second;  // mate 2 of each pair, same index
    size_t size() const noexcept { return first.size(); }
    bool empty() const noexcept { return first.empty(); }
    // 1-based number of the batch's first pair (also first.first_record_number()).
    uint64_t first_pair_number() const noexcept { return first.first_record_number(); }
};

// The name two mates share: name without a trailing "/1" or "/2".
std::string_view mate_base_name(std::string_view name) noexcept;

class paired_reader {
  public:
    // Two files in lockstep. The byte budget of options counts both mates' sequence.
    paired_reader(std::string path1, std::string path2, reader_options options = {});
    // One file: interleaved, or SAM/BAM/CRAM flagged paired (paired by their flags).
    explicit paired_reader(std::string interleaved_path, reader_options options = {});

    // Clears batch and fills it with the next pairs, up to the byte budget. Returns false (batch
    // empty) when no pair is left. Throws input_error as described above.
    bool next_batch(paired_batch& batch);

    // One file (interleaved or flagged paired) rather than two.
    bool interleaved() const noexcept { return !second_.has_value(); }
    // One SAM/BAM/CRAM file whose mates are told by their flags (0x40, 0x80).
    bool mates_by_flags() const noexcept { return !second_ && first_.flagged_paired(); }
    // path1 is the interleaved file for interleaved input; path2 is then empty.
    std::string const& path1() const noexcept { return first_.path(); }
    std::string const& path2() const noexcept;
    uint64_t pairs_read() const noexcept { return pairs_; }
    sequence_reader const& reader1() const noexcept { return first_; }

  private:
    bool read_pair(paired_batch& batch);
    void check_names(paired_batch const& batch) const;

    reader_options options_;
    sequence_reader first_;
    std::optional<sequence_reader> second_;
    uint64_t pairs_ = 0;
};

}  // namespace qmer::io
