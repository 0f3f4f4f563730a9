// What a first-stage test on a k-mer's minimizer would save the default query, measured before it
// is built into the index: a per-window signature of the minimizers the reference put in that
// window, checked before a k-mer is looked up.
//
// Why it is exact: under minimizer-local hashing (core/kmer/sequence_hashing.hpp) a k-mer's hash
// carries its minimizer's spread twice, the top B bits (its window of the table) and E more bits
// at the bottom (core/qf/stored/level_windows.hpp). Every k-mer of the reference sets, in its
// window's signature of s bits, the bit its hash's low log2(s) bits name: a k-mer of the
// reference therefore always finds its bit set, and a read's k-mer whose bit is clear cannot be
// in the reference (nor can the rest of its super-k-mer, which shares the bit). A k-mer of an
// overloaded window (hashed plainly) always passes. What the test gives up is only the table's
// false positives among the k-mers it turns away.
//
// The signature table holds s bits for each of the 2^B windows: s 2^B / n bits per k-mer of an
// index of n k-mers. It is small (2^19 windows x 16 bits = 1 MiB at 48 Mbp) and read once per
// super-k-mer in practice (consecutive k-mers share the window's word).
//
// The run: the index's level (one level only), the references it was built from, and read files
// loaded into memory first (parsing is not measured); for each read, its k-mers are hashed, each
// k-mer that passes the test is prefetched and looked up in groups of 64 as the default query does
// (app/pipeline/kmer_batches.hpp), and the read's hits counted. Modes, interleaved over the
// rounds on one thread, the fastest round counting: no gate, and gates of 8, 16, 32 and 64 bits a
// window. Checked in the run: no gated-out k-mer is one of the reference's (its hash is in the
// reference's sorted hash set), and every read's hits under a gate are at most its hits without.
//
// Usage: query_superkmer_gate_bench INDEX REFERENCE.fa [REFERENCE...] -- READS.fq [READS...]
//        [--reads N (per file, default 300000)] [--rounds R (default 3)]
// Prints one line per (reads file, mode): seconds, ns per k-mer, lookups made, hits, and the
// signature's bits per k-mer.

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "app/filters/registry.hpp"
#include "bench/qf/harness.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/stored/select.hpp"
#include "core/qf/stored/table.hpp"
#include "io/index_file.hpp"
#include "io/sequence_reader.hpp"

namespace {

using namespace qmer;
using bench::clock_type;
using bench::seconds_since;

constexpr size_t group_size = 64;

// One signature table: `bits` bits for each of 2^B windows, in 64-bit words.
struct gate {
    unsigned bits = 0;  // s: 8, 16, 32 or 64
    unsigned shift = 0;
    std::vector<uint64_t> words;

    gate(unsigned s, unsigned window_bits)
        : bits(s), shift(64 - window_bits), words(((uint64_t{1} << window_bits) * s + 63) / 64) {}

