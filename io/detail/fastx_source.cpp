#include "io/detail/fastx_source.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "io/detail/fastx_parser.hpp"

namespace qmer::io::detail {
namespace {

// The parser over a file's stream, its problems thrown with the file's name and the record number.
class fastx_source final : public record_source {
  public:
    fastx_source(std::unique_ptr<text_stream> stream, bool fastq)
        : stream_(std::move(stream)), parser_(*stream_, fastq) {}

    bool read(record_batch& batch, uint64_t number) override {
        switch (parser_.next(batch)) {
            case fastx_parser::step::record:
                return true;
            case fastx_parser::step::end:
                return false;
            case fastx_parser::step::bad:
                break;
        }
        throw input_error(stream_->path() + ": record " + std::to_string(number) + ": " +
                          parser_.problem());
    }

  private:
    std::unique_ptr<text_stream> stream_;
    fastx_parser parser_;
};

}  // namespace

std::unique_ptr<record_source> make_fastx_source(std::unique_ptr<text_stream> stream, bool fastq) {
    return std::make_unique<fastx_source>(std::move(stream), fastq);
}

}  // namespace qmer::io::detail
