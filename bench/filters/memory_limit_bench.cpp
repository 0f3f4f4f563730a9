// Every filter of the project against this machine's memory limit, measured in the same process
// (bench/filters/README.md). A filter larger than the cache is bound by memory latency
// (ARCHITECTURE.md, performance rules), so its rates only mean something next to what the memory
// system allows for as many random accesses over as many bytes. A documented harness, not Google
// Benchmark: a filter must be filled before it is queried, and the limits and the filters must run
// in one process, interleaved, so that the ratios compare like with like on a machine shared with
// other jobs.
//
// For each table size --slots-log2 L, n = fill * 2^L keys (what a 2^L-slot quotient filter holds at
// --fill). For each filter kind of `qmer index --filter`, built as `qmer index` builds it from
// (--expected n, --fpr p) (app/filters/registry.hpp; the cuckoo filter refuses p < 0.002 and is
// built at 0.002, as its error message advises), for each thread count T and each batching of
// --modes (unbatched; groupedW, W hashes prefetched and then processed together; rollingW, a
// prefetch W hashes ahead of each lookup):
//   insert   the n keys into a fresh filter, T threads on disjoint slices, prefetching as the
//            mode says (one pass per mode: an insert cannot be repeated).
//   query    after release_retired_tables() and freeze() where the filter has them (what `qmer
//            index` does before writing and `qmer query` after loading), Q present keys spread over
//            all n and Q absent keys, through app::contains_read_only as `qmer query` calls it. A
//            false negative aborts the run; the absent keys' hits give the measured FPR.
//   limit    over an array of the filter's memory_bytes(), allocated as the filters' tables are
//            (core/qf/slot_storage.hpp: huge pages from 2 MiB, so both pay the same TLB costs), Q
//            random 64-bit loads and Q relaxed fetch_or at random words, plain, in every mode of
//            --modes and rolling 4..32 (how many misses the machine overlaps). The addresses are
//            independent, each a hash of a counter like the filters' keys, at the same cost
//            (splitmix64, then a multiply-shift to a word).
// Queries and limits run in --rounds rounds that rotate over them; the fastest of each counts.
// Ratios: inserts against fetch_or, queries against loads, over the same bytes, at the same T, in
// the same batching (unbatched rows against the first batched mode: what prefetching allows).
// The machine is shared, and with T = 2 on 2 cores any other process takes a core from us: the
// CPU time other processes used while a filter was measured is recorded (others_cores, from
// /proc/stat), and --quiet C waits before each filter until they use at most C cores and measures
// a filter again (up to 4 times, keeping the quietest) when they used more meanwhile.
//
// Output: markdown tables on stdout; progress and the load average on stderr; with --csv FILE one
// row per measurement: slots_log2,n,filter,p,bytes,threads,op,mode,mops,ref,ref_mops,fraction,fpr,
// others_cores. --from A.csv,B.csv measures nothing: it merges runs (per row the fastest, as the
// rounds do), prints their tables and writes the merged rows to --csv. Usage:
//   filters_memory_limit_bench [--quick] [--slots-log2 24,26] [--threads 1,2] [--fill 0.7]
//       [--fpr 0.001] [--queries 4000000] [--rounds 3] [--filters NAME,..]
//       [--modes unbatched,grouped16,rolling8] [--quiet CORES] [--csv FILE]
//   filters_memory_limit_bench --from A.csv,B.csv [--csv MERGED.csv]
// --quick: 2^20 slots and 10^6 queries (a few MiB, inside the cache: checks that it runs, not the
// memory limit).

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "app/filters/registry.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "bench/qf/harness.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/error.hpp"
#include "core/qf/slot_storage.hpp"

