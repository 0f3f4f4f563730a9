// zstd frames through libzstd's streaming decoder, whose window is capped at
// zstd_window_log_limit: a frame asking for more fails before anything is allocated for it.

#include <zstd.h>
#include <zstd_errors.h>

#include "io/detail/stream_decoder.hpp"

namespace qmer::io::detail {
namespace {

// The window a frame header asks for, in MiB, from its first bytes (RFC 8878, 3.1.1.1); 0 when
// they are too few or the frame is single-segment (its window is its content size).
uint64_t window_mebibytes(std::string_view frame) noexcept {
    if (frame.size() < 6) return 0;
    auto const descriptor = static_cast<unsigned char>(frame[4]);
    if ((descriptor & 0x20) != 0) return 0;
    auto const window = static_cast<unsigned char>(frame[5]);
    uint64_t const base = uint64_t{1} << (10 + (window >> 3));
    return (base + base / 8 * (window & 7)) >> 20;
}

class zstd_decoder final : public stream_decoder {
  public:
    zstd_decoder() noexcept : stream_decoder(compression::zstd) {}
    ~zstd_decoder() override { ZSTD_freeDCtx(context_); }

  private:
    void begin_stream(std::string_view in) noexcept override {
        window_ = window_mebibytes(in);
        if (context_ != nullptr) return;  // a context goes on from one frame to the next
        context_ = ZSTD_createDCtx();
        if (context_ == nullptr || ZSTD_isError(ZSTD_DCtx_setParameter(
                                       context_, ZSTD_d_windowLogMax, zstd_window_log_limit)))
            fail(problem::out_of_memory);
    }

    step decode_stream(std::string_view in, std::span<char> out, bool) noexcept override {
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        ZSTD_outBuffer output{out.data(), out.size(), 0};
        size_t const left = ZSTD_decompressStream(context_, &output, &input);
        if (ZSTD_isError(left)) {
            ZSTD_ErrorCode const code = ZSTD_getErrorCode(left);
            if (code == ZSTD_error_frameParameter_windowTooLarge)
                fail(problem::too_much_memory, nullptr, window_);
            else if (code == ZSTD_error_memory_allocation)
                fail(problem::out_of_memory);
            else
                fail(problem::corrupt, ZSTD_getErrorName(left));
        }
        // 0: the frame is decoded and all its text written (the decoder stops at a frame's end).
        return {input.pos, output.pos, !ZSTD_isError(left) && left == 0};
    }

    ZSTD_DCtx* context_ = nullptr;
    uint64_t window_ = 0;
};

}  // namespace

std::unique_ptr<stream_decoder> make_zstd_decoder() {
    return std::make_unique<zstd_decoder>();
}

}  // namespace qmer::io::detail
