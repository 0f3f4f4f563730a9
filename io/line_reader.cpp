#include "io/line_reader.hpp"

#include <htslib/bgzf.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "io/detail/text_stream.hpp"

namespace qmer::io {

line_reader::line_reader(std::string path) : path_(std::move(path)) {
    struct stat info {};
    if (::stat(path_.c_str(), &info) != 0)
        throw input_error("'" + path_ + "': cannot open: " + std::strerror(errno));
    if (S_ISDIR(info.st_mode)) throw input_error("'" + path_ + "': cannot open: is a directory");
    BGZF* fp = bgzf_open(path_.c_str(), "r");
    if (fp == nullptr) throw input_error("'" + path_ + "': cannot open: " + std::strerror(errno));
    stream_ = std::make_unique<detail::text_stream>(fp, path_);
}

line_reader::~line_reader() = default;
line_reader::line_reader(line_reader&&) noexcept = default;

// Appends the next piece of the file to the buffer (dropping the lines already returned); false
// once the file has ended.
bool line_reader::fill() {
    if (ended_) return false;
    buffer_.erase(0, begin_);
    begin_ = 0;
    size_t const old = buffer_.size();
    constexpr int piece = 1 << 16;
    buffer_.resize(old + piece);
    int const got = stream_->read(buffer_.data() + old, piece);
    buffer_.resize(old + static_cast<size_t>(got));
    if (got == 0) {
        ended_ = true;
        if (stream_->failed()) throw input_error("'" + path_ + "': " + stream_->failure());
        return false;
    }
    return true;
}

bool line_reader::next(std::string_view& line) {
    size_t end;
    while ((end = buffer_.find('\n', begin_)) == std::string::npos)
        if (!fill()) break;
    if (end == std::string::npos) {
        if (begin_ == buffer_.size()) return false;
        end = buffer_.size();  // a last line without '\n'
    }
    size_t length = end - begin_;
    if (length > 0 && buffer_[begin_ + length - 1] == '\r') --length;
    line = std::string_view(buffer_).substr(begin_, length);
    begin_ = end < buffer_.size() ? end + 1 : end;
    ++line_number_;
    return true;
}

}  // namespace qmer::io
