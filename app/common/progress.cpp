#include "app/common/progress.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace qmer::app {

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto const seconds = [](timeval t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
    return seconds(u.ru_utime) + seconds(u.ru_stime);
}

uint64_t peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string human_count(double value, char const* unit) {
    char const* prefixes[] = {"", "k", "M", "G", "T"};
    int p = 0;
    while (value >= 1000 && p < 4) {
        value /= 1000;
        ++p;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, p == 0 ? "%.0f %s%s" : "%.2f %s%s", value, prefixes[p], unit);
    return buf;
}

std::string human_bytes(double bytes) {
    char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

progress_meter::progress_meter(std::string what, bool quiet)
    : what_(std::move(what)),
      quiet_(quiet),
      live_(!quiet && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double progress_meter::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void progress_meter::update(uint64_t records, uint64_t bases) {
    records_ = records;
    bases_ = bases;
    if (!live_) return;
    auto const now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(250)) return;
    last_draw_ = now;
    double const t = elapsed_seconds();
    std::fprintf(stderr, "\r[%s] %s, %s, %s/s, %.0f s elapsed\x1b[K", what_.c_str(),
                 human_count(static_cast<double>(records), "records").c_str(),
                 human_count(static_cast<double>(bases), "bp").c_str(),
                 human_count(static_cast<double>(bases) / (t > 0 ? t : 1), "bp").c_str(), t);
    std::fflush(stderr);
}

void progress_meter::finish(std::string const& extra) {
    if (quiet_) return;
    if (live_) std::fputs("\r\x1b[K", stderr);
    std::fprintf(stderr, "[%s] %s, %s in %.2f s wall, %.2f s CPU, peak RSS %s%s%s\n", what_.c_str(),
                 human_count(static_cast<double>(records_), "records").c_str(),
                 human_count(static_cast<double>(bases_), "bp").c_str(), elapsed_seconds(),
                 cpu_seconds(), human_bytes(static_cast<double>(peak_rss_bytes())).c_str(),
                 extra.empty() ? "" : "; ", extra.c_str());
}

}  // namespace qmer::app
