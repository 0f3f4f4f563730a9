// Throughput of io::sequence_reader against a minimal kseq.h loop over bgzf_read (the baseline the
// reader is built on, ARCHITECTURE.md "Dependencies"), on the same FASTQ file, plain and gzip, in
// the same process. Goal: the reader within 10% of the loop (bench/io/README.md).
//
// And the stages of io::chunked_reader on the same plain file, in the same run:
// chunk_cut is the serial input stage alone (reading the text and cutting it into chunks), the
// most any number of parsing threads can be fed; chunk_parse is one thread parsing chunks (the
// cutting before each chunk left out of the timing), what each parsing thread adds;
// chunked_one_thread is the three stages in one thread, against sequence_reader.
//
// The input is ~200 MB of 150 bp reads, generated on first use (never committed):
//   QMER_BENCH_FASTQ (default /tmp/qmer_reader_bench.fq) and the same path + ".gz" (plain gzip,
//   written by htslib's BGZF writer in "wg" mode).
// After the runs, the program prints ratio lines: reader time / kseq time (medians of the
// repetitions, CPU and wall clock, one thread), for the default 4 MB batch budget and for 256 KB
// (batches that stay in L2, see bench/io/README.md).

// kseq.h (through kseq_reader.hpp) first, as in io/detail/fastx_source.cpp (glibc's inline isspace
// is lost after libstdc++ headers): baseline and reader get the same kseq code, kseq.h's parser
// over qmer's line reader, so the ratio is what the reader adds to the parse (batches and checks).
#include "io/detail/kseq_reader.hpp"

#include <benchmark/benchmark.h>
#include <htslib/bgzf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "io/chunked_reader.hpp"
#include "io/sequence_reader.hpp"

namespace {

using bgzf_ptr = BGZF*;
int read_bgzf(bgzf_ptr fp, void* buf, int n) {
    return static_cast<int>(bgzf_read(fp, buf, n));
}
// In an anonymous namespace: io/detail/fastx_source.cpp instantiates kseq over another type.
QMER_KSEQ_INIT(bgzf_ptr, read_bgzf)

std::string fastq_path() {
    char const* env = std::getenv("QMER_BENCH_FASTQ");
    return env != nullptr ? env : "/tmp/qmer_reader_bench.fq";
}

// ~200 MB of 150 bp reads with a realistic mix: random bases, a few Ns, Illumina-like names and
// qualities. Written through BGZF: "wu" for plain text, "wg" for one gzip stream.
void write_fastq(std::string const& path, char const* mode) {
    BGZF* out = bgzf_open(path.c_str(), mode);
    if (out == nullptr) throw std::runtime_error("cannot write " + path);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    std::string record;
    size_t written = 0;
    for (uint64_t i = 0; written < (size_t{200} << 20); ++i) {
        record.assign("@SIM:1:FCX:1:");
        record.append(std::to_string(i)).append(" 1:N:0:ACGTAC\n");
        for (int b = 0; b < 150; ++b) {
            uint64_t const r = next();
            record.push_back(r % 500 == 0 ? 'N' : "ACGT"[(r >> 20) & 3]);
        }
        record.append("\n+\n");
        for (int b = 0; b < 150; ++b)
            record.push_back(static_cast<char>('#' + (next() >> 30) % 40));
        record.push_back('\n');
        if (bgzf_write(out, record.data(), record.size()) < 0) {
            throw std::runtime_error("write failed: " + path);
        }
        written += record.size();
    }
    if (bgzf_close(out) != 0) throw std::runtime_error("close failed: " + path);
}

std::string const& input(bool gzip) {
    static std::string const plain = [] {
        std::string const p = fastq_path();
        if (!std::filesystem::exists(p)) write_fastq(p, "wu");
        return p;
    }();
    static std::string const gz = [] {
        std::string const p = fastq_path() + ".gz";
        if (!std::filesystem::exists(p)) write_fastq(p, "wg");
        return p;
    }();
    return gzip ? gz : plain;
}

uint64_t plain_bytes_of_input() {
    return std::filesystem::file_size(input(false));
}

// The baseline: the smallest correct kseq loop, counting records and bases.
void kseq_loop(benchmark::State& state, bool gzip) {
    std::string const& path = input(gzip);
    uint64_t records = 0;
    for (auto _ : state) {
        BGZF* fp = bgzf_open(path.c_str(), "r");
        if (fp == nullptr) throw std::runtime_error("cannot open " + path);
        kseq_t* seq = kseq_init(fp);
        uint64_t bases = 0;
        records = 0;
        int length = 0;
        while ((length = kseq_read(seq)) >= 0) {
            bases += static_cast<uint64_t>(length);
            ++records;
        }
        if (length < -1) throw std::runtime_error("kseq error " + std::to_string(length));
        kseq_destroy(seq);
        bgzf_close(fp);
        benchmark::DoNotOptimize(bases);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plain_bytes_of_input()));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
}

