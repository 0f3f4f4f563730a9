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
//
// Per k-mer, on 20,000 reads of 150 bp (k = 31, m = 20; argument 0: random ACGT, 1: the same with
// an N run of 1-10 bases in half of the reads), items_per_second counting k-mers and per_kmer the
// time of one (what the query pays on reads absent from the index):
//   reads_scan            canonical k-mers only (kmer_scanner)
//   reads_minimizers      canonical k-mers and their minimizers (minimizer_scanner)
//   reads_local           the minimizer-local hashes (local_kmer_hashing::for_each, 2^20 windows,
//                         about 1% overloaded)
//   reads_hashes_only     minimizer_spread, kmer_hasher and the combine of the local hash over
//                         k-mers and minimizers scanned beforehand: the hashes' share
//   reads_batch_local/L   the same hashes as reads_local, core/kmer/batch_hashing.hpp on path L
//                         (0 the rolling scan a block at a time, 1 AVX-512), 64 k-mer starts a
//                         block
//   reads_plain, reads_batch_plain/L   the plain scheme (kmer_hasher of each k-mer), likewise

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/kmer/bench_sequence.hpp"
#include "core/kmer/batch_hashing.hpp"
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

std::vector<std::string> make_reads(bool with_n_runs) {
    std::mt19937_64 rng(7);
    std::vector<std::string> reads(20'000, std::string(150, 'A'));
    for (auto& read : reads) {
        for (char& c : read) c = "ACGT"[rng() & 3];
        if (with_n_runs && rng() % 2 == 0) {
            size_t const start = rng() % 150, run = 1 + rng() % 10;
            for (size_t i = start; i < start + run && i < 150; ++i) read[i] = 'N';
        }
    }
    return reads;
}

// The reads of the per-k-mer benchmarks: with_n_runs = false, random ACGT; true, the same reads
// with an N run in half of them.
std::vector<std::string> const& bench_reads(bool with_n_runs) {
    static std::vector<std::string> const reads[2] = {make_reads(false), make_reads(true)};
    return reads[with_n_runs];
}

constexpr unsigned reads_k = 31;

size_t reads_kmers(bool with_n_runs) {
    size_t n = 0;
    for (auto const& read : bench_reads(with_n_runs)) n += qmer::count_valid_kmers(read, reads_k);
    return n;
}

// K-mers per second, and the time of one k-mer.
void set_kmer_counters(benchmark::State& state, size_t kmers) {
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kmers));
    state.counters["per_kmer"] = benchmark::Counter(
        static_cast<double>(kmers),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// 2^20 windows, about 1% of them overloaded (the build marks ~0.5% on random sequence).
std::vector<uint64_t> const& bench_marks() {
    static std::vector<uint64_t> const marks = [] {
        std::mt19937_64 rng(3);
        std::vector<uint64_t> m((uint64_t{1} << 20) / 64);
        for (auto& w : m)
            for (int b = 0; b < 64; ++b) w |= uint64_t{rng() % 100 == 0} << b;
        return m;
    }();
    return marks;
}

qmer::local_kmer_hashing reads_hashing() {
    return qmer::local_kmer_hashing(reads_k, 0x5EED, qmer::locality_minimizer_length(reads_k), 20,
                                    bench_marks(), qmer::level_window_extra_bits);
}

void reads_scan(benchmark::State& state) {
    bool const n_runs = state.range(0) != 0;
    qmer::kmer_scanner const scanner(reads_k);
    for (auto _ : state) {
        uint64_t sum = 0;
        for (auto const& read : bench_reads(n_runs))
            scanner.for_each(read, [&](uint64_t canonical, size_t) { sum += canonical; });
        benchmark::DoNotOptimize(sum);
    }
    set_kmer_counters(state, reads_kmers(n_runs));
}

void reads_minimizers(benchmark::State& state) {
    bool const n_runs = state.range(0) != 0;
    qmer::minimizer_scanner const scanner(reads_k, qmer::locality_minimizer_length(reads_k),
                                          0x5EED);
    for (auto _ : state) {
        uint64_t sum = 0;
        for (auto const& read : bench_reads(n_runs))
            scanner.for_each(read, [&](uint64_t canonical, uint64_t minimizer) {
                sum += canonical ^ minimizer;
            });
        benchmark::DoNotOptimize(sum);
    }
    set_kmer_counters(state, reads_kmers(n_runs));
}

// The rolling scan's hashes of every read, summed.
template <typename Hashing>
void scan_sum(benchmark::State& state, Hashing const& hashing) {
    bool const n_runs = state.range(0) != 0;
    for (auto _ : state) {
        uint64_t sum = 0;
        for (auto const& read : bench_reads(n_runs))
            hashing.for_each(read, [&](uint64_t h) { sum += h; });
        benchmark::DoNotOptimize(sum);
    }
    set_kmer_counters(state, reads_kmers(n_runs));
}

void reads_local(benchmark::State& state) {
    scan_sum(state, reads_hashing());
}

void reads_hashes_only(benchmark::State& state) {
    bool const n_runs = state.range(0) != 0;
    auto const hashing = reads_hashing();
    std::vector<uint64_t> kmers, minimizers;
    for (auto const& read : bench_reads(n_runs))
        hashing.scanner().for_each(read, [&](uint64_t canonical, uint64_t minimizer) {
            kmers.push_back(canonical);
            minimizers.push_back(minimizer);
        });
    uint64_t const* const marks = bench_marks().data();
    for (auto _ : state) {
        uint64_t sum = 0;
        for (size_t i = 0; i < kmers.size(); ++i) {
            uint64_t const spread = qmer::minimizer_spread(minimizers[i]);
            uint64_t const window = hashing.window_of(spread);
            sum += ((marks[window / 64] >> (window % 64)) & 1)
                       ? hashing.plain_hash(kmers[i])
                       : hashing.local_hash(kmers[i], spread);
        }
        benchmark::DoNotOptimize(sum);
    }
    set_kmer_counters(state, kmers.size());
}

template <typename Hashing>
void batch_sum(benchmark::State& state, Hashing const& hashing) {
    bool const n_runs = state.range(1) != 0;
    auto const level = static_cast<qmer::simd_level>(state.range(0));
    if (!qmer::simd_level_supported(level)) {
        state.SkipWithError("this CPU lacks the path");
        return;
    }
    qmer::batch_kmer_hashing const batch(hashing, level);
    uint64_t block[qmer::batch_kmer_hashing::block_kmers];
    for (auto _ : state) {
        uint64_t sum = 0;
        for (auto const& read : bench_reads(n_runs)) {
            for (size_t first = 0; first + reads_k <= read.size();
                 first += qmer::batch_kmer_hashing::block_kmers) {
                size_t const n =
                    batch.hash_block(read, first, qmer::batch_kmer_hashing::block_kmers, block);
                for (size_t i = 0; i < n; ++i) sum += block[i];
            }
        }
        benchmark::DoNotOptimize(sum);
    }
    set_kmer_counters(state, reads_kmers(n_runs));
}

void reads_batch_local(benchmark::State& state) {
    batch_sum(state, reads_hashing());
}

void reads_plain(benchmark::State& state) {
    scan_sum(state, qmer::plain_kmer_hashing(reads_k, 0x5EED));
}

void reads_batch_plain(benchmark::State& state) {
    batch_sum(state, qmer::plain_kmer_hashing(reads_k, 0x5EED));
}

BENCHMARK(encode_only)->Unit(benchmark::kMillisecond);
BENCHMARK(scan)->Arg(21)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(scan_hash)->Arg(21)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(count)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(minimizers)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(local_hash)->Arg(31)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_scan)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_minimizers)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_local)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_hashes_only)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_batch_local)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(reads_plain)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(reads_batch_plain)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
