// The input floor of bench/peers/run.sh: decompress and parse FASTA/FASTQ records with the smallest
// kseq.h loop over bgzf_read (what qmer's reader is built on, ARCHITECTURE.md "Dependencies"),
// doing nothing else with them. A screening tool cannot be faster than this on the same file, so
// every query time in the summary is also shown as a multiple of it. The loop parses with qmer's
// own line reader (io/detail/kseq_reader.hpp: kseq.h's parser, memchr for line ends): with kseq.h's
// byte-at-a-time one, qmer's reader would be faster than its floor, which would then bound nothing.
//
// Not a *_bench.cpp on purpose: run.sh compiles it with g++ against htslib, outside CMake, so the
// benchmark runs from a fresh clone without building the whole project's bench/ folder.
//
// usage: kseq_floor [-t THREADS] FILE...
//   -t N > 1 gives htslib N decompression threads (bgzf_mt); that only helps BGZF input, since
//   one gzip stream can only be inflated serially.
// Prints one line per file: path, records, bases.

// kseq.h (through kseq_reader.hpp) before any C++ standard header: glibc's inline isspace() is lost
// after libstdc++'s headers (bench/io/README.md has the cost), and qmer's reader includes it the
// same way.
#include "io/detail/kseq_reader.hpp"

#include <htslib/bgzf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using bgzf_ptr = BGZF*;
int read_bgzf(bgzf_ptr fp, void* buf, int n) {
    return static_cast<int>(bgzf_read(fp, buf, static_cast<size_t>(n)));
}
QMER_KSEQ_INIT(bgzf_ptr, read_bgzf)

}  // namespace

int main(int argc, char** argv) {
    int threads = 1;
    int first = 1;
    if (argc > 2 && std::strcmp(argv[1], "-t") == 0) {
        threads = std::atoi(argv[2]);
        first = 3;
    }
    if (first >= argc || threads < 1) {
        std::fprintf(stderr, "usage: kseq_floor [-t THREADS] FILE...\n");
        return 2;
    }
    for (int i = first; i < argc; ++i) {
        BGZF* fp = bgzf_open(argv[i], "r");
        if (fp == nullptr) {
            std::fprintf(stderr, "kseq_floor: cannot open %s\n", argv[i]);
            return 3;
        }
        // bgzf_mt only parallelises BGZF blocks; on a plain gzip stream htslib keeps one thread.
        if (threads > 1 && bgzf_mt(fp, threads, 256) != 0) {
            std::fprintf(stderr, "kseq_floor: bgzf_mt failed on %s\n", argv[i]);
            return 1;
        }
        kseq_t* seq = kseq_init(fp);
        uint64_t records = 0;
        uint64_t bases = 0;
        int len = 0;
        while ((len = kseq_read(seq)) >= 0) {
            ++records;
            bases += static_cast<uint64_t>(len);
        }
        // -1 is a clean end of file; -2 a truncated quality line, -3 a read error.
        int const status = len;
        kseq_destroy(seq);
        bgzf_close(fp);
        if (status < -1) {
            std::fprintf(stderr, "kseq_floor: parse error %d in %s\n", status, argv[i]);
            return 3;
        }
        std::printf("%s\t%llu\t%llu\n", argv[i], static_cast<unsigned long long>(records),
                    static_cast<unsigned long long>(bases));
    }
    return 0;
}
