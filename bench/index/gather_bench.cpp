// Throughput of the default build's reading pass on one core, in bases per second
// (items_per_second): what each thread of `qmer index` does to a large reference before the table
// is sized (app/index/superkmer_bins.hpp). On bench/kmer's ~10 Mbp pseudo-random sequence
// (bench/kmer/bench_sequence.hpp), built once:
//   super_kmers/K        canonical k-mers and their minimizers cut into super-k-mers (runs
//                        sharing a minimizer), summed (bench/kmer's minimizers/K: the same uncut)
//   super_kmers_hash/K   and every k-mer's plain hash (kmer_hasher), summed
//   super_kmers_count/K  and every k-mer's plain hash into a HyperLogLog (counting every k-mer,
//                        against which the sampled count of gather/K/B is weighed)
//   gather_uncounted/K/B superkmer_bins::add without a count: the records written to 2^B bins in
//                        memory (a build gathers into 2^10 to 2^12: 2^12 from ~2^32 k-mers)
//   gather/K/B           the same with the build's count (the k-mers of one minimizer in eight,
//                        core/sketch/group_sampled_count.hpp): the reading pass itself, less the
//                        parsing
// bench/index/README.md has the command and results.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "app/index/superkmer_bins.hpp"
#include "bench/kmer/bench_sequence.hpp"
#include "core/kmer/hash.hpp"
#include "core/kmer/minimizer.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/sketch/group_sampled_count.hpp"
#include "core/sketch/hyperloglog.hpp"

namespace {

using qmer::bench::bench_sequence;
using qmer::bench::set_counters;

qmer::minimizer_scanner scanner_for(benchmark::State const& state) {
    auto const k = static_cast<unsigned>(state.range(0));
    return {k, qmer::locality_minimizer_length(k), 0x5EED};
}

// The super-k-mers of seq, their fields summed (runs cut at k + 1 k-mers, as the build cuts
// them); each(canonical) for every k-mer.
template <typename Each>
uint64_t summed_super_kmers(qmer::minimizer_scanner const& scanner, std::string const& seq,
                            Each&& each) {
    uint64_t sum = 0;
    scanner.for_each_super_kmer(
        seq,
        [&](uint64_t first, uint64_t last, unsigned n, uint64_t minimizer) {
            sum += (first ^ last ^ minimizer) + n;
        },
        scanner.k() + 1, each);
    return sum;
}

void super_kmers(benchmark::State& state) {
    auto const scanner = scanner_for(state);
    for (auto _ : state)
        benchmark::DoNotOptimize(summed_super_kmers(scanner, bench_sequence(), [](uint64_t) {}));
    set_counters(state);
}

void super_kmers_hash(benchmark::State& state) {
    auto const scanner = scanner_for(state);
    qmer::kmer_hasher const hasher(scanner.seed());
    for (auto _ : state) {
        uint64_t hashes = 0;
        benchmark::DoNotOptimize(summed_super_kmers(
            scanner, bench_sequence(), [&](uint64_t canonical) { hashes += hasher(canonical); }));
        benchmark::DoNotOptimize(hashes);
    }
    set_counters(state);
}

void super_kmers_count(benchmark::State& state) {
    auto const scanner = scanner_for(state);
    qmer::kmer_hasher const hasher(scanner.seed());
    for (auto _ : state) {
        qmer::sketch::hyperloglog counter;
        benchmark::DoNotOptimize(
            summed_super_kmers(scanner, bench_sequence(),
                               [&](uint64_t canonical) { counter.add(hasher(canonical)); }));
        benchmark::DoNotOptimize(counter.estimate());
    }
    set_counters(state);
}

// superkmer_bins::add over the sequence, with `counter` if given.
void gather_with(benchmark::State& state, qmer::sketch::group_sampled_count* counter) {
    std::string const& seq = bench_sequence();
    auto const scanner = scanner_for(state);
    // Address space for every iteration's records (~23 MB each); only the pages written are
    // taken, fresh ones as in a build.
    qmer::app::superkmer_bins bins(
        scanner, static_cast<unsigned>(state.range(1)), uint64_t{16} << 30,
        std::filesystem::temp_directory_path().string(), 32 << 20, counter);
    for (auto _ : state) benchmark::DoNotOptimize(bins.add(seq));
    set_counters(state);
}

void gather_uncounted(benchmark::State& state) {
    gather_with(state, nullptr);
}

void gather(benchmark::State& state) {
    qmer::sketch::group_sampled_count counter;
    gather_with(state, &counter);
    benchmark::DoNotOptimize(counter.estimate());
}

BENCHMARK(super_kmers)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(super_kmers_hash)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(super_kmers_count)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(gather_uncounted)
    ->Args({31, 8})
    ->Args({31, 9})
    ->Args({31, 10})
    ->Args({31, 11})
    ->Args({31, 12})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(gather)->Args({31, 10})->Args({31, 12})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