// The reader, as the pipeline uses it: one batch object reused; budget 0 = the default (4 MB).
void sequence_reader(benchmark::State& state, bool gzip, size_t budget) {
    std::string const& path = input(gzip);
    uint64_t records = 0;
    qmer::io::record_batch batch;
    qmer::io::reader_options options;
    if (budget != 0) options.batch_bytes = budget;
    for (auto _ : state) {
        qmer::io::sequence_reader reader(path, options);
        uint64_t bases = 0;
        while (reader.next_batch(batch)) {
            for (qmer::io::sequence_record const r : batch) bases += r.sequence.size();
        }
        records = reader.records_read();
        benchmark::DoNotOptimize(bases);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plain_bytes_of_input()));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
}

// The chunked reader's input stage alone: the text read and cut, nothing parsed. The query's chunk
// size (1 MB batches: 2 MB chunks).
void chunk_cut(benchmark::State& state) {
    std::string const& path = input(false);
    qmer::io::text_chunk chunk;
    qmer::io::record_batch batch;
    size_t chunks = 0;
    for (auto _ : state) {
        qmer::io::chunked_reader reader(path, {.batch_bytes = size_t{1} << 20});
        chunks = 0;
        while (reader.cut(chunk, batch)) ++chunks;
    }
    state.counters["chunks"] = static_cast<double>(chunks);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plain_bytes_of_input()));
}

// One parsing thread: parse() of every chunk, timed alone (cut and settle paused).
void chunk_parse(benchmark::State& state) {
    std::string const& path = input(false);
    qmer::io::text_chunk chunk;
    qmer::io::record_batch batch;
    uint64_t records = 0;
    for (auto _ : state) {
        state.PauseTiming();
        qmer::io::chunked_reader reader(path, {.batch_bytes = size_t{1} << 20});
        for (;;) {
            if (!reader.cut(chunk, batch)) break;
            state.ResumeTiming();
            qmer::io::chunked_reader::parse(chunk, batch);
            state.PauseTiming();
            reader.settle(chunk, batch);
        }
        records = reader.records_read();
        state.ResumeTiming();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plain_bytes_of_input()));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
}

// The three stages in one thread: what chunking costs over sequence_reader where there is no
// second thread to parse.
void chunked_one_thread(benchmark::State& state) {
    std::string const& path = input(false);
    qmer::io::text_chunk chunk;
    qmer::io::record_batch batch;
    uint64_t records = 0;
    for (auto _ : state) {
        qmer::io::chunked_reader reader(path, {.batch_bytes = size_t{1} << 20});
        uint64_t bases = 0;
        while (reader.cut(chunk, batch)) {
            qmer::io::chunked_reader::parse(chunk, batch);
            reader.settle(chunk, batch);
            bases += batch.sequence_bytes();
        }
        records = reader.records_read();
        benchmark::DoNotOptimize(bases);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * plain_bytes_of_input()));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
}

// Keeps the median real time of each benchmark so main() can print the ratios.
class ratio_reporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(std::vector<Run> const& runs) override {
        for (Run const& run : runs) {
            if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
                real[run.run_name.function_name] = run.GetAdjustedRealTime();
                cpu[run.run_name.function_name] = run.GetAdjustedCPUTime();
            }
        }
        ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, double> real, cpu;
};

}  // namespace

// Baseline and reader alternate per file so that drifting machine load hits both alike.
BENCHMARK_CAPTURE(kseq_loop, plain, false)->Unit(benchmark::kMillisecond)->Repetitions(5);
BENCHMARK_CAPTURE(sequence_reader, plain, false, 0)->Unit(benchmark::kMillisecond)->Repetitions(5);
BENCHMARK_CAPTURE(sequence_reader, plain_256k, false, 256 << 10)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5);
BENCHMARK_CAPTURE(sequence_reader, plain_1m, false, 1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5);
BENCHMARK(chunk_cut)->Unit(benchmark::kMillisecond)->Repetitions(5);
BENCHMARK(chunk_parse)->Unit(benchmark::kMillisecond)->Repetitions(5);
BENCHMARK(chunked_one_thread)->Unit(benchmark::kMillisecond)->Repetitions(5);
BENCHMARK_CAPTURE(kseq_loop, gzip, true)->Unit(benchmark::kMillisecond)->Repetitions(3);
BENCHMARK_CAPTURE(sequence_reader, gzip, true, 0)->Unit(benchmark::kMillisecond)->Repetitions(3);

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    input(false);  // generate the files before any timing
    input(true);
    ratio_reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    struct pair {
        char const* reader;
        char const* baseline;
    };
    for (pair const p : {pair{"sequence_reader/plain", "kseq_loop/plain"},
                         pair{"sequence_reader/plain_256k", "kseq_loop/plain"},
                         pair{"sequence_reader/gzip", "kseq_loop/gzip"},
                         pair{"chunk_cut", "sequence_reader/plain_1m"},
                         pair{"chunk_parse", "sequence_reader/plain_1m"},
                         pair{"chunked_one_thread", "sequence_reader/plain_1m"}}) {
        if (reporter.cpu.count(p.reader) != 0 && reporter.cpu.count(p.baseline) != 0) {
            std::printf("ratio %s / %s: CPU time %.3f, wall time %.3f (medians)\n", p.reader,
                        p.baseline, reporter.cpu[p.reader] / reporter.cpu[p.baseline],
                        reporter.real[p.reader] / reporter.real[p.baseline]);
        }
    }
    benchmark::Shutdown();
    return 0;
}
