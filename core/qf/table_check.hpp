#pragma once
// Checks that saved quotient filter words describe a table the filters can work on, before a
// filter is built from them (app/filters/persistence.hpp, loading an index file).
//
// Why: a file whose checksum is valid can still hold words no filter wrote (damaged before it was
// sealed, or made on purpose). The filters trust their tables: a slot left in a lock state (the
// locally locked filter's 010 read lock and 110 write lock) makes every operation that meets it
// wait forever for a thread that does not exist (a crafted file makes `qmer index --append` hang
// so: fuzz/README.md), a shifted slot 0 leaves every left scan without a cluster start,
// and a run that starts before its canonical slot makes the locally locked insert index its buffer
// below its start. A saved table is quiescent (indexes are written after the last insert), so it
// holds no locks, and its status bits describe complete, ordered runs.
//
// What is checked, for the 3-status-bit layout of core/qf/three_bit_layout.hpp (the sequential,
// externally locked and locally locked filters):
//   - the word count matches the slot count, and the bits past the last slot of each group (and
//     past the last slot of the table) are zero, as grouped_slots leaves them;
//   - no slot is a continuation without being shifted (the two lock states, and nothing else, have
//     that form: an element of a run that began in an earlier slot is never in its own canonical
//     slot);
//   - an unshifted element starts a cluster and is occupied (its own run begins there); a shifted
//     element follows another element (slot 0 and the slot after an empty one are never shifted);
//   - occupied bits only on canonical slots (not in the overflow area);
//   - in each cluster, the k-th run begins after the k-th occupied slot (k >= 2; the first run
//     begins at the cluster start, which is its canonical slot), and the cluster ends with as many
//     runs as occupied slots: no run is missing, or would begin past the end of the table;
//   - remainders strictly increase within a run (runs are kept sorted, a fingerprint is stored
//     once).
// Empty slots are recognised by their status bits (000), as the filters recognise them; their
// remainder bits are not looked at (nothing reads them).
//
// Cost: one pass over the words a 64-bit group at a time, no allocation (less than loading the
// index costs otherwise: bench/MEASUREMENTS.md). Only a table that fails is
// walked again slot by slot, for the reason. core does no I/O, so the reason comes back as a
// string for the caller to report.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf {

struct table_shape {
    unsigned remainder_bits = 0;   // slots are remainder_bits + 3 bits wide
    uint64_t canonical_slots = 0;  // 2^q: the slots that are some element's canonical slot
    uint64_t total_slots = 0;      // with the overflow area
};

namespace detail {
// A slot's status as "OCS" digits (occupied, continuation, shifted), the notation of the comments
// in core/qf/.
inline std::string status_digits(uint64_t v) {
    std::string s = "000";
    if (v & status::occupied) s[0] = '1';
    if (v & status::continuation) s[1] = '1';
    if (v & status::shifted) s[2] = '1';
    return s;
}

// The checks that do not look at slots; "" when they pass.
inline std::string check_shape(std::span<uint64_t const> words, table_shape shape) {
    unsigned const slot_bits = shape.remainder_bits + 3;
    if (shape.remainder_bits < 1 || slot_bits > 64) return "bad slot width";
    if (shape.canonical_slots > shape.total_slots) return "fewer slots than canonical slots";
    unsigned const spg = 64 / slot_bits;
    if (words.size() != (shape.total_slots + spg - 1) / spg)
        return "the word count does not match the slot count";
    return {};
}

// The slots of group g that are in the table (all but, perhaps, the last group's).
inline unsigned lanes_of(size_t g, unsigned spg, uint64_t total_slots) {
    uint64_t const first = g * spg;
    return static_cast<unsigned>(total_slots - first < spg ? total_slots - first : spg);
}

// x << n for n up to 64 (a 64-bit slot's "next lane" is past the word).
inline uint64_t shl(uint64_t x, unsigned n) noexcept {
    return n >= 64 ? 0 : x << n;
}

// The first problem of the table, naming the slot: the rules of `consistent` (below), one slot
// at a time.
inline std::string explain(std::span<uint64_t const> words, table_shape shape) {
    using std::to_string;
    unsigned const slot_bits = shape.remainder_bits + 3;
    unsigned const spg = 64 / slot_bits;
    uint64_t const slot_mask = slot_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << slot_bits) - 1;
    uint64_t const status_mask = status::mask;

    bool in_cluster = false;
    size_t cluster_start = 0;
    uint64_t occupied = 0;  // occupied slots of the current cluster so far
    uint64_t runs = 0;      // runs begun in the current cluster so far
    uint64_t previous = 0;  // the remainder of the previous element of the current run
    auto cluster_end = [&](size_t end) -> std::string {
        in_cluster = false;
        if (occupied == runs) return {};
        return "the cluster of slots " + to_string(cluster_start) + ".." + to_string(end - 1) +
               " has " + to_string(occupied) + " occupied slots but " + to_string(runs) + " runs" +
               (end == shape.total_slots ? " (runs past the end of the table)" : "");
    };

