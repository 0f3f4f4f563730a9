// Throughput of the canonical k-mer scanner on one core, in bases per second (items_per_second).
//
// All variants walk the same ~10 Mbp pseudo-random sequence (a few N runs, some lowercase), built
// once, so they differ only in the work per base:
//   encode_only    the floor: a plain loop that looks up each base's 2-bit code and sums the codes
//   scan/K         canonical k-mers, summed so the compiler cannot drop the loop
//   scan_hash/K    canonical k-mers hashed with XXH3 (kmer_hasher), hashes summed
//   count/K        count_valid_kmers, what a query computes as "k-mers scanned"
//   minimizers/K   canonical k-mers with their minimizers (minimizer_scanner, m for k as qmer
//                  index picks it), both summed
//   local_hash/K   the minimizer-local scheme's hashes (local_kmer_hashing, 2^20 windows, none
//                  overloaded), summed: what a query of a minimizer-local index computes per k-mer
// bench/kmer/README.md gives the ratios to encode_only, all measured in one run of this program.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "bench/kmer/bench_sequence.hpp"
#include "core/kmer/encoding.hpp"
#include "core/kmer/hash.hpp"
#include "core/kmer/scanner.hpp"
#include "core/kmer/sequence_hashing.hpp"

namespace {

using qmer::bench::bench_sequence;
using qmer::bench::set_counters;

void encode_only(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    for (auto _ : state) {
        uint64_t sum = 0;
        for (char c : seq) sum += qmer::encode_base(c);
        benchmark::DoNotOptimize(sum);
    }
    set_counters(state);
}

void scan(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    qmer::kmer_scanner const scanner(static_cast<unsigned>(state.range(0)));
    for (auto _ : state) {
        uint64_t sum = 0;
        scanner.for_each(seq, [&](uint64_t canonical, size_t) { sum += canonical; });
        benchmark::DoNotOptimize(sum);
    }
    set_counters(state);
}

void scan_hash(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    qmer::kmer_scanner const scanner(static_cast<unsigned>(state.range(0)));
    qmer::kmer_hasher const hasher{0x5EED};
    for (auto _ : state) {
        uint64_t sum = 0;
        scanner.for_each(seq, [&](uint64_t canonical, size_t) { sum += hasher(canonical); });
        benchmark::DoNotOptimize(sum);
    }
    set_counters(state);
}

void count(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    qmer::kmer_scanner const scanner(static_cast<unsigned>(state.range(0)));
    for (auto _ : state) {
        size_t n = scanner.count(seq);
        benchmark::DoNotOptimize(n);
    }
    set_counters(state);
}

void minimizers(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    auto const k = static_cast<unsigned>(state.range(0));
    qmer::minimizer_scanner const scanner(k, qmer::locality_minimizer_length(k), 0x5EED);
    for (auto _ : state) {
        uint64_t sum = 0;
        scanner.for_each(
            seq, [&](uint64_t canonical, uint64_t minimizer) { sum += canonical ^ minimizer; });
        benchmark::DoNotOptimize(sum);
    }
    set_counters(state);
}

void local_hash(benchmark::State& state) {
    std::string const& seq = bench_sequence();
    auto const k = static_cast<unsigned>(state.range(0));
    qmer::local_kmer_hashing const hashing(k, 0x5EED, qmer::locality_minimizer_length(k), 20, {});
    for (auto _ : state) {
        uint64_t sum = 0;
        hashing.for_each(seq, [&](uint64_t h) { sum += h; });
        benchmark::DoNotOptimize(sum);
    }
    set_counters(state);
}

BENCHMARK(encode_only)->Unit(benchmark::kMillisecond);
BENCHMARK(scan)->Arg(21)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(scan_hash)->Arg(21)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(count)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(minimizers)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(local_hash)->Arg(31)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
