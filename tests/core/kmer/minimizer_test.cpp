// Tests of core/kmer/minimizer.hpp against a brute-force oracle: for every k-mer (a substring of k
// A/C/G/T of either case), the smallest minimizer_hash over its m-mers' canonical forms, computed
// from strings with no rolling state.

#include "core/kmer/minimizer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/kmer/scanner.hpp"

namespace {

using hit = std::pair<uint64_t, uint64_t>;  // (canonical k-mer, minimizer)

int code_of(char c) {
    switch (c) {
        case 'A':
        case 'a':
            return 0;
        case 'C':
        case 'c':
            return 1;
        case 'G':
        case 'g':
            return 2;
        case 'T':
        case 't':
            return 3;
        default:
            return -1;
    }
}

uint64_t pack(std::string const& s) {
    uint64_t v = 0;
    for (char c : s) v = (v << 2) | static_cast<uint64_t>(code_of(c));
    return v;
}

std::string reverse_complement_of(std::string s) {
    std::reverse(s.begin(), s.end());
    for (char& c : s) c = "TGCA"[code_of(c)];
    return s;
}

uint64_t canonical_of(std::string const& s) {
    return std::min(pack(s), pack(reverse_complement_of(s)));
}

std::vector<hit> oracle(std::string const& seq, unsigned k, unsigned m, uint64_t seed) {
    std::vector<hit> out;
    for (size_t i = 0; i + k <= seq.size(); ++i) {
        std::string const kmer = seq.substr(i, k);
        if (std::any_of(kmer.begin(), kmer.end(), [](char c) { return code_of(c) < 0; })) continue;
        uint64_t best = ~uint64_t{0};
        for (size_t j = 0; j + m <= k; ++j)
            best = std::min(best, qmer::minimizer_hash(canonical_of(kmer.substr(j, m)), seed));
        out.emplace_back(canonical_of(kmer), best);
    }
    return out;
}

std::vector<hit> scanned(std::string const& seq, unsigned k, unsigned m, uint64_t seed) {
    std::vector<hit> out;
    qmer::minimizer_scanner(k, m, seed).for_each(seq, [&](uint64_t kmer, uint64_t minimizer) {
        out.emplace_back(kmer, minimizer);
    });
    return out;
}

std::string random_sequence(std::mt19937_64& rng, size_t n, double invalid_rate) {
    std::string s(n, 'A');
    std::uniform_real_distribution<double> u(0, 1);
    for (auto& c : s) {
        double const x = u(rng);
        c = x < invalid_rate ? "NnRx-"[rng() % 5] : "ACGTacgt"[rng() % 8];
    }
    return s;
}

TEST(minimizer_scanner, matches_the_brute_force_oracle_for_every_k_and_m) {
    std::mt19937_64 rng(20261123);
    for (unsigned k : {1u, 2u, 5u, 15u, 21u, 31u, 32u}) {
        for (unsigned m : {1u, k / 2 + 1, k > 11 ? k - 11 : 1u, k}) {
            if (m > k || k - m + 1 > qmer::minimizer_scanner::max_window) continue;
            for (double invalid : {0.0, 0.01, 0.2}) {
                std::string const seq = random_sequence(rng, 700, invalid);
                EXPECT_EQ(scanned(seq, k, m, 7), oracle(seq, k, m, 7))
                    << "k=" << k << " m=" << m << " invalid=" << invalid;
            }
        }
    }
}

TEST(minimizer_scanner, reports_the_same_kmers_as_the_kmer_scanner) {
    std::mt19937_64 rng(5);
    std::string const seq = random_sequence(rng, 5000, 0.02);
    std::vector<uint64_t> plain, with_minimizers;
    qmer::kmer_scanner(31).for_each(seq, [&](uint64_t x, size_t) { plain.push_back(x); });
    qmer::minimizer_scanner(31, 20, 0).for_each(
        seq, [&](uint64_t x, uint64_t) { with_minimizers.push_back(x); });
    EXPECT_EQ(plain, with_minimizers);
}

// Canonical: a k-mer and its reverse complement get the same minimizer, so a read and its reverse
// complement report the same pairs in reverse order.
TEST(minimizer_scanner, a_sequence_and_its_reverse_complement_give_the_same_minimizers) {
    std::mt19937_64 rng(11);
    std::string const seq = random_sequence(rng, 3000, 0.0);
    auto forward = scanned(seq, 31, 20, 99);
    auto const backward = scanned(reverse_complement_of(seq), 31, 20, 99);
    std::reverse(forward.begin(), forward.end());
    EXPECT_EQ(forward, backward);
}

// A k-mer's minimizer depends on the k-mer alone, not on the bases before it (the build scans
// whole chromosomes, the query reads).
TEST(minimizer_scanner, a_kmers_minimizer_does_not_depend_on_its_context) {
    std::mt19937_64 rng(3);
    std::string const seq = random_sequence(rng, 2000, 0.0);
    auto const whole = scanned(seq, 31, 20, 1);
    for (size_t i = 0; i + 31 <= seq.size(); i += 37) {
        auto const alone = scanned(seq.substr(i, 31), 31, 20, 1);
        ASSERT_EQ(alone.size(), 1u);
        EXPECT_EQ(alone[0], whole[i]) << "k-mer at " << i;
    }
}

// Consecutive k-mers share minimizers: on random sequence a minimizer covers about (w + 1) / 2
// k-mers (density 2 / (w + 1)), here w = 12: 6.5. Bounds loose enough never to fail by chance.
TEST(minimizer_scanner, consecutive_kmers_share_their_minimizer) {
    std::mt19937_64 rng(8);
    std::string const seq = random_sequence(rng, 200000, 0.0);
    auto const hits = scanned(seq, 31, 20, 0);
    size_t changes = 0;
    for (size_t i = 1; i < hits.size(); ++i) changes += hits[i].second != hits[i - 1].second;
    double const per_minimizer = static_cast<double>(hits.size()) / static_cast<double>(changes);
    EXPECT_GT(per_minimizer, 5.5);
    EXPECT_LT(per_minimizer, 7.5);
}

TEST(minimizer_scanner, stops_when_the_callback_returns_false) {
    int calls = 0;
    bool const finished = qmer::minimizer_scanner(5, 3, 0).for_each(
        "ACGTACGTACGT", [&](uint64_t, uint64_t) { return ++calls < 3; });
    EXPECT_FALSE(finished);
    EXPECT_EQ(calls, 3);
}

TEST(minimizer_scanner, rejects_lengths_that_do_not_fit) {
    EXPECT_THROW(qmer::minimizer_scanner(31, 0, 0), qmer::usage_error);
    EXPECT_THROW(qmer::minimizer_scanner(31, 32, 0), qmer::usage_error);
    EXPECT_THROW(qmer::minimizer_scanner(33, 20, 0), qmer::usage_error);
    EXPECT_NO_THROW(qmer::minimizer_scanner(32, 1, 0));  // w = 32, the ring's size
}

}  // namespace

