// Cluster-scanning speed of the locally locked quotient filter (and of the sequential reference,
// which shares its slot layout) at high fill, one thread. A documented harness, not Google
// Benchmark: every measurement needs a table filled to a given degree first, and the filters run
// in one process, interleaved, so their ratios compare like with like on a shared machine.
//
// For each fill step (50, 80, 90, 95% of the 2^q canonical slots) every filter gets the keys that
// take it from the previous step to this one (timed: "insert"), then `--queries` successful
// queries (keys drawn at random from everything inserted so far) and as many unsuccessful ones
// (fresh keys). Queries are repeated 3 times, rotating over the filters, and the fastest
// repetition counts (the least disturbed by other processes). Rates are Mops/s and ratios to the
// externally locked filter (the paper's baseline, whose code this work does not touch) measured in
// the same run, so two builds of this harness (before and after a change) compare through it.
//
// Keys are splitmix64 of a counter: distinct and uniformly random, as XXH3 of k-mers is to a
// filter. Usage:
//   qf_locally_locked_scan_bench [--q 24] [--r 13] [--queries 1000000] [--label NAME] [--csv FILE]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/qf/harness.hpp"
#include "core/qf/baseline/external_locks.hpp"
#include "core/qf/baseline/sequential.hpp"
#include "core/qf/concurrent/locally_locked.hpp"

