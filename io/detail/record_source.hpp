#pragma once
// What every input format backend of sequence_reader offers: the next record, appended to a batch.

#include <cstdint>

#include "io/sequence_record.hpp"

namespace qmer::io::detail {

class record_source {
  public:
    virtual ~record_source() = default;
    // Appends the next record to batch and returns true, or returns false at the end of the input.
    // number is the 1-based number the record will have, for error messages. Throws input_error.
    virtual bool read(record_batch& batch, uint64_t number) = 0;
};

}  // namespace qmer::io::detail