    for (size_t g = 0; g < words.size(); ++g) {
        uint64_t const gv = words[g];
        size_t const first = g * spg;
        unsigned const lanes = lanes_of(g, spg, shape.total_slots);
        if (lanes * slot_bits < 64 && (gv >> (lanes * slot_bits)) != 0)
            return "bits set past the last slot of word " + to_string(g);
        for (unsigned k = 0; k < lanes; ++k) {
            size_t const i = first + k;
            uint64_t const v = (gv >> (k * slot_bits)) & slot_mask;
            if ((v & status_mask) == 0) {  // empty
                if (in_cluster)
                    if (auto why = cluster_end(i); !why.empty()) return why;
                continue;
            }
            bool const occ = (v & status::occupied) != 0;
            bool const cont = (v & status::continuation) != 0;
            bool const shifted = (v & status::shifted) != 0;
            uint64_t const remainder = v >> 3;
            if (cont && !shifted)
                return "slot " + to_string(i) + " has status " + status_digits(v) +
                       " (occupied, continuation, shifted): a lock or no state at all; a saved "
                       "table holds neither";
            if (occ && i >= shape.canonical_slots)
                return "slot " + to_string(i) + " in the overflow area is marked occupied";
            if (!shifted) {  // status 100: a cluster start, its own run's first element
                if (in_cluster)
                    if (auto why = cluster_end(i); !why.empty()) return why;
                in_cluster = true;
                cluster_start = i;
                occupied = runs = 1;
                previous = remainder;
                continue;
            }
            if (!in_cluster)
                return "slot " + to_string(i) +
                       " holds a shifted element with no element before it";
            uint64_t const occupied_before = occupied;  // occupied slots in [cluster start, i)
            if (occ) ++occupied;
            if (cont) {
                if (remainder <= previous)
                    return "the run holding slot " + to_string(i) + " is not sorted";
            } else {
                // Run number runs + 1 begins here; its canonical slot is the (runs + 1)-th occupied
                // slot of the cluster, which must lie before i (i is shifted).
                if (occupied_before < runs + 1)
                    return "slot " + to_string(i) + " begins a run with no occupied slot before it";
                ++runs;
            }
            previous = remainder;
        }
    }
    if (in_cluster) return cluster_end(shape.total_slots);
    return {};
}

