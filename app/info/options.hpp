#pragma once
// What `qmer info` needs, filled by the command line (app/cli.cpp) and read by run_info().

#include <string>

namespace qmer::app {

struct info_options {
    std::string index;
    bool json = false;
};

void run_info(info_options const& options);

}  // namespace qmer::app
