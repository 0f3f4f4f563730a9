#pragma once
// What the quotient filter benchmarks share: the key streams and the timed parallel run.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace qmer::bench {

using clock_type = std::chrono::steady_clock;

// splitmix64: a bijection, standing in for XXH3 hashes of k-mers. The key functions are inlined by
// force: in a loop body that holds a large inlined filter GCC may run out of inlining budget and
// call them (bench/filters/memory_limit_bench.cpp found a call per key in some of its loops),
// which would charge one filter a few ns per operation that another does not pay.
[[gnu::always_inline]] inline uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
// Inserted keys come from stream 1, absent ones from stream 2 (mix is a bijection: never equal).
[[gnu::always_inline]] inline uint64_t present_key(uint64_t i) {
    return mix((uint64_t{1} << 40) | i);
}
[[gnu::always_inline]] inline uint64_t absent_key(uint64_t i) {
    return mix((uint64_t{2} << 40) | i);
}

inline double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Runs body(thread, begin, end) over [0, n) split into `threads` slices, all threads released at
// once; returns the wall time from release to the last join.
template <typename Body>
double run_parallel(unsigned threads, size_t n, Body body) {
    std::atomic<bool> go{false};
    std::atomic<unsigned> ready{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            size_t const begin = n * t / threads, end = n * (t + 1) / threads;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            body(t, begin, end);
        });
    }
    while (ready.load() < threads) std::this_thread::yield();
    auto const t0 = clock_type::now();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    return seconds_since(t0);
}

}  // namespace qmer::bench
