// Regression (found by fuzz/sequence_reader_fuzz): a BGZF file whose first block claims more bytes
// than the file holds must be refused with decompression threads as without them, although htslib's
// threaded reader ends such a stream as a clean EOF and only leaves its mark in the BGZF error
// state (an empty input, if nobody looks).
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "io/sequence_reader.hpp"

namespace {

TEST(regression, bgzf_threads_accept_corrupt_block) {
    std::string const path =
        std::string(QMER_SOURCE_DIR) + "/fuzz/findings/bgzf_thread_accepts_corrupt_block.bgz";
    for (unsigned threads : {0u, 1u, 2u}) {
        SCOPED_TRACE(threads);
        EXPECT_THROW(
            {
                qmer::io::sequence_reader reader(path, {.decompression_threads = threads});
                qmer::io::record_batch batch;
                while (reader.next_batch(batch)) {
                }
            },
            qmer::input_error);
    }
}

}  // namespace
