#pragma once
// A lock-free concurrent cuckoo filter (Wang et al., "Lock-free concurrent cuckoo
// filter", Journal of Software (Ruan Jian Xue Bao) 2025 no. 7): buckets of 4 fingerprints,
// partial-key cuckoo hashing (i2 = i1 XOR h(f), Fan et al. 2014), a migration counter per bucket,
// and the two-phase query.
//
// Bucket word (one std::atomic<uint64_t>, read with one load, changed with one CAS):
//   bits  0-11, 12-23, 24-35, 36-47   four 12-bit fingerprints, 0 = empty slot
//   bits 48-63                        16-bit counter, +1 (mod 2^16) on every change of the bucket
// Why 4 x 12 + 16 and not 4 x 8 + 32: the false-positive rate is about 8 * load / 2^f, so 8-bit
// fingerprints give ~3% (useless for k-mer screening) and 12 bits ~0.18% at 90% load. 16 counter
// bits are enough because queries only compare a bucket's counter with its own earlier value: the
// difference is exact unless 65,536 changes hit one bucket during one query.
//
// Concurrency (any number of threads may insert, query and migrate at once):
// * Every bucket load and CAS is seq_cst. The no-false-negative argument below reasons about one
//   total order over the changes of TWO words (the element's two buckets); acquire/release only
//   orders each word on its own and would let a query read a stale second bucket. On x86-64 a
//   seq_cst load is a plain mov and a seq_cst CAS the same lock cmpxchg as acq_rel, so it is free.
// * A fingerprint is never "in the hand" of a thread. A move (kick) of v from bucket X to Y is
//   copy-then-delete: CAS v into a free slot of Y first, then CAS one copy of v out of X. In
//   between v is in both buckets; never in neither. Inserts that find their bucket i1 full first
//   search a cuckoo path (read-only walk from i1, up to max_kicks steps) ending in a bucket with a
//   free slot, then execute its moves backwards, each into a slot that is free at that moment, and
//   finally put the new fingerprint into the slot freed in i1. If the path went stale (a concurrent
//   thread took the free slot or moved the victim) the walk is abandoned and retried: every move
//   already made was complete, so nothing is lost. When the walk budget is spent the answer is
//   `full` and the new element was not stored - and every element stored before is still stored.
//   This is what the classic "swap the victim out, then look for a place for it" insert gets wrong:
//   the victim lives only in a local variable, a concurrent query misses it, and a failed chain
//   drops it for good.
// * Deletes happen only as the second half of a move, after the copy, so for any fingerprint f and
//   bucket pair (B1, B2) the number of copies of f in B1 + B2 never drops below the number of
//   stored elements with that fingerprint and pair (invariant I).
//
// Two-phase query, and why it has no false negatives. A query reads B1 (counter t1), B2 (t2), and
// if f is in neither, reads B1 (t1'), B2 (t2') again. Suppose an element with fingerprint f was
// stored before the query started and all four reads miss f. By invariant I, f is in B2 at read 1,
// in B1 at read 2, in B2 at read 3 and in B1 at read 4. So B1 changed at least twice between reads
// 1 and 3 (f appeared, then left) and B2 at least twice between reads 2 and 4: t1' - t1 >= 2 and
// t2' - t2 >= 2. Whenever both hold the query retries; when either fails, the miss is impossible
// and "absent" is right. A retry needs four changes by other threads, so some thread always makes
// progress (lock-free, the paper's property 7).
//
// Departure from the paper: its condition also requires t2' >= t1 + 3, which compares the counters
// of two different buckets. With counters that count each bucket's own changes that clause is not
// implied by a bounce - B1's counter can be far ahead of B2's - so adding it would turn some
// bounces into false negatives; tests/core/cuckoo/cuckoo_filter_stress_test.cpp builds exactly such
// a run. seed_retry_condition() keeps the paper's literal test for that demonstration; queries use
// must_retry().
//
// Inserts of the same element: a new fingerprint is only ever written into its element's first
// bucket i1 (a full i1 is emptied by kicking; i2 receives fingerprints only through moves). An
// insert reads w1 = i1, then i2, finds f in neither, and CASes f into w1. If the CAS succeeds, i1
// still equalled w1 when i2 was read, so at that moment f was in neither bucket and, by invariant
// I, not stored; any other insert of the same element CASes the same word i1 afterwards and either
// fails and sees f on its retry, or reads f in w1. So of concurrent inserts of one element exactly
// one answers `inserted`, and size() never counts an element twice. (Two threads moving the same
// victim at once can still leave an extra copy of it: that wastes a slot, never causes a false
// negative.)
//
// Test hook: Hook::at(query_point, word) is called after each of the query's four bucket reads with
// the word read; the default no_query_hook is empty and inlined away.

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "core/bitset/atomic_bitset.hpp"
#include "core/filter/filter.hpp"
#include "core/filter/sharded_count.hpp"

