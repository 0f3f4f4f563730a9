// Super-k-mer locality (bench/qf/LOCALITY.md): the plain and the minimizer-local hash schemes
// (core/kmer/sequence_hashing.hpp) on the same references, in one process. A documented harness,
// not Google Benchmark: the tables must be built first and both schemes run interleaved.
//
// References, generated with a fixed seed (nothing is downloaded):
//   random      uniform random bases;
//   repetitive  the same length, 45% of it mutated copies of 40 repeat units of 300 bases (10%
//               of the bases changed per copy, Alu-like families), 5% microsatellites (copies of
//               a 2-6 base motif with 5% changes), the rest random.
// For each reference and scheme the k-mers are hashed as `qmer index` hashes them (windows with
// more than 2.5x their slots in distinct fingerprints marked overloaded), their
// fingerprints placed into a table of m0 = distinct / 0.95 canonical slots at r = 11 (the default
// index's level 0) and written in the rank-select layout on huge pages, as `qmer query` holds it.
// Reads of 150 bases are cut from the reference at random, half reverse complemented, with 0.5%
// substitutions ("near" reads: the k-mers covering an error are near the index); "absent" reads
// are random sequence.
//
// Reported per reference and scheme:
//   overloaded    the share of windows marked overloaded (their k-mers hashed plainly)
//   max_shift     the largest distance from a fingerprint's canonical slot to where it is stored,
//                 mean_shift its mean (long runs from skewed minimizers show here)
//   max_run       the most fingerprints of one canonical slot
//   lines_near / lines_absent   distinct 64-byte blocks of the table a read's k-mers' canonical
//                 slots fall in, per read: the cache lines a query must fetch
//   ns_near / ns_absent          ns per k-mer of the query loop (scan, minimizers, hash,
//                 prefetch 8 ahead, rank-select lookup), one thread, fastest of 3
//   fpr_random    false positives per k-mer of the absent reads
//   fpr_near      false positives per k-mer of the near reads that is not in the reference (checked
//                 against the exact sorted k-mer set): the k-mers that share a minimizer with
//                 indexed ones
//
// Usage: qf_locality_bench [--bases 64000000] [--reads 200000] [--csv FILE]

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "app/pipeline/kmer_batches.hpp"
#include "bench/qf/harness.hpp"
#include "core/kmer/scanner.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/concurrent/freeze_thaw.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/stored/table.hpp"

namespace {

using namespace qmer;
using namespace qmer::bench;

constexpr unsigned k = 31;
constexpr unsigned remainder_bits = 11;
double fill = 0.95;
constexpr uint64_t seed = 0;

std::string random_bases(std::mt19937_64& rng, size_t n) {
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() & 3];
    return s;
}

void mutate(std::mt19937_64& rng, std::string& s, unsigned percent) {
    for (auto& c : s)
        if (rng() % 100 < percent) c = "ACGT"[rng() & 3];
}

std::string repetitive_reference(std::mt19937_64& rng, size_t n) {
    std::vector<std::string> units;
    for (int u = 0; u < 40; ++u) units.push_back(random_bases(rng, 300));
    std::string out;
    out.reserve(n + 1000);
    while (out.size() < n) {
        uint64_t const pick = rng() % 100;
        if (pick < 45) {
            std::string copy = units[rng() % units.size()];
            mutate(rng, copy, 10);
            out += copy;
        } else if (pick < 50) {
            std::string const motif = random_bases(rng, 2 + rng() % 5);
            std::string run;
            while (run.size() < 200) run += motif;
            mutate(rng, run, 5);
            out += run;
        } else {
            out += random_bases(rng, 300);
        }
    }
    out.resize(n);
    return out;
}

std::string reverse_complement(std::string s) {
    std::reverse(s.begin(), s.end());
    for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    return s;
}

