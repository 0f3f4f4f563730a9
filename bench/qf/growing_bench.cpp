// The growing experiment of Maier, Sanders, Williger, SEA 2020, section 5 ("Growing Benchmark",
// Figure 3) at this machine's scale. A documented harness (not Google Benchmark: the experiment is
// a sequence of segments on filters that keep growing, and all variants must run in one process so
// ratios compare like with like). For T = 1 and 2 threads, four filters start from the same initial
// capacity C (2^17 slots by default, 2^14 with --quick, 2^B with --log-initial B) and receive 64 C
// distinct keys in 16 segments:
//
//   bounded_growing     locally locked QF, q = log2 C, r = 13, bounded growing at 90% fill (the
//                       fingerprint keeps q + r bits: the FPR grows linearly with n)
//   expandable          core/qf/concurrent/expandable.hpp, FPR bound p (1e-4, as the paper
//                       code's run in bench/BASELINES.md), levels starting at C slots, no
//                       cascading inserts
//   expandable_locked_lower  the same, its lower levels queried through the locked path
//                       (read-lock CASes) until freeze(), as if levels were never sealed
//                       (expandable_locked_lower below)
//   expandable_cascading  the same with cascading inserts and early rejection of queries
//   presized            locally locked QF with room for all 64 C keys from the start: 128 C
//                       slots (the next power of two under 90% fill), r = 13; the baseline,
//                       never grows (it ends 50% full)
//
// After each segment: the segment's insert time; T threads run successful queries (keys already
// inserted, uniformly drawn) and unsuccessful ones (fresh keys), whose positives give the measured
// FPR; plus levels, slots, fill, memory (live tables and with the tables bounded growing left
// behind). The machine is shared with other work, so the variants take turns segment by segment
// (a slow spell of the machine hits all of them alike) and every rate is also given as a ratio to
// the pre-sized table measured in the same round. Keys: splitmix64 of a counter (distinct,
// uniformly random: what XXH3 of k-mers looks like to a filter).
//
// Output (--out DIR, default bench/qf/results): growing.csv (one row per variant, threads,
// segment), growing_summary.csv (one row per variant and thread count) and growing_release.csv
// (memory of each filter at the end, before and after release_retired_tables(), the query rates
// after it, and after freeze() of the expandable filters). Plot with
// /usr/bin/python3 bench/qf/plot_growing.py. Usage:
//   qf_growing_bench [--quick] [--out DIR] [--threads 1,2] [--fpr P] [--log-initial B]
//                    [--prefetch D]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/qf/harness.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace {

using qmer::insert_result;
using namespace qmer::bench;

// One filter under test, type-erased once per loop (never a std::function call per operation).
struct state {
    size_t levels = 1, slots = 0, size = 0, memory = 0, live = 0;
    double fpr_formula = 0;
};
struct subject {
    std::string name;
    std::function<size_t(size_t, size_t)> insert_range;             // keys [b, e): inserted
    std::function<size_t(size_t, size_t, uint64_t)> query_present;  // n keys < e, seed: hits
    std::function<size_t(size_t, size_t)> query_absent;             // absent [b, e): positives
    std::function<state()> stats;
    std::function<size_t()> release_retired;  // quiescent: frees tables left by growing
    std::function<void()> freeze;             // expandable only: query-only from now on
};

// --prefetch D: queries prefetch the key D positions ahead before probing (the pattern of qmer's
// query stage, ARCHITECTURE.md "Performance rules"), so memory latency overlaps; 0 probes one by
// one.
unsigned prefetch_distance = 0;

// Probes keys key_at(0 .. n-1) and counts the hits, prefetching D ahead when asked.
template <typename F, typename KeyAt>
size_t probe(F const& f, size_t n, KeyAt key_at) {
    size_t hits = 0;
    unsigned const d = prefetch_distance;
    if (d == 0) {
        for (size_t i = 0; i < n; ++i) hits += f.contains(key_at(i));
        return hits;
    }
    for (size_t i = 0; i < n && i < d; ++i) f.prefetch(key_at(i));
    for (size_t i = 0; i < n; ++i) {
        if (i + d < n) f.prefetch(key_at(i + d));
        hits += f.contains(key_at(i));
    }
    return hits;
}