namespace qmer {

// Where a query is when the hook runs: after its first, second, third or fourth bucket read.
enum class query_point : uint8_t { read_b1, read_b2, reread_b1, reread_b2 };

struct no_query_hook {
    static void at(query_point, uint64_t) noexcept {}
};

template <typename Hook = no_query_hook>
class basic_cuckoo_filter {
  public:
    static constexpr unsigned slots_per_bucket = 4;
    static constexpr unsigned fingerprint_bits = 12;
    static constexpr uint64_t fingerprint_mask = (uint64_t{1} << fingerprint_bits) - 1;
    static constexpr unsigned counter_shift = 48;
    static constexpr uint64_t counter_one = uint64_t{1} << counter_shift;
    static constexpr double max_load = 0.95;  // what 4-slot buckets reach (Fan et al. 2014)
    static constexpr unsigned max_kicks = 500;

    // A filter that holds `capacity` elements at up to 95% load; buckets are a power of two (the
    // XOR of partial-key hashing must stay in range), so up to twice that may be allocated.
    explicit basic_cuckoo_filter(size_t capacity) : basic_cuckoo_filter(buckets_for(capacity), 0) {}
    // From an explicit bucket count (a power of two >= 2), e.g. when loading an index.
    basic_cuckoo_filter(uint64_t buckets, int /*tag: explicit geometry*/)
        : bucket_mask_(checked_buckets(buckets) - 1),
          bucket_shift_(64 - static_cast<unsigned>(std::countr_zero(buckets))),
          table_(buckets) {}

    static uint64_t buckets_for(size_t capacity) {
        if (capacity == 0) throw std::invalid_argument("cuckoo filter: capacity must be > 0");
        double const need =
            std::ceil(static_cast<double>(capacity) / (slots_per_bucket * max_load));
        return std::max<uint64_t>(2, std::bit_ceil(static_cast<uint64_t>(need)));
    }

    // ---- the hash -> (fingerprint, buckets) map -------------------------------------------------
    // Fingerprint: the low 12 bits of h, with 0 (the empty mark) mapped to 1. First bucket: the top
    // bits of h (independent of the low bits). Second bucket: i1 XOR tag(f), where tag(f) is a
    // multiplicative hash of f, never 0, so the two buckets always differ and alt(alt(i)) = i.
    static uint64_t fingerprint(uint64_t h) noexcept {
        uint64_t const f = h & fingerprint_mask;
        return f == 0 ? 1 : f;
    }
    uint64_t first_bucket(uint64_t h) const noexcept { return h >> bucket_shift_; }
    uint64_t alt_bucket(uint64_t i, uint64_t f) const noexcept {
        uint64_t const t = ((f * 0x9e3779b97f4a7c15ULL) >> 32) & bucket_mask_;
        return i ^ (t == 0 ? 1 : t);
    }

    // ---- bucket words ------------------------------------------------------------------------
    static uint64_t slot(uint64_t w, unsigned s) noexcept {
        return (w >> (s * fingerprint_bits)) & fingerprint_mask;
    }
    static int find(uint64_t w, uint64_t f) noexcept {
        for (unsigned s = 0; s < slots_per_bucket; ++s)
            if (slot(w, s) == f) return static_cast<int>(s);
        return -1;
    }
    static bool holds(uint64_t w, uint64_t f) noexcept { return find(w, f) >= 0; }
    static uint16_t counter(uint64_t w) noexcept {
        return static_cast<uint16_t>(w >> counter_shift);
    }
    // w with slot s set to f (f = 0 clears it) and the counter advanced by one (mod 2^16).
    static uint64_t changed(uint64_t w, unsigned s, uint64_t f) noexcept {
        unsigned const shift = s * fingerprint_bits;
        return ((w & ~(fingerprint_mask << shift)) | (f << shift)) + counter_one;
    }