    [[gnu::always_inline]] uint64_t bit_of(uint64_t h) const noexcept {
        return (h >> shift) * bits + (h & (bits - 1));
    }
    uint64_t const* word_of(uint64_t h) const noexcept { return &words[bit_of(h) / 64]; }
    void set(uint64_t h) noexcept {
        uint64_t const b = bit_of(h);
        words[b / 64] |= uint64_t{1} << (b % 64);
    }
    [[gnu::always_inline]] bool passes(uint64_t h) const noexcept {
        uint64_t const b = bit_of(h);
        return (words[b / 64] >> (b % 64)) & 1;
    }
};

struct tally {
    double seconds = 1e300;
    uint64_t kmers = 0, lookups = 0, hits = 0;
};

std::vector<std::string> load_reads(std::string const& path, size_t most) {
    std::vector<std::string> reads;
    io::sequence_reader reader(path);
    io::record_batch batch;
    while (reads.size() < most && reader.next_batch(batch))
        for (size_t i = 0; i < batch.size() && reads.size() < most; ++i)
            reads.emplace_back(batch[i].sequence);
    return reads;
}

template <typename Select, typename Hashing>
int run(io::index_file const& file, qf::rank_select_table const& table, Hashing const& hashing,
        std::vector<std::string> const& refs, std::vector<std::string> const& read_files,
        size_t most, unsigned rounds) {
    if constexpr (!Hashing::minimizer_local) {
        std::fprintf(stderr, "the index is not minimizer-local: nothing to gate\n");
        return 2;
    } else {
        unsigned const window_bits = file.header().hash.window_bits;
        std::vector<gate> gates;
        for (unsigned s : {8u, 16u, 32u, 64u}) gates.emplace_back(s, window_bits);
        // The reference's hashes, sorted: the oracle for "no k-mer of the reference is turned
        // away".
        std::vector<uint64_t> ref_hashes;
        for (auto const& path : refs) {
            io::sequence_reader reader(path);
            io::record_batch batch;
            while (reader.next_batch(batch))
                for (size_t i = 0; i < batch.size(); ++i)
                    hashing.for_each_tagged(batch[i].sequence, [&](uint64_t h, bool overloaded) {
                        ref_hashes.push_back(h);
                        if (!overloaded)
                            for (auto& g : gates) g.set(h);
                    });
        }
        std::sort(ref_hashes.begin(), ref_hashes.end());
        ref_hashes.erase(std::unique(ref_hashes.begin(), ref_hashes.end()), ref_hashes.end());
        double const elements = static_cast<double>(file.header().elements);
        std::printf("index %s: %" PRIu64 " k-mers, window bits %u; reference hashes %zu\n",
                    file.path().c_str(), file.header().elements, window_bits, ref_hashes.size());
        for (auto const& g : gates)
            std::printf("gate %2u bits a window: %.3f bits per k-mer, %.1f%% of its bits set\n",
                        g.bits, static_cast<double>(g.words.size()) * 64 / elements,
                        100.0 * static_cast<double>([&] {
                            uint64_t c = 0;
                            for (uint64_t w : g.words) c += std::popcount(w);
                            return c;
                        }()) /
                            (static_cast<double>(g.words.size()) * 64));

        for (auto const& path : read_files) {
            std::vector<std::string> const reads = load_reads(path, most);
            // No gate, each gate, and the 32-bit gate adaptive (last).
            size_t const modes = 2 + gates.size();
            std::vector<tally> best(modes);
            std::vector<std::vector<uint64_t>> read_hits(modes,
                                                         std::vector<uint64_t>(reads.size()));
            uint64_t turned_away_of_reference = 0;
            for (unsigned round = 0; round < rounds; ++round) {
                for (size_t m = 0; m < modes; ++m) {
                    gate const* g = m == 0 ? nullptr : m == modes - 1 ? &gates[2] : &gates[m - 1];
                    tally t;
                    std::array<uint64_t, group_size + 1> group;
                    std::array<uint64_t, group_size> raw;
                    std::array<bool, group_size> plain;
                    auto const t0 = clock_type::now();
                    for (size_t r = 0; r < reads.size(); ++r) {
                        uint64_t hits = 0;
                        if (g == nullptr) {
                            // As the default query: hash and prefetch a group, then look it up.
                            size_t k = 0;
                            hashing.for_each_tagged(reads[r], [&](uint64_t h, bool) {
                                ++t.kmers;
                                table.prefetch_local(h);
                                group[k++] = h;
                                if (k == group_size) {
                                    hits +=
                                        table.template count_contained<Select>({group.data(), k});
                                    t.lookups += k;
                                    k = 0;
                                }
                            });
                            if (k != 0) {
                                hits += table.template count_contained<Select>({group.data(), k});
                                t.lookups += k;
                            }
                        } else {
                            // Three passes over a group: hash it and prefetch each k-mer's
                            // signature word (a cache miss per super-k-mer where the signatures
                            // outgrow the cache); test it, keeping and prefetching the table lines
                            // of those that pass, without a branch on the test (present and absent
                            // k-mers take it both ways); look those up.
                            // Adaptive: a read's first 16 k-mers are looked up as without a
                            // gate, and the gate is used from then on only while the read has no
                            // hit (a present read then pays nothing for it).
                            bool const adaptive = m == modes - 1;
                            bool gating = !adaptive;
                            size_t size = adaptive ? 16 : group_size;
                            size_t n = 0;
                            auto flush = [&] {
                                size_t k = 0;
                                if (gating) {
                                    uint64_t last = raw[0];  // the last hash that passed
                                    for (size_t i = 0; i < n; ++i) {
                                        uint64_t const h = raw[i];
                                        bool const pass = plain[i] || g->passes(h);
                                        last = pass ? h : last;
                                        table.prefetch_local(last);
                                        group[k] = h;
                                        k += pass;
                                    }
                                    if (k != 0)
                                        hits += table.template count_contained<Select>(
                                            {group.data(), k});
                                } else {
                                    k = n;
                                    hits += table.template count_contained<Select>({raw.data(), n});
                                }
                                t.lookups += k;
                                n = 0;
                                if (adaptive) {
                                    gating = hits == 0;
                                    size = group_size;
                                }
                            };
                            hashing.for_each_tagged(reads[r], [&](uint64_t h, bool overloaded) {
                                ++t.kmers;
                                if (gating)
                                    __builtin_prefetch(g->word_of(h));
                                else
                                    table.prefetch_local(h);
                                raw[n] = h;
                                plain[n] = overloaded;
                                if (++n == size) flush();
                            });
                            if (n != 0) flush();
                        }
                        read_hits[m][r] = hits;
                        t.hits += hits;
                    }
                    t.seconds = seconds_since(t0);
                    if (t.seconds < best[m].seconds) best[m] = t;
                }
            }
            // The oracle, once, outside the timing: every k-mer a gate turns away is absent from
            // the reference.
            for (auto const& g : gates)
                for (auto const& read : reads)
                    hashing.for_each_tagged(read, [&](uint64_t h, bool overloaded) {
                        if (!overloaded && !g.passes(h) &&
                            std::binary_search(ref_hashes.begin(), ref_hashes.end(), h))
                            ++turned_away_of_reference;
                    });
            uint64_t above = 0;
            for (size_t m = 1; m < modes; ++m)
                for (size_t r = 0; r < reads.size(); ++r)
                    above += read_hits[m][r] > read_hits[0][r];
            for (size_t m = 0; m < modes; ++m) {
                tally const& t = best[m];
                std::printf(
                    "%s, %zu reads, %-8s: %.3f s, %.2f ns a k-mer, %.3fx no gate's time; lookups "
                    "%.1f%% of %" PRIu64 " k-mers; hits %" PRIu64 "\n",
                    path.c_str(), reads.size(),
                    m == 0           ? "no gate"
                    : m == modes - 1 ? "32 adapt"
                                     : (std::to_string(gates[m - 1].bits) + " bits").c_str(),
                    t.seconds, 1e9 * t.seconds / static_cast<double>(t.kmers),
                    t.seconds / best[0].seconds,
                    100.0 * static_cast<double>(t.lookups) / static_cast<double>(t.kmers), t.kmers,
                    t.hits);
            }
            if (turned_away_of_reference != 0 || above != 0) {
                std::printf("FAILED: %" PRIu64 " k-mers of the reference turned away, %" PRIu64
                            " reads with more hits under a gate\n",
                            turned_away_of_reference, above);
                return 1;
            }
        }
        return 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> refs, reads;
    std::string index;
    size_t most = 300000;
    unsigned rounds = 3;
    bool after_dashes = false;
    for (int i = 1; i < argc; ++i) {
        std::string const a = argv[i];
        if (a == "--reads" && i + 1 < argc) {
            most = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--rounds" && i + 1 < argc) {
            rounds = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        } else if (a == "--") {
            after_dashes = true;
        } else if (index.empty()) {
            index = a;
        } else {
            (after_dashes ? reads : refs).push_back(a);
        }
    }
    if (index.empty() || refs.empty() || reads.empty() || rounds == 0) {
        std::fprintf(stderr,
                     "usage: query_superkmer_gate_bench INDEX REFERENCE... -- READS... [--reads N] "
                     "[--rounds R]\n");
        return 2;
    }
    io::index_file file(index);
    auto levels = app::rank_select_levels_of(file);
    if (!levels || levels->levels() != 1) {
        std::fprintf(stderr, "%s: a one-level default index is needed\n", index.c_str());
        return 2;
    }
    qf::rank_select_table const& table = levels->level(0);
    io::index_header const& h = file.header();
    return with_kmer_hashing(h.k, h.hash_seed, h.hash, [&](auto const& hashing) {
        if (qf::rank_select::pdep_is_fast())
            return run<qf::rank_select::pdep_select>(file, table, hashing, refs, reads, most,
                                                     rounds);
        return run<qf::rank_select::broadword_select>(file, table, hashing, refs, reads, most,
                                                      rounds);
    });
}
