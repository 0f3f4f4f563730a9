#include "app/index/options.hpp"
#include "core/error.hpp"

namespace qmer::app {

void run_index(index_options const&) {
    throw not_implemented_error("'qmer index' is not implemented yet");
}

}  // namespace qmer::app
