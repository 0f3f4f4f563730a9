#pragma once
// The per-read verdict (ARCHITECTURE.md, "Query verdict").
//
// Default rule: a read (or pair) matches when its hits reach the smallest count t >= 1 that chance
// alone reaches with probability at most `tail` (1e-5): with n k-mers and a per-k-mer
// false-positive rate p, chance hits follow Binomial(n, p), so t = min{t : P(Binomial(n, p) >= t)
// <= tail}. Reasoning: an exact k-mer set has p = 0, so t = 1 and the rule is "one shared k-mer",
// the rule of BBDuk (bench/BASELINES.md); a filter with p > 0 raises t just enough that its false
// positives add at most ~1e-5 of reads to the calls (0.001 percentage points), while a read with
// sequencing errors still keeps most of its hits (one error removes at most k of them). For 150 bp
// reads (120 31-mers) at p = 0.001: t = 4; for a 1 Mbp read, t = 1,139 (chance_threshold() works in
// log space: reads of any length are called). p is the filter's bound (the index's --fpr), not a
// guess. With --min-hits or --min-containment the user's thresholds replace the default: a read
// matches when hits >= min_hits (if given) and hits/kmers >= min_containment (if given). An index
// built with a read-type preset (app/index/preset.hpp) records a rule of its own, applied when the
// query gives neither option: the default rule and a minimum containment (for_index()).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace qmer::app {

struct verdict_rule {
    double kmer_fpr = 0.001;      // per-k-mer false-positive rate of the index
    double tail = 1e-5;           // the default rule's per-read chance-call bound
    int64_t min_hits = -1;        // < 0: not given
    double min_containment = -1;  // < 0: not given
    // The default rule applies besides the minimums (an index preset's rule); without this it
    // applies only when neither minimum is given.
    bool chance_bound_too = false;
    // Where the rule comes from, for its description: the preset of the index it answers for
    // (empty: none), and whether the query's --min-hits/--min-containment gave it.
    std::string index_preset;
    bool from_options = false;

    bool is_default() const noexcept {
        return min_hits < 0 && min_containment < 0 && !chance_bound_too;
    }
    bool uses_chance_bound() const noexcept {
        return chance_bound_too || (min_hits < 0 && min_containment < 0);
    }

    // The rule a query applies to an index with false-positive rate kmer_fpr and the given preset
    // record (io::index_header::preset and preset_min_containment): the query's minimums when it
    // gives one (they replace every other rule, as they always did), else the preset's rule (the
    // default rule and its minimum containment), else the default rule.
    static verdict_rule for_index(double kmer_fpr, std::string const& preset,
                                  double preset_min_containment, int64_t min_hits,
                                  double min_containment) {
        verdict_rule rule;
        rule.kmer_fpr = kmer_fpr;
        rule.index_preset = preset;
        if (min_hits >= 0 || min_containment >= 0) {
            rule.min_hits = min_hits;
            rule.min_containment = min_containment;
            rule.from_options = true;
        } else if (!preset.empty()) {
            rule.min_containment = preset_min_containment;
            rule.chance_bound_too = true;
        }
        return rule;
    }