// Reads cut from ref with 0.5% substitutions; errors[i][j] marks base j of read i as changed.
std::vector<std::string> near_reads(std::mt19937_64& rng, std::string const& ref, size_t n,
                                    std::vector<std::vector<uint8_t>>& errors) {
    std::vector<std::string> reads;
    for (size_t i = 0; i < n; ++i) {
        std::string r = ref.substr(rng() % (ref.size() - 150), 150);
        std::vector<uint8_t> changed(150, 0);
        for (size_t j = 0; j < r.size(); ++j)
            if (rng() % 1000 < 5) {
                r[j] = "ACGT"[(std::string("ACGT").find(r[j]) + 1 + rng() % 3) & 3];
                changed[j] = 1;
            }
        if (i % 2) {
            r = reverse_complement(r);
            std::reverse(changed.begin(), changed.end());
        }
        reads.push_back(r);
        errors.push_back(changed);
    }
    return reads;
}

// Words on transparent huge pages, as qmer query reads an index.
struct huge_words {
    explicit huge_words(size_t n) : bytes((n * 8 + (2u << 20) - 1) / (2u << 20) * (2u << 20)) {
        p = static_cast<uint64_t*>(std::aligned_alloc(2u << 20, bytes));
        if (p == nullptr) throw std::bad_alloc();
        (void)madvise(p, bytes, MADV_HUGEPAGE);
        std::memset(p, 0, bytes);
    }
    ~huge_words() { std::free(p); }
    huge_words(huge_words const&) = delete;
    huge_words& operator=(huge_words const&) = delete;
    size_t bytes;
    uint64_t* p;
};

struct result {
    double overloaded = 0, mean_shift = 0;
    uint64_t max_shift = 0, max_run = 0;
    double lines_near = 0, lines_absent = 0, ns_near = 1e18, ns_absent = 1e18;
    double ns_hash = 1e18;
    double fpr_random = 0, fpr_near = 0;
    uint64_t near_absent_kmers = 0;
    double bits_per_kmer = 0;
};

template <typename Hashing>
void hash_all(Hashing const& hashing, std::string const& seq, std::vector<uint64_t>& out) {
    hashing.for_each(seq, [&](uint64_t h) { out.push_back(h); });
}

