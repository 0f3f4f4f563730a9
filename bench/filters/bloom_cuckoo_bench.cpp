// The Bloom filters and the cuckoo filter of qmer side by side with a blog post's pending-map Bloom
// filter (bench/bloom/pending_map_bloom.hpp), at the same false-positive rate. A documented
// harness, not Google Benchmark: each filter must be filled before its queries are timed, and all
// filters run in one process so their ratios compare like with like on a shared machine.
//
// Setup: n = 90% of 2^21 = 1,887,436 distinct keys (splitmix64 of a counter: uniformly random, as
// XXH3 of k-mers is to a filter; --quick: n / 16). The cuckoo filter gets 2^19 buckets (2^21 slots,
// so it runs at 90% load); its analytic FPR there (~0.18%) is the target p the three Bloom filters
// are sized for with expected n. For T = 1 and 2 threads and each filter, fresh: T threads insert
// the n keys (disjoint slices), then T threads query all n keys (successful; a false negative
// aborts the run) and n fresh keys (unsuccessful; their positives are the measured FPR). Queries
// are timed 3 times, the fastest counts. bits_per_element = memory_bytes() * 8 / n.
//
// Output: CSV rows filter,threads,fill_or_n,op,mops,bits_per_element,fpr (+ vs_pending, the ratio
// to the pending-map baseline at the same T and op) to stdout and --csv FILE. Usage:
// filters_bloom_cuckoo_bench [--quick] [--csv FILE]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bloom/pending_map_bloom.hpp"
#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/qf/baseline/external_locks.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace {

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Runs body(begin, end) on T threads over [0, n) and returns the wall seconds.
double parallel(unsigned threads, size_t n, std::function<void(size_t, size_t)> const& body) {
    std::vector<std::thread> pool;
    auto const start = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
    for (auto& th : pool) th.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct result {
    double insert = 0, hit = 0, miss = 0, bits_per_element = 0, fpr = 0;
};

template <typename F>
result measure(F& f, unsigned threads, std::vector<uint64_t> const& present,
               std::vector<uint64_t> const& absent) {
    size_t const n = present.size();
    result r;
    std::atomic<size_t> full{0};
    double const ins = parallel(threads, n, [&](size_t b, size_t e) {
        size_t local = 0;
        for (size_t i = b; i < e; ++i) local += f.insert(present[i]) == qmer::insert_result::full;
        full.fetch_add(local);
    });
    if (full.load() != 0) {
        std::fprintf(stderr, "error: %zu inserts answered full\n", full.load());
        std::exit(1);
    }
    r.insert = static_cast<double>(n) / ins / 1e6;
    double best_hit = 1e30, best_miss = 1e30;
    std::atomic<size_t> misses{0}, positives{0};
    for (int rep = 0; rep < 3; ++rep) {
        misses = 0;
        positives = 0;
        best_hit = std::min(best_hit, parallel(threads, n, [&](size_t b, size_t e) {
                                size_t local = 0;
                                for (size_t i = b; i < e; ++i) local += !f.contains(present[i]);
                                misses.fetch_add(local);
                            }));
        best_miss = std::min(best_miss, parallel(threads, absent.size(), [&](size_t b, size_t e) {
                                 size_t local = 0;
                                 for (size_t i = b; i < e; ++i) local += f.contains(absent[i]);
                                 positives.fetch_add(local);
                             }));
        if (misses.load() != 0) {
            std::fprintf(stderr, "error: %zu false negatives\n", misses.load());
            std::exit(1);
        }
    }
    r.hit = static_cast<double>(n) / best_hit / 1e6;
    r.miss = static_cast<double>(absent.size()) / best_miss / 1e6;
    r.fpr = static_cast<double>(positives.load()) / static_cast<double>(absent.size());
    r.bits_per_element = static_cast<double>(f.memory_bytes()) * 8 / static_cast<double>(n);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string csv_path;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick"))
            quick = true;
        else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    uint64_t const buckets = uint64_t{1} << (quick ? 15 : 19);
    size_t const n = static_cast<size_t>(0.9 * static_cast<double>(buckets * 4));
    std::vector<uint64_t> present(n), absent(n);
    for (size_t i = 0; i < n; ++i) present[i] = mix(i), absent[i] = mix((uint64_t{1} << 40) + i);
    double const p = qmer::cuckoo_filter(buckets, 0).fpr_after(n);
    unsigned qf_q = 1;
    while (std::ldexp(0.9, static_cast<int>(qf_q)) < static_cast<double>(n)) ++qf_q;
    double const qf_fill = static_cast<double>(n) / std::ldexp(1.0, static_cast<int>(qf_q));
    unsigned qf_r = 1;
    while (qf_fill * std::ldexp(1.0, -static_cast<int>(qf_r)) > p) ++qf_r;
    unsigned lp_r = 1;
    while (qmer::qf::linear_probing::corollary1_fpr(lp_r, qf_fill) > p) ++lp_r;

    std::string out = "filter,threads,fill_or_n,op,mops,bits_per_element,fpr,vs_pending\n";
    std::fputs(out.c_str(), stdout);
    std::fprintf(stderr, "n = %zu, target p = %.5f\n", n, p);
    for (unsigned threads : {1u, 2u}) {
        std::vector<std::pair<std::string, result>> rows;
        {
            qmer::bench::pending_map_bloom f(n, p);
            rows.emplace_back("pending-map-bloom", measure(f, threads, present, absent));
            std::fprintf(stderr, "pending-map-bloom: %zu compactions\n", f.compactions());
        }
        {
            qmer::bloom_filter f(n, p);
            rows.emplace_back("bloom", measure(f, threads, present, absent));
        }
        {
            qmer::blocked_bloom_filter f(n, p);
            rows.emplace_back("blocked-bloom", measure(f, threads, present, absent));
        }
        {
            qmer::cuckoo_filter f(buckets, 0);
            rows.emplace_back("cuckoo", measure(f, threads, present, absent));
        }
        // The quotient filters at the same p: 2^q slots at <= 90% fill, and the fewest remainder
        // bits whose FPR at that fill (section 2: fill * 2^-r; Corollary 1 for linear probing)
        // is at most p. The expandable filter sizes itself from (n, p) (Theorem 2).
        {
            qmer::qf::locally_locked_filter f(qf_q, qf_r);
            rows.emplace_back("locally-locked", measure(f, threads, present, absent));
        }
        {
            qmer::qf::external_locks_filter f(qf_q, qf_r);
            rows.emplace_back("external-locks", measure(f, threads, present, absent));
        }
        {
            qmer::qf::linear_probing f(qf_q, lp_r);
            rows.emplace_back("linear-probing", measure(f, threads, present, absent));
        }
        {
            qmer::qf::expandable_filter f(n, p);
            rows.emplace_back("expandable", measure(f, threads, present, absent));
        }
        result const& base = rows.front().second;
        for (auto const& [name, r] : rows) {
            for (auto [op, mops, ref] : {std::tuple{"insert", r.insert, base.insert},
                                         std::tuple{"query_hit", r.hit, base.hit},
                                         std::tuple{"query_miss", r.miss, base.miss}}) {
                char line[256];
                std::snprintf(line, sizeof line, "%s,%u,%zu,%s,%.3f,%.2f,%.5f,%.3f\n", name.c_str(),
                              threads, n, op, mops, r.bits_per_element, r.fpr, mops / ref);
                std::fputs(line, stdout);
                out += line;
            }
        }
        std::fflush(stdout);
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
