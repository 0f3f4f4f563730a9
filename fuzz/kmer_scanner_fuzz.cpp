// Fuzz target: the rolling canonical k-mer scanner (core/kmer/scanner.hpp) against a brute-force
// oracle written here from ARCHITECTURE.md's k-mer contract alone.
//
// The input bytes are a sequence (any bytes: bases in both cases, N, IUPAC, control bytes, >=
// 0x80). For every k in 1..32 the target checks:
//   - for_each reports exactly the k-mers the oracle finds (position of every window of k A/C/G/T
//     bytes, in order) with the oracle's canonical value: min(forward, reverse complement), each
//     recomputed from scratch for that window;
//   - count() equals that number;
//   - a callback returning false stops the scan right there (for_each returns false, no further
//     call), at a stop point taken from the input;
//   - reverse_complement() and canonical() of each forward k-mer agree with the oracle.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/kmer/scanner.hpp"
#include "fuzz_support.hpp"

namespace {

using qmer::fuzz::fail;

// The contract's 2-bit codes, spelled out independently of core/kmer/encoding.hpp.
int oracle_code(unsigned char c) {
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

struct oracle_kmer {
    uint64_t forward;
    uint64_t reverse_complement;
    uint64_t canonical;
    size_t position;
};

// Every window of k bases, each computed from its k bytes: first base most significant.
std::vector<oracle_kmer> oracle_kmers(std::string_view seq, unsigned k) {
    std::vector<oracle_kmer> out;
    for (size_t i = 0; i + k <= seq.size(); ++i) {
        uint64_t forward = 0;
        uint64_t reverse = 0;
        bool all_bases = true;
        for (size_t j = 0; j < k && all_bases; ++j) {
            int const code = oracle_code(static_cast<unsigned char>(seq[i + j]));
            if (code < 0) {
                all_bases = false;
                break;
            }
            forward = forward * 4 + static_cast<uint64_t>(code);
        }
        if (!all_bases) continue;
        for (size_t j = k; j-- > 0;) {
            int const code = oracle_code(static_cast<unsigned char>(seq[i + j]));
            reverse = reverse * 4 + static_cast<uint64_t>(3 - code);
        }
        out.push_back({forward, reverse, forward < reverse ? forward : reverse, i});
    }
    return out;
}

std::string where(unsigned k, size_t index) {
    return "k = " + std::to_string(k) + ", k-mer #" + std::to_string(index);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
    std::string_view const seq(reinterpret_cast<char const*>(data), size);
    for (unsigned k = qmer::min_k; k <= qmer::max_k; ++k) {
        qmer::kmer_scanner const scanner(k);
        auto const expected = oracle_kmers(seq, k);

        size_t seen = 0;
        bool const finished = scanner.for_each(seq, [&](uint64_t canonical, size_t position) {
            if (seen >= expected.size())
                fail("scanner reported more k-mers than the oracle (" + where(k, seen) + ")");
            auto const& e = expected[seen];
            if (position != e.position)
                fail("position " + std::to_string(position) + " != " + std::to_string(e.position) +
                     " (" + where(k, seen) + ")");
            if (canonical != e.canonical)
                fail("canonical value differs from the oracle (" + where(k, seen) + ")");
            ++seen;
        });
        if (!finished) fail("a void callback's scan returned false");
        if (seen != expected.size())
            fail("scanner reported " + std::to_string(seen) + " k-mers, oracle " +
                 std::to_string(expected.size()) + " (k = " + std::to_string(k) + ")");
        if (scanner.count(seq) != expected.size())
            fail("count() = " + std::to_string(scanner.count(seq)) + ", oracle " +
                 std::to_string(expected.size()) + " (k = " + std::to_string(k) + ")");

        for (size_t i = 0; i < expected.size(); ++i) {
            auto const& e = expected[i];
            if (qmer::reverse_complement(e.forward, k) != e.reverse_complement)
                fail("reverse_complement() differs from the oracle (" + where(k, i) + ")");
            if (qmer::canonical(e.forward, k) != e.canonical)
                fail("canonical() differs from the oracle (" + where(k, i) + ")");
        }

        // Early stop after the (stop+1)-th k-mer; the stop point depends on the input and k.
        if (!expected.empty()) {
            size_t const stop = (size + k * 7) % expected.size();
            size_t calls = 0;
            bool const completed = scanner.for_each(seq, [&](uint64_t, size_t) -> bool {
                ++calls;
                return calls <= stop;
            });
            if (completed) fail("a scan stopped by its callback returned true");
            if (calls != stop + 1)
                fail("the scan went on after its callback returned false (k = " +
                     std::to_string(k) + ")");
        }
    }
    return 0;
}