namespace {

using namespace qmer::bench;
using qmer::insert_result;
using qmer::app::filter_kind;

// How a loop over hashes prefetches (ARCHITECTURE.md: compute the next hashes' locations, prefetch,
// then probe). grouped W: W hashes are computed and each prefetched as it comes, then the W are
// processed: the misses of a group overlap, but the number in flight drains to 0 at the end of each
// group. rolling W: each hash is processed W hashes after its prefetch, so W - 1 others stay in
// flight all the time.
struct batching {
    enum kind_type { none, grouped, rolling } kind = none;
    size_t width = 0;
    std::string name() const {
        if (kind == none) return "unbatched";
        return (kind == grouped ? "grouped" : "rolling") + std::to_string(width);
    }
};
constexpr std::array widths{size_t{4}, size_t{8}, size_t{16}, size_t{32}};

batching parse_batching(std::string const& s) {
    if (s == "unbatched") return {};
    for (auto [prefix, kind] :
         {std::pair{"grouped", batching::grouped}, std::pair{"rolling", batching::rolling}}) {
        std::string const p(prefix);
        if (s.rfind(p, 0) == 0)
            for (size_t w : widths)
                if (s.substr(p.size()) == std::to_string(w)) return {kind, w};
    }
    throw qmer::usage_error("unknown batching '" + s +
                            "' (unbatched, groupedW, rollingW; W = 4, 8, 16 or 32)");
}

// Each loop below is a function of its own (noinline), as the app's for_each_kmer_hash is one per
// filter: with every width and batching unrolled into one caller, GCC runs out of inlining budget
// and calls the key and access lambdas (a call per access). The small lambdas handed to the loops
// are inlined by force (QMER_HOT); the filters' own functions are left to the compiler, as in the
// app. A filter's prefetch() that GCC does not inline would be lost altogether (GCC 12's mod/ref
// analysis sees no side effect in a function that only prefetches and deletes the call, which
// leaves the cuckoo filter's loops without a prefetch), so bench/CMakeLists.txt turns that analysis
// off for this program.
#define QMER_HOT __attribute__((always_inline))

template <typename Key, typename Op>
[[gnu::noinline]] void plain_loop(size_t b, size_t e, Key key, Op op) {
    for (size_t i = b; i < e; ++i) op(key(i));
}

template <size_t W, typename Key, typename Prefetch, typename Op>
[[gnu::noinline]] void grouped_loop(size_t b, size_t e, Key key, Prefetch prefetch, Op op) {
    std::array<uint64_t, W> hs;
    while (b < e) {
        size_t const m = std::min(W, e - b);
        for (size_t j = 0; j < m; ++j) prefetch(hs[j] = key(b + j));
        for (size_t j = 0; j < m; ++j) op(hs[j]);
        b += m;
    }
}

template <size_t W, typename Key, typename Prefetch, typename Op>
[[gnu::noinline]] void rolling_loop(size_t b, size_t e, Key key, Prefetch prefetch, Op op) {
    static_assert((W & (W - 1)) == 0, "a power of two (ring index)");
    std::array<uint64_t, W> ring;
    uint64_t produced = 0, consumed = 0;
    for (size_t i = b; i < e; ++i) {
        uint64_t const h = key(i);
        prefetch(h);
        ring[produced++ & (W - 1)] = h;
        if (produced - consumed == W) op(ring[consumed++ & (W - 1)]);
    }
    while (consumed < produced) op(ring[consumed++ & (W - 1)]);
}

// Calls op(key(i)) for i in [b, e) in order, prefetching as bt says. The width is a template
// argument, as the app's is a constant. The lambdas are copied into the loop (they capture by
// reference, so op's side effects land where the caller sees them).
template <typename Key, typename Prefetch, typename Op>
void for_each_prefetched(batching bt, size_t b, size_t e, Key key, Prefetch prefetch, Op op) {
    auto with_width = [&]<size_t W>(std::integral_constant<size_t, W>) {
        if (bt.kind == batching::grouped)
            grouped_loop<W>(b, e, key, prefetch, op);
        else
            rolling_loop<W>(b, e, key, prefetch, op);
    };
    switch (bt.kind == batching::none ? 0 : bt.width) {
        case 0:
            plain_loop(b, e, key, op);
            break;
        case 4:
            with_width(std::integral_constant<size_t, 4>{});
            break;
        case 8:
            with_width(std::integral_constant<size_t, 8>{});
            break;
        case 16:
            with_width(std::integral_constant<size_t, 16>{});
            break;
        case 32:
            with_width(std::integral_constant<size_t, 32>{});
            break;
        default:
            std::abort();  // parse_batching admits only these
    }
}

struct options {
    std::vector<unsigned> slots_log2{24, 26};
    std::vector<unsigned> threads{1, 2};
    double fill = 0.7;
    double fpr = 0.001;
    size_t queries = 4'000'000;
    int rounds = 3;
    std::vector<std::string> filters;  // empty: every kind
    // How the filters are driven; the first batched one is the reference for unbatched rows.
    std::vector<batching> modes{{}, {batching::grouped, 16}, {batching::rolling, 8}};
    std::string csv;
    // > 0: wait before each filter until the other processes use at most this many cores, and
    // measure the filter again (up to `attempts` times, keeping the quietest) when they used more.
    double quiet = 0;
    int attempts = 4;
    std::vector<std::string> from;  // CSVs to merge and print instead of measuring
};

// The limit that unbatched rows are a fraction of: the first batched mode (parse() demands one).
std::string reference_mode(options const& o) {
    return std::find_if(o.modes.begin(), o.modes.end(),
                        [](batching b) { return b.kind != batching::none; })
        ->name();
}

// The limit's addresses: a third stream beside present_key and absent_key, at the same cost.
uint64_t limit_key(uint64_t i) {
    return mix((uint64_t{3} << 40) | i);
}

// ---- the limits ---------------------------------------------------------------------------------

enum class access { load, fetch_or };
char const* access_name(access a) {
    return a == access::load ? "load" : "fetch_or";
}

// Runs accesses [b, e) over words; returns what the loads read, so the compiler keeps them.
// Relaxed loads and fetch_or compile to a plain mov and a lock or.
uint64_t run_limit(access a, batching bt, std::span<std::atomic<uint64_t>> words, size_t b,
                   size_t e) {
    uint64_t const m = words.size();
    auto key = [](size_t i) QMER_HOT { return limit_key(i); };
    auto word = [&](uint64_t h) QMER_HOT -> std::atomic<uint64_t>& {
        return words[qmer::bloom_detail::reduce(h, m)];
    };
    auto prefetch = [&](uint64_t h) QMER_HOT { __builtin_prefetch(&word(h), 0, 3); };
    uint64_t sum = 0;
    if (a == access::load)
        for_each_prefetched(bt, b, e, key, prefetch, [&](uint64_t h) QMER_HOT {
            sum += word(h).load(std::memory_order_relaxed);
        });
    else
        for_each_prefetched(bt, b, e, key, prefetch, [&](uint64_t h) QMER_HOT {
            word(h).fetch_or(uint64_t{1} << (h & 63), std::memory_order_relaxed);
        });
    return sum;
}

// The limits measured for every filter: plain, every mode the filters run in, and the rolling
// distances (how many misses this machine overlaps).
std::vector<batching> limit_modes(options const& o) {
    std::vector<batching> v{{}};
    auto add = [&](batching bt) {
        for (auto const& x : v)
            if (x.name() == bt.name()) return;
        v.push_back(bt);
    };
    for (auto const& bt : o.modes) add(bt);
    for (size_t w : widths) add({batching::rolling, w});
    return v;
}

std::atomic<uint64_t> sink{0};  // what the limit loads read, so they are not optimised away

// ---- one measurement row ------------------------------------------------------------------------

struct row {
    unsigned slots_log2 = 0;
    size_t n = 0;
    std::string filter;
    double p = 0;
    size_t bytes = 0;
    unsigned threads = 0;
    std::string op;    // insert, query_hit, query_miss, limit_load or limit_fetch_or
    std::string mode;  // batching::name()
    double mops = 0;
    std::string ref;  // the limit this row is a fraction of, e.g. load_grouped16 (empty: a limit)
    double ref_mops = 0;
    double fpr = -1;           // query_miss only
    double others_cores = -1;  // CPU the other processes used while this filter was measured
    double fraction() const { return ref.empty() ? 0 : mops / ref_mops; }
};

double mops(size_t ops, double seconds) {
    return static_cast<double>(ops) / seconds / 1e6;
}

[[noreturn]] void fail(std::string const& what) {
    std::fprintf(stderr, "error: %s\n", what.c_str());
    std::exit(1);
}

std::string loadavg() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

// The machine is shared: the CPU time other processes took since construction, in cores (all busy
// time in /proc/stat minus this process's, over the wall time). Ticks are 10 ms, so it is meant
// for intervals of seconds.
class others_meter {
  public:
    others_meter() : t0_(clock_type::now()), busy0_(busy_seconds()), self0_(self_seconds()) {}
    double cores() const {
        double const others = (busy_seconds() - busy0_) - (self_seconds() - self0_);
        return std::max(0.0, others) / seconds_since(t0_);
    }

