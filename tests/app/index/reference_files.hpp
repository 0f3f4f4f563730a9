#pragma once
// Small references for the tests of app/index/'s units, and an oracle of their canonical k-mers
// computed from the bases directly (not through core/kmer/scanner.hpp), so that a unit's answer
// is checked against an account of the input that it does not share.

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qmer::test {

inline std::string random_bases(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, 'A');
    for (auto& c : s) c = "ACGT"[rng() % 4];
    return s;
}

// A FASTA file of the records (name, sequence), each sequence on one line.
inline void write_fasta(std::string const& path,
                        std::vector<std::pair<std::string, std::string>> const& records) {
    std::ofstream out(path);
    for (auto const& [name, sequence] : records) out << '>' << name << '\n' << sequence << '\n';
    if (!out) throw std::runtime_error("cannot write " + path);
}

// The 2-bit code of a base (A=0 C=1 G=2 T=3, either case), or -1 for any other byte.
inline int base_code(char c) {
    size_t const i = std::string_view("ACGTacgt").find(c);
    return i == std::string_view::npos ? -1 : static_cast<int>(i % 4);
}

// The canonical k-mers of `seq` in order: every window of k bases that holds no other byte, packed
// first base highest, the smaller of the k-mer and its reverse complement.
inline std::vector<uint64_t> canonical_kmers(std::string const& seq, unsigned k) {
    std::vector<uint64_t> out;
    for (size_t start = 0; start + k <= seq.size(); ++start) {
        uint64_t forward = 0, reverse = 0;
        bool valid = true;
        for (size_t i = 0; i < k && valid; ++i) {
            int const code = base_code(seq[start + i]);
            int const back = base_code(seq[start + k - 1 - i]);
            valid = code >= 0 && back >= 0;
            forward = (forward << 2) | static_cast<uint64_t>(code);
            reverse = (reverse << 2) | static_cast<uint64_t>(3 - back);
        }
        if (valid) out.push_back(forward < reverse ? forward : reverse);
    }
    return out;
}

}  // namespace qmer::test
