#pragma once
// A query's lookups behind the index's minimizer gate (core/qf/stored/minimizer_gate.hpp): the
// k-mers of a read whose gate bit is clear are not looked up at all, which is most of an absent
// read's k-mers. What that saves is the lookups' work: their instructions, and their misses where
// the gate is cached and the table is not. At host scale the gate (256 MiB for 2.4 G k-mers) costs
// a miss per super-k-mer itself, about what the table's blocks cost a read with super-k-mer
// locality, so there the saving is the instructions: absent reads took 0.85x their CPU time at
// 2.4 Gbp, 0.7x at 48 Mbp (bench/scale, bench/peers).
//
// Adaptive, as bench/query/SUPERKMER_GATE.md measured it: the gate is an extra pass over each
// group and a load, with nothing to skip on a read the index holds. So a read's (pair's) first
// ungated_kmers k-mers are looked up as without a gate, and later ones through it only while the
// read has no hit (decided at fixed k-mer counts: gated_read): a present read pays for the gate in
// none of its groups, an absent one in all but its first.
//
// A group under the gate goes in two passes: while the k-mers are hashed, each one's gate word is
// prefetched (a super-k-mer's k-mers share it: one miss per super-k-mer where the gate outgrows
// the cache); then each k-mer is tested, kept if it passes, and its table lines prefetched,
// without a branch on the test (present and absent k-mers take it both ways); then the kept ones
// are looked up together. A k-mer of an overloaded window (hashed plainly, no window of the gate)
// always passes. What a read reports is unchanged but for `hits`, which can only lose chance
// hits (a k-mer turned away was never stored); `kmers` counts every k-mer.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "app/pipeline/kmer_batches.hpp"
#include "core/kmer/batch_hashing.hpp"
#include "core/qf/stored/minimizer_gate.hpp"

namespace qmer::app {

// The k-mers of a read (pair) looked up before the gate may be used, and how often after that
// the read's hits are looked at again to decide whether it goes on under the gate.
inline constexpr uint64_t ungated_kmers = 16;
inline constexpr uint64_t gate_check_kmers = lookup_group;

// Where a read (pair) stands: its k-mers so far and their hits, and whether its next k-mers go
// through the gate. The decision is taken at fixed k-mer counts (ungated_kmers, then every
// gate_check_kmers), never at a group's or a mate's end, so that the default and --quick take the
// same decisions for the same k-mers: a read --quick does not settle gets exactly the default's
// counts, and one it settles has the default's hits up to there (the same verdict either way).
// A pair's second mate goes on from its first mate's.
struct gated_read {
    uint64_t kmers = 0;
    uint64_t hits = 0;
    bool gating = false;
    uint64_t next_check = ungated_kmers;

