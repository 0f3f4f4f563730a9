#pragma once
// One zstd frame, streamed into a FILE*: the compression of outputs named *.zst
// (io/output_file.hpp).
//
// Errors: write() and finish() return false and keep the reason in error() (the system's, when
// writing the compressed bytes failed; libzstd's otherwise). After a failure, nothing more should
// be written. Not thread-safe: one caller.

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

struct ZSTD_CCtx_s;

namespace qmer::io::detail {

class zstd_writer {
  public:
    // Compresses into `out` (not owned) at `level`. threads > 0: that many worker threads
    // compress while the caller goes on, where libzstd was built with them; else the caller's
    // thread compresses.
    zstd_writer(std::FILE* out, int level, unsigned threads);
    ~zstd_writer();
    zstd_writer(zstd_writer const&) = delete;
    zstd_writer& operator=(zstd_writer const&) = delete;

    bool write(void const* data, size_t size);
    // Ends the frame and hands every compressed byte to `out` (not flushed: the caller's job).
    bool finish();

    std::string const& error() const noexcept { return error_; }
    // The worker threads compressing, 0 when the caller's thread does.
    unsigned workers() const noexcept { return workers_; }

    static constexpr int default_level = 3;

  private:
    bool compress(void const* data, size_t size, bool end);

    std::FILE* out_;
    ZSTD_CCtx_s* cctx_;
    std::vector<char> buffer_;  // compressed bytes on their way to out_
    std::string error_;
    unsigned workers_ = 0;
};

}  // namespace qmer::io::detail
