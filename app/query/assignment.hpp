#pragma once
// Which reference a read (pair) comes from, against a many-reference index (README, "Many
// references in one index"): the verdict rule applies to each reference's hits; among the
// references whose verdict passes, those with the most hits are the read's best, as Seal assigns
// reads (BBTools, ambig=toss). Ties are judged with a margin: a reference within `clearzone` hits
// of the best ties with it, and the clearzone is never below what the filter's false positives
// could add to the best: the least d with P(Binomial(kmers, p) >= d) <= 1e-3, less one. A
// reference's hits are its true shared k-mers plus false positives, which only add, so a read of
// reference B assigned to A alone needs A to gain at least d chance hits: at most 1e-3 of such
// reads, where an exact k-mer set (fpr 0) ties only equal counts, as Seal does. p is A's own
// false-positive rate: a k-mer A lacks is a false hit of A only when its fingerprint meets a
// stored one whose class holds A, so p = fpr x (A's fingerprints / all fingerprints): with the
// index's fpr for every reference, near strains tie far more often than Seal's exact k-mers make
// them (bench/references). Pure functions: no I/O.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/query/verdict.hpp"
#include "io/reference_catalog.hpp"

namespace qmer::app {

inline constexpr std::string_view category_ambiguous = "ambiguous";

// A read's hits of one class: how many of its k-mers' fingerprints carry class id `id`.
struct class_count {
    uint32_t id = 0;
    uint32_t hits = 0;
};

// How ties are settled.
struct assignment_rule {
    uint64_t clearzone = 0;      // --clearzone: hits within this of the best tie with it
    bool ties_to_group = false;  // --ties-to-group: a tie inside one group is that group
    double tie_tail = 1e-3;      // the chance a false positive may decide a tie (see top)

    // The hits a reference may trail the best by and still tie, for a read of `kmers` k-mers.
    uint64_t tie_margin(uint64_t kmers, double fpr) const noexcept {
        uint64_t const d = verdict_rule::chance_threshold(kmers, fpr, tie_tail);
        return d - 1 > clearzone ? d - 1 : clearzone;
    }
};

// A read's assignment: its best references (the tied ones, in reference order), their most
// hits, and what it is called.
struct assignment {
    std::vector<uint32_t> best;
    uint64_t hits = 0;            // the best's hits (its most, where several tie)
    int64_t category = -1;        // a reference alone (its id), or -1
    int64_t group_category = -1;  // --ties-to-group: the group every tied reference is in (its
                                  // index among the catalog's groups), or -1
};

// The groups of a catalog, in order of first appearance, and each one's members.
struct reference_groups {
    std::vector<std::string> names;
    std::vector<std::vector<uint32_t>> members;
    std::vector<int64_t> of_reference;  // per reference, its group's index or -1

    explicit reference_groups(io::reference_catalog const& catalog);
};

// Sums a read's per-class hits into per-reference hits and assigns it. `scratch` (one entry per
// reference, all zero) is left all zero again; `touched` is scratch space.
class reference_assigner {
  public:
    // elements: the index's distinct fingerprints, of which each reference holds catalog
    // kmers; 0 (unknown) takes fpr for every reference.
    reference_assigner(io::reference_catalog const& catalog, verdict_table const& verdicts,
                       assignment_rule rule, double fpr, uint64_t elements = 0);

    void assign(uint64_t kmers, std::span<class_count const> classes,
                std::vector<uint32_t>& scratch, std::vector<uint32_t>& touched,
                assignment& out) const;

    reference_groups const& groups() const noexcept { return groups_; }
    // The `best` column: the tied references by name, comma-separated, a group's name in place
    // of all its members where every member of a group of two or more ties.
    std::string best_text(assignment const& a) const;

  private:
    io::reference_catalog const& catalog_;
    verdict_table const& verdicts_;
    assignment_rule rule_;
    double fpr_;
    reference_groups groups_;
    std::vector<double> fpr_of_;          // per reference, its own false-positive rate
    std::vector<uint64_t> margin_table_;  // tie_margin(n, fpr_) for reads of n < its size k-mers
};

}  // namespace qmer::app
