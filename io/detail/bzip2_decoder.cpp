// bzip2 streams through libbz2, a decoder started again for each stream (pbzip2 writes one stream
// per block; stream_decoder checks the magic number between them). libbz2 checks every block's
// CRC and the stream's combined CRC.

#include <bzlib.h>

#include <algorithm>
#include <climits>

#include "io/detail/stream_decoder.hpp"

namespace qmer::io::detail {
namespace {

class bzip2_decoder final : public stream_decoder {
  public:
    bzip2_decoder() noexcept : stream_decoder(compression::bzip2) {}
    ~bzip2_decoder() override { end(); }

  private:
    void end() noexcept {
        if (open_) BZ2_bzDecompressEnd(&stream_);
        open_ = false;
    }

    void begin_stream(std::string_view) noexcept override {
        end();
        stream_ = bz_stream{};
        int const ret = BZ2_bzDecompressInit(&stream_, 0, 0);
        open_ = ret == BZ_OK;
        if (ret == BZ_MEM_ERROR)
            fail(problem::out_of_memory);
        else if (ret != BZ_OK)
            fail(problem::corrupt, "libbz2 cannot start a decoder");
    }

    step decode_stream(std::string_view in, std::span<char> out, bool) noexcept override {
        // libbz2 counts in unsigned int: larger blocks are taken in parts.
        stream_.next_in = const_cast<char*>(in.data());
        stream_.avail_in = static_cast<unsigned>(std::min<size_t>(in.size(), UINT_MAX));
        stream_.next_out = out.data();
        stream_.avail_out = static_cast<unsigned>(std::min<size_t>(out.size(), UINT_MAX));
        unsigned const given_in = stream_.avail_in, given_out = stream_.avail_out;
        int const ret = BZ2_bzDecompress(&stream_);
        step const s{given_in - stream_.avail_in, given_out - stream_.avail_out,
                     ret == BZ_STREAM_END};
        if (ret == BZ_DATA_ERROR)
            fail(problem::corrupt, "libbz2: a block or checksum does not match its data");
        else if (ret == BZ_DATA_ERROR_MAGIC)
            fail(problem::corrupt, "libbz2: a bad block or stream magic number");
        else if (ret == BZ_MEM_ERROR)
            fail(problem::out_of_memory);
        else if (ret != BZ_OK && ret != BZ_STREAM_END)
            fail(problem::corrupt, "libbz2 error");
        return s;
    }

    bz_stream stream_{};
    bool open_ = false;
};

}  // namespace

std::unique_ptr<stream_decoder> make_bzip2_decoder() {
    return std::make_unique<bzip2_decoder>();
}

}  // namespace qmer::io::detail
