#include "app/query/options.hpp"
#include "core/error.hpp"

namespace qmer::app {

void run_query(query_options const&) {
    throw not_implemented_error("'qmer query' is not implemented yet");
}

}  // namespace qmer::app