    // After k-mers were counted: at a check, the gate from now on if the read has no hit yet.
    void counted(uint64_t n) noexcept {
        kmers += n;
        if (kmers == next_check) {
            gating = hits == 0;
            next_check += gate_check_kmers;
        }
    }
};

// The prefetch of h's first lookup, as for_each_kmer_hash_grouped does it.
template <typename Hashing, typename Filter>
[[gnu::always_inline]] inline void prefetch_first_lookup(Filter const& filter,
                                                         uint64_t h) noexcept {
    if constexpr (first_prefetching_filter<Filter>) {
        filter.prefetch_first(h);
    } else {
        prefetch_lookup<Hashing>(filter, h);
    }
}

// Hashes seq's k-mers (Hashing minimizer-local) and looks them up a group at a time behind the
// gate, into `read`. Without `quick` every k-mer is looked up (the default); with it (--quick) the
// walk stops once read.hits reaches `settle`, and read.kmers counts the k-mers handed over by then.
//
// Two ways of hashing, switched at the checks (the read's state decides, so the k-mers and the
// counts are the same either way): while the read is not under the gate, the rolling scan
// (Hashing::for_each_tagged), whose hashing runs in the shadow of the lookups' misses; under the
// gate, `blocks` (core/kmer/batch_hashing.hpp: AVX-512 where the CPU has it), since there most
// k-mers are not looked up and the hashing is the work: absent reads ~0.85x the CPU time, reads
// with hits as before (bench/kmer/README.md). blocks hashes with Hashing's recipe. Where it has no
// SIMD path (simd_level::scalar: a rolling scan per block, which scans each block's first k - 1
// bases again), the rolling scan goes on under the gate too.
template <typename Filter, typename Hashing>
void count_gated(Filter const& filter, qf::minimizer_gate const& gate, Hashing const& hashing,
                 batch_kmer_hashing const& blocks, std::string_view seq, gated_read& read,
                 bool quick, uint64_t settle) {
    if (quick && read.hits >= settle) return;
    std::array<uint64_t, lookup_group> raw;
    std::array<uint64_t, lookup_group> kept;
    uint64_t plain = 0;  // bit i: raw[i] is a plain hash (an overloaded window's k-mer)
    size_t n = 0;
    // A group ends at the next check at the latest. --quick's groups start at first_stop_group
    // and double up to last_stop_group (as for_each_kmer_hash_grouped's: a read settled by its
    // first k-mers has hashed few it no longer needs), but under the gate they are whole: such a
    // read has no hit yet, so a group seldom settles it, and small groups cost more per k-mer
    // (absent reads 0.82x the CPU time with whole ones).
    size_t quick_size = first_stop_group;
    auto size_now = [&]() -> size_t {
        uint64_t const want = quick && !read.gating ? quick_size : lookup_group;
        return static_cast<size_t>(std::min<uint64_t>(want, read.next_check - read.kmers));
    };
    auto passes = [&](size_t i) { return ((plain >> i) & 1) != 0 || gate.passes(raw[i]); };
    // Looks the group up; false once --quick's read is settled.
    auto hand_over = [&]() -> bool {
        bool const gating = read.gating;
        std::span<uint64_t const> group(raw.data(), n);
        if (gating) {
            size_t k = 0;
            uint64_t last = raw[0];  // the last hash that passed (prefetched again: harmless)
            for (size_t i = 0; i < n; ++i) {
                uint64_t const h = raw[i];
                bool const pass = passes(i);
                last = pass ? h : last;
                prefetch_first_lookup<Hashing>(filter, last);
                kept[k] = h;
                k += pass;
            }
            group = std::span<uint64_t const>(kept.data(), k);
        }
        // The group's hits in one call (its lookups overlap); --quick walks it k-mer by k-mer
        // only where it settles the read, to find the k-mer that does (its lines are cached by
        // then): an unsettled read, most of all an absent one, costs what the default's does.
        uint64_t const found = group.empty() ? 0 : count_contained_read_only(filter, group);
        if (!quick || read.hits + found < settle) {
            read.hits += found;
        } else {
            size_t looked = 0;
            for (uint64_t const h : group) {
                read.hits += contains_read_only(filter, h);
                ++looked;
                if (read.hits >= settle) {
                    // Handed over: every k-mer up to the one that settled it, those the gate
                    // turned away included.
                    size_t at = looked - 1;
                    if (gating) {
                        at = 0;
                        for (size_t passed = 0; at < n; ++at)
                            if (passes(at) && ++passed == looked) break;
                    }
                    read.kmers += at + 1;
                    return false;
                }
            }
        }
        read.counted(n);
        n = 0;
        plain = 0;
        quick_size = std::min(2 * quick_size, last_stop_group);
        return true;
    };
    size_t const k = blocks.k();
    bool const blocks_pay = blocks.level() != simd_level::scalar;
    size_t start = 0;  // the first k-mer start of seq not hashed yet
    while (start + k <= seq.size()) {
        if (!read.gating || !blocks_pay) {
            // The rolling scan from `start`, until the read goes under the gate at a check (to the
            // end where the blocks do not pay).
            size_t size = size_now();
            bool settled = false;
            size_t next = seq.size();
            bool const finished = hashing.for_each_tagged_with_ends(
                seq.substr(start), [&](uint64_t h, bool overloaded, size_t end) -> bool {
                    if (read.gating)
                        gate.prefetch(h);
                    else
                        prefetch_first_lookup<Hashing>(filter, h);
                    raw[n] = h;
                    plain |= uint64_t{overloaded} << n;
                    if (++n < size) return true;
                    if (!hand_over()) {
                        settled = true;
                        return false;
                    }
                    if (read.gating && blocks_pay) {
                        next = start + end - k + 1;  // the start after this k-mer's
                        return false;
                    }
                    size = size_now();
                    return true;
                });
            if (settled) return;
            if (finished) break;
            start = next;
        } else {
            // Under the gate: a group hashed a block at a time, each hash's gate word prefetched
            // as it is made (one miss per super-k-mer where the gate outgrows the cache).
            size_t const size = size_now();
            while (n < size && start + k <= seq.size()) {
                uint64_t block_plain = 0;
                size_t const at = n, asked = size - n;
                n += blocks.hash_block(seq, start, asked, raw.data() + at, block_plain,
                                       [&](uint64_t h) { gate.prefetch(h); });
                plain |= block_plain << at;
                start += asked;
            }
            if (n == 0) break;
            if (!hand_over()) return;
        }
    }
    if (n != 0) (void)hand_over();  // the partial last group (a pair's first mate's: its own)
}

}  // namespace qmer::app
