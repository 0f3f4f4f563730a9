// Lookup cost against the fill: the concurrent layout's lock-free query (the locally locked table
// read without locks, contains_final: it walks back to its cluster start) and the rank-and-select
// layout `qmer query` answers from since index format 3 (core/qf/stored/block_format.hpp: offsets
// per block of up to 64 slots), on the same fingerprints, at 50% to 95% of the same canonical
// slots. A documented harness, not Google Benchmark: the tables must be filled first, and both
// layouts run in one process, interleaved, so their ratios compare like with like on a shared
// machine.
//
// Lookups are batched as the query pipeline batches k-mers (app/pipeline/kmer_batches.hpp): each
// key is prefetched 8 keys before it is looked up. Present keys are drawn at random from those
// stored; absent keys were never stored. Beside them, the memory limit of this table size: the
// same batching of one 8-byte load at a random position of an array as large as the rank-select
// table ("limit"), what a lookup that costs one cache miss would cost. Each measurement is
// repeated 3 times, rotating over the subjects, and the fastest counts.
//
// Keys are splitmix64 of a counter (bench/qf/harness.hpp). One thread. Usage:
//   qf_lookup_fill_bench [--q 26] [--r 11] [--queries 2000000] [--csv FILE]
//   qf_lookup_fill_bench --limit-bytes N [--queries 20000000]
// The second form prints only the memory limit for an array of N bytes on huge pages (ns per
// batched random 8-byte load, fastest of 3): what bench/scale compares its per-k-mer costs with.

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "bench/qf/harness.hpp"
#include "core/qf/concurrent/freeze_thaw.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/stored/table.hpp"

namespace {

using namespace qmer;
using namespace qmer::bench;

constexpr size_t distance = 8;

// Words on transparent huge pages (2 MiB aligned, madvise), zeroed.
class huge_words {
  public:
    explicit huge_words(size_t n) : bytes_((n * 8 + (2u << 20) - 1) / (2u << 20) * (2u << 20)) {
        p_ = static_cast<uint64_t*>(std::aligned_alloc(2u << 20, bytes_));
        if (p_ == nullptr) throw std::bad_alloc();
        (void)madvise(p_, bytes_, MADV_HUGEPAGE);
        std::memset(p_, 0, bytes_);
        size_ = n;
    }
    ~huge_words() { std::free(p_); }
    huge_words(huge_words const&) = delete;
    huge_words& operator=(huge_words const&) = delete;
    uint64_t* data() noexcept { return p_; }
    uint64_t const* data() const noexcept { return p_; }
    size_t size() const noexcept { return size_; }