// Whether the slots pass every check (after check_shape); `explain` says which one failed. The
// hot path of loading an index, so it works a group (64-bit word) at a time, not a slot at a time
// with a data-dependent branch per slot (bench/MEASUREMENTS.md). Lane masks as in
// core/qf/three_bit_layout.hpp's scan::layout: bit 0 of each lane, S/C/O the
// shifted/continuation/occupied bits moved there.
//
// The cluster rules use one number, x = (occupied slots) - (runs begun) over the open cluster's
// slots before the current one. A run beginning at a shifted slot i is run number (runs begun
// before i) + 1, and its canonical slot - that many occupied slots into the cluster - lies before i
// exactly when x >= 1 there; a cluster ends complete exactly when x = 0 at the unshifted slot (a
// cluster start or an empty slot) that ends it. Unshifted slots change nothing (empty: no
// occupied, no run; a cluster start: one of each), so as long as the checks pass, x before lane k
// of a group is x_in + (occupied lanes below k) - (run starts below k), with no reset: two
// exclusive prefix counts, each lane's count computed for all lanes by one multiplication.
//
// Field widths: a prefix count is at most spg - 1, and x_in + count at most 2 spg - 2, below the
// top bit H of a lane for slots of 6 bits or more (10 lanes of 6 bits: 18 < 32), so
// (a | H) - b holds H + a - b in each lane with no borrow between lanes. Narrower slots (r <= 2,
// false-positive rates above 1/4) are checked by `explain`, as are 64-bit slots (r = 61).
inline bool consistent_groups(std::span<uint64_t const> words, table_shape shape) {
    unsigned const w = shape.remainder_bits + 3;  // lane width, 6..63
    unsigned const spg = 64 / w;
    uint64_t const slot_mask = (uint64_t{1} << w) - 1;
    uint64_t lane0 = 0;
    for (unsigned k = 0; k < spg; ++k) lane0 |= uint64_t{1} << (k * w);
    uint64_t const top = lane0 << (w - 1);                           // H: the top bit of each lane
    uint64_t const remainders = lane0 * (slot_mask & ~uint64_t{7});  // the remainder fields
    constexpr int o_at = std::countr_zero(status::occupied);
    constexpr int c_at = std::countr_zero(status::continuation);
    constexpr int s_at = std::countr_zero(status::shifted);
    unsigned const last_lane = (spg - 1) * w;

    int64_t x = 0;
    uint64_t last = 0;          // the previous group's last slot (the slot before lane 0)
    uint64_t last_element = 0;  // 1 when it holds an element
    uint64_t bad = 0;
    // One group; `real`: its lanes that are slots of the table (all but in the last group).
    auto group = [&](uint64_t gv, uint64_t real) __attribute__((always_inline)) {
        if (gv == 0) {  // all empty: closes the open cluster, if any
            bad |= static_cast<uint64_t>(x != 0);
            x = 0;
            last = last_element = 0;
            return;
        }
        uint64_t const s = (gv >> s_at) & real, c = (gv >> c_at) & real, o = (gv >> o_at) & real;
        uint64_t const element = s | c | o;
        uint64_t const run_start = element & ~c;
        uint64_t const element_before = ((element << w) | last_element) & real;
        bad |= c & ~s;               // a lock, or no state
        bad |= s & ~element_before;  // shifted after nothing
        // Runs sorted: each continuation's remainder above the previous slot's. p < a per lane:
        // (p | H) - (a & ~H) has H set where p's bits below H are >= a's (the fields' low 3 bits
        // are 0, so nothing borrows across lanes).
        uint64_t const a = gv & remainders;
        uint64_t const p = ((gv << w) | last) & remainders;
        uint64_t const t = (p | top) - (a & ~top);
        uint64_t const less = ((~p & a) | (~(p ^ a) & ~t)) & top;
        bad |= c & ~(less >> (w - 1));
        // Clusters (see above).
        uint64_t const unshifted = real & ~s;
        if (x >= 0 && x < static_cast<int64_t>(spg)) [[likely]] {
            uint64_t const x_before = ((o << w) + static_cast<uint64_t>(x)) * lane0;
            uint64_t const runs_before = (run_start << w) * lane0;
            uint64_t const d = (x_before | top) - runs_before;  // H + x_before - runs_before
            uint64_t const nonzero = (((d & ~top) | top) - lane0) & top;
            bad |= unshifted & ~((d & top & ~nonzero) >> (w - 1));     // must be 0
            bad |= s & run_start & ~((d & top & nonzero) >> (w - 1));  // must be >= 1
        } else {
            // x >= spg stays >= 1 through the group: every run may begin, no cluster may end. A
            // negative x only follows a failed check.
            bad |= x < 0 ? 1 : unshifted;
        }
        x += std::popcount(o) - std::popcount(run_start);
        // Bits above the last lane shift into lane 1 and up, where `p` and `element_before` do not
        // look; they are refused below.
        last = gv >> last_lane;
        last_element = element >> last_lane;
    };
    size_t const full = shape.total_slots / spg;  // groups whose every lane is a slot
    for (size_t g = 0; g < full; ++g) group(words[g], lane0);
    if (full < words.size()) {
        unsigned const lanes = static_cast<unsigned>(shape.total_slots - full * spg);
        uint64_t const real = lane0 & ((uint64_t{1} << (lanes * w)) - 1);
        bad |= words[full] & ~(real * slot_mask);  // bits past the last slot
        group(words[full], real);
    }
    bad |= static_cast<uint64_t>(x != 0);  // the last cluster runs past the end
    // Padding above the last lane of full groups, and occupied bits in the overflow area (its
    // groups only: 1/64 of the table).
    if (spg * w < 64) {
        uint64_t padding = 0;
        for (size_t g = 0; g < full; ++g) padding |= words[g];
        bad |= padding & ~(lane0 * slot_mask);
    }
    for (size_t g = shape.canonical_slots / spg; g < words.size(); ++g) {
        uint64_t const first = g * spg;
        uint64_t const canonical_lanes =
            shape.canonical_slots > first
                ? (uint64_t{1} << ((shape.canonical_slots - first) * w)) - 1
                : 0;
        bad |= (words[g] >> o_at) & lane0 & ~canonical_lanes;
    }
    return bad == 0;
}

inline bool consistent(std::span<uint64_t const> words, table_shape shape) {
    unsigned const w = shape.remainder_bits + 3;
    if (w < 6 || w > 63) return explain(words, shape).empty();
    return consistent_groups(words, shape);
}

}  // namespace detail

// "" when `words` hold a consistent table of `shape`; otherwise what is wrong (the first problem
// met, naming the slot).
inline std::string check_table(std::span<uint64_t const> words, table_shape shape) {
    if (auto why = detail::check_shape(words, shape); !why.empty()) return why;
    if (detail::consistent(words, shape)) return {};
    std::string why = detail::explain(words, shape);
    // Both passes apply the same rules (tests/regressions/crafted_quotient_table_test.cpp compares
    // them on damaged tables); should they ever disagree, the table is still refused.
    return why.empty() ? "inconsistent status bits" : why;
}

}  // namespace qmer::qf
