#pragma once
// What `qmer merge` needs, filled by the command line (app/cli.cpp) and read by run_merge().

#include <string>
#include <vector>

namespace qmer::app {

struct merge_options {
    // Panel tables (`qmer query -x ... -o T.tsv[.gz]`) of the same reads against different
    // indexes, in the order their columns go.
    std::vector<std::string> tables;
    std::string output = "-";  // the joint TSV
    std::string summary;       // the joint JSON summary, optional
    bool quiet = false;
};

void run_merge(merge_options const& options);

}  // namespace qmer::app
