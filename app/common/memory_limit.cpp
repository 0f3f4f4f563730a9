#include "app/common/memory_limit.hpp"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <fstream>

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

uint64_t available_memory_bytes() {
    long const pages = ::sysconf(_SC_PHYS_PAGES);
    long const page = ::sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && page > 0
                         ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                         : UINT64_MAX;
    // cgroup v2, then v1: a container's or a cluster job's limit is below the machine's RAM.
    for (char const* file :
         {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(file);
        std::string value;
        if (in >> value && !value.empty() && std::isdigit(static_cast<unsigned char>(value[0]))) {
            uint64_t const cgroup = std::stoull(value);
            if (cgroup > 0 && cgroup < limit) limit = cgroup;
        }
    }
    return limit;
}

uint64_t memory_limit(std::string const& requested) {
    if (!requested.empty()) return parse_memory_size(requested);
    return static_cast<uint64_t>(static_cast<double>(available_memory_bytes()) *
                                 default_memory_share);
}

}  // namespace qmer::app