    // Smallest t >= 1 with P(Binomial(kmers, p) >= t) <= tail (tail < 1/2), where the tail is
    // upper_tail_bound(): exact to ~1e-12 for short reads, and never below the true tail, so the
    // rule never calls more chance reads than `tail`. Worked in log space, so it cannot underflow
    // (P(X = 0) = (1 - p)^n is 0 in doubles once n p > ~745: a direct sum would ask a 1 Mbp read
    // for n + 1 hits and never call it), and by bisection between floor(n p) (P(X >= floor(n p)) >=
    // 1/2, as the median is at least floor(n p)) and Bernstein's bound: at most ~30 evaluations of
    // a fixed cost, for reads of any length (1e8 k-mers: a few microseconds).
    static uint64_t chance_threshold(uint64_t kmers, double p, double tail) noexcept {
        if (p <= 0 || kmers == 0) return 1;
        double const n = static_cast<double>(kmers);
        double const mean = n * p, variance = n * p * (1 - p), log_tail = std::log(tail);
        // Bernstein: P(X - np >= s) <= exp(-s^2 / (2 (variance + s / 3))) = tail at this s.
        double const l = -log_tail;
        double const s = l / 3 + std::sqrt(l * l / 9 + 2 * variance * l);
        uint64_t lo = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(mean)));
        uint64_t hi = std::min<uint64_t>(kmers + 1, static_cast<uint64_t>(std::ceil(mean + s)) + 1);
        if (lo >= hi || log_upper_tail_bound(kmers, p, hi) > log_tail) hi = kmers + 1;
        if (lo > hi) lo = hi;
        // Invariant: the answer is in [lo, hi]; the bound at hi is at most tail.
        while (lo < hi) {
            uint64_t const mid = lo + (hi - lo) / 2;
            if (log_upper_tail_bound(kmers, p, mid) <= log_tail)
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo;
    }

    // log of an upper bound of P(Binomial(n, p) >= t), never NaN: the first terms pmf(t),
    // pmf(t + 1), ... summed exactly (each from the last by the ratio r_i = pmf(i + 1) / pmf(i) =
    // (n - i) p / ((i + 1)(1 - p)), which falls as i grows), then the rest bounded by the geometric
    // series pmf(i) / (1 - r_i). The sum stops once that remainder is below 1e-12 of it (short
    // reads: after a handful of terms; the result is the exact tail) or after 64 terms (long
    // reads, where it overstates the tail by a few percent at most). +infinity where the series
    // does not converge (r_i >= 1: t is at most floor(n p), whose tail is at least 1/2); -infinity
    // for t > n.
    static double log_upper_tail_bound(uint64_t kmers, double p, uint64_t t) noexcept {
        if (t == 0) return 0;
        if (t > kmers) return -std::numeric_limits<double>::infinity();
        double const n = static_cast<double>(kmers);
        double const odds = p / (1 - p);
        auto const ratio = [&](double i) { return (n - i) / (i + 1) * odds; };
        double const first = static_cast<double>(t);
        double const log_pmf = std::lgamma(n + 1) - std::lgamma(first + 1) -
                               std::lgamma(n - first + 1) + first * std::log(p) +
                               (n - first) * std::log1p(-p);
        double sum = 0, term = 1;  // relative to pmf(t)
        double i = first;
        for (int j = 0; j < 64; ++j, i += 1) {
            double const r = ratio(i);
            if (r >= 1) return std::numeric_limits<double>::infinity();
            double const rest = term / (1 - r);  // pmf(i) + pmf(i + 1) + ... <= this
            if (i >= n || rest <= 1e-12 * sum) return log_pmf + std::log(sum + rest);
            sum += term;
            term *= r;
        }
        double const r = ratio(i);
        if (r >= 1) return std::numeric_limits<double>::infinity();
        return log_pmf + std::log(sum + term / (1 - r));
    }

    // The fewest hits with which a read (pair) of kmers > 0 k-mers matches: the largest of the
    // thresholds that apply. 0 only when the minimums are min_hits = 0 and no containment above 0
    // (every read with a k-mer matches); else at least 1.
    uint64_t hits_needed(uint64_t kmers) const noexcept {
        uint64_t need = uses_chance_bound() ? chance_threshold(kmers, kmer_fpr, tail) : 0;
        if (min_hits > 0) need = std::max(need, static_cast<uint64_t>(min_hits));
        // The smallest integer at or above the product: exactly where hits >= product begins.
        if (min_containment > 0)
            need = std::max(need, static_cast<uint64_t>(
                                      std::ceil(min_containment * static_cast<double>(kmers))));
        if (need == 0 && !(min_hits == 0 && min_containment <= 0)) need = 1;
        return need;
    }

    bool matches(uint64_t kmers, uint64_t hits) const noexcept {
        return kmers != 0 && hits >= hits_needed(kmers);
    }

    // The rule in words, for the TSV preamble and the JSON summary: what matches() decides, and
    // where the rule came from when it is not the default. With `quick`, how --quick changes the
    // counts (the rule itself is the same).
    std::string describe(bool quick) const {
        std::string const chance =
            "hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= 1e-5 (fpr = " +
            std::to_string(kmer_fpr) + ")";
        std::string text;
        if (is_default()) {
            text = chance;
        } else if (chance_bound_too) {
            text = chance;
            if (min_containment >= 0)
                text += " and containment >= " + std::to_string(min_containment);
            text += " (the rule of the index's preset " + index_preset + ")";
        } else {
            text = "hits >= " + std::to_string(std::max<int64_t>(min_hits, 0)) +
                   " and containment >= " + std::to_string(std::max(min_containment, 0.0));
            if (from_options)
                text += index_preset.empty() ? " (from --min-hits/--min-containment)"
                                             : " (from --min-hits/--min-containment, in place of "
                                               "the rule of the index's preset " +
                                                   index_preset + ")";
        }
        if (quick)
            text +=
                "; --quick: a read's lookups stop once it has the hits to match, so matched "
                "reads' kmers and hits count only the k-mers looked up";
        return text;
    }

    // --quick: the hits after which a read with at most max_kmers k-mers matches whatever its
    // other k-mers hold, so its lookups may stop. Sound because every threshold grows with kmers
    // (P(Binomial(n, p) >= t) grows with n), and hits/looked-up >= hits/max_kmers. At least 1, so
    // a read is never settled before one lookup (matches() needs kmers > 0).
    uint64_t hits_settling_match(uint64_t max_kmers) const noexcept {
        if (max_kmers == 0) return 1;
        return std::max<uint64_t>(1, hits_needed(max_kmers));
    }
};

// A verdict_rule with its thresholds computed once where the default rule takes part, for reads of
// up to `n_max` k-mers (longer ones fall back to the rule): the per-read binomial sum, an exp and a
// log1p per read, is a visible share of a --quick query's CPU (bench/MEASUREMENTS.md). Answers
// exactly as the rule does.
class verdict_table {
  public:
    explicit verdict_table(verdict_rule const& rule, uint64_t n_max = 4096) : rule_(rule) {
        if (!rule_.uses_chance_bound()) return;
        thresholds_.resize(n_max + 1);
        for (uint64_t n = 0; n <= n_max; ++n) thresholds_[n] = rule_.hits_needed(n);
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
    std::vector<uint64_t> thresholds_;  // empty unless the default rule applies (alone or not)
};

}  // namespace qmer::app
