#include "app/info/options.hpp"
#include "core/error.hpp"

namespace qmer::app {

void run_info(info_options const&) {
    throw not_implemented_error("'qmer info' is not implemented yet");
}

}  // namespace qmer::app
