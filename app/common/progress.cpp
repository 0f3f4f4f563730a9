#include "app/common/progress.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
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
    std::string out = buf;
    // A count with neither prefix nor unit ("999") ends at its number: the caller adds the space.
    if (out.back() == ' ') out.pop_back();
    return out;
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

progress_meter::progress_meter(std::string what, bool quiet, bool timings)
    : what_(std::move(what)),
      phase_start_(std::chrono::steady_clock::now()),
      quiet_(quiet),
      live_(!quiet && ::isatty(STDERR_FILENO)),
      timings_(timings && !quiet),
      phase_cpu_start_(timings_ ? cpu_seconds() : 0),
      start_(phase_start_),
      last_draw_(start_) {}

// The time from the last phase's start (or the command's, before the first phase: "setting up")
// to now.
void progress_meter::end_phase() {
    if (!timings_) return;
    auto const now = std::chrono::steady_clock::now();
    double const cpu = cpu_seconds();
    phase_times_.push_back({phase_.empty() ? std::string("setting up") : phase_,
                            std::chrono::duration<double>(now - phase_start_).count(),
                            cpu - phase_cpu_start_, serial_});
    phase_cpu_start_ = cpu;
    serial_ = 0;
}

double progress_meter::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void progress_meter::begin_phase(std::string label, double total, char const* unit,
                                 bool counts_input, bool estimated) {
    end_phase();
    phase_ = std::move(label);
    phase_unit_ = unit;
    phase_total_ = total;
    phase_done_ = 0;
    phase_estimated_ = estimated;
    counts_input_ = counts_input;
    phase_start_ = std::chrono::steady_clock::now();
    if (live_) draw_phase();  // a phase without steps (writing) still says what is happening
}

void progress_meter::advance(double done) {
    phase_done_ = done;
    if (!live_) return;
    auto const now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(250)) return;
    draw_phase();
}

// "[qmer index] reading k-mers: 1.20 Gbp of 2.40 Gbp (50%), 31.2 Mbp/s, about 38 s left"; a phase
// without a unit shows its share only: "[qmer index] filling the table: 25%, about 12 s left".
void progress_meter::draw_phase() {
    last_draw_ = std::chrono::steady_clock::now();
    double const t = std::chrono::duration<double>(last_draw_ - phase_start_).count();
    bool const counted = *phase_unit_ != '\0';
    double const shown = std::max(phase_total_, phase_done_);
    std::string line = "\r[";
    line.append(what_).append("] ").append(phase_);
    if (counted && (phase_done_ > 0 || phase_total_ > 0))
        line.append(": ").append(human_count(phase_done_, phase_unit_));
    if (phase_total_ > 0 && (counted || phase_done_ > 0)) {
        char share[32];
        std::snprintf(share, sizeof share, "%.0f%%", 100 * phase_done_ / shown);
        if (counted)
            line.append(" of ")
                .append(phase_estimated_ ? "~" : "")
                .append(human_count(shown, phase_unit_))
                .append(" (")
                .append(share)
                .append(")");
        else
            line.append(": ").append(share);
    }
    if (t > 0.5 && phase_done_ > 0) {
        if (counted)
            line.append(", ").append(human_count(phase_done_ / t, phase_unit_)).append("/s");
        if (phase_total_ > phase_done_) {
            double const left = t * (phase_total_ - phase_done_) / phase_done_;
            char eta[48];
            if (left < 90)
                std::snprintf(eta, sizeof eta, ", about %.0f s left", left);
            else
                std::snprintf(eta, sizeof eta, ", about %.0f min %02.0f s left",
                              std::floor(left / 60), std::floor(std::fmod(left, 60.0)));
            line.append(eta);
        }
    }
    line.append("\x1b[K");
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
}

void progress_meter::update(uint64_t records, uint64_t bases) {
    if (counts_input_) {
        records_ = records;
        bases_ = bases;
    }
    if (!phase_.empty()) {
        advance(static_cast<double>(bases));
        return;
    }
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
    if (!timings_) return;
    end_phase();
    phase_ = "";
    for (auto const& p : phase_times_) {
        std::fprintf(stderr, "[%s] %-52s %8.3f s wall %8.3f s CPU  %5.2f cores", what_.c_str(),
                     (p.label + ":").c_str(), p.wall, p.cpu, p.wall > 0 ? p.cpu / p.wall : 0.0);
        if (p.serial > 0) std::fprintf(stderr, "  %.3f s serial", p.serial);
        std::fputc('\n', stderr);
    }
}

}  // namespace qmer::app