template <typename F>
void bind_operations(subject& s, std::shared_ptr<F> f) {
    s.insert_range = [f](size_t b, size_t e) {
        size_t n = 0;
        for (size_t i = b; i < e; ++i) {
            auto const r = f->insert(present_key(i));
            if (r == insert_result::full) {
                std::cerr << "growing_bench: a growing filter answered full\n";
                std::exit(1);
            }
            n += r == insert_result::inserted;
        }
        return n;
    };
    s.query_present = [f](size_t n, size_t inserted, uint64_t seed) {
        // Random keys among the inserted ones: key i is a pure function of (seed, i), so the
        // prefetch and the probe of one key agree.
        return probe(*f, n, [&](size_t i) { return present_key(mix(seed ^ mix(i)) % inserted); });
    };
    s.query_absent = [f](size_t b, size_t e) {
        return probe(*f, e - b, [&](size_t i) { return absent_key(b + i); });
    };
    s.release_retired = [f] { return f->release_retired_tables(); };
    s.freeze = [] {};
}

subject locally_locked_subject(std::string name, unsigned q, unsigned r, bool grow) {
    auto f = std::make_shared<qmer::qf::locally_locked_filter>(q, r,
                                                               qmer::qf::growing_policy{grow, 0.9});
    subject s;
    s.name = std::move(name);
    bind_operations(s, f);
    s.stats = [f] {
        state st;
        st.slots = f->capacity();
        st.size = f->size();
        st.memory = f->memory_bytes();
        st.live = f->groups().size() * sizeof(uint64_t);
        st.fpr_formula = f->false_positive_rate();
        return st;
    };
    return s;
}

// The expandable filter with its sealed lower levels queried through the locked path
// (locally_locked_filter::contains, read-lock CASes) until freeze(): what contains() did before
// sealed levels existed, for comparison with the lock-free path in one process. Same stored bits.
struct expandable_locked_lower : qmer::qf::expandable_filter {
    using qmer::qf::expandable_filter::expandable_filter;
    bool contains(uint64_t h) const noexcept {
        if (frozen()) return expandable_filter::contains(h);
        for (unsigned j = levels(); j-- > 0;)
            if (level(j).contains(h)) return true;
        return false;
    }
};

template <typename Filter = qmer::qf::expandable_filter>
subject expandable_subject(std::string name, size_t initial, double fpr, bool cascading) {
    // expected = ceil(3.6 C): level 0's final size is 8 C, so it starts with C slots.
    auto const expected = static_cast<uint64_t>(std::ceil(4 * 0.9 * static_cast<double>(initial)));
    qmer::qf::expandable_options o;
    o.expected_elements = expected;
    o.max_false_positive_rate = fpr;
    o.cascading = cascading;
    auto f = std::make_shared<Filter>(o);
    if (f->capacity() != initial) {
        std::cerr << "growing_bench: expandable starts with " << f->capacity() << " slots\n";
        std::exit(1);
    }
    subject s;
    s.name = std::move(name);
    bind_operations(s, f);
    s.freeze = [f] { f->freeze(); };
    s.stats = [f] {
        state st;
        st.levels = f->levels();
        st.slots = f->capacity();
        st.size = f->size();
        st.memory = f->memory_bytes();
        st.live = f->live_memory_bytes();
        st.fpr_formula = f->false_positive_rate();
        return st;
    };
    return s;
}