// Super-k-mers (the build's records, app/index/superkmer_bins.hpp): expanded from their first and
// last forward strands they give for_each's k-mers in order, each run shares one minimizer, runs
// end where the minimizer changes or an invalid base cuts the sequence (else only at max_run), and
// a repeat of one base (one m-mer over and over) is cut into runs of max_run.
TEST(minimizer_scanner, super_kmers_expand_to_the_scanned_kmers) {
    std::mt19937_64 rng(20261126);
    unsigned const k = 31, m = 20;
    qmer::minimizer_scanner const scanner(k, m, 3);
    for (double invalid : {0.0, 0.01, 0.1}) {
        std::string seq = random_sequence(rng, 20000, invalid);
        seq += std::string(200, 'A') + random_sequence(rng, 300, 0.0);  // a run past max_run
        std::vector<hit> expanded;
        std::vector<unsigned> runs;
        scanner.for_each_super_kmer(
            seq,
            [&](uint64_t first, uint64_t last, unsigned n, uint64_t minimizer) {
                ASSERT_GE(n, 1u);
                ASSERT_LE(n, k + 1);
                runs.push_back(n);
                // The k + n - 1 bases: the first k-mer's, then the last n - 1 of the last one's.
                uint64_t forward = first;
                for (unsigned i = 0; i < n; ++i) {
                    if (i != 0)
                        forward = ((forward << 2) | ((last >> (2 * (n - 1 - i))) & 3)) &
                                  qmer::kmer_mask(k);
                    expanded.emplace_back(qmer::canonical(forward, k), minimizer);
                }
                if (n > 1) {
                    EXPECT_EQ(forward, last);
                }
            },
            k + 1);
        auto const scan = scanned(seq, k, m, 3);
        EXPECT_EQ(expanded, scan) << "invalid=" << invalid;
        // Consecutive runs of one sequence stretch differ in minimizer unless one was cut.
        EXPECT_GT(runs.size(), scan.size() / (k + 1));
        EXPECT_NE(std::find(runs.begin(), runs.end(), k + 1), runs.end());
        double const mean = static_cast<double>(scan.size()) / static_cast<double>(runs.size());
        if (invalid == 0.0) {
            EXPECT_GT(mean, 4.0) << "super-k-mers of random sequence: ~6.5 k-mers";
        }
    }
}
