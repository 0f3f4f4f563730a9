#pragma once
// Decoders of the compressions htslib does not read (zstd, xz, bzip2), for text_stream: it feeds a
// decoder blocks of the raw bytes and gets blocks of text back, so there is one virtual call per
// block, never per byte.
//
// A file may hold several streams one after the other (zstd frames, skippable ones included; xz
// streams with their optional zero padding; bzip2 streams as pbzip2 writes them): all are read,
// in order, as one text. The data must end exactly where a stream ends: data cut short, a damaged
// stream and bytes after the last stream that do not start another one are failures, each with its
// own message, never a shorter text. Memory is bounded whatever the input says: a zstd window of
// at most 128 MiB (the zstd tool's own default limit; `zstd --long=31` writes 2 GiB windows) and
// at most 256 MiB for an xz stream (every xz preset needs 65 MiB or less); bzip2 needs about 4 MB
// by design.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace qmer::io::detail {

enum class compression { none, zstd, xz, bzip2 };

// The longest magic number of the formats above: the bytes compression_of needs to decide.
inline constexpr size_t magic_bytes = 6;

// The compression whose magic number starts `head`, the first bytes of a file (magic_bytes of
// them, or the whole file if it is shorter); none for anything else (text, gzip, ...).
compression compression_of(std::string_view head) noexcept;

// "zstd", "xz", "bzip2"; "" for none.
char const* compression_name(compression kind) noexcept;

class stream_decoder {
  public:
    struct step {
        size_t consumed = 0;  // bytes of `in` used
        size_t produced = 0;  // bytes written to `out`
        bool ended = false;   // the data ended where its last stream ended: no more text follows
    };

    virtual ~stream_decoder() = default;
    stream_decoder(stream_decoder const&) = delete;
    stream_decoder& operator=(stream_decoder const&) = delete;

    // Decodes the bytes of `in` (the next raw bytes of the data) into `out` (not empty). `last`
    // says no raw byte follows `in`. Returns nothing consumed and nothing produced, and not ended,
    // only when it needs more bytes than `in` holds and `last` is false: the caller then calls
    // again with `in`'s bytes followed by more. The text produced before a failure is returned
    // with it; after a failure it returns an empty step. Never throws: it runs inside
    // text_stream::read, which C macros call.
    step decode(std::string_view in, std::span<char> out, bool last) noexcept;

    bool failed() const noexcept { return problem_ != problem::none; }
    // What is wrong, one line without the file name ("truncated zstd data: ..."); `file` is how
    // advice names the file ("zstd -dc FILE | ...").
    std::string failure(std::string const& file) const;

  protected:
    enum class problem { none, truncated, corrupt, trailing, too_much_memory, out_of_memory };

    explicit stream_decoder(compression kind) noexcept : kind_(kind) {}

    // Prepares the decoding of a stream whose first bytes (its magic number and what follows of it
    // in the current block) are `in`. May fail().
    virtual void begin_stream(std::string_view in) noexcept = 0;
    // Decodes the current stream; `ended` set once the stream is whole and all its text written.
    // Reports damage through fail().
    virtual step decode_stream(std::string_view in, std::span<char> out, bool last) noexcept = 0;

    // Records the first problem: `detail` is a static text (the library's words), `mebibytes` the
    // memory a too_much_memory stream asks for (0 if unknown).
    void fail(problem what, char const* detail = nullptr, uint64_t mebibytes = 0) noexcept;

  private:
    compression kind_;
    problem problem_ = problem::none;
    char const* detail_ = nullptr;
    uint64_t mebibytes_ = 0;
    bool between_streams_ = true;
    uint64_t streams_ = 0;       // streams decoded whole
    uint64_t zero_padding_ = 0;  // xz stream padding seen since the last stream
};

// A decoder of kind (not none). Throws std::bad_alloc.
std::unique_ptr<stream_decoder> make_stream_decoder(compression kind);

// One implementation per format, each in its own file (zstd_decoder.cpp, ...).
std::unique_ptr<stream_decoder> make_zstd_decoder();
std::unique_ptr<stream_decoder> make_xz_decoder();
std::unique_ptr<stream_decoder> make_bzip2_decoder();

// The limits above, for the decoders and their messages.
inline constexpr int zstd_window_log_limit = 27;  // 128 MiB
inline constexpr uint64_t xz_memory_limit = uint64_t{256} << 20;

}  // namespace qmer::io::detail
