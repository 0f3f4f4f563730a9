#include "io/detail/zstd_writer.hpp"

#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace qmer::io::detail {

zstd_writer::zstd_writer(std::FILE* out, int level, unsigned threads)
    : out_(out), cctx_(ZSTD_createCCtx()), buffer_(ZSTD_CStreamOutSize()) {
    if (!cctx_) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    // Refused by a libzstd built without threads: then the caller's thread compresses.
    if (threads > 0 &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_nbWorkers, static_cast<int>(threads))))
        workers_ = threads;
}

zstd_writer::~zstd_writer() {
    ZSTD_freeCCtx(cctx_);
}

bool zstd_writer::write(void const* data, size_t size) {
    return size == 0 || compress(data, size, false);
}

bool zstd_writer::finish() {
    return compress(nullptr, 0, true);
}

bool zstd_writer::compress(void const* data, size_t size, bool end) {
    ZSTD_inBuffer in{data, size, 0};
    for (;;) {
        ZSTD_outBuffer out{buffer_.data(), buffer_.size(), 0};
        size_t const left =
            ZSTD_compressStream2(cctx_, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left)) {
            error_ = std::string("zstd: ") + ZSTD_getErrorName(left);
            return false;
        }
        if (out.pos > 0 && std::fwrite(buffer_.data(), 1, out.pos, out_) != out.pos) {
            error_ = std::strerror(errno);
            return false;
        }
        // Done when the input is taken and, at the end, the frame is complete (left == 0).
        // Workers may hold input they have taken: e_continue need not wait for them.
        if (end ? left == 0 : in.pos == in.size) return true;
    }
}

}  // namespace qmer::io::detail