  private:
    size_t bytes_, size_ = 0;
    uint64_t* p_ = nullptr;
};

// ns per lookup of `keys` through prefetch(k) ... distance keys later ... probe(k); the found
// count goes to `found`.
template <typename Prefetch, typename Probe>
double batched_ns(std::vector<uint64_t> const& keys, Prefetch&& prefetch, Probe&& probe,
                  size_t& found) {
    asm volatile("" : : : "memory");
    auto const t0 = clock_type::now();
    size_t hits = 0;
    size_t const n = keys.size();
    for (size_t i = 0; i < n; ++i) {
        prefetch(keys[i]);
        if (i >= distance) hits += probe(keys[i - distance]);
    }
    for (size_t i = n >= distance ? n - distance : 0; i < n; ++i) hits += probe(keys[i]);
    // The count must exist before the clock is read: without this GCC may move the lookups past it.
    asm volatile("" : "+r"(hits) : : "memory");
    double const s = seconds_since(t0);
    found = hits;
    return s * 1e9 / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
    unsigned q = 26, r = 11;
    size_t queries = 2000000;
    std::string csv_path;
    size_t limit_bytes = 0;
    for (int i = 1; i < argc; ++i) {
        std::string const a = argv[i];
        auto next = [&] { return i + 1 < argc ? argv[++i] : (std::exit(2), argv[0]); };
        if (a == "--q")
            q = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--r")
            r = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--queries")
            queries = std::strtoull(next(), nullptr, 10);
        else if (a == "--csv")
            csv_path = next();
        else if (a == "--limit-bytes")
            limit_bytes = std::strtoull(next(), nullptr, 10);
        else {
            std::fprintf(stderr, "usage: %s [--q Q] [--r R] [--queries N] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    if (limit_bytes != 0) {
        huge_words array(limit_bytes / 8);
        for (size_t i = 0; i < array.size(); ++i) array.data()[i] = i;
        std::vector<uint64_t> positions(queries);
        for (size_t i = 0; i < queries; ++i) positions[i] = mix(i) % array.size();
        double best = 1e18;
        size_t found = 0;
        uint64_t const* base = array.data();
        for (int rep = 0; rep < 3; ++rep)
            best = std::min(best, batched_ns(
                                      positions, [&](uint64_t p) { prefetch_for_read(base + p); },
                                      [&](uint64_t p) { return base[p] == 42; }, found));
        std::printf("limit_bytes,limit_ns\n%zu,%.2f\n", limit_bytes, best);
        return 0;
    }
    qf::geometry const g{q, r};
    double const fills[] = {0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95};
    size_t const max_n = static_cast<size_t>(fills[std::size(fills) - 1] * g.canonical_slots());
    // Every key's fingerprint with its index, sorted once: a fill's table is the first n keys.
    std::vector<std::pair<uint64_t, uint32_t>> by_fp(max_n);
    for (size_t i = 0; i < max_n; ++i)
        by_fp[i] = {g.fingerprint(present_key(i)), static_cast<uint32_t>(i)};
    std::sort(by_fp.begin(), by_fp.end());

    std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    auto row = [&](char const* fmt, auto... v) {
        std::printf(fmt, v...);
        if (csv) std::fprintf(csv, fmt, v...);
    };
    row("fill,layout,present_ns,absent_ns,limit_ns,table_bytes\n");
    std::printf("# q=%u r=%u, %zu present + %zu absent lookups per measurement, 1 thread\n", q, r,
                queries, queries);
    std::vector<uint64_t> fps;
    for (double fill : fills) {
        size_t const n = static_cast<size_t>(fill * static_cast<double>(g.canonical_slots()));
        fps.clear();
        for (auto const& [fp, i] : by_fp)
            if (i < n) fps.push_back(fp);
        qf::locally_locked_filter ll(g);
        qf::locally_locked_filter::sorted_append_state st;
        if (ll.append_sorted(fps, st) != fps.size()) {
            std::fprintf(stderr, "table overflow at fill %.2f\n", fill);
            return 1;
        }
        // The rank-select words on 2 MiB huge pages, as qmer query holds them (and as the
        // concurrent table's own allocation asks for): the layouts then pay the same TLB costs.
        size_t const n_words = qf::rank_select_shape_of(ll).words();
        huge_words rs_words(n_words);
        size_t filled = 0;
        qf::write_rank_select(ll, [&](std::span<uint64_t const> c) {
            std::copy(c.begin(), c.end(), rs_words.data() + filled);
            filled += c.size();
        });
        qf::rank_select_table const rs(qf::rank_select_shape_of(ll),
                                       std::span<uint64_t const>(rs_words.data(), n_words),
                                       ll.size());
        std::vector<uint64_t> present(queries), absent(queries), positions(queries);
        for (size_t i = 0; i < queries; ++i) {
            present[i] = present_key(mix(i * 7 + 3) % n);
            absent[i] = absent_key(i);
            positions[i] = mix(i) % rs_words.size();
        }
        // The rank-select lookup with the select qmer query picks on this CPU (pdep where it is
        // in hardware), and with the broadword select every CPU has.
        bool const pdep = qf::rank_select::pdep_is_fast();
        auto rs_query = [&](uint64_t h) {
            return pdep ? rs.contains<qf::rank_select::pdep_select>(h) : rs.contains(h);
        };
        auto rs_broadword = [&](uint64_t h) { return rs.contains(h); };
        std::array<double, 3> best_present{1e18, 1e18, 1e18}, best_absent{1e18, 1e18, 1e18};
        double best_limit = 1e18;
        for (int rep = 0; rep < 3; ++rep) {
            size_t found = 0;
            // The concurrent layout, read as contains_final reads it.
            best_present[0] = std::min(
                best_present[0], batched_ns(
                                     present, [&](uint64_t h) { ll.prefetch(h); },
                                     [&](uint64_t h) { return ll.contains_final(h); }, found));
            if (found != queries) return std::fprintf(stderr, "false negative (concurrent)\n"), 1;
            best_absent[0] = std::min(best_absent[0],
                                      batched_ns(
                                          absent, [&](uint64_t h) { ll.prefetch(h); },
                                          [&](uint64_t h) { return ll.contains_final(h); }, found));
            auto rs_prefetch = [&](uint64_t h) { rs.prefetch(h); };
            best_present[1] =
                std::min(best_present[1], batched_ns(present, rs_prefetch, rs_query, found));
            if (found != queries) return std::fprintf(stderr, "false negative (rank-select)\n"), 1;
            best_absent[1] =
                std::min(best_absent[1], batched_ns(absent, rs_prefetch, rs_query, found));
            if (pdep) {
                best_present[2] = std::min(best_present[2],
                                           batched_ns(present, rs_prefetch, rs_broadword, found));
                if (found != queries)
                    return std::fprintf(stderr, "false negative (rank-select broadword)\n"), 1;
                best_absent[2] =
                    std::min(best_absent[2], batched_ns(absent, rs_prefetch, rs_broadword, found));
            }
            uint64_t const* base = rs_words.data();
            best_limit = std::min(best_limit,
                                  batched_ns(
                                      positions, [&](uint64_t p) { prefetch_for_read(base + p); },
                                      [&](uint64_t p) { return base[p] == 42; }, found));
        }
        row("%.2f,concurrent,%.2f,%.2f,%.2f,%zu\n", fill, best_present[0], best_absent[0],
            best_limit, ll.groups().size_bytes());
        row("%.2f,%s,%.2f,%.2f,%.2f,%zu\n", fill, pdep ? "rank-select-pdep" : "rank-select",
            best_present[1], best_absent[1], best_limit, rs_words.size() * sizeof(uint64_t));
        if (pdep)
            row("%.2f,rank-select,%.2f,%.2f,%.2f,%zu\n", fill, best_present[2], best_absent[2],
                best_limit, rs_words.size() * sizeof(uint64_t));
        std::fflush(stdout);
    }
    if (csv) std::fclose(csv);
    return 0;
}
