#pragma once
// The per-read verdict (DESIGN.md, "Query verdict").
//
// Default rule: a read (or pair) matches when its hits reach the smallest count t >= 1 that chance
// alone reaches with probability at most `tail` (1e-5): with n k-mers and a per-k-mer
// false-positive rate p, chance hits follow Binomial(n, p), so t = min{t : P(Binomial(n, p) >= t)
// <= tail}. Reasoning: an exact k-mer set has p = 0, so t = 1 and the rule is "one shared k-mer",
// the rule of BBDuk and ANCHORS.md; a filter with p > 0 raises t just enough that its false
// positives add at most ~1e-5 of reads to the calls (0.001 percentage points), while a read with
// sequencing errors still keeps most of its hits (one error removes at most k of them). For 150 bp
// reads (120 31-mers) at p = 0.001: t = 4. p is the filter's bound (the index's --fpr), not a
// guess. With --min-hits or --min-containment the user's thresholds replace the default: a read
// matches when hits >= min_hits (if given) and hits/kmers >= min_containment (if given).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace qmer::app {

struct verdict_rule {
    double kmer_fpr = 0.001;      // per-k-mer false-positive rate of the index
    double tail = 1e-5;           // the default rule's per-read chance-call bound
    int64_t min_hits = -1;        // < 0: not given
    double min_containment = -1;  // < 0: not given

    bool is_default() const noexcept { return min_hits < 0 && min_containment < 0; }

    // Smallest t >= 1 with P(Binomial(kmers, kmer_fpr) >= t) <= tail. Iterates the pmf from 0;
    // t is small (single digits for realistic p), so this is a handful of flops per read.
    static uint64_t chance_threshold(uint64_t kmers, double p, double tail) noexcept {
        if (p <= 0 || kmers == 0) return 1;
        double const n = static_cast<double>(kmers);
        double pmf = std::exp(n * std::log1p(-p));  // P(X = 0)
        double cdf = pmf;                           // P(X <= t - 1) as t advances
        double const ratio = p / (1 - p);
        uint64_t t = 1;
        while (1 - cdf > tail && t <= kmers) {
            pmf *= (n - static_cast<double>(t - 1)) / static_cast<double>(t) * ratio;
            cdf += pmf;
            ++t;
        }
        return t;
    }

    bool matches(uint64_t kmers, uint64_t hits) const noexcept {
        if (kmers == 0) return false;
        if (is_default()) return hits >= chance_threshold(kmers, kmer_fpr, tail);
        if (min_hits >= 0 && hits < static_cast<uint64_t>(min_hits)) return false;
        if (min_containment >= 0 &&
            static_cast<double>(hits) < min_containment * static_cast<double>(kmers))
            return false;
        return hits > 0 || (min_hits == 0 && min_containment <= 0);
    }

    // --quick: the hits after which a read with at most max_kmers k-mers matches whatever its
    // other k-mers hold, so its lookups may stop. Sound because every threshold grows with kmers
    // (P(Binomial(n, p) >= t) grows with n), and hits/looked-up >= hits/max_kmers. At least 1, so
    // a read is never settled before one lookup (matches() needs kmers > 0).
    uint64_t hits_settling_match(uint64_t max_kmers) const noexcept {
        if (max_kmers == 0) return 1;
        if (is_default()) return chance_threshold(max_kmers, kmer_fpr, tail);
        uint64_t need = 1;
        if (min_hits > 0) need = std::max(need, static_cast<uint64_t>(min_hits));
        if (min_containment > 0)
            need = std::max(need, static_cast<uint64_t>(
                                      std::ceil(min_containment * static_cast<double>(max_kmers))));
        return need;
    }
};

// A verdict_rule with the default rule's thresholds computed once, for reads of up to `n_max`
// k-mers (longer ones fall back to the rule): the per-read binomial sum, an exp and a log1p per
// read, was ~3% of a --quick query's CPU. Answers exactly as the rule does.
class verdict_table {
  public:
    explicit verdict_table(verdict_rule const& rule, uint64_t n_max = 4096) : rule_(rule) {
        if (!rule_.is_default()) return;
        thresholds_.resize(n_max + 1);
        for (uint64_t n = 0; n <= n_max; ++n)
            thresholds_[n] = verdict_rule::chance_threshold(n, rule_.kmer_fpr, rule_.tail);
    }

    bool matches(uint64_t kmers, uint64_t hits) const noexcept {
        if (kmers < thresholds_.size()) return kmers != 0 && hits >= thresholds_[kmers];
        return rule_.matches(kmers, hits);
    }
    uint64_t hits_settling_match(uint64_t max_kmers) const noexcept {
        if (max_kmers != 0 && max_kmers < thresholds_.size()) return thresholds_[max_kmers];
        return rule_.hits_settling_match(max_kmers);
    }
    verdict_rule const& rule() const noexcept { return rule_; }

  private:
    verdict_rule rule_;
    std::vector<uint64_t> thresholds_;  // empty unless the default rule applies
};

}  // namespace qmer::app
