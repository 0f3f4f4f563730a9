#include "io/detail/stream_decoder.hpp"

#include <algorithm>

namespace qmer::io::detail {
namespace {

enum class fit { whole, prefix, none };

// How `bytes` (possibly shorter than a magic number) matches the magic number of kind: zstd's
// frame magic or a skippable frame's (0x184D2A50 to 0x184D2A5F, little-endian: pzstd starts its
// files with one), xz's six bytes, or bzip2's "BZh" and a block size digit.
fit fit_of(compression kind, std::string_view bytes) noexcept {
    if (bytes.empty()) return fit::prefix;
    auto const at = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
    bool const skippable = kind == compression::zstd && (at(0) & 0xf0) == 0x50;
    std::string_view const magic = kind == compression::xz ? std::string_view(
                                                                 "\xfd"
                                                                 "7zXZ\0",
                                                                 6)
                                   : kind == compression::bzip2 ? "BZh"
                                   : skippable                  ? "\x50\x2a\x4d\x18"
                                                                : "\x28\xb5\x2f\xfd";
    size_t const length = magic.size() + (kind == compression::bzip2 ? 1 : 0);
    for (size_t i = 0; i < std::min(bytes.size(), length); ++i) {
        bool const ok = i == magic.size()     ? at(i) >= '1' && at(i) <= '9'
                        : i == 0 && skippable ? true
                                              : at(i) == static_cast<unsigned char>(magic[i]);
        if (!ok) return fit::none;
    }
    return bytes.size() >= length ? fit::whole : fit::prefix;
}

}  // namespace

compression compression_of(std::string_view head) noexcept {
    for (compression kind : {compression::zstd, compression::xz, compression::bzip2})
        if (fit_of(kind, head) == fit::whole) return kind;
    return compression::none;
}

char const* compression_name(compression kind) noexcept {
    switch (kind) {
        case compression::zstd:
            return "zstd";
        case compression::xz:
            return "xz";
        case compression::bzip2:
            return "bzip2";
        case compression::none:
            break;
    }
    return "";
}

stream_decoder::step stream_decoder::decode(std::string_view in, std::span<char> out,
                                            bool last) noexcept {
    step done;
    while (!failed() && done.produced < out.size()) {
        std::string_view rest = in.substr(done.consumed);
        if (between_streams_) {
            // xz allows zero bytes between and after streams, in groups of four.
            if (kind_ == compression::xz) {
                size_t const zeros =
                    std::find_if(rest.begin(), rest.end(), [](char c) { return c != 0; }) -
                    rest.begin();
                zero_padding_ += zeros;
                done.consumed += zeros;
                rest.remove_prefix(zeros);
                if (rest.empty() && !last) break;
                if (zero_padding_ % 4 != 0) {
                    fail(problem::corrupt, "stream padding that is not a multiple of 4 bytes");
                    break;
                }
                zero_padding_ = 0;
            }
            if (rest.empty()) {
                done.ended = last;
                break;
            }
            fit const next = fit_of(kind_, rest);
            if (next == fit::prefix && !last) break;  // the rest of the magic number is to come
            if (next == fit::prefix) {
                fail(problem::truncated);
                break;
            }
            if (next == fit::none) {
                fail(streams_ == 0 ? problem::corrupt : problem::trailing, "no magic number");
                break;
            }
            between_streams_ = false;
            begin_stream(rest);
            if (failed()) break;
        }
        step const s = decode_stream(rest, out.subspan(done.produced), last);
        done.consumed += s.consumed;
        done.produced += s.produced;
        if (failed()) break;
        if (s.ended) {
            between_streams_ = true;
            ++streams_;
            continue;
        }
        // With all its input and room left, a decoder stops only for more input.
        bool const starved = s.consumed == rest.size() || (s.consumed == 0 && s.produced == 0);
        if (last && starved && done.produced < out.size()) fail(problem::truncated);
        break;
    }
    return done;
}

void stream_decoder::fail(problem what, char const* detail, uint64_t mebibytes) noexcept {
    if (failed()) return;
    problem_ = what;
    detail_ = detail;
    mebibytes_ = mebibytes;
}

std::string stream_decoder::failure(std::string const& file) const {
    std::string const name = compression_name(kind_);
    std::string const unit = kind_ == compression::zstd ? "frame" : "stream";
    std::string const detail = detail_ != nullptr ? detail_ : "";
    switch (problem_) {
        case problem::none:
            break;
        case problem::truncated:
            return "truncated " + name + " data: it ends inside a " + unit;
        case problem::corrupt:
            return "corrupt " + name + " data (" + detail + ")";
        case problem::trailing:
            return name + " data followed by bytes that are not " + name +
                   " (trailing garbage after its last " + unit + ")";
        case problem::too_much_memory:
            if (kind_ == compression::zstd) {
                std::string const size =
                    mebibytes_ != 0 ? std::to_string(mebibytes_) + " MiB " : std::string();
                return "zstd data with a " + size + "window, larger than the " +
                       std::to_string((uint64_t{1} << zstd_window_log_limit) >> 20) +
                       " MiB qmer decodes (as the zstd tool does by default; 'zstd --long=31' " +
                       "writes 2048 MiB windows): decompress it into a pipe, e.g. 'zstd -dc " +
                       "--long=31 " + file + " | qmer ... -'";
            }
            return name + " data that needs " + std::to_string(mebibytes_) +
                   " MiB of memory to decode, more than the " +
                   std::to_string(xz_memory_limit >> 20) +
                   " MiB qmer allows (every xz preset needs 65 MiB or less): decompress it into " +
                   "a pipe, e.g. 'xz -dc " + file + " | qmer ... -'";
        case problem::out_of_memory:
            return "out of memory decoding " + name + " data";
    }
    return {};
}

std::unique_ptr<stream_decoder> make_stream_decoder(compression kind) {
    switch (kind) {
        case compression::zstd:
            return make_zstd_decoder();
        case compression::xz:
            return make_xz_decoder();
        case compression::bzip2:
            return make_bzip2_decoder();
        case compression::none:
            break;
    }
    return nullptr;
}

}  // namespace qmer::io::detail
