// Tests of core/kmer/scanner.hpp against a brute-force oracle that shares no code with it: the
// oracle takes each substring of length k, rejects it if any character is not A/C/G/T (either
// case), builds the reverse complement as a string, packs both with its own lookup and takes the
// smaller.

#include "core/kmer/scanner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace {

using hit = std::pair<uint64_t, size_t>;  // (canonical k-mer, position)

// The oracle's own base code: index in "ACGT" of the uppercased character, or -1.
int oracle_code(char c) {
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

char oracle_complement(char c) {
    switch (c) {
        case 'A':
        case 'a':
            return 'T';
        case 'C':
        case 'c':
            return 'G';
        case 'G':
        case 'g':
            return 'C';
        case 'T':
        case 't':
            return 'A';
        default:
            return 'N';
    }
}

// Packs a string of bases, first base most significant; arithmetic, not shifts, to stay
// independent.
uint64_t oracle_pack(std::string_view s) {
    uint64_t v = 0;
    for (char c : s) v = v * 4 + static_cast<uint64_t>(oracle_code(c));
    return v;
}

std::string oracle_reverse_complement(std::string_view s) {
    std::string rc(s.rbegin(), s.rend());
    for (char& c : rc) c = oracle_complement(c);
    return rc;
}

std::vector<hit> oracle_kmers(std::string_view seq, unsigned k) {
    std::vector<hit> hits;
    for (size_t pos = 0; pos + k <= seq.size(); ++pos) {
        std::string_view const sub = seq.substr(pos, k);
        if (!std::all_of(sub.begin(), sub.end(), [](char c) { return oracle_code(c) >= 0; })) {
            continue;
        }
        hits.emplace_back(std::min(oracle_pack(sub), oracle_pack(oracle_reverse_complement(sub))),
                          pos);
    }
    return hits;
}

std::vector<hit> scan(std::string_view seq, unsigned k) {
    std::vector<hit> hits;
    qmer::for_each_canonical_kmer(seq, k,
                                  [&](uint64_t v, size_t pos) { hits.emplace_back(v, pos); });
    return hits;
}

// Random sequences that look like what readers hand over: mostly bases in both cases, with runs of
// N, single IUPAC codes, U, gaps, and odd bytes (NUL, a UTF-8 lead byte) sprinkled in.
std::string random_sequence(std::mt19937_64& rng, size_t length) {
    static constexpr std::string_view bases = "ACGTACGTACGTacgt";
    static constexpr std::string_view others = "NnRYKMSWBDHVUu-.*0 \xC3";
    std::string s;
    s.reserve(length);
    std::uniform_int_distribution<int> percent(0, 99);
    while (s.size() < length) {
        int const roll = percent(rng);
        if (roll < 2) {  // a run of N of length 1..12
            s.append(std::min<size_t>(1 + rng() % 12, length - s.size()), 'N');
        } else if (roll < 4) {
            s.push_back(others[rng() % others.size()]);
        } else if (roll < 5) {
            s.push_back('\0');
        } else {
            s.push_back(bases[rng() % bases.size()]);
        }
    }
    return s;
}

std::string reverse_complement_text(std::string_view s) {
    std::string rc(s.rbegin(), s.rend());
    for (char& c : rc) {
        if (oracle_code(c) >= 0) c = oracle_complement(c);  // non-bases stay non-bases
    }
    return rc;
}

TEST(scanner, hand_worked_example) {
    // k = 3 over ACGTNACGTA: k-mers at 0 (ACG), 1 (CGT), 5 (ACG), 6 (CGT), 7 (GTA).
    // ACG = 000110 = 6, its reverse complement CGT = 011011 = 27: canonical 6 for both ACG and CGT.
    // GTA = 101100 = 44, reverse complement TAC = 110001 = 49: canonical 44.
    std::vector<hit> const expected = {{6, 0}, {6, 1}, {6, 5}, {6, 6}, {44, 7}};
    EXPECT_EQ(scan("ACGTNACGTA", 3), expected);
    EXPECT_EQ(scan("acgtnacgta", 3), expected);
    EXPECT_EQ(scan("AcGtNaCgTa", 3), expected);
    EXPECT_EQ(qmer::count_valid_kmers("ACGTNACGTA", 3), 5u);
}

TEST(scanner, exhaustive_over_short_sequences_and_small_k) {
    // Every sequence of length 0..7 over {A, C, G, T, N}, for k = 1..5: 97,656 sequences.
    static constexpr std::string_view alphabet = "ACGTN";
    for (size_t length = 0; length <= 7; ++length) {
        size_t combinations = 1;
        for (size_t i = 0; i < length; ++i) combinations *= alphabet.size();
        std::string seq(length, 'A');
        for (size_t index = 0; index < combinations; ++index) {
            size_t rest = index;
            for (size_t i = 0; i < length; ++i, rest /= alphabet.size()) {
                seq[i] = alphabet[rest % alphabet.size()];
            }
            for (unsigned k = 1; k <= 5; ++k) {
                auto const expected = oracle_kmers(seq, k);
                ASSERT_EQ(scan(seq, k), expected) << "sequence " << seq << ", k = " << k;
                ASSERT_EQ(qmer::count_valid_kmers(seq, k), expected.size()) << seq << " k=" << k;
            }
        }
    }
}

TEST(scanner, matches_oracle_on_random_sequences_for_every_k) {
    std::mt19937_64 rng(20261121);
    for (unsigned k = qmer::min_k; k <= qmer::max_k; ++k) {
        for (int round = 0; round < 40; ++round) {
            std::string const seq = random_sequence(rng, rng() % 300);
            auto const expected = oracle_kmers(seq, k);
            ASSERT_EQ(scan(seq, k), expected) << "k = " << k << ", round " << round;
            ASSERT_EQ(qmer::count_valid_kmers(seq, k), expected.size()) << "k = " << k;
        }
        // One long N-free stretch per k, so that k-mers follow each other for thousands of bases.
        std::string long_run(5000, 'A');
        for (char& c : long_run) c = "ACGT"[rng() % 4];
        ASSERT_EQ(scan(long_run, k), oracle_kmers(long_run, k)) << "k = " << k;
    }
}

TEST(scanner, reverse_complement_gives_the_same_multiset_with_mirrored_positions) {
    std::mt19937_64 rng(7);
    for (unsigned k = qmer::min_k; k <= qmer::max_k; ++k) {
        for (int round = 0; round < 10; ++round) {
            std::string const seq = random_sequence(rng, 50 + rng() % 400);
            std::string const rc = reverse_complement_text(seq);
            auto forward = scan(seq, k);
            auto backward = scan(rc, k);
            // The k-mer at p on one strand is the k-mer at n - k - p on the other, same canonical.
            for (auto& [value, pos] : backward) pos = seq.size() - k - pos;
            std::sort(forward.begin(), forward.end());
            std::sort(backward.begin(), backward.end());
            ASSERT_EQ(forward, backward) << "k = " << k << ", sequence " << seq;
        }
    }
}

TEST(scanner, lowercase_is_the_same_as_uppercase) {
    std::string const upper = "GATTACAGATTACACCGGTTNAACGTACGTTTGACA";
    std::string lower = upper;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (unsigned k = 1; k <= 20; ++k) EXPECT_EQ(scan(upper, k), scan(lower, k)) << "k = " << k;
}

TEST(scanner, every_non_base_byte_breaks_the_run) {
    // For each of the 248 non-base byte values b: "ACGTA" b "CGTAC" holds exactly the k-mers of its
    // two halves, none across b.
    for (int b = 0; b < 256; ++b) {
        char const c = static_cast<char>(b);
        if (oracle_code(c) >= 0) continue;
        std::string seq = "ACGTA";
        seq.push_back(c);
        seq += "CGTAC";
        EXPECT_EQ(qmer::count_valid_kmers(seq, 3), 6u) << "byte " << b;
        EXPECT_EQ(qmer::count_valid_kmers(seq, 6), 0u) << "byte " << b;
        auto const hits = scan(seq, 3);
        ASSERT_EQ(hits.size(), 6u) << "byte " << b;
        EXPECT_EQ(hits[2].second, 2u);
        EXPECT_EQ(hits[3].second, 6u);
    }
}

TEST(scanner, k_32_uses_all_64_bits) {
    std::string const all_t(32, 'T');
    std::string const all_a(32, 'A');
    // TTT...T is 2^64 - 1 forward; its reverse complement AAA...A is 0, the canonical form.
    EXPECT_EQ(scan(all_t, 32), (std::vector<hit>{{0, 0}}));
    EXPECT_EQ(scan(all_a, 32), (std::vector<hit>{{0, 0}}));
    // G followed by 31 C: forward 10 01 01 ... = 0x9555...5; reverse complement is 31 G then C,
    // 10 10 ... 10 01 = 0xAAAA...A9. The forward strand is smaller.
    std::string const g_then_c = "G" + std::string(31, 'C');
    EXPECT_EQ(scan(g_then_c, 32), (std::vector<hit>{{0x9555555555555555ULL, 0}}));
    EXPECT_EQ(qmer::reverse_complement(0x9555555555555555ULL, 32), 0xAAAAAAAAAAAAAAA9ULL);
    // A 33-base sequence gives two overlapping 32-mers.
    EXPECT_EQ(scan(all_t + "T", 32).size(), 2u);
    EXPECT_EQ(qmer::kmer_mask(32), ~uint64_t{0});
    EXPECT_EQ(qmer::kmer_mask(31), (uint64_t{1} << 62) - 1);
    EXPECT_EQ(qmer::kmer_mask(1), 3u);
}

TEST(scanner, reverse_complement_and_canonical_match_the_string_oracle) {
    std::mt19937_64 rng(99);
    for (unsigned k = qmer::min_k; k <= qmer::max_k; ++k) {
        for (int round = 0; round < 200; ++round) {
            std::string kmer(k, 'A');
            for (char& c : kmer) c = "ACGT"[rng() % 4];
            uint64_t const packed = oracle_pack(kmer);
            uint64_t const rc = oracle_pack(oracle_reverse_complement(kmer));
            ASSERT_EQ(qmer::reverse_complement(packed, k), rc) << kmer;
            ASSERT_EQ(qmer::reverse_complement(rc, k), packed) << kmer;
            ASSERT_EQ(qmer::canonical(packed, k), std::min(packed, rc)) << kmer;
            ASSERT_EQ(qmer::canonical(rc, k), std::min(packed, rc)) << kmer;
            // Bits above 2k are ignored, as documented.
            uint64_t const junk = k == 32 ? 0 : (rng() << (2 * k));
            ASSERT_EQ(qmer::reverse_complement(packed | junk, k), rc) << kmer;
            ASSERT_EQ(qmer::canonical(packed | junk, k), std::min(packed, rc)) << kmer;
        }
    }
}

TEST(scanner, invalid_k_throws_usage_error) {
    EXPECT_THROW(qmer::kmer_scanner(0), qmer::usage_error);
    EXPECT_THROW(qmer::kmer_scanner(33), qmer::usage_error);
    EXPECT_THROW(qmer::kmer_scanner(1000), qmer::usage_error);
    EXPECT_THROW(qmer::for_each_canonical_kmer("ACGT", 0, [](uint64_t, size_t) {}),
                 qmer::usage_error);
    EXPECT_THROW(qmer::count_valid_kmers("ACGT", 33), qmer::usage_error);
    EXPECT_THROW(qmer::reverse_complement(0, 0), qmer::usage_error);
    EXPECT_THROW(qmer::canonical(0, 33), qmer::usage_error);
    EXPECT_NO_THROW(qmer::kmer_scanner(1));
    EXPECT_NO_THROW(qmer::kmer_scanner(32));
    try {
        qmer::check_k(33);
        FAIL() << "no exception";
    } catch (qmer::usage_error const& e) {
        EXPECT_NE(std::string(e.what()).find("33"), std::string::npos) << e.what();
    }
}

TEST(scanner, empty_and_short_sequences_give_nothing) {
    for (unsigned k = qmer::min_k; k <= qmer::max_k; ++k) {
        EXPECT_TRUE(scan("", k).empty());
        EXPECT_EQ(qmer::count_valid_kmers("", k), 0u);
        std::string const short_seq(k - 1, 'C');
        EXPECT_TRUE(scan(short_seq, k).empty()) << "k = " << k;
        EXPECT_EQ(qmer::count_valid_kmers(short_seq, k), 0u);
        // k bases split by an N never make a k-mer (for k >= 2, both halves are shorter than k).
        if (k >= 2) {
            std::string split(k + 1, 'G');
            split[k / 2] = 'N';
            EXPECT_TRUE(scan(split, k).empty()) << "k = " << k;
        }
        EXPECT_EQ(scan(std::string(k, 'G'), k).size(), 1u) << "k = " << k;
    }
}

TEST(scanner, a_callback_returning_false_stops_the_scan) {
    qmer::kmer_scanner const scanner(4);
    std::vector<size_t> seen;
    bool const finished = scanner.for_each("ACGTACGTNACGTACGT", [&](uint64_t, size_t pos) {
        seen.push_back(pos);
        return pos < 2;  // stop after the k-mer at position 2
    });
    EXPECT_FALSE(finished);
    EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2}));
    EXPECT_TRUE(scanner.for_each("ACGTACGT", [](uint64_t, size_t) { return true; }));
    EXPECT_TRUE(scanner.for_each("ACGTACGT", [](uint64_t, size_t) {}));
}

TEST(scanner, one_scanner_can_be_reused_and_keeps_no_state_between_sequences) {
    qmer::kmer_scanner const scanner(5);
    EXPECT_EQ(scanner.k(), 5u);
    EXPECT_EQ(scanner.mask(), qmer::kmer_mask(5));
    std::vector<hit> first;
    std::vector<hit> second;
    // A sequence ending in the middle of a run must not leak bases into the next one.
    scanner.for_each("ACGTACG", [&](uint64_t v, size_t p) { first.emplace_back(v, p); });
    scanner.for_each("TTAC", [&](uint64_t v, size_t p) { second.emplace_back(v, p); });
    EXPECT_EQ(first, oracle_kmers("ACGTACG", 5));
    EXPECT_TRUE(second.empty());
    EXPECT_EQ(scanner.count("ACGTACGTTT"), 6u);
}

}  // namespace
