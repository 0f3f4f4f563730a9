// Tests of app/query/assignment.hpp: a read's per-class hits add up to per-reference hits; its
// best references are those whose verdict passes with the most hits, within the tie margin (the
// hits chance could add at the index's fpr, or --clearzone when larger); a tie is ambiguous, or
// its group's with --ties-to-group when every tied reference is in one group; the scratch is left
// all zero; and the best column names a group in place of all its members.

#include "app/query/assignment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "app/query/verdict.hpp"
#include "core/qf/stored/classes.hpp"
#include "io/reference_catalog.hpp"

namespace {

using qmer::app::assignment;
using qmer::app::assignment_rule;
using qmer::app::class_count;
using qmer::app::reference_assigner;
using qmer::app::reference_groups;
using qmer::app::verdict_rule;
using qmer::app::verdict_table;

// References 0 a1, 1 a2 (group alpha), 2 b1, 3 b2, 5 b3 (group beta), 6 lone (group gamma, of
// one), 4 solo and 7 other (no group).
qmer::io::reference_catalog sample_catalog() {
    qmer::io::reference_catalog c;
    c.references = {{"a1", "alpha", "a1.fa", 0, 0},     {"a2", "alpha", "a2.fa", 0, 0},
                    {"b1", "beta", "b1.fa", 0, 0},      {"b2", "beta", "b2.fa", 0, 0},
                    {"solo", "", "solo.fa", 0, 0},      {"b3", "beta", "b3.fa", 0, 0},
                    {"lone", "gamma", "lone.fa", 0, 0}, {"other", "", "other.fa", 0, 0}};
    // Ids 0..7: each reference alone; 8 {0, 1}; 9 {2, 3, 5}; 10 every reference; 11 {1, 2}.
    std::vector<std::vector<uint32_t>> const sets{
        {0},   {1}, {2}, {3}, {4}, {5}, {6}, {7}, {0, 1}, {2, 3, 5}, {0, 1, 2, 3, 4, 5, 6, 7},
        {1, 2}};
    std::vector<uint64_t> offsets{0};
    std::vector<uint32_t> members;
    for (auto const& s : sets) {
        members.insert(members.end(), s.begin(), s.end());
        offsets.push_back(members.size());
    }
    c.classes = qmer::qf::class_table(std::move(offsets), std::move(members), c.references.size());
    c.value_bits = qmer::qf::class_id_bits(c.classes.size());
    return c;
}

// One hit is enough (fpr 0: the default rule's threshold is 1).
verdict_rule exact_rule() {
    verdict_rule rule;
    rule.kmer_fpr = 0;
    return rule;
}

// The catalog, a verdict table and an assigner over them (the assigner keeps references to
// both), with its scratch.
struct fixture {
    qmer::io::reference_catalog catalog = sample_catalog();
    verdict_table verdicts;
    reference_assigner assigner;
    std::vector<uint32_t> scratch, touched;

    explicit fixture(verdict_rule const& verdict = exact_rule(), assignment_rule rule = {},
                     double fpr = 0)
        : verdicts(verdict),
          assigner(catalog, verdicts, rule, fpr),
          scratch(catalog.references.size(), 0) {}

