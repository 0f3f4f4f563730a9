#pragma once
// The -t option: how many threads a command uses, applied to TBB for the command's lifetime.

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>

namespace qmer::app {

// 0 means all cores the process may use (cgroup/affinity aware, as TBB counts them).
inline unsigned resolve_threads(unsigned requested) {
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
