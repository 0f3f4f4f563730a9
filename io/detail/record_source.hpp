#pragma once
// What every input format backend of sequence_reader offers: the next record, appended to a batch.

#include <cstdint>

#include "io/sequence_reader.hpp"
#include "io/sequence_record.hpp"

namespace qmer::io::detail {

class record_source {
  public:
    virtual ~record_source() = default;
    // Appends the next record to batch and returns true, or returns false at the end of the input.
    // number is the 1-based number the record will have, for error messages. Throws input_error.
    virtual bool read(record_batch& batch, uint64_t number) = 0;

    // SAM/BAM/CRAM only (other formats carry no pairing flags): whether the first record is
    // flagged paired (0x1), and the rule the flags of every record are held to. The rule is set
    // before the first read().
    virtual bool flagged_paired() const noexcept { return false; }
    virtual void follow_mate_flags(mate_flags /*rule*/) {}
};

}  // namespace qmer::io::detail
