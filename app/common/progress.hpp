#pragma once
// Progress and the closing statistics line on stderr. core/ never prints: the pipelines hand their
// counts here. Live progress is shown only when stderr is a terminal (a log file or a Snakemake log
// gets the single closing line), and not at all with --quiet.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace qmer::app {

class progress_meter {
  public:
    // `timings`: the closing line is followed by one line per phase with its wall and CPU time
    // (qmer index --timings): CPU over wall is the parallelism the phase reached, so a phase
    // that keeps one core busy while the others wait shows as 1.0.
    progress_meter(std::string what, bool quiet, bool timings = false);

    // Called from the serial input stage after each batch; redraws at most a few times a second.
    // Within a phase, also advances the phase by `bases`; in a phase that re-reads the input
    // (counts_input false), the closing line's records and bases are left as they are.
    void update(uint64_t records, uint64_t bases);

    // A phase of a long command (qmer index: counting, reading k-mers, filling the table, writing),
    // drawn on a terminal as "[what] label: done of total unit (p%), rate, about T left": `total`
    // 0 when unknown (then only done and the rate), `estimated` when total is a guess (shown with
    // "~", and no time left is promised past it).
    void begin_phase(std::string label, double total, char const* unit, bool counts_input,
                     bool estimated = false);
    // Sets how much of the current phase is done (in its unit); redraws at most 4 times a second.
    void advance(double done);
    // Clears the live line and prints: "[qmer index] 10000 records, 1.2 Mbp in 0.31 s wall,
    // 0.58 s CPU, peak RSS 45.2 MiB" plus `extra` (unless quiet).
    void finish(std::string const& extra = "");

    double elapsed_seconds() const;

    // Adds to the current phase the seconds a serial stage worked (its one thread's time, not
    // waits): with timings, the phase's line shows it, the part of the phase more threads cannot
    // shorten. From the serial stage only.
    void add_serial(double seconds) noexcept { serial_ += seconds; }

  private:
    void draw_phase();
    void end_phase();  // records the current phase's times (with timings)

    struct phase_time {
        std::string label;
        double wall = 0, cpu = 0, serial = 0;
    };

    std::string what_;
    std::string phase_;  // "" outside phases: update() draws records and bases
    char const* phase_unit_ = "";
    double phase_total_ = 0;
    double phase_done_ = 0;
    bool phase_estimated_ = false;
    bool counts_input_ = true;
    std::chrono::steady_clock::time_point phase_start_;
    bool quiet_;
    bool live_;
    bool timings_;
    double phase_cpu_start_ = 0;
    std::vector<phase_time> phase_times_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
    uint64_t records_ = 0;
    uint64_t bases_ = 0;
    double serial_ = 0;  // the current phase's serial stage seconds (add_serial)
};

// Process CPU time (user + system) in seconds, and peak resident set size in bytes.
double cpu_seconds();
uint64_t peak_rss_bytes();
// "1.23 Mbp", "45.2 MiB", ... for human-readable lines.
std::string human_count(double value, char const* unit);
std::string human_bytes(double bytes);

}  // namespace qmer::app
