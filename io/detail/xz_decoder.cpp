// xz streams through liblzma, one lzma_stream_decoder per stream (stream_decoder handles the
// padding and magic numbers between streams), with a memory limit: a stream whose headers ask for
// more fails before the memory is allocated.

#include <lzma.h>

#include "io/detail/stream_decoder.hpp"

namespace qmer::io::detail {
namespace {

class xz_decoder final : public stream_decoder {
  public:
    xz_decoder() noexcept : stream_decoder(compression::xz) {}
    ~xz_decoder() override { lzma_end(&stream_); }

  private:
    void begin_stream(std::string_view) noexcept override {
        // Starting again on the same lzma_stream reuses its memory.
        lzma_ret const ret = lzma_stream_decoder(&stream_, xz_memory_limit, 0);
        if (ret == LZMA_MEM_ERROR)
            fail(problem::out_of_memory);
        else if (ret != LZMA_OK)
            fail(problem::corrupt, "liblzma cannot start a decoder");
    }

    step decode_stream(std::string_view in, std::span<char> out, bool last) noexcept override {
        stream_.next_in = reinterpret_cast<uint8_t const*>(in.data());
        stream_.avail_in = in.size();
        stream_.next_out = reinterpret_cast<uint8_t*>(out.data());
        stream_.avail_out = out.size();
        // LZMA_FINISH once every byte is given: liblzma then reports a stream cut short.
        lzma_ret const ret = lzma_code(&stream_, last ? LZMA_FINISH : LZMA_RUN);
        step const s{in.size() - stream_.avail_in, out.size() - stream_.avail_out,
                     ret == LZMA_STREAM_END};
        switch (ret) {
            case LZMA_OK:
            case LZMA_STREAM_END:
                break;
            case LZMA_BUF_ERROR:
                fail(problem::truncated);
                break;
            case LZMA_MEMLIMIT_ERROR:
                fail(problem::too_much_memory, nullptr,
                     (lzma_memusage(&stream_) + (1 << 20) - 1) >> 20);
                break;
            case LZMA_MEM_ERROR:
                fail(problem::out_of_memory);
                break;
            case LZMA_FORMAT_ERROR:
                fail(problem::corrupt, "liblzma: not an xz stream header");
                break;
            case LZMA_OPTIONS_ERROR:
                fail(problem::corrupt, "liblzma: options it does not support");
                break;
            case LZMA_DATA_ERROR:
                fail(problem::corrupt, "liblzma: the compressed data is corrupt");
                break;
            default:
                fail(problem::corrupt, "liblzma error");
                break;
        }
        return s;
    }

    lzma_stream stream_ = LZMA_STREAM_INIT;
};

}  // namespace

std::unique_ptr<stream_decoder> make_xz_decoder() {
    return std::make_unique<xz_decoder>();
}

}  // namespace qmer::io::detail