    // The retry test of the two-phase query (see the header comment): both buckets changed at least
    // twice, counted modulo 2^16 on each bucket's own counter.
    static bool must_retry(uint16_t t1, uint16_t t2, uint16_t t1p, uint16_t t2p) noexcept {
        return static_cast<uint16_t>(t1p - t1) >= 2 && static_cast<uint16_t>(t2p - t2) >= 2;
    }
    // The paper's literal condition t1' >= t1+2 && t2' >= t2+2 && t2' >= t1+3 (for the test that
    // shows why the last clause is not used).
    static bool seed_retry_condition(uint32_t t1, uint32_t t2, uint32_t t1p,
                                     uint32_t t2p) noexcept {
        return t1p >= t1 + 2 && t2p >= t2 + 2 && t2p >= t1 + 3;
    }

    // ---- the filter contract -------------------------------------------------------------------
    insert_result insert(uint64_t h) noexcept {
        uint64_t const f = fingerprint(h);
        uint64_t const i1 = first_bucket(h);
        uint64_t const i2 = alt_bucket(i1, f);
        unsigned budget = max_kicks;
        uint64_t walk_seed = h;
        for (;;) {
            // Absence is decided from w1 and w2 and made atomic by the CAS on i1 (see the header:
            // "Inserts of the same element"), so no two-phase query is needed here.
            uint64_t w1 = table_[i1].load(std::memory_order_seq_cst);
            if (holds(w1, f)) return insert_result::already_present;
            if (holds(table_[i2].load(std::memory_order_seq_cst), f))
                return insert_result::already_present;
            if (int const s = find(w1, 0); s >= 0) {
                if (table_[i1].compare_exchange_strong(w1, changed(w1, static_cast<unsigned>(s), f),
                                                       std::memory_order_seq_cst)) {
                    size_.count_one();  // a statistic
                    return insert_result::inserted;
                }
                continue;  // i1 changed under us: decide again
            }
            walk_seed = mix(walk_seed);
            if (!make_room(i1, walk_seed, budget) && budget == 0) return insert_result::full;
        }
    }

    bool contains(uint64_t h) const noexcept {
        uint64_t const f = fingerprint(h);
        uint64_t const i1 = first_bucket(h);
        return contains_fingerprint(f, i1, alt_bucket(i1, f));
    }

    // Moves one copy of h's fingerprint to its other candidate bucket, if that has a free slot: the
    // move step of a kick, exposed so tests can make fingerprints bounce. Returns whether it moved.
    bool migrate(uint64_t h) noexcept {
        uint64_t const f = fingerprint(h);
        uint64_t const i1 = first_bucket(h);
        uint64_t const i2 = alt_bucket(i1, f);
        if (holds(table_[i1].load(std::memory_order_seq_cst), f)) return move(f, i1, i2);
        if (holds(table_[i2].load(std::memory_order_seq_cst), f)) return move(f, i2, i1);
        return false;
    }

    void prefetch(uint64_t h) const noexcept {
        uint64_t const i1 = first_bucket(h);
        __builtin_prefetch(table_.data() + i1, 0, 3);
        __builtin_prefetch(table_.data() + alt_bucket(i1, fingerprint(h)), 0, 3);
    }

    // Exact when no insert runs (core/filter/sharded_count.hpp).
    size_t size() const noexcept { return size_.load(); }
    size_t capacity() const noexcept { return table_.size() * slots_per_bucket; }  // slots
    size_t bucket_count() const noexcept { return table_.size(); }
    size_t memory_bytes() const noexcept { return table_.memory_bytes() + sizeof(*this); }
    // At load a = n / slots an absent key meets 8a stored fingerprints on average, each equal to
    // its own with probability q = sum_v P(v)^2 over the 4095 non-zero values (1 has twice the
    // weight, as 0 maps to it): FPR = 1 - (1 - q)^(8a).
    double fpr_after(size_t n) const noexcept {
        constexpr double values = double(uint64_t{1} << fingerprint_bits);
        constexpr double q = (values - 2 + 4) / (values * values);
        double const load = static_cast<double>(n) / static_cast<double>(capacity());
        return 1.0 - std::pow(1.0 - q, 2.0 * slots_per_bucket * load);
    }
    double false_positive_rate() const noexcept { return fpr_after(size()); }

    atomic_word_array const& buckets() const noexcept { return table_; }
    void restore(std::span<uint64_t const> words, size_t size) {
        table_.copy_from(words);
        size_.reset(size);
    }

