#pragma once
// The one mark htslib's threaded BGZF reader leaves on a valid input.
//
// A BGZF file followed by a plain gzip member (`cat a.fa.bgz b.fa.gz > ref.fa.gz`) is one valid
// gzip stream. htslib's threaded reader meets the member, stops its threads and reads on
// single-threaded, but htslib 1.16 counts its reader thread's "not BGZF" exit as a failed shutdown
// and sets BGZF_ERR_IO (bgzf.c, mt_destroy's return value), which would refuse the whole input at
// its end. The data it hands out is complete and in order. Found by fuzz/sequence_reader_fuzz;
// tests/regressions/bgzf_threads_refuse_concatenated_gzip_test.cpp.
//
// Damage can leave the same two traces (threads gone, BGZF_ERR_IO): when the reader thread stops
// on a block cut short, htslib may find the result queue already shut and take the fallback path
// too (found by the fuzzer right after the first fix). The third trace tells them apart: after the
// real fallback htslib reads the plain gzip member it met, single-threaded, and that sets
// fp->is_gzip; after damage it reads on from the end of the file and never does.

#include <htslib/bgzf.h>

namespace qmer::io::detail {

// Call after every read that did not fail (a clean end of input included: the fallback may happen
// in the read that ends it), on the thread that calls bgzf_read (htslib clears fp->mt there): the
// first time the threads are seen gone, `threaded` turns false and the mark, if it is the whole
// error state and a gzip member was read, is cleared. Damage met later sets the error state again.
inline void clear_threads_fallback_mark(BGZF* fp, bool& threaded) noexcept {
    if (!threaded || fp->mt != nullptr) return;
    threaded = false;
    if (fp->errcode == BGZF_ERR_IO && fp->is_gzip) fp->errcode = 0;
}

}  // namespace qmer::io::detail
