#pragma once
// The -t option: how many threads a command uses, applied to TBB for the command's lifetime.

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace qmer::app {

// -t: the most threads a command takes. Each thread keeps two batches in flight (a few MB each), so
// -t 100000000 would ask for 2e8 batches and run out of memory instead of starting; 1024 is more
// than any machine qmer runs on has cores.
inline constexpr unsigned max_threads = 1024;

// 0 means all cores the process may use (cgroup/affinity aware, as TBB counts them).
inline unsigned resolve_threads(unsigned requested) {
    if (requested > max_threads)
        throw usage_error("-t " + std::to_string(requested) + ": at most " +
                          std::to_string(max_threads) + " threads");
    return requested != 0 ? requested
                          : static_cast<unsigned>(std::max(1, tbb::info::default_concurrency()));
}

class thread_limit {
  public:
    explicit thread_limit(unsigned threads)
        : threads_(threads), control_(tbb::global_control::max_allowed_parallelism, threads) {}
    unsigned threads() const noexcept { return threads_; }

  private:
    unsigned threads_;
    tbb::global_control control_;
};

}  // namespace qmer::app