  private:
    // Checked before the table is allocated (the first member initialiser calls it).
    static uint64_t checked_buckets(uint64_t buckets) {
        if (buckets < 2 || !std::has_single_bit(buckets))
            throw std::invalid_argument(
                "cuckoo filter: the bucket count must be a power of two >= 2");
        return buckets;
    }
    static uint64_t mix(uint64_t x) noexcept {  // splitmix64 step: the random walk's choices
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    }

    bool contains_fingerprint(uint64_t f, uint64_t i1, uint64_t i2) const noexcept {
        for (;;) {
            uint64_t const a1 = table_[i1].load(std::memory_order_seq_cst);
            Hook::at(query_point::read_b1, a1);
            uint64_t const a2 = table_[i2].load(std::memory_order_seq_cst);
            Hook::at(query_point::read_b2, a2);
            if (holds(a1, f) || holds(a2, f)) return true;
            uint64_t const b1 = table_[i1].load(std::memory_order_seq_cst);
            Hook::at(query_point::reread_b1, b1);
            uint64_t const b2 = table_[i2].load(std::memory_order_seq_cst);
            Hook::at(query_point::reread_b2, b2);
            if (holds(b1, f) || holds(b2, f)) return true;
            if (!must_retry(counter(a1), counter(a2), counter(b1), counter(b2))) return false;
        }
    }

    // Copy-then-delete move of one copy of v from bucket `from` to bucket `to` (= alt(from, v)).
    // Fails without changing anything when v is no longer in `from` or `to` has no free slot.
    bool move(uint64_t v, uint64_t from, uint64_t to) noexcept {
        for (;;) {  // 1. copy into a free slot of `to`
            if (!holds(table_[from].load(std::memory_order_seq_cst), v)) return false;
            uint64_t w = table_[to].load(std::memory_order_seq_cst);
            int const s = find(w, 0);
            if (s < 0) return false;
            if (table_[to].compare_exchange_strong(w, changed(w, static_cast<unsigned>(s), v),
                                                   std::memory_order_seq_cst))
                break;
        }
        for (;;) {  // 2. delete one copy from `from`
            uint64_t w = table_[from].load(std::memory_order_seq_cst);
            int const s = find(w, v);
            // Gone: another mover copied the same v into `to` and deleted it here first. Its slot
            // in `from` is free all the same; our copy stays as a harmless duplicate.
            if (s < 0) return true;
            if (table_[from].compare_exchange_strong(w, changed(w, static_cast<unsigned>(s), 0),
                                                     std::memory_order_seq_cst))
                return true;
        }
    }

    // Frees a slot in bucket `start`: a read-only walk from it to a bucket with a free slot (each
    // step spends one unit of `budget`; a step takes a victim whose other bucket has a free slot if
    // there is one, else a random victim), then the moves from the far end back. Returns true if
    // the path was carried out (or a slot turned free meanwhile); false if it went stale or the
    // budget ran out (budget == 0 tells which).
    bool make_room(uint64_t start, uint64_t random, unsigned& budget) noexcept {
        std::array<uint64_t, max_kicks + 1> bucket;
        std::array<uint64_t, max_kicks> victim;
        bucket[0] = start;
        unsigned length = 0;
        for (;;) {
            uint64_t const w = table_[bucket[length]].load(std::memory_order_seq_cst);
            if (find(w, 0) >= 0) break;  // path ends at a free slot (length 0: one just opened)
            if (budget == 0) return false;
            --budget;
            if (random < 4) random = mix(random ^ bucket[length]);
            unsigned s = random & 3;
            random >>= 2;
            for (unsigned k = 0; k < slots_per_bucket; ++k) {
                uint64_t const alt = alt_bucket(bucket[length], slot(w, k));
                if (find(table_[alt].load(std::memory_order_seq_cst), 0) >= 0) {
                    s = k;
                    break;
                }
            }
            victim[length] = slot(w, s);
            bucket[length + 1] = alt_bucket(bucket[length], victim[length]);
            ++length;
        }
        while (length > 0) {
            --length;
            if (!move(victim[length], bucket[length], bucket[length + 1])) return false;
        }
        return true;
    }

    uint64_t bucket_mask_;
    unsigned bucket_shift_;
    atomic_word_array table_;
    alignas(no_sharing_bytes) sharded_count size_;
};

using cuckoo_filter = basic_cuckoo_filter<>;

}  // namespace qmer