namespace {

using namespace qmer::bench;

// One filter, type-erased once per loop (never a std::function call per operation).
struct subject {
    std::string name;
    std::function<size_t(size_t, size_t)> insert_range;  // keys [b, e): how many answered full
    // `n` present keys picked at random below `limit` (seeded): how many were found.
    std::function<size_t(size_t, size_t, uint64_t)> query_present;
    std::function<size_t(size_t, size_t)> query_absent;  // absent keys [b, e): false positives
};

template <typename F>
subject make_subject(std::string name, unsigned q, unsigned r) {
    auto f = std::make_shared<F>(q, r);
    subject s;
    s.name = std::move(name);
    s.insert_range = [f](size_t b, size_t e) {
        size_t full = 0;
        for (size_t i = b; i < e; ++i)
            full += f->insert(present_key(i)) == qmer::insert_result::full;
        return full;
    };
    s.query_present = [f](size_t n, size_t limit, uint64_t seed) {
        size_t hits = 0;
        for (size_t i = 0; i < n; ++i) hits += f->contains(present_key(mix(seed + i) % limit));
        return hits;
    };
    s.query_absent = [f](size_t b, size_t e) {
        size_t hits = 0;
        for (size_t i = b; i < e; ++i) hits += f->contains(absent_key(i));
        return hits;
    };
    return s;
}

double mops(size_t n, double s) {
    return static_cast<double>(n) / s / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned q = 24, r = 13;
    size_t queries = 1000000;
    std::string label = "current", csv_path;
    for (int i = 1; i < argc; ++i) {
        auto next = [&]() -> char const* {
            if (i + 1 >= argc) {
                std::cerr << "missing value after " << argv[i] << '\n';
                std::exit(2);
            }
            return argv[++i];
        };
        if (std::strcmp(argv[i], "--q") == 0) {
            q = static_cast<unsigned>(std::atoi(next()));
        } else if (std::strcmp(argv[i], "--r") == 0) {
            r = static_cast<unsigned>(std::atoi(next()));
        } else if (std::strcmp(argv[i], "--queries") == 0) {
            queries = std::strtoull(next(), nullptr, 10);
        } else if (std::strcmp(argv[i], "--label") == 0) {
            label = next();
        } else if (std::strcmp(argv[i], "--csv") == 0) {
            csv_path = next();
        } else {
            std::cerr << "usage: " << argv[0]
                      << " [--q 24] [--r 13] [--queries N] [--label NAME] [--csv FILE]\n";
            return 2;
        }
    }
    if (q < 8 || q > 30 || r < 1 || r > 40 || queries == 0) {
        std::cerr << "need 8 <= q <= 30, 1 <= r <= 40, queries > 0\n";
        return 2;
    }

    std::vector<subject> subjects;
    subjects.push_back(make_subject<qmer::qf::external_locks_filter>("externally_locked", q, r));
    subjects.push_back(make_subject<qmer::qf::locally_locked_filter>("locally_locked", q, r));
    subjects.push_back(make_subject<qmer::qf::sequential_filter>("sequential", q, r));
    size_t const k = subjects.size();

    std::ofstream csv_file;
    if (!csv_path.empty()) csv_file.open(csv_path);
    std::ostream& csv = csv_path.empty() ? std::cout : csv_file;
    csv << "label,filter,slots,r,fill,insert_mops,hit_mops,miss_mops,fpr,insert_vs_external,"
           "hit_vs_external,miss_vs_external\n";
    std::cerr << "locally_locked_scan_bench [" << label << "]: 2^" << q << " slots, r = " << r
              << ", 1 thread (" << std::thread::hardware_concurrency() << " hardware threads), "
              << queries << " queries of each kind, best of 3\n";

    size_t const m = size_t{1} << q;
    size_t done = 0;
    for (int percent : {50, 80, 90, 95}) {
        size_t const target = m * static_cast<size_t>(percent) / 100;
        std::vector<double> t_insert(k), t_hit(k, 1e300), t_miss(k, 1e300);
        std::vector<size_t> false_pos(k, 0);
        // Inserts cannot be repeated: the rotation starts with a different filter each step.
        for (size_t j = 0; j < k; ++j) {
            size_t const i = (j + static_cast<size_t>(percent)) % k;
            auto const t0 = clock_type::now();
            size_t const full = subjects[i].insert_range(done, target);
            t_insert[i] = seconds_since(t0);
            // already_present is fine (a key sharing a q + r bit fingerprint with an earlier one);
            // full is not: the measurement would no longer be at the stated fill.
            if (full != 0) {
                std::cerr << subjects[i].name << ": " << full << " inserts answered full\n";
                return 1;
            }
        }
        for (int rep = 0; rep < 3; ++rep) {
            for (size_t j = 0; j < k; ++j) {
                size_t const i = (j + static_cast<size_t>(rep)) % k;
                auto t0 = clock_type::now();
                size_t const hits =
                    subjects[i].query_present(queries, target, uint64_t(percent * 10 + rep) << 32);
                t_hit[i] = std::min(t_hit[i], seconds_since(t0));
                if (hits != queries) {
                    std::cerr << subjects[i].name << ": FALSE NEGATIVES\n";
                    return 1;
                }
                size_t const base = (size_t(percent) << 34) | (size_t(rep) << 30);
                t0 = clock_type::now();
                false_pos[i] += subjects[i].query_absent(base, base + queries);
                t_miss[i] = std::min(t_miss[i], seconds_since(t0));
            }
        }
        double const base_rate[3] = {mops(target - done, t_insert[0]), mops(queries, t_hit[0]),
                                     mops(queries, t_miss[0])};
        for (size_t i = 0; i < k; ++i) {
            double const rate[3] = {mops(target - done, t_insert[i]), mops(queries, t_hit[i]),
                                    mops(queries, t_miss[i])};
            double const fpr = static_cast<double>(false_pos[i]) / (3.0 * double(queries));
            csv << label << ',' << subjects[i].name << ',' << m << ',' << r << ','
                << percent / 100.0 << ',' << rate[0] << ',' << rate[1] << ',' << rate[2] << ','
                << fpr;
            for (int x = 0; x < 3; ++x) csv << ',' << rate[x] / base_rate[x];
            csv << '\n';
            char line[256];
            std::snprintf(line, sizeof line,
                          "%-8s fill %2d%% %-18s insert %6.2f  hit %6.2f  miss %6.2f Mops/s"
                          "  (x%.2f x%.2f x%.2f of external)  fpr %.2e\n",
                          label.c_str(), percent, subjects[i].name.c_str(), rate[0], rate[1],
                          rate[2], rate[0] / base_rate[0], rate[1] / base_rate[1],
                          rate[2] / base_rate[2], fpr);
            std::cerr << line;
        }
        csv.flush();
        done = target;
    }
    return 0;
}
