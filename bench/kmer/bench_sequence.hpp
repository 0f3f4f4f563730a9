#pragma once
// The sequence the k-mer and build-pass benchmarks walk (bench/kmer, bench/index): ~10 Mbp of
// pseudo-random bases (a quarter lowercase) with about one N run of 1-100 bases per 100 kb, as in
// assembled references; built once per program, the same in every program.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

namespace qmer::bench {

inline std::string const& bench_sequence() {
    static std::string const seq = [] {
        constexpr size_t length = 10'000'000;
        std::mt19937_64 rng(42);
        std::string s(length, 'A');
        for (char& c : s) c = "ACGTACGTACGTacgt"[rng() & 15];
        for (size_t start = rng() % 100'000; start < s.size(); start += 50'000 + rng() % 100'000) {
            size_t const run = 1 + rng() % 100;
            for (size_t i = start; i < start + run && i < s.size(); ++i) s[i] = 'N';
        }
        return s;
    }();
    return seq;
}

// Bases (and bytes) per second for a benchmark that walks bench_sequence() once an iteration.
inline void set_counters(benchmark::State& state) {
    auto const bases = static_cast<int64_t>(bench_sequence().size());
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * bases);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bases);
}

}  // namespace qmer::bench
