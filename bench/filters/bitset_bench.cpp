// The four-way comparison of the blog post "Write your own concurrent Java BitSet with blackjack
// and thread safety" of concurrent bit sets: lock-free (core/bitset/atomic_bitset.hpp)
// against one mutex, one read-write lock and striped read-write locks (bench/bitset/
// locked_bitsets.hpp). A documented harness, not Google Benchmark: all variants run in one process,
// interleaved round by round, so their ratios compare like with like on a shared machine.
//
// Workload (the post's mixed getters and setters): T threads (1, 2, 8) each run `ops` operations on
// uniformly random bits, alternating get and set (50/50), on a small set (1,024 bits = 16 words:
// every thread hits the same cache lines, the post's contended case) and a large one (2^24 bits =
// 2 MiB: little contention, memory-bound). Each configuration runs 3 rounds; the fastest counts.
// Prints CSV rows filter,threads,fill_or_n,op,mops,bits_per_element,fpr (fill_or_n = bits in the
// set; the last two columns are empty here) plus a ratio to the lock-free set, to stdout and to
// --csv FILE. Usage: filters_bitset_bench [--ops N] [--csv FILE]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bitset/locked_bitsets.hpp"
#include "core/bitset/atomic_bitset.hpp"

namespace {

template <typename Set>
double run_mixed(Set& set, size_t bits, unsigned threads, size_t ops) {
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::atomic<uint64_t> sink{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            uint64_t x = 0x9e3779b97f4a7c15ULL * (t + 1);
            uint64_t hits = 0;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            for (size_t i = 0; i < ops; ++i) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                size_t const bit = static_cast<size_t>(x >> 11) % bits;
                if (i & 1)
                    set.set(bit);
                else
                    hits += set.get(bit);
            }
            sink.fetch_add(hits);
        });
    while (ready.load() < threads) std::this_thread::yield();
    auto const start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    double const s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<double>(ops) * threads / s / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    size_t ops = 4000000;
    std::string csv_path;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--ops") && i + 1 < argc)
            ops = std::stoull(argv[++i]);
        else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--ops N] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    char const* names[] = {"bitset-lockfree", "bitset-mutex", "bitset-rwlock", "bitset-striped"};
    std::string out = "filter,threads,fill_or_n,op,mops,bits_per_element,fpr,vs_lockfree\n";
    std::fputs(out.c_str(), stdout);
    for (size_t bits : {size_t{1024}, size_t{1} << 24}) {
        for (unsigned threads : {1u, 2u, 8u}) {
            size_t const per_thread = ops / threads;
            double best[4] = {0, 0, 0, 0};
            for (int round = 0; round < 3; ++round) {
                {
                    qmer::atomic_bitset s(bits);
                    best[0] = std::max(best[0], run_mixed(s, bits, threads, per_thread));
                }
                {
                    qmer::bench::mutex_bitset s(bits);
                    best[1] = std::max(best[1], run_mixed(s, bits, threads, per_thread));
                }
                {
                    qmer::bench::rwlock_bitset s(bits);
                    best[2] = std::max(best[2], run_mixed(s, bits, threads, per_thread));
                }
                {
                    qmer::bench::striped_bitset s(bits);
                    best[3] = std::max(best[3], run_mixed(s, bits, threads, per_thread));
                }
            }
            for (int v = 0; v < 4; ++v) {
                char line[256];
                std::snprintf(line, sizeof line, "%s,%u,%zu,mixed_get_set,%.2f,,,%.3f\n", names[v],
                              threads, bits, best[v], best[v] / best[0]);
                std::fputs(line, stdout);
                std::fflush(stdout);
                out += line;
            }
        }
    }
    if (!csv_path.empty()) {
        std::ofstream f(csv_path);
        f << out;
        if (!f.flush()) {
            std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
            return 1;
        }
    }
    return 0;
}