double mops(size_t n, double s) {
    return static_cast<double>(n) / s / 1e6;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

struct totals {
    double insert_s = 0, hit_mops = 0, miss_mops = 0, hit_ratio = 0, miss_ratio = 0;
    double fill_sum = 0, bits_live_sum = 0, last_fpr_measured = 0;
    int segments = 0;
};

void experiment(unsigned threads, unsigned log_initial, double fpr, size_t queries,
                std::ostream& csv, std::ostream& summary, std::ostream& release) {
    size_t const initial = size_t{1} << log_initial;
    size_t const n = 64 * initial;
    unsigned const segments = 16;
    std::vector<subject> subjects;
    // The baseline first: ratios are to it.
    subjects.push_back(locally_locked_subject("presized", log_initial + 7, 13, false));
    subjects.push_back(locally_locked_subject("bounded_growing", log_initial, 13, true));
    subjects.push_back(expandable_subject("expandable", initial, fpr, false));
    subjects.push_back(expandable_subject<expandable_locked_lower>("expandable_locked_lower",
                                                                   initial, fpr, false));
    subjects.push_back(expandable_subject("expandable_cascading", initial, fpr, true));
    size_t const k = subjects.size();
    std::vector<totals> sum(k);
    for (unsigned seg = 0; seg < segments; ++seg) {
        size_t const b = n * seg / segments, e = n * (seg + 1) / segments;
        std::vector<double> t_ins(k), t_hit(k), t_miss(k);
        std::vector<size_t> fp(k);
        // Turns rotate with the segment, so no variant always runs first.
        for (size_t j = 0; j < k; ++j) {
            size_t const i = (j + seg) % k;
            t_ins[i] = run_parallel(threads, e - b, [&](unsigned, size_t x, size_t y) {
                subjects[i].insert_range(b + x, b + y);
            });
        }
        for (size_t j = 0; j < k; ++j) {
            size_t const i = (j + seg) % k;
            std::atomic<size_t> hits{0}, pos{0};
            t_hit[i] = run_parallel(threads, queries, [&](unsigned t, size_t x, size_t y) {
                hits.fetch_add(subjects[i].query_present(y - x, e, (uint64_t{seg} << 20) | t));
            });
            if (hits.load() != queries) {
                std::cerr << subjects[i].name << ": FALSE NEGATIVES\n";
                std::exit(1);
            }
            size_t const base = (size_t{seg} << 32) + (size_t{threads} << 28);
            t_miss[i] = run_parallel(threads, queries, [&](unsigned, size_t x, size_t y) {
                pos.fetch_add(subjects[i].query_absent(base + x, base + y));
            });
            fp[i] = pos.load();
        }
        for (size_t i = 0; i < k; ++i) {
            state const st = subjects[i].stats();
            double const fill = static_cast<double>(st.size) / static_cast<double>(st.slots);
            double const bits_live =
                8.0 * static_cast<double>(st.live) / static_cast<double>(st.size);
            double const bits_all =
                8.0 * static_cast<double>(st.memory) / static_cast<double>(st.size);
            double const fpr_measured = static_cast<double>(fp[i]) / static_cast<double>(queries);
            double const ins = mops(e - b, t_ins[i]), hit = mops(queries, t_hit[i]),
                         miss = mops(queries, t_miss[i]);
            csv << subjects[i].name << ',' << threads << ',' << seg + 1 << ',' << e << ','
                << t_ins[i] << ',' << ins << ',' << hit << ',' << miss << ',' << fpr_measured << ','
                << st.fpr_formula << ',' << st.levels << ',' << st.slots << ',' << fill << ','
                << st.live << ',' << st.memory << ',' << bits_live << ',' << bits_all << ','
                << t_ins[0] / t_ins[i] << ',' << hit / mops(queries, t_hit[0]) << ','
                << miss / mops(queries, t_miss[0]) << '\n';
            auto& s = sum[i];
            s.insert_s += t_ins[i];
            s.hit_mops += hit;
            s.miss_mops += miss;
            s.hit_ratio += hit / mops(queries, t_hit[0]);
            s.miss_ratio += miss / mops(queries, t_miss[0]);
            s.fill_sum += fill;
            s.last_fpr_measured = fpr_measured;
            s.bits_live_sum += bits_live;
            ++s.segments;
        }
        csv.flush();
        std::cerr << "threads " << threads << " segment " << seg + 1 << "/" << segments
                  << " done\n";
    }
    for (size_t i = 0; i < k; ++i) {
        state const st = subjects[i].stats();
        auto const& s = sum[i];
        double const m = s.segments;
        summary << subjects[i].name << ',' << threads << ',' << n << ',' << mops(n, s.insert_s)
                << ',' << sum[0].insert_s / s.insert_s << ',' << s.hit_mops / m << ','
                << s.hit_ratio / m << ',' << s.miss_mops / m << ',' << s.miss_ratio / m << ','
                << s.last_fpr_measured << ',' << st.fpr_formula << ',' << st.levels << ','
                << s.fill_sum / m << ',' << s.bits_live_sum / m << ','
                << 8.0 * double(st.live) / double(st.size) << ','
                << 8.0 * double(st.memory) / double(st.size) << ',' << st.memory << '\n';
    }
    // The end of a build (what `qmer index` does before writing the index): free the tables left
    // behind by bounded growing, then query again, the filters taking turns as above. Then
    // freeze() the expandable filters (what `qmer query` can do after loading the index: every
    // level, the top too, is read without locks) and query once more.
    std::vector<size_t> before(k), after(k);
    std::vector<double> hit_after(k), miss_after(k), hit_frozen(k), miss_frozen(k);
    for (size_t i = 0; i < k; ++i) {
        before[i] = subjects[i].stats().memory;
        subjects[i].release_retired();
        after[i] = subjects[i].stats().memory;
    }
    auto query_round = [&](std::vector<double>& hit, std::vector<double>& miss, uint64_t salt) {
        for (size_t j = 0; j < k; ++j) {
            size_t const i = (j + salt) % k;
            hit[i] =
                mops(queries, run_parallel(threads, queries, [&](unsigned t, size_t x, size_t y) {
                         subjects[i].query_present(y - x, n, (salt << 20) | t);
                     }));
            size_t const base = (size_t{salt} << 32) + (size_t{threads} << 28);
            miss[i] =
                mops(queries, run_parallel(threads, queries, [&](unsigned, size_t x, size_t y) {
                         subjects[i].query_absent(base + x, base + y);
                     }));
        }
    };
    query_round(hit_after, miss_after, 99);
    for (auto& sub : subjects) sub.freeze();
    query_round(hit_frozen, miss_frozen, 100);
    for (size_t i = 0; i < k; ++i) {
        state const st = subjects[i].stats();
        release << subjects[i].name << ',' << threads << ',' << n << ',' << before[i] << ','
                << after[i] << ',' << 8.0 * double(before[i]) / double(st.size) << ','
                << 8.0 * double(after[i]) / double(st.size) << ',' << hit_after[i] << ','
                << hit_after[i] / hit_after[0] << ',' << miss_after[i] << ','
                << miss_after[i] / miss_after[0] << ',' << hit_frozen[i] << ','
                << hit_frozen[i] / hit_frozen[0] << ',' << miss_frozen[i] << ','
                << miss_frozen[i] / miss_frozen[0] << '\n';
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::filesystem::path out = std::filesystem::path(__FILE__).parent_path() / "results";
    std::vector<unsigned> thread_counts{1, 2};
    double fpr = 1e-4;
    unsigned log_initial = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (std::strcmp(argv[i], "--log-initial") == 0 && i + 1 < argc) {
            log_initial = static_cast<unsigned>(std::stoul(argv[++i]));
        } else if (std::strcmp(argv[i], "--prefetch") == 0 && i + 1 < argc) {
            prefetch_distance = static_cast<unsigned>(std::stoul(argv[++i]));
        } else if (std::strcmp(argv[i], "--fpr") == 0 && i + 1 < argc) {
            fpr = std::strtod(argv[++i], nullptr);
        } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            thread_counts.clear();
            std::stringstream list(argv[++i]);
            for (std::string t; std::getline(list, t, ',');)
                thread_counts.push_back(static_cast<unsigned>(std::stoul(t)));
        } else {
            std::cerr << "usage: " << argv[0]
                      << " [--quick] [--out DIR] [--threads 1,2] [--fpr P] [--log-initial B]"
                         " [--prefetch D]\n";
            return 2;
        }
    }
    if (log_initial == 0) log_initial = quick ? 14 : 17;
    size_t const queries = quick ? size_t{1} << 16 : size_t{1} << 18;
    std::filesystem::create_directories(out);
    std::time_t const now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
    std::ostringstream meta;
    meta << "# qf_growing_bench: " << cpu_model() << ", " << std::thread::hardware_concurrency()
         << " hardware threads, " << date << "; initial capacity 2^" << log_initial
         << " slots, 64x growth in 16 segments, p = " << fpr << ", " << queries << " successful + "
         << queries << " unsuccessful queries per segment, prefetch distance " << prefetch_distance
         << "\n";
    std::cerr << meta.str();
    std::ofstream csv(out / "growing.csv"), summary(out / "growing_summary.csv"),
        release(out / "growing_release.csv");
    release << meta.str()
            << "filter,threads,keys,memory_bytes_before,memory_bytes_after,bits_per_key_before,"
               "bits_per_key_after,query_hit_mops,hit_vs_presized,query_miss_mops,"
               "miss_vs_presized,frozen_hit_mops,frozen_hit_vs_presized,frozen_miss_mops,"
               "frozen_miss_vs_presized\n";
    csv << meta.str()
        << "filter,threads,segment,keys,segment_insert_s,insert_mops,query_hit_mops,"
           "query_miss_mops,fpr_measured,fpr_formula,levels,slots,fill,live_bytes,memory_bytes,"
           "bits_per_key_live,bits_per_key_all,insert_vs_presized,hit_vs_presized,"
           "miss_vs_presized\n";
    summary << meta.str()
            << "filter,threads,keys,insert_mops,insert_vs_presized,query_hit_mops,"
               "hit_vs_presized,query_miss_mops,miss_vs_presized,final_fpr_measured,"
               "final_fpr_formula,levels,"
               "avg_fill,avg_bits_per_key_live,final_bits_per_key_live,final_bits_per_key_all,"
               "final_memory_bytes\n";
    for (unsigned t : thread_counts)
        experiment(t, log_initial, fpr, queries, csv, summary, release);
    std::cerr << "wrote " << (out / "growing.csv") << " and growing_summary.csv\n";
    return 0;
}