// One scheme on one reference.
template <typename Hashing>
result measure(Hashing const& hashing, std::string const& ref, uint64_t distinct,
               std::vector<std::string> const& near,
               std::vector<std::vector<uint8_t>> const& errors,
               std::vector<std::string> const& absent, std::vector<uint64_t> const& exact,
               double overloaded_share) {
    result res;
    res.overloaded = overloaded_share;
    qf::geometry const g = qf::geometry::with_slots(
        static_cast<uint64_t>(static_cast<double>(distinct) / fill), remainder_bits);
    std::vector<uint64_t> fps;
    fps.reserve(ref.size());
    hashing.for_each(ref, [&](uint64_t h) { fps.push_back(g.fingerprint(h)); });
    std::sort(fps.begin(), fps.end());
    fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
    // Where sorted placement puts each fingerprint: the first free slot at or after its quotient.
    uint64_t next_free = 0, run = 0, prev_q = ~uint64_t{0};
    double shift_sum = 0;
    for (uint64_t fp : fps) {
        uint64_t const q = fp >> remainder_bits;
        uint64_t const at = std::max(q, next_free);
        next_free = at + 1;
        res.max_shift = std::max(res.max_shift, at - q);
        shift_sum += static_cast<double>(at - q);
        run = q == prev_q ? run + 1 : 1;
        prev_q = q;
        res.max_run = std::max(res.max_run, run);
    }
    res.mean_shift = shift_sum / static_cast<double>(fps.size());

    qf::locally_locked_filter ll(g, g.canonical_slots() + g.canonical_slots() / 8 + 1024, {});
    qf::locally_locked_filter::sorted_append_state st;
    if (ll.append_sorted(fps, st) != fps.size()) {
        std::fprintf(stderr, "table overflow\n");
        std::exit(1);
    }
    auto const shape = qf::rank_select_shape_of(ll);
    huge_words words(shape.words());
    size_t filled = 0;
    qf::write_rank_select(ll, [&](std::span<uint64_t const> c) {
        std::copy(c.begin(), c.end(), words.p + filled);
        filled += c.size();
    });
    qf::rank_select_table const table(shape, std::span<uint64_t const>(words.p, shape.words()),
                                      ll.size());
    res.bits_per_kmer =
        8.0 * static_cast<double>(table.memory_bytes()) / static_cast<double>(fps.size());
    uint64_t const block_slots = shape.block_slots();

    // Lines per read: distinct blocks of the reads' canonical slots.
    auto lines_per_read = [&](std::vector<std::string> const& reads) {
        uint64_t total = 0;
        std::vector<uint64_t> blocks;
        for (auto const& r : reads) {
            blocks.clear();
            hashing.for_each(r, [&](uint64_t h) { blocks.push_back(g.quotient(h) / block_slots); });
            std::sort(blocks.begin(), blocks.end());
            total +=
                static_cast<uint64_t>(std::unique(blocks.begin(), blocks.end()) - blocks.begin());
        }
        return static_cast<double>(total) / static_cast<double>(reads.size());
    };
    res.lines_near = lines_per_read(near);
    res.lines_absent = lines_per_read(absent);

    // The query loop, timed.
    auto timed = [&](std::vector<std::string> const& reads, uint64_t& kmers, uint64_t& hits) {
        kmers = hits = 0;
        auto const t0 = clock_type::now();
        for (auto const& r : reads)
            kmers += app::for_each_kmer_hash(table, hashing, r,
                                             [&](uint64_t h) { hits += table.contains(h); });
        asm volatile("" : "+r"(hits) : : "memory");
        return seconds_since(t0) * 1e9 / static_cast<double>(kmers);
    };
    auto timed_hash = [&](std::vector<std::string> const& reads) {
        uint64_t kmers = 0, sum = 0;
        auto const t0 = clock_type::now();
        for (auto const& r : reads)
            hashing.for_each(r, [&](uint64_t h) {
                sum += h;
                ++kmers;
            });
        asm volatile("" : "+r"(sum) : : "memory");
        return seconds_since(t0) * 1e9 / static_cast<double>(kmers);
    };
    for (int rep = 0; rep < 3; ++rep) {
        uint64_t kmers = 0, hits = 0;
        res.ns_hash = std::min(res.ns_hash, timed_hash(near));
        res.ns_near = std::min(res.ns_near, timed(near, kmers, hits));
        res.ns_absent = std::min(res.ns_absent, timed(absent, kmers, hits));
        res.fpr_random = static_cast<double>(hits) / static_cast<double>(kmers);
    }

    // Near k-mers: those of the near reads that cover an error and that the exact set lacks (a
    // k-mer covering no error is a substring of the reference).
    uint64_t near_absent = 0, near_false = 0;
    kmer_scanner const scanner(k);
    for (size_t ri = 0; ri < near.size(); ++ri) {
        auto const& r = near[ri];
        std::vector<uint64_t> hs;
        hash_all(hashing, r, hs);
        size_t i = 0;
        scanner.for_each(r, [&](uint64_t canon, size_t pos) {
            uint64_t const h = hs[i++];
            auto const& e = errors[ri];
            if (std::find(e.begin() + static_cast<long>(pos),
                          e.begin() + static_cast<long>(pos + k),
                          1) == e.begin() + static_cast<long>(pos + k))
                return;
            if (std::binary_search(exact.begin(), exact.end(), canon)) return;
            ++near_absent;
            near_false += table.contains(h);
        });
    }
    res.near_absent_kmers = near_absent;
    res.fpr_near = static_cast<double>(near_false) / static_cast<double>(near_absent);
    return res;
}

}  // namespace

