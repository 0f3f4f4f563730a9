#pragma once
// One `qmer index` run as its kind's build or append sees it (filter_codec<K>::build and ::append,
// app/filters/kinds/): the options, the threads, the memory limit, the progress meter, where
// scratch files go, and the scratch copies of references that cannot be read twice.

#include <memory>
#include <string>
#include <vector>

#include "app/common/progress.hpp"
#include "app/index/build_report.hpp"
#include "app/index/memory_plan.hpp"
#include "app/index/options.hpp"
#include "app/index/reference_reading.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {

struct index_build {
    index_options& options;  // read_from names the scratch copies once they are made
    unsigned threads;
    build_memory memory;
    progress_meter& progress;
    std::string scratch_folder;  // --temp-dir, else the index's folder
    std::vector<std::unique_ptr<io::spill_file>> copies;

    reference_pass pass(reference_set const& refs) const { return {refs, threads, progress}; }
    build_origin origin() const { return {options.command_line, options.references}; }
    // Stdin and pipes copied to scratch files, for builds that read the references twice.
    void copy_what_cannot_be_read_twice() {
        app::copy_what_cannot_be_read_twice(options, scratch_folder, copies, progress);
    }
};

}  // namespace qmer::app
