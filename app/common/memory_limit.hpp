#pragma once
// --max-memory: the most memory an index build may take before it stops with a clear message,
// rather than push the machine into swap. The default is a share of the memory the process can
// have: physical RAM, or the cgroup's limit when it runs in a container or a cluster job.

#include <cstdint>
#include <string>

namespace qmer::app {

inline constexpr double default_memory_share = 0.8;

// "16G", "500M", "1.5T", "4096" (bytes); K/M/G/T are powers of 1024. Throws usage_error.
uint64_t parse_memory_size(std::string const& text);
// min(physical RAM, the tightest memory limit of this process's cgroup and its ancestors), in
// bytes: a container's or a cluster job's limit is below the machine's RAM.
uint64_t available_memory_bytes();
// What this process could still take without swapping or meeting a cgroup's limit, in bytes: the
// kernel's MemAvailable, and for each cgroup from this process's up to the root that sets a limit,
// that limit less its working set (usage less reclaimable inactive file pages).
uint64_t free_memory_bytes();
// The limit for `requested` ("" = default share of available memory).
uint64_t memory_limit(std::string const& requested);

}  // namespace qmer::app