  private:
    static double busy_seconds() {
        std::ifstream f("/proc/stat");
        std::string cpu;
        double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
        f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
        return (user + nice + system + irq + softirq) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
    static double self_seconds() {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        auto s = [](timeval t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
        return s(u.ru_utime) + s(u.ru_stime);
    }
    clock_type::time_point t0_;
    double busy0_, self0_;
};

// Returns once the other processes used at most `cores` over 5 s, or after 30 minutes of waiting.
void wait_for_quiet(double cores) {
    auto const start = clock_type::now();
    for (bool said = false;;) {
        others_meter const m;
        std::this_thread::sleep_for(std::chrono::seconds(5));
        double const used = m.cores();
        if (used <= cores) return;
        if (!said)
            std::fprintf(stderr, "  waiting for a quiet machine (others use %.2f cores)\n", used);
        said = true;
        if (seconds_since(start) > 1800) {
            std::fprintf(stderr, "  still busy after 30 minutes: measuring anyway\n");
            return;
        }
    }
}

// ---- one filter kind at one size and thread count ---------------------------------------------

template <filter_kind Kind>
void measure_filter(options const& o, unsigned slots_log2, size_t n, unsigned threads,
                    std::vector<row>& out) {
    using codec = qmer::app::filter_codec<Kind>;
    using F = typename codec::filter_type;
    std::string const name(qmer::app::filter_kind_name(Kind));
    qmer::app::filter_plan plan{.expected = n, .fpr = o.fpr};
    auto make = [&] {
        try {
            return codec::create(plan);
        } catch (qmer::usage_error const& e) {
            // Only the cuckoo filter refuses a valid p: its 12-bit fingerprints cannot go lower.
            if (plan.fpr >= 0.002) throw;
            std::fprintf(stderr, "  %s: %s; built at p = 0.002\n", name.c_str(), e.what());
            plan.fpr = 0.002;
            return codec::create(plan);
        }
    };

    // Inserts: a fresh filter per mode (an insert cannot be timed twice); the last one is kept.
    std::vector<double> insert_s;
    std::unique_ptr<F> fp;
    for (batching const& bt : o.modes) {
        fp.reset();  // one filter in memory at a time
        fp = make();
        F& f = *fp;
        std::atomic<size_t> full{0};
        insert_s.push_back(run_parallel(threads, n, [&](unsigned, size_t b, size_t e) {
            size_t local = 0;
            for_each_prefetched(
                bt, b, e, [](size_t i) QMER_HOT { return present_key(i); },
                [&](uint64_t h) QMER_HOT { f.prefetch(h); },
                [&](uint64_t h) QMER_HOT { local += f.insert(h) == insert_result::full; });
            full.fetch_add(local);
        }));
        if (full.load() != 0)
            fail(name + ": " + std::to_string(full.load()) + " inserts answered full");
    }
    F& f = *fp;
    // What `qmer index` does before writing the index and `qmer query` after loading it.
    if constexpr (requires { f.release_retired_tables(); }) f.release_retired_tables();
    if constexpr (requires { f.freeze(); }) f.freeze();

    row base;
    base.slots_log2 = slots_log2;
    base.n = n;
    base.filter = name;
    base.p = plan.fpr;
    base.bytes = f.memory_bytes();
    base.threads = threads;

    qmer::qf::grouped_slots array(std::max<size_t>(base.bytes / 8, 1), 64);
    auto const words = array.groups();
    size_t const q = std::min(o.queries, n);
    size_t const stride = n / q;  // present keys j * stride, j < q: spread over every insert

    struct measurement {
        std::string op, mode;
        std::function<size_t()> run;  // returns the hits (queries)
        double best = 1e300;
        size_t hits = 0;
    };
    std::vector<measurement> ms;
    for (batching const& bt : limit_modes(o))
        for (access a : {access::load, access::fetch_or})
            ms.push_back({std::string("limit_") + access_name(a), bt.name(), [&, a, bt] {
                              run_parallel(threads, q, [&](unsigned, size_t b, size_t e) {
                                  sink.fetch_add(run_limit(a, bt, words, b, e),
                                                 std::memory_order_relaxed);
                              });
                              return size_t{0};
                          }});
    for (batching const& bt : o.modes)
        for (bool present : {true, false})
            ms.push_back({present ? "query_hit" : "query_miss", bt.name(), [&, bt, present] {
                              std::atomic<size_t> hits{0};
                              auto key = [&](size_t j) QMER_HOT {
                                  return present ? present_key(j * stride) : absent_key(j);
                              };
                              run_parallel(threads, q, [&](unsigned, size_t b, size_t e) {
                                  size_t local = 0;
                                  for_each_prefetched(
                                      bt, b, e, key, [&](uint64_t h) QMER_HOT { f.prefetch(h); },
                                      [&](uint64_t h) QMER_HOT {
                                          local += qmer::app::contains_read_only(f, h);
                                      });
                                  hits.fetch_add(local);
                              });
                              return hits.load();
                          }});
    // Rounds rotate over the measurements, so a slow spell of the shared machine hits them alike.
    for (int r = 0; r < o.rounds; ++r) {
        for (size_t j = 0; j < ms.size(); ++j) {
            auto& m = ms[(j + static_cast<size_t>(r)) % ms.size()];
            auto const t0 = clock_type::now();
            m.hits = m.run();
            m.best = std::min(m.best, seconds_since(t0));
            if (m.op == "query_hit" && m.hits != q)
                fail(name + ": " + std::to_string(q - m.hits) + " false negatives");
        }
    }

    auto limit = [&](std::string const& op, std::string const& mode) -> measurement const& {
        for (auto const& m : ms)
            if (m.op == op && m.mode == mode) return m;
        std::abort();  // limit_modes() holds every mode
    };
    std::string const reference = reference_mode(o);
    auto add = [&](std::string const& op, std::string const& mode, double rate, size_t hits) {
        row x = base;
        x.op = op;
        x.mode = mode;
        x.mops = rate;
        if (op.rfind("limit_", 0) != 0) {
            // Inserts against fetch_or, queries against loads, in the same batching (unbatched
            // ones against the reference batching: what prefetching would allow them).
            std::string const lim = op == "insert" ? "limit_fetch_or" : "limit_load";
            std::string const lim_mode = mode == "unbatched" ? reference : mode;
            x.ref = lim.substr(6) + "_" + lim_mode;
            x.ref_mops = mops(q, limit(lim, lim_mode).best);
        }
        if (op == "query_miss") x.fpr = static_cast<double>(hits) / static_cast<double>(q);
        out.push_back(x);
    };
    for (size_t i = 0; i < o.modes.size(); ++i)
        add("insert", o.modes[i].name(), mops(n, insert_s[i]), 0);
    for (auto const& m : ms) add(m.op, m.mode, mops(q, m.best), m.hits);
}

// measure_filter, again while other processes took more than o.quiet cores; keeps the quietest.
template <filter_kind Kind>
void measure_filter_quietly(options const& o, unsigned slots_log2, size_t n, unsigned threads,
                            std::vector<row>& out) {
    std::vector<row> best;
    double best_others = 1e300;
    for (int attempt = 0; attempt < (o.quiet > 0 ? o.attempts : 1); ++attempt) {
        if (o.quiet > 0) wait_for_quiet(o.quiet);
        others_meter const m;
        std::vector<row> rows;
        measure_filter<Kind>(o, slots_log2, n, threads, rows);
        double const others = m.cores();
        std::fprintf(stderr, "  others used %.2f cores meanwhile\n", others);
        if (others < best_others) best = std::move(rows), best_others = others;
        if (o.quiet <= 0 || others <= o.quiet) break;
    }
    for (auto& r : best) r.others_cores = best_others;
    out.insert(out.end(), best.begin(), best.end());
}

// ---- output -------------------------------------------------------------------------------------

row const* find(std::vector<row> const& rows, std::string const& filter, unsigned threads,
                std::string const& op, std::string const& mode) {
    for (auto const& r : rows)
        if (r.filter == filter && r.threads == threads && r.op == op && r.mode == mode) return &r;
    return nullptr;
}

// The distinct values of field(r) over the rows, in the order they first appear.
template <typename Field>
auto distinct(std::vector<row> const& rows, Field field) {
    std::vector<std::decay_t<decltype(field(rows.front()))>> v;
    for (auto const& r : rows)
        if (std::find(v.begin(), v.end(), field(r)) == v.end()) v.push_back(field(r));
    return v;
}

// Two markdown tables per size and thread count: the limits over each filter's bytes, then each
// filter's rates with the fraction of the matching limit in parentheses. The columns are what the
// rows hold (a run, or runs merged with --from).
void print_tables(std::vector<row> const& all, unsigned slots_log2, unsigned threads) {
    std::vector<row> rows;
    for (auto const& r : all)
        if (r.slots_log2 == slots_log2 && r.threads == threads) rows.push_back(r);
    if (rows.empty()) return;
    auto const names = distinct(rows, [](row const& r) { return r.filter; });
    std::vector<row> limits, inserts;
    for (auto const& r : rows) {
        if (r.op == "limit_load") limits.push_back(r);
        if (r.op == "insert") inserts.push_back(r);
    }
    auto const lms = distinct(limits, [](row const& r) { return r.mode; });
    auto const modes = distinct(inserts, [](row const& r) { return r.mode; });
    std::string reference;
    for (auto const& r : rows)
        if (r.op == "query_hit" && r.mode == "unbatched") reference = r.ref;
    char const* const plural = threads == 1 ? "" : "s";
    std::printf(
        "\n### 2^%u slots, %u thread%s: limits, Mops/s over an array of each filter's "
        "bytes\n\n| filter | MiB | access |",
        slots_log2, threads, plural);
    for (auto const& m : lms) std::printf(" %s |", m.c_str());
    std::printf("\n|---|---|---|");
    for (size_t i = 0; i < lms.size(); ++i) std::printf("---|");
    std::printf("\n");
    auto mops_of = [&](std::string const& f, char const* op, std::string const& mode) {
        row const* r = find(rows, f, threads, op, mode);
        char buf[32] = "-";
        if (r != nullptr) std::snprintf(buf, sizeof buf, "%.1f", r->mops);
        return std::string(buf);
    };
    for (auto const& f : names) {
        for (char const* op : {"limit_load", "limit_fetch_or"}) {
            row const* any = find(rows, f, threads, op, "unbatched");
            if (any == nullptr) continue;
            std::printf("| %s | %.1f | %s |", f.c_str(),
                        static_cast<double>(any->bytes) / (1 << 20), op + 6);
            for (auto const& m : lms) std::printf(" %s |", mops_of(f, op, m).c_str());
            std::printf("\n");
        }
    }
    std::printf(
        "\n### 2^%u slots, %u thread%s: filters, Mops/s (fraction of the limit in the "
        "same batching: fetch_or for inserts, loads for queries; unbatched queries against "
        "%s)\n\n| filter | p | batching | insert | query hit | query miss | measured FPR | "
        "others' CPU |\n|---|---|---|---|---|---|---|---|\n",
        slots_log2, threads, plural, reference.c_str());
    for (auto const& f : names) {
        for (auto const& m : modes) {
            row const* miss = find(rows, f, threads, "query_miss", m);
            if (miss == nullptr) continue;
            std::printf("| %s | %g | %s |", f.c_str(), miss->p, m.c_str());
            for (char const* op : {"insert", "query_hit", "query_miss"}) {
                row const* r = find(rows, f, threads, op, m);
                if (r == nullptr)
                    std::printf(" - |");
                else
                    std::printf(" %.2f (%.0f%%) |", r->mops, 100 * r->fraction());
            }
            std::printf(" %.5f | %.2f |\n", miss->fpr, miss->others_cores);
        }
    }
    std::fflush(stdout);
}

void write_csv(std::string const& path, std::vector<row> const& rows) {
    std::ofstream f(path);
    f << "slots_log2,n,filter,p,bytes,threads,op,mode,mops,ref,ref_mops,fraction,fpr,"
         "others_cores\n";
    for (auto const& r : rows) {
        char line[512];
        std::snprintf(line, sizeof line, "%u,%zu,%s,%g,%zu,%u,%s,%s,%.4f,%s,", r.slots_log2, r.n,
                      r.filter.c_str(), r.p, r.bytes, r.threads, r.op.c_str(), r.mode.c_str(),
                      r.mops, r.ref.c_str());
        f << line;
        if (!r.ref.empty()) {
            std::snprintf(line, sizeof line, "%.4f,%.4f", r.ref_mops, r.fraction());
            f << line;
        } else {
            f << ',';
        }
        f << ',';
        if (r.fpr >= 0) {
            std::snprintf(line, sizeof line, "%.6f", r.fpr);
            f << line;
        }
        std::snprintf(line, sizeof line, ",%.2f\n", r.others_cores);
        f << line;
    }
    if (!f.flush()) fail("cannot write " + path);
}

std::vector<std::string> split(std::string const& s);

// Rows from a CSV that write_csv wrote.
std::vector<row> read_csv(std::string const& path) {
    std::ifstream f(path);
    if (!f) fail("cannot read " + path);
    std::string line;
    std::getline(f, line);
    auto const header = split(line);
    auto column = [&](char const* name) {
        auto const it = std::find(header.begin(), header.end(), name);
        if (it == header.end()) fail(path + ": no column " + name);
        return static_cast<size_t>(it - header.begin());
    };
    size_t const c_slots = column("slots_log2"), c_n = column("n"), c_filter = column("filter"),
                 c_p = column("p"), c_bytes = column("bytes"), c_threads = column("threads"),
                 c_op = column("op"), c_mode = column("mode"), c_mops = column("mops"),
                 c_ref = column("ref"), c_fpr = column("fpr"), c_others = column("others_cores");
    std::vector<row> rows;
    while (std::getline(f, line)) {
        auto const v = split(line);
        if (v.size() != header.size())
            fail(path + ": a row with " + std::to_string(v.size()) + " fields");
        row r;
        r.slots_log2 = static_cast<unsigned>(std::stoul(v[c_slots]));
        r.n = std::stoul(v[c_n]);
        r.filter = v[c_filter];
        r.p = std::stod(v[c_p]);
        r.bytes = std::stoul(v[c_bytes]);
        r.threads = static_cast<unsigned>(std::stoul(v[c_threads]));
        r.op = v[c_op];
        r.mode = v[c_mode];
        r.mops = std::stod(v[c_mops]);
        r.ref = v[c_ref];
        r.fpr = v[c_fpr].empty() ? -1 : std::stod(v[c_fpr]);
        r.others_cores = std::stod(v[c_others]);
        rows.push_back(r);
    }
    return rows;
}

// Runs merged: per (size, filter, threads, op, batching) the fastest row (the rule of the rounds,
// carried over runs), the most CPU other processes took in any of them, and every fraction again
// from the merged limits.
std::vector<row> merge_fastest(std::vector<row> const& all) {
    std::vector<row> best;
    for (auto const& r : all) {
        auto it = std::find_if(best.begin(), best.end(), [&](row const& b) {
            return b.slots_log2 == r.slots_log2 && b.filter == r.filter && b.threads == r.threads &&
                   b.op == r.op && b.mode == r.mode;
        });
        if (it == best.end()) {
            best.push_back(r);
        } else {
            double const others = std::max(it->others_cores, r.others_cores);
            if (r.mops > it->mops) *it = r;
            it->others_cores = others;
        }
    }
    for (auto& r : best) {
        if (r.ref.empty()) continue;
        size_t const cut = r.ref.rfind('_');  // load_grouped16: limit_load, grouped16
        std::string const op = "limit_" + r.ref.substr(0, cut), mode = r.ref.substr(cut + 1);
        auto const lim = std::find_if(best.begin(), best.end(), [&](row const& b) {
            return b.slots_log2 == r.slots_log2 && b.filter == r.filter && b.threads == r.threads &&
                   b.op == op && b.mode == mode;
        });
        if (lim == best.end()) fail("no limit " + r.ref + " for " + r.filter);
        r.ref_mops = lim->mops;
    }
    return best;
}

std::vector<std::string> split(std::string const& s) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t const comma = s.find(',', start);
        out.push_back(s.substr(start, comma - start));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::vector<unsigned> split_unsigned(std::string const& s) {
    std::vector<unsigned> out;
    for (auto const& x : split(s)) out.push_back(static_cast<unsigned>(std::stoul(x)));
    return out;
}

options parse(int argc, char** argv) {
    options o;
    auto usage = [&] {
        std::fprintf(stderr,
                     "usage: %s [--quick] [--slots-log2 L,..] [--threads T,..] [--fill F] "
                     "[--fpr P] [--queries Q] [--rounds R] [--filters NAME,..] "
                     "[--modes M,..] [--quiet CORES] [--from CSV,..] [--csv FILE]\n",
                     argv[0]);
        std::exit(2);
    };
    for (int i = 1; i < argc; ++i) {
        std::string const a = argv[i];
        bool const has_value = i + 1 < argc;
        if (a == "--quick") {
            o.slots_log2 = {20};
            o.queries = 1'000'000;
        } else if (!has_value) {
            usage();
        } else if (a == "--slots-log2") {
            o.slots_log2 = split_unsigned(argv[++i]);
        } else if (a == "--threads") {
            o.threads = split_unsigned(argv[++i]);
        } else if (a == "--fill") {
            o.fill = std::stod(argv[++i]);
        } else if (a == "--fpr") {
            o.fpr = std::stod(argv[++i]);
        } else if (a == "--queries") {
            o.queries = std::stoul(argv[++i]);
        } else if (a == "--rounds") {
            o.rounds = std::stoi(argv[++i]);
        } else if (a == "--modes") {
            o.modes.clear();
            for (auto const& m : split(argv[++i])) o.modes.push_back(parse_batching(m));
        } else if (a == "--quiet") {
            o.quiet = std::stod(argv[++i]);
        } else if (a == "--from") {
            o.from = split(argv[++i]);
        } else if (a == "--filters") {
            o.filters = split(argv[++i]);
        } else if (a == "--csv") {
            o.csv = argv[++i];
        } else {
            usage();
        }
    }
    if (!(o.fill > 0 && o.fill <= 0.9) || o.queries == 0 || o.rounds < 1 || o.threads.empty() ||
        std::find(o.threads.begin(), o.threads.end(), 0u) != o.threads.end() ||
        std::none_of(o.modes.begin(), o.modes.end(),
                     [](batching b) { return b.kind != batching::none; }))
        usage();
    for (auto const& f : o.filters) (void)qmer::app::parse_filter_kind(f);  // unknown: throws
    return o;
}

}  // namespace

int main(int argc, char** argv) try {
    options const o = parse(argc, argv);
    if (!o.from.empty()) {
        std::vector<row> all;
        for (auto const& path : o.from) {
            auto const rows = read_csv(path);
            all.insert(all.end(), rows.begin(), rows.end());
        }
        all = merge_fastest(all);
        for (auto const& size : distinct(all, [](row const& r) { return r.slots_log2; }))
            for (auto const& t : distinct(all, [](row const& r) { return r.threads; }))
                print_tables(all, size, t);
        if (!o.csv.empty()) write_csv(o.csv, all);
        return 0;
    }
    std::fprintf(stderr, "cores online: %u; load average at start: %s\n",
                 std::thread::hardware_concurrency(), loadavg().c_str());
    std::vector<row> all;
    for (unsigned slots_log2 : o.slots_log2) {
        size_t const n =
            static_cast<size_t>(o.fill * std::ldexp(1.0, static_cast<int>(slots_log2)));
        std::vector<row> rows;
        for (unsigned threads : o.threads) {
            for (size_t k = 0; k < std::size(qmer::app::filter_kind_names); ++k) {
                auto const kind = static_cast<filter_kind>(k);
                std::string const name(qmer::app::filter_kind_name(kind));
                if (!o.filters.empty() &&
                    std::find(o.filters.begin(), o.filters.end(), name) == o.filters.end())
                    continue;
                std::fprintf(stderr, "2^%u slots (n = %zu), %u thread(s): %s (load %s)\n",
                             slots_log2, n, threads, name.c_str(), loadavg().c_str());
                qmer::app::visit_filter_kind(kind, [&](auto constant) {
                    measure_filter_quietly<decltype(constant)::value>(o, slots_log2, n, threads,
                                                                      rows);
                });
            }
            print_tables(rows, slots_log2, threads);
        }
        all.insert(all.end(), rows.begin(), rows.end());
        if (!o.csv.empty()) write_csv(o.csv, all);  // after each size: a long run keeps its rows
    }
    std::fprintf(stderr, "load average at end: %s\n", loadavg().c_str());
    return 0;
} catch (std::exception const& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
