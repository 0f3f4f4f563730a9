#pragma once
// Lines of a text file, plain, gzip or BGZF (htslib's BGZF layer inflates both and passes plain
// text through), with their 1-based numbers for messages. `qmer merge` reads query tables with it.
// A damaged or truncated compressed file throws input_error naming it, as the sequence reader does.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace qmer::io {

namespace detail {
class text_stream;
}

class line_reader {
  public:
    // Throws input_error when path cannot be opened.
    explicit line_reader(std::string path);
    ~line_reader();
    line_reader(line_reader&&) noexcept;
    line_reader(line_reader const&) = delete;
    line_reader& operator=(line_reader const&) = delete;

    // The next line without its '\n' (and '\r'), valid until the next call; false at the end.
    bool next(std::string_view& line);
    // The number of the line next() returned last.
    uint64_t line_number() const noexcept { return line_number_; }
    std::string const& path() const noexcept { return path_; }

  private:
    bool fill();

    std::string path_;
    std::unique_ptr<detail::text_stream> stream_;
    std::string buffer_;
    size_t begin_ = 0;  // where the next line starts in buffer_
    bool ended_ = false;
    uint64_t line_number_ = 0;
};

}  // namespace qmer::io
