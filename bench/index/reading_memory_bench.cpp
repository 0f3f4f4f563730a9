// The memory the default build's reading pass holds on T threads, with T threads really running
// (a TBB arena whose concurrency global_control lets past the cores: oversubscribed on a small
// machine, so the times say little, the memory all). Each T runs in a child process of its own
// (a fresh peak RSS): the one read of a large build (count_and_gather,
// app/index/reference_census.hpp) over REFERENCE into super-k-mer bins in memory, as `qmer index`
// does it.
//
// usage: index_reading_memory_bench REFERENCE [T ...]   (T: 1 2 8 16 32 if none given)
//
// Prints CSV, one line per T:
//   threads           T asked for
//   ran               distinct threads that ran the arena's tasks (T, or the test is void)
//   seconds           the reading's wall time (oversubscribed: not a speed)
//   peak_rss_mib      VmHWM at the end of the reading (the build's peak is there or in the fill)
//   anon_mib          RssAnon at the end of the reading
//   store_mib         what the bins hold at the end of the reading, by their own account
//                     (superkmer_bins::held_bytes: records, open buffers, staging lines)
//   records_mib       what they hold once flushed and packed (the records themselves)
//   fill_peak_mib     VmHWM after the crowded windows are marked and the bins sorted into a
//                     sink that keeps nothing (the table 2^26 slots; the index file, which a
//                     build writes meanwhile, is page cache), on T threads; a build on
//                     more than one thread writes through a level writer per thread besides
//                     (about 0.5 MiB each)
//   fill_seconds      the marking and the fill's wall time
//   fingerprints      how many the fill handed over, and their sum (hex): the same for every T
//
// cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DQMER_BUILD_BENCH=ON
// cmake --build build/release -j2 --target index_reading_memory_bench
// build/release/bench/index_reading_memory_bench bench/scaling/work/model/ref.fa 1 2 8 16 32

#include <sys/wait.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "app/common/progress.hpp"
#include "app/index/reference_census.hpp"
#include "app/index/superkmer_bins.hpp"
#include "core/kmer/sequence_hashing.hpp"

namespace {

// A field of /proc/self/status in MiB (its value is in kB).
double status_mib(std::string const& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field + ":", 0) == 0)
            return std::strtod(line.c_str() + field.size() + 1, nullptr) / 1024;
    return -1;
}

// How many threads run an arena's tasks at once: T tasks that each wait until all T started
// (bounded: a thread that never came leaves the count short).
unsigned threads_running(tbb::task_arena& arena, unsigned threads) {
    std::mutex m;
    std::set<std::thread::id> ids;
    std::atomic<unsigned> started{0};
    arena.execute([&] {
        tbb::task_group g;
        for (unsigned i = 0; i < threads; ++i)
            g.run([&] {
                started.fetch_add(1);
                auto const until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
                while (started.load() < threads && std::chrono::steady_clock::now() < until)
                    std::this_thread::yield();
                std::lock_guard lock(m);
                ids.insert(std::this_thread::get_id());
            });
        g.wait();
    });
    return static_cast<unsigned>(ids.size());
}

void measure(std::string const& reference, unsigned threads) {
    using namespace qmer::app;
    tbb::global_control const allow(tbb::global_control::max_allowed_parallelism, threads);
    tbb::task_arena arena(static_cast<int>(threads));
    unsigned const ran = threads_running(arena, threads);
    reference_set refs{{reference}, {reference}, 31, false};
    progress_meter progress("bench", true);
    reference_pass const pass{refs, threads, progress};
    build_counts counts;
    gathering how;
    how.seed = 0;
    how.memory_limit = uint64_t{8} << 30;
    how.scratch_folder = std::filesystem::temp_directory_path().string();
    how.streamed_level = true;
    // About the default filter's 14.4 bits a k-mer.
    how.table_bytes_for = [](uint64_t kmers) { return kmers * 2; };
    // 2^10 bins, as qmer gathers a reference of this size into.
    how.guessed_fingerprint_bits = 40;
    std::unique_ptr<superkmer_bins> bins;
    auto const start = std::chrono::steady_clock::now();
    arena.execute([&] { (void)count_and_gather(pass, how, counts, bins); });
    double const seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double const peak = status_mib("VmHWM");
    double const anon = status_mib("RssAnon");
    double const store = static_cast<double>(bins->held_bytes()) / (1 << 20);
    bins->finish_reading();
    double const records = static_cast<double>(bins->held_bytes()) / (1 << 20);
    // The fill, as the counted build runs it: the marks, then every bin sorted on T threads.
    qmer::qf::geometry const g = qmer::qf::geometry::with_slots(uint64_t{1} << 26, 9);
    unsigned const bits = qmer::locality_window_bits(g.canonical_slots());
    qmer::local_kmer_hashing const unmarked(31, 0, qmer::locality_minimizer_length(31), bits, {},
                                            qmer::level_window_extra_bits);
    bins->set_table(unmarked, g);
    overloaded_windows marks;
    marks.bits.assign(((uint64_t{1} << bits) + 63) / 64, 0);
    uint64_t fingerprints = 0, sum = 0;
    auto const fill_start = std::chrono::steady_clock::now();
    arena.execute([&] {
        bins->mark(marks, qmer::overload_threshold(g.canonical_slots(), bits));
        (void)bins->append_to(
            [&](std::span<uint64_t const> fps) {
                fingerprints += fps.size();
                for (uint64_t const fp : fps) sum += fp;
                return fps.size();
            },
            marks, threads);
    });
    double const fill_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - fill_start).count();
    if (fingerprints == 0) std::fprintf(stderr, "the fill handed over nothing\n");
    std::printf("%u,%u,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f,%llu,%llx\n", threads, ran, seconds, peak,
                anon, store, records, status_mib("VmHWM"), fill_seconds,
                static_cast<unsigned long long>(fingerprints),
                static_cast<unsigned long long>(sum));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s REFERENCE [THREADS ...]\n", argv[0]);
        return 2;
    }
    std::vector<unsigned> counts;
    for (int i = 2; i < argc; ++i) counts.push_back(static_cast<unsigned>(std::atoi(argv[i])));
    if (counts.empty()) counts = {1, 2, 8, 16, 32};
    std::printf(
        "threads,ran,seconds,peak_rss_mib,anon_mib,store_mib,records_mib,fill_peak_mib,"
        "fill_seconds,fingerprints,sum\n");
    std::fflush(stdout);
    for (unsigned const t : counts) {
        // A child per count, forked before this process starts any thread: its own peak RSS.
        pid_t const child = ::fork();
        if (child == 0) {
            measure(argv[1], t);
            std::_Exit(0);
        }
        int status = 0;
        if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "the run with %u threads failed\n", t);
            return 1;
        }
    }
    return 0;
}
