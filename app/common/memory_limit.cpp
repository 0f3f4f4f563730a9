#include "app/common/memory_limit.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace qmer::app {

uint64_t parse_memory_size(std::string const& text) {
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (std::exception const&) {
        used = 0;
    }
    std::string unit = text.substr(used);
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!unit.empty() && unit.back() == 'B') unit.pop_back();
    if (unit.size() == 2 && unit[1] == 'I') unit.pop_back();  // GiB, MiB
    double scale = 0;
    if (unit.empty())
        scale = 1;
    else if (unit == "K")
        scale = 0x1p10;
    else if (unit == "M")
        scale = 0x1p20;
    else if (unit == "G")
        scale = 0x1p30;
    else if (unit == "T")
        scale = 0x1p40;
    if (used == 0 || scale == 0 || !(value > 0) || !std::isfinite(value * scale))
        throw usage_error("--max-memory '" + text + "' is not a size (examples: 16G, 500M)");
    return static_cast<uint64_t>(value * scale);
}

namespace {

// The first number in `file`, or nullopt ("max", missing file, anything else).
std::optional<uint64_t> number_in(std::filesystem::path const& file) {
    std::ifstream in(file);
    std::string value;
    if (!(in >> value) || value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])))
        return std::nullopt;
    return std::stoull(value);
}

// The value of `key` in a "key value" file such as memory.stat; 0 when absent.
uint64_t stat_value(std::filesystem::path const& file, std::string_view key) {
    std::ifstream in(file);
    std::string name;
    uint64_t value = 0;
    while (in >> name >> value)
        if (name == key) return value;
    return 0;
}

// A memory limit set on this process's cgroup or one of its ancestors, and what that cgroup uses
// now (its working set: usage less inactive file pages, which the kernel reclaims first).
struct cgroup_limit {
    uint64_t limit;
    uint64_t working_set;
};

// Every limit from this process's cgroup up to the root, v2 (the unified hierarchy, "0::/path")
// or v1 (the memory controller's own hierarchy). A cluster job's limit sits on its own cgroup,
// not on the root, so the path is read from /proc/self/cgroup.
std::vector<cgroup_limit> cgroup_limits() {
    std::vector<cgroup_limit> out;
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
        size_t const first = line.find(':');
        size_t const second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        std::string_view const controllers =
            std::string_view(line).substr(first + 1, second - first - 1);
        std::filesystem::path relative = line.substr(second + 1);
        bool const v2 = controllers.empty() && line.starts_with("0:");
        bool v1 = false;
        for (size_t at = 0; at <= controllers.size();) {
            size_t const end = std::min(controllers.find(',', at), controllers.size());
            v1 |= controllers.substr(at, end - at) == "memory";
            at = end + 1;
        }
        if (!v2 && !v1) continue;
        std::filesystem::path const root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        char const* const limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
        char const* const usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
        char const* const inactive = v2 ? "inactive_file" : "total_inactive_file";
        for (std::filesystem::path p = relative.relative_path();; p = p.parent_path()) {
            std::filesystem::path const dir = root / p;
            auto const limit = number_in(dir / limit_file);
            // v1 writes "no limit" as a page-rounded 2^63.
            if (limit && *limit < (uint64_t{1} << 62)) {
                uint64_t const usage = number_in(dir / usage_file).value_or(0);
                uint64_t const cold = stat_value(dir / "memory.stat", inactive);
                out.push_back({*limit, usage > cold ? usage - cold : 0});
            }
            if (p.empty()) break;
        }
    }
    return out;
}

}  // namespace

uint64_t available_memory_bytes() {
    long const pages = ::sysconf(_SC_PHYS_PAGES);
    long const page = ::sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && page > 0
                         ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                         : UINT64_MAX;
    for (auto const& c : cgroup_limits()) limit = std::min(limit, c.limit);
    return limit;
}

uint64_t free_memory_bytes() {
    uint64_t free = UINT64_MAX;
    uint64_t const kib = stat_value("/proc/meminfo", "MemAvailable:");
    if (kib > 0) free = kib * 1024;
    for (auto const& c : cgroup_limits())
        free = std::min(free, c.limit > c.working_set ? c.limit - c.working_set : 0);
    return free == UINT64_MAX ? available_memory_bytes() : free;
}

uint64_t memory_limit(std::string const& requested) {
    if (!requested.empty()) return parse_memory_size(requested);
    return static_cast<uint64_t>(static_cast<double>(available_memory_bytes()) *
                                 default_memory_share);
}

}  // namespace qmer::app
