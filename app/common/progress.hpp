#pragma once
// Progress and the closing statistics line on stderr. core/ never prints: the pipelines hand their
// counts here. Live progress is shown only when stderr is a terminal (a log file or a Snakemake log
// gets the single closing line), and not at all with --quiet.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace qmer::app {

class progress_meter {
  public:
    progress_meter(std::string what, bool quiet);

    // Called from the serial input stage after each batch; redraws at most a few times a second.
    void update(uint64_t records, uint64_t bases);
    // Clears the live line and prints: "[qmer index] 10000 records, 1.2 Mbp in 0.31 s wall,
    // 0.58 s CPU, peak RSS 45.2 MiB" plus `extra` (unless quiet).
    void finish(std::string const& extra = "");

    double elapsed_seconds() const;

  private:
    std::string what_;
    bool quiet_;
    bool live_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
    uint64_t records_ = 0;
    uint64_t bases_ = 0;
};

// Process CPU time (user + system) in seconds, and peak resident set size in bytes.
double cpu_seconds();
uint64_t peak_rss_bytes();
// "1.23 Mbp", "45.2 MiB", ... for human-readable lines.
std::string human_count(double value, char const* unit);
std::string human_bytes(double bytes);

}  // namespace qmer::app