    // Assigns a read and checks that the scratch is all zero again.
    assignment assign(uint64_t kmers, std::vector<class_count> const& classes) {
        assignment a;
        a.best = {99};  // whatever a previous read left
        a.hits = 99;
        a.category = a.group_category = 99;
        assigner.assign(kmers, classes, scratch, touched, a);
        EXPECT_TRUE(std::all_of(scratch.begin(), scratch.end(), [](uint32_t v) { return v == 0; }))
            << "scratch left dirty";
        EXPECT_EQ(scratch.size(), catalog.references.size());
        return a;
    }
};

using ids = std::vector<uint32_t>;

TEST(reference_groups, lists_groups_in_order_of_first_appearance) {
    reference_groups const g(sample_catalog());
    EXPECT_EQ(g.names, (std::vector<std::string>{"alpha", "beta", "gamma"}));
    ASSERT_EQ(g.members.size(), 3u);
    EXPECT_EQ(g.members[0], (ids{0, 1}));
    EXPECT_EQ(g.members[1], (ids{2, 3, 5}));
    EXPECT_EQ(g.members[2], (ids{6}));
    EXPECT_EQ(g.of_reference, (std::vector<int64_t>{0, 0, 1, 1, -1, 1, 2, -1}));
}

TEST(reference_assigner, a_references_hits_are_the_sum_over_the_classes_that_hold_it) {
    fixture f;
    // a1: 3 (class 0) + 2 (class 8) + 1 (class 10) = 6; a2: 2 + 1 + 2 (class 11) = 5; b1: 3.
    auto a = f.assign(120, {{0, 3}, {8, 2}, {10, 1}, {11, 2}});
    EXPECT_EQ(a.best, (ids{0}));
    EXPECT_EQ(a.hits, 6u);
    EXPECT_EQ(a.category, 0);
    EXPECT_EQ(a.group_category, -1);
    // The same hits split differently: b1 gets 2 (class 11) + 4 (class 9) + 1 (class 10) = 7.
    a = f.assign(120, {{0, 3}, {8, 2}, {9, 4}, {10, 1}, {11, 2}});
    EXPECT_EQ(a.best, (ids{2}));
    EXPECT_EQ(a.hits, 7u);
    EXPECT_EQ(a.category, 2);
    // Only the shared class: every reference ties.
    a = f.assign(120, {{10, 5}});
    EXPECT_EQ(a.best, (ids{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(a.hits, 5u);
    EXPECT_EQ(a.category, -1);
}

TEST(reference_assigner, equal_hits_tie_and_are_ambiguous) {
    fixture f;
    auto const a = f.assign(100, {{5, 4}, {3, 4}, {0, 1}});
    EXPECT_EQ(a.best, (ids{3, 5}));  // in reference order
    EXPECT_EQ(a.hits, 4u);
    EXPECT_EQ(a.category, -1);
    EXPECT_EQ(a.group_category, -1);  // no --ties-to-group
    EXPECT_EQ(f.assigner.best_text(a), "b2,b3");
}

TEST(reference_assigner, no_hits_leave_no_best) {
    fixture f;
    auto a = f.assign(150, {});
    EXPECT_TRUE(a.best.empty());
    EXPECT_EQ(a.hits, 0u);
    EXPECT_EQ(a.category, -1);
    EXPECT_EQ(a.group_category, -1);
    EXPECT_EQ(f.assigner.best_text(a), "-");
    // A read without k-mers matches nothing, whatever its classes.
    a = f.assign(0, {{0, 3}});
    EXPECT_TRUE(a.best.empty());
    EXPECT_EQ(a.hits, 0u);
    EXPECT_EQ(a.category, -1);
}

// Only references whose verdict passes are candidates: with --min-hits 5, none of 4 hits is a
// best, and a reference within the clearzone of the best that fails the verdict does not tie.
TEST(reference_assigner, the_best_are_among_the_references_whose_verdict_passes) {
    assignment_rule rule;
    rule.clearzone = 3;
    fixture f(verdict_rule::for_index(0.0, "", -1, 5, -1), rule);
    auto a = f.assign(100, {{0, 4}, {1, 2}});
    EXPECT_TRUE(a.best.empty());
    EXPECT_EQ(a.hits, 0u);
    EXPECT_EQ(a.category, -1);
    a = f.assign(100, {{0, 6}, {1, 4}});  // a2 within 3 of a1, but 4 < 5
    EXPECT_EQ(a.best, (ids{0}));
    EXPECT_EQ(a.hits, 6u);
    EXPECT_EQ(a.category, 0);
    a = f.assign(100, {{0, 7}, {1, 5}});  // both pass, 2 apart: a tie
    EXPECT_EQ(a.best, (ids{0, 1}));
    EXPECT_EQ(a.hits, 7u);
    EXPECT_EQ(a.category, -1);
}

// With fpr > 0 a reference within the hits chance could add (the least d with P(Binomial(kmers,
// fpr) >= d) <= 1e-3, less one) ties with the best.
TEST(reference_assigner, a_lead_of_at_most_the_chance_margin_is_a_tie) {
    double const fpr = 0.01;
    uint64_t const kmers = 200;
    uint64_t const margin = verdict_rule::chance_threshold(kmers, fpr, 1e-3) - 1;
    ASSERT_GE(margin, 2u);  // else the case tests nothing
    EXPECT_EQ(assignment_rule{}.tie_margin(kmers, fpr), margin);
    fixture f(verdict_rule::for_index(fpr, "", -1, 1, -1), {}, fpr);
    uint32_t const top = 60;
    auto a = f.assign(kmers, {{0, top}, {2, static_cast<uint32_t>(top - margin)}});
    EXPECT_EQ(a.best, (ids{0, 2}));
    EXPECT_EQ(a.hits, top);
    EXPECT_EQ(a.category, -1);
    a = f.assign(kmers, {{0, top}, {2, static_cast<uint32_t>(top - margin - 1)}});
    EXPECT_EQ(a.best, (ids{0}));
    EXPECT_EQ(a.category, 0);
    // The best may be either; a third reference far behind is left out.
    a = f.assign(kmers, {{0, static_cast<uint32_t>(top - 1)}, {2, top}, {4, 3}});
    EXPECT_EQ(a.best, (ids{0, 2}));
    EXPECT_EQ(a.hits, top);
    // The margin grows with the read: more k-mers, more chance hits.
    EXPECT_GT(assignment_rule{}.tie_margin(20 * kmers, fpr), margin);
    // An exact set ties equal counts only.
    EXPECT_EQ(assignment_rule{}.tie_margin(kmers, 0), 0u);
}

// The margin is the best reference's own: a reference that holds a tenth of the index's
// fingerprints gains a false hit at a tenth of the index's rate, so a smaller lead settles it.
TEST(reference_assigner, the_margin_is_the_best_references_own_false_positive_rate) {
    double const fpr = 0.001;
    uint64_t const kmers = 200, elements = 1000000;
    auto catalog = sample_catalog();
    for (auto& r : catalog.references) r.kmers = elements / 10;
    verdict_rule rule = exact_rule();
    verdict_table const verdicts(rule);
    reference_assigner const own(catalog, verdicts, {}, fpr, elements);
    reference_assigner const index_wide(catalog, verdicts, {}, fpr);  // elements unknown
    uint64_t const wide = verdict_rule::chance_threshold(kmers, fpr, 1e-3) - 1;
    uint64_t const narrow = verdict_rule::chance_threshold(kmers, fpr / 10, 1e-3) - 1;
    ASSERT_LT(narrow, wide);  // the case is one where the two differ
    std::vector<uint32_t> scratch(catalog.references.size(), 0), touched;
    uint32_t const top = 150;
    for (uint64_t lead = 1; lead <= wide + 1; ++lead) {
        std::vector<class_count> const classes{{0, top}, {2, static_cast<uint32_t>(top - lead)}};
        assignment a, b;
        own.assign(kmers, classes, scratch, touched, a);
        index_wide.assign(kmers, classes, scratch, touched, b);
        EXPECT_EQ(a.best, lead > narrow ? ids{0} : (ids{0, 2})) << lead;
        EXPECT_EQ(b.best, lead > wide ? ids{0} : (ids{0, 2})) << lead;
    }
    // Two references at the top tie whatever their rates.
    assignment a;
    std::vector<class_count> const level{{0, top}, {2, top}};
    own.assign(kmers, level, scratch, touched, a);
    EXPECT_EQ(a.best, (ids{0, 2}));
}

TEST(reference_assigner, the_clearzone_raises_the_margin_and_never_lowers_it) {
    {
        // fpr 0: the clearzone alone.
        assignment_rule rule;
        rule.clearzone = 2;
        fixture f(exact_rule(), rule);
        EXPECT_EQ(f.assign(100, {{0, 10}, {1, 8}}).best, (ids{0, 1}));
        EXPECT_EQ(f.assign(100, {{0, 10}, {1, 7}}).best, (ids{0}));
        // The floor stops at zero hits: a best of 2 and a reference of 1 tie.
        EXPECT_EQ(f.assign(100, {{0, 2}, {1, 1}}).best, (ids{0, 1}));
    }
    double const fpr = 0.01;
    uint64_t const kmers = 200;
    uint64_t const margin = verdict_rule::chance_threshold(kmers, fpr, 1e-3) - 1;
    ASSERT_GE(margin, 2u);
    uint32_t const top = 60;
    auto behind = [&](uint64_t lead) { return static_cast<uint32_t>(top - lead); };
    {
        assignment_rule rule;
        rule.clearzone = margin + 4;
        EXPECT_EQ(rule.tie_margin(kmers, fpr), margin + 4);
        fixture f(verdict_rule::for_index(fpr, "", -1, 1, -1), rule, fpr);
        EXPECT_EQ(f.assign(kmers, {{0, top}, {1, behind(margin + 4)}}).best, (ids{0, 1}));
        EXPECT_EQ(f.assign(kmers, {{0, top}, {1, behind(margin + 5)}}).best, (ids{0}));
    }
    {
        assignment_rule rule;
        rule.clearzone = 1;  // below the chance margin: the chance margin holds
        EXPECT_EQ(rule.tie_margin(kmers, fpr), margin);
        fixture f(verdict_rule::for_index(fpr, "", -1, 1, -1), rule, fpr);
        EXPECT_EQ(f.assign(kmers, {{0, top}, {1, behind(margin)}}).best, (ids{0, 1}));
        EXPECT_EQ(f.assign(kmers, {{0, top}, {1, behind(margin + 1)}}).best, (ids{0}));
    }
}

TEST(reference_assigner, ties_to_group_names_the_group_every_tied_reference_is_in) {
    assignment_rule rule;
    rule.ties_to_group = true;
    fixture f(exact_rule(), rule);
    auto a = f.assign(100, {{8, 5}});  // a1, a2: alpha
    EXPECT_EQ(a.best, (ids{0, 1}));
    EXPECT_EQ(a.category, -1);
    EXPECT_EQ(a.group_category, 0);
    a = f.assign(100, {{9, 5}});  // b1, b2, b3: beta
    EXPECT_EQ(a.group_category, 1);
    a = f.assign(100, {{2, 5}, {5, 5}});  // b1, b3: some of beta, still beta alone
    EXPECT_EQ(a.best, (ids{2, 5}));
    EXPECT_EQ(a.group_category, 1);
    a = f.assign(100, {{11, 5}});  // a2, b1: two groups
    EXPECT_EQ(a.best, (ids{1, 2}));
    EXPECT_EQ(a.group_category, -1);
    a = f.assign(100, {{4, 5}, {7, 5}});  // solo, other: no group
    EXPECT_EQ(a.best, (ids{4, 7}));
    EXPECT_EQ(a.group_category, -1);
    a = f.assign(100, {{0, 5}, {4, 5}});  // a1 and one without a group
    EXPECT_EQ(a.group_category, -1);
    a = f.assign(100, {{6, 5}});  // one reference: its own category, no group's
    EXPECT_EQ(a.category, 6);
    EXPECT_EQ(a.group_category, -1);
    // Without --ties-to-group a tie inside one group stays ambiguous.
    fixture plain;
    a = plain.assign(100, {{8, 5}});
    EXPECT_EQ(a.best, (ids{0, 1}));
    EXPECT_EQ(a.group_category, -1);
}

// Random reads against a direct computation: per-reference sums, the verdict (--min-hits 1 to
// 3), the clearzone (0 to 3), and the scratch left zero (the fixture checks it on every read).
TEST(reference_assigner, agrees_with_a_direct_computation_on_random_reads) {
    std::mt19937_64 rng(29);
    auto const catalog = sample_catalog();
    for (int64_t min_hits : {1, 3}) {
        for (uint64_t clearzone : {0u, 1u, 3u}) {
            assignment_rule rule;
            rule.clearzone = clearzone;
            rule.ties_to_group = true;
            fixture f(verdict_rule::for_index(0.0, "", -1, min_hits, -1), rule);
            reference_groups const groups(catalog);
            for (int read = 0; read < 3000; ++read) {
                std::vector<class_count> classes;
                size_t const n = rng() % 5;
                for (size_t i = 0; i < n; ++i)
                    classes.push_back({static_cast<uint32_t>(rng() % catalog.classes.size()),
                                       static_cast<uint32_t>(1 + rng() % 4)});
                std::vector<uint64_t> sums(catalog.references.size(), 0);
                for (auto const& c : classes)
                    for (uint32_t const r : catalog.classes.members(c.id)) sums[r] += c.hits;
                uint64_t best = 0;
                for (uint64_t const s : sums)
                    if (s >= static_cast<uint64_t>(min_hits)) best = std::max(best, s);
                ids expected;
                for (uint32_t r = 0; r < sums.size(); ++r)
                    if (best != 0 && sums[r] >= static_cast<uint64_t>(min_hits) &&
                        sums[r] + clearzone >= best)
                        expected.push_back(r);
                int64_t group = -1;
                if (expected.size() > 1) {
                    group = groups.of_reference[expected[0]];
                    for (uint32_t const r : expected)
                        if (groups.of_reference[r] != group) group = -1;
                }
                auto const a = f.assign(100, classes);
                ASSERT_EQ(a.best, expected) << "read " << read;
                ASSERT_EQ(a.hits, best) << "read " << read;
                ASSERT_EQ(a.category, expected.size() == 1 ? int64_t{expected[0]} : -1);
                ASSERT_EQ(a.group_category, group) << "read " << read;
            }
        }
    }
}

TEST(reference_assigner, best_text_names_a_group_in_place_of_all_its_members) {
    fixture f;
    auto text = [&](ids best) {
        assignment a;
        a.best = std::move(best);
        return f.assigner.best_text(a);
    };
    EXPECT_EQ(text({}), "-");
    EXPECT_EQ(text({0}), "a1");
    EXPECT_EQ(text({0, 1}), "alpha");
    EXPECT_EQ(text({0, 1, 4}), "alpha,solo");
    EXPECT_EQ(text({2, 3}), "b1,b2");  // not all of beta
    EXPECT_EQ(text({2, 3, 5}), "beta");
    EXPECT_EQ(text({0, 1, 2, 3, 5}), "alpha,beta");
    // Whole groups first, then the other references in reference order.
    EXPECT_EQ(text({0, 2, 3, 4, 5}), "beta,a1,solo");
    // A group of one is shown by its member's name.
    EXPECT_EQ(text({6}), "lone");
    EXPECT_EQ(text({6, 7}), "lone,other");
    EXPECT_EQ(text({0, 1, 2, 3, 4, 5, 6, 7}), "alpha,beta,solo,lone,other");
    // From an assignment.
    EXPECT_EQ(f.assigner.best_text(f.assign(100, {{8, 2}})), "alpha");
    EXPECT_EQ(f.assigner.best_text(f.assign(100, {{8, 2}, {0, 1}})), "a1");
}

}  // namespace