int main(int argc, char** argv) {
    size_t bases = 64'000'000, n_reads = 200'000;
    std::string csv_path, only;
    for (int i = 1; i < argc; ++i) {
        std::string const a = argv[i];
        auto next = [&] { return i + 1 < argc ? argv[++i] : (std::exit(2), argv[0]); };
        if (a == "--bases")
            bases = std::strtoull(next(), nullptr, 10);
        else if (a == "--reads")
            n_reads = std::strtoull(next(), nullptr, 10);
        else if (a == "--csv")
            csv_path = next();
        else if (a == "--fill")
            fill = std::strtod(next(), nullptr);
        else if (a == "--only")
            only = next();
        else {
            std::fprintf(stderr, "usage: %s [--bases N] [--reads N] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    auto row = [&](char const* fmt, auto... v) {
        std::printf(fmt, v...);
        if (csv) std::fprintf(csv, fmt, v...);
    };
    std::printf(
        "# %zu bases per reference, %zu near + %zu absent reads of 150 bases, k = %u, "
        "r = %u, fill %.2f, 1 thread\n",
        bases, n_reads, n_reads, k, remainder_bits, fill);
    row("reference,scheme,distinct,bits_per_kmer,overloaded,max_shift,mean_shift,max_run,"
        "lines_near,lines_absent,ns_near,ns_absent,ns_hash,fpr_random,"
        "fpr_near,near_kmers\n");
    for (char const* name : {"random", "repetitive"}) {
        if (!only.empty() && only != name) continue;
        std::mt19937_64 rng(20261123);
        std::string const ref = std::string(name) == "random" ? random_bases(rng, bases)
                                                              : repetitive_reference(rng, bases);
        std::vector<std::vector<uint8_t>> errors;
        std::vector<std::string> const near = near_reads(rng, ref, n_reads, errors);
        std::vector<std::string> absent;
        for (size_t i = 0; i < n_reads; ++i) absent.push_back(random_bases(rng, 150));
        std::vector<uint64_t> exact;
        exact.reserve(ref.size());
        kmer_scanner(k).for_each(ref, [&](uint64_t x, size_t) { exact.push_back(x); });
        std::sort(exact.begin(), exact.end());
        exact.erase(std::unique(exact.begin(), exact.end()), exact.end());
        uint64_t const distinct = exact.size();
        uint64_t const slots = static_cast<uint64_t>(static_cast<double>(distinct) / fill);

        // The marks as qmer index's sorted build sets them (app/index/sorted_build.hpp): the
        // distinct fingerprints of each window under the unmarked scheme, counted exactly.
        unsigned const m = locality_minimizer_length(k);
        unsigned const bits = locality_window_bits(slots);
        qf::geometry const g = qf::geometry::with_slots(slots, remainder_bits);
        std::vector<uint64_t> fps;
        fps.reserve(ref.size());
        local_kmer_hashing(k, seed, m, bits, {}).for_each(ref, [&](uint64_t h) {
            fps.push_back(g.fingerprint(h));
        });
        std::sort(fps.begin(), fps.end());
        fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
        std::vector<uint32_t> per_window(size_t{1} << bits, 0);
        for (uint64_t fp : fps) ++per_window[g.hash_of_fingerprint(fp) >> (64 - bits)];
        std::vector<uint64_t>().swap(fps);
        std::vector<uint64_t> marks(((uint64_t{1} << bits) + 63) / 64, 0);
        uint64_t marked = 0;
        double const threshold = overload_threshold(slots, bits);
        for (uint64_t w = 0; w < per_window.size(); ++w)
            if (static_cast<double>(per_window[w]) > threshold) {
                marks[w / 64] |= uint64_t{1} << (w % 64);
                ++marked;
            }
        double const share = static_cast<double>(marked) / static_cast<double>(uint64_t{1} << bits);

        auto print = [&](char const* scheme, result const& r) {
            row("%s,%s,%llu,%.2f,%.4f,%llu,%.2f,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.6f,%.6f,"
                "%llu\n",
                name, scheme, static_cast<unsigned long long>(distinct), r.bits_per_kmer,
                r.overloaded, static_cast<unsigned long long>(r.max_shift), r.mean_shift,
                static_cast<unsigned long long>(r.max_run), r.lines_near, r.lines_absent, r.ns_near,
                r.ns_absent, r.ns_hash, r.fpr_random, r.fpr_near,
                static_cast<unsigned long long>(r.near_absent_kmers));
            std::fflush(stdout);
        };
        print("plain", measure(plain_kmer_hashing(k, seed), ref, distinct, near, errors, absent,
                               exact, 0.0));
        print("minimizer-local", measure(local_kmer_hashing(k, seed, m, bits, marks), ref, distinct,
                                         near, errors, absent, exact, share));
        // Without the overload marks: what skewed minimizers would do unchecked.
        print("local-unmarked", measure(local_kmer_hashing(k, seed, m, bits, {}), ref, distinct,
                                        near, errors, absent, exact, 0.0));
    }
    if (csv) std::fclose(csv);
    return 0;
}
