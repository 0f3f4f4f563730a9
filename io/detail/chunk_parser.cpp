#include "io/detail/chunk_parser.hpp"

#include "io/detail/fastx_parser.hpp"
#include "io/detail/memory_input.hpp"

namespace qmer::io::detail {

chunk_outcome parse_chunk(std::string_view first, std::string_view second, bool fastq, bool last,
                          std::string const& failure, record_batch& batch) {
    using step = fastx_parser::step;
    memory_input input(first, second, last ? failure : std::string());
    fastx_parser parser(input, fastq);
    size_t resume = 0;  // where the record after the last whole one starts
    for (;;) {
        step const got = parser.next(batch);
        if (!last && input.overran()) {
            bool const stopped_cleanly =
                got == step::end || (got == step::record && !fastq && parser.ran_to_end());
            if (!stopped_cleanly) {
                if (got == step::record) batch.pop_back();
                return {chunk_outcome::ending::incomplete, resume, {}};
            }
        }
        switch (got) {
            case step::record:
                resume = parser.resume_offset();
                break;
            case step::end:
                return {chunk_outcome::ending::whole, 0, {}};
            case step::bad:
                return {chunk_outcome::ending::bad, 0, parser.problem()};
        }
    }
}

}  // namespace qmer::io::detail
