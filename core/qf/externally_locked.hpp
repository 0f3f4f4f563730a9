#pragma once
// The externally locked quotient filter: the sequential quotient filter with 3 status bits (Maier,
// Sanders, Williger, SEA 2020, section 2, Table 1) guarded by an external array of mutexes, one per
// 4096 slots. It is the baseline the paper's section 5 measures its locally locked and lock-free
// filters against ("QF with external locks"; the paper code's figures: bench/BASELINES.md), kept
// for that comparison; qmer indexes with the locally locked filter.
//
// Slot layout: r + 3 bits, the remainder in the high r bits and the status bits in the low 3:
//   bit 0 occupied      (position property: some element has this slot as its canonical slot)
//   bit 1 continuation  (element property: it belongs to the same run as the slot before it)
//   bit 2 shifted       (element property: it is not in its canonical slot)
// 000 is an empty slot, 100 (occupied only) a cluster start, *01 run starts, *11 continuations.
// Fingerprint: the top q + r bits of the hash (core/qf/fingerprint.hpp). Runs are sorted by
// remainder, clusters by quotient. 2^q canonical slots are followed by a 256-slot overflow area
// (no wrap-around, so slot 0 always starts a cluster and lock order is slot order).
//
// Concurrency: insert and contains may be called from any number of threads at once. Every
// operation locks the stripe (4096 slots) of its canonical slot, then every further stripe its
// scan reaches, always in ascending order, holding them all until it is done; an operation whose
// cluster starts in a stripe below those it holds releases everything and starts again from the
// lower stripe, so no thread ever waits for a lower stripe while holding a higher one (no
// deadlock). Every write to a slot happens with the slot's stripe locked, so a thread holding the
// stripes from the cluster start to the end of its scan sees a frozen cluster. The slots are
// still std::atomic groups (grouped_slots) so that readers outside the locks (the index writer
// after the build, tests) never race in the C++ sense.
//
// `full`: the insert would have to shift an element past the end of the overflow area (near 100%
// fill). capacity() is 2^q. There is no remove (the baseline does not need one).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>

#include "core/filter/filter.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"

namespace qmer::qf {

class externally_locked {
  public:
    static constexpr size_t slots_per_lock = 4096;
    static constexpr size_t overflow_slots = 256;

    static constexpr uint64_t occupied = 1;
    static constexpr uint64_t continuation = 2;
    static constexpr uint64_t shifted = 4;
    static constexpr uint64_t status_mask = 7;

    externally_locked(unsigned quotient_bits, unsigned remainder_bits)
        : geo_{quotient_bits, remainder_bits} {
        geo_.validate();
        if (remainder_bits > max_remainder_bits)
            throw std::invalid_argument("externally_locked: remainder bits must be <= " +
                                        std::to_string(max_remainder_bits));
        slots_ = grouped_slots((size_t{1} << quotient_bits) + overflow_slots, remainder_bits + 3);
        total_ = slots_.slot_count();
        spg_ = slots_.slots_per_group();
        stripe_count_ = (total_ + slots_per_lock - 1) / slots_per_lock;
        stripes_ = std::make_unique<stripe[]>(stripe_count_);
    }

    insert_result insert(uint64_t h) {
        size_t const c = geo_.quotient(h);
        uint64_t const rem = geo_.remainder(h);
        span held(*this, c);
        uint64_t const at_c = load(c);
        if (at_c == 0) {  // empty canonical slot: the element starts a new cluster right here
            store(c, (rem << 3) | occupied);
            stripes_[c / slots_per_lock].count.fetch_add(1, std::memory_order_relaxed);
            return insert_result::inserted;
        }
        size_t const start = held.cluster_start(c);
        // Read after cluster_start(), never before: it may have dropped every lock to take them
        // again from a lower stripe, and in that window another thread may have given quotient c
        // its first element. A stale "no run yet" would start a second run for c, which breaks
        // the one-run-per-occupied-quotient walk of every later quotient in the cluster (lost
        // and duplicated keys: issue 18, item 4).
        bool const has_run = (load(c) & occupied) != 0;
        size_t const s = run_start(start, c, has_run, held);

        // Where the new element goes: before the first larger remainder of its run, or at the
        // end of the run; a new run goes at s.
        size_t ins = s;
        bool at_head = true;
        if (has_run) {
            for (;;) {
                uint64_t const r = load(ins) >> 3;
                if (r == rem) return insert_result::already_present;
                if (r > rem) break;
                at_head = false;
                ++ins;
                if (ins >= total_) return insert_result::full;
                held.reach(ins);
                if ((load(ins) & continuation) == 0) break;
            }
        }
        // The first empty slot at or after ins takes the shift; find it before changing anything.
        size_t e = ins;
        for (;; ++e) {
            if (e >= total_) return insert_result::full;
            held.reach(e);
            if (load(e) == 0) break;
        }
        for (size_t p = e; p > ins; --p) {
            uint64_t moved = (load(p - 1) & ~occupied) | shifted;
            // The old head of the run follows the new element: it becomes a continuation.
            if (p - 1 == ins && has_run && at_head) moved |= continuation;
            store(p, moved | (load(p) & occupied));
        }
        uint64_t element = rem << 3;
        if (has_run && !at_head) element |= continuation;
        if (ins != c) element |= shifted;
        store(ins, element | (load(ins) & occupied));
        if (!has_run) store(c, load(c) | occupied);
        stripes_[c / slots_per_lock].count.fetch_add(1, std::memory_order_relaxed);
        return insert_result::inserted;
    }

    bool contains(uint64_t h) const {
        size_t const c = geo_.quotient(h);
        uint64_t const rem = geo_.remainder(h);
        span held(*this, c);
        if ((load(c) & occupied) == 0) return false;
        size_t p = run_start(held.cluster_start(c), c, true, held);
        for (;;) {
            uint64_t const r = load(p) >> 3;
            if (r == rem) return true;
            if (r > rem) return false;  // runs are sorted
            if (++p >= total_) return false;
            held.reach(p);
            if ((load(p) & continuation) == 0) return false;
        }
    }

    void prefetch(uint64_t h) const noexcept { slots_.prefetch(geo_.quotient(h)); }

    size_t size() const noexcept {
        size_t n = 0;
        for (size_t i = 0; i < stripe_count_; ++i)
            n += stripes_[i].count.load(std::memory_order_relaxed);
        return n;
    }
    size_t capacity() const noexcept { return size_t{1} << geo_.quotient_bits; }
    size_t memory_bytes() const noexcept {
        return slots_.memory_bytes() + stripe_count_ * sizeof(stripe) + sizeof(*this);
    }
    // 1 - (1 - 2^-(q+r))^n: an absent key is a false positive when some stored element has its
    // whole q + r bit fingerprint (section 2: ~ n / 2^(q+r) = fill * 2^-r).
    static double expected_fpr(unsigned q, unsigned r, size_t n) noexcept {
        double const p = std::ldexp(1.0, -static_cast<int>(q + r));
        return -std::expm1(static_cast<double>(n) * std::log1p(-p));
    }
    double false_positive_rate() const noexcept {
        return expected_fpr(geo_.quotient_bits, geo_.remainder_bits, size());
    }
    unsigned quotient_bits() const noexcept { return geo_.quotient_bits; }
    unsigned remainder_bits() const noexcept { return geo_.remainder_bits; }
    grouped_slots const& slots() const noexcept { return slots_; }

    // Index loading: the groups slots().groups() held and the size() they had. Not concurrent
    // with any other operation (the filter is being built); release stores publish the words to
    // whichever thread the filter is handed to.
    void restore(std::span<uint64_t const> words, size_t size) {
        auto groups = slots_.groups();
        if (words.size() != groups.size())
            throw std::invalid_argument("externally locked filter: word count does not match q, r");
        for (size_t i = 0; i < words.size(); ++i)
            groups[i].store(words[i], std::memory_order_release);
        for (size_t i = 0; i < stripe_count_; ++i)
            stripes_[i].count.store(0, std::memory_order_relaxed);
        stripes_[0].count.store(size, std::memory_order_relaxed);
    }

  private:
    struct alignas(64) stripe {
        std::mutex lock;
        // Elements whose canonical slot lies in this stripe; changed under `lock`, read by size()
        // without it (relaxed: a statistic, exact once the inserting threads are joined).
        std::atomic<size_t> count{0};
    };

    // The stripes an operation holds, lo..hi inclusive, locked in ascending order.
    class span {
      public:
        span(externally_locked const& f, size_t c) : f_(f), lo_(c / slots_per_lock), hi_(lo_) {
            f_.stripes_[lo_].lock.lock();
        }
        ~span() {
            for (size_t i = lo_; i <= hi_; ++i) f_.stripes_[i].lock.unlock();
        }
        span(span const&) = delete;
        span& operator=(span const&) = delete;

        // Locks the stripes up to slot p's (p beyond the ones held; ascending order).
        void reach(size_t p) {
            while (p / slots_per_lock > hi_) f_.stripes_[++hi_].lock.lock();
        }

        // The start of the cluster holding the filled slot c: the nearest unshifted slot at or
        // before it. If that lies below the lowest stripe held, drop every lock and take them
        // again from the lower stripe upwards (the cluster may have changed meanwhile, so scan
        // again).
        size_t cluster_start(size_t c) {
            for (;;) {
                size_t b = c;
                bool below = false;
                // Slot 0 is never shifted (no wrap-around), so the scan stops by b = 0.
                while (f_.load(b) & shifted) {
                    --b;
                    if (b < lo_ * slots_per_lock) {
                        below = true;
                        break;
                    }
                }
                if (!below) return b;
                for (size_t i = lo_; i <= hi_; ++i) f_.stripes_[i].lock.unlock();
                --lo_;
                for (size_t i = lo_; i <= hi_; ++i) f_.stripes_[i].lock.lock();
            }
        }

      private:
        externally_locked const& f_;
        size_t lo_;
        size_t hi_;
    };

    // The slot where quotient c's run starts (has_run) or where a new run for c belongs: walk
    // the runs of the cluster from its start, one run per occupied quotient before c.
    size_t run_start(size_t b, size_t c, bool has_run, span& held) const {
        size_t s = b;  // start of the run of quotient b (b is occupied: a cluster start)
        for (;;) {
            if (b == c) return s;
            do {  // skip b's run
                if (++s >= total_) break;
                held.reach(s);
            } while (load(s) & continuation);
            do ++b;  // the next occupied quotient (b < c: slots within the held stripes)
            while (b < c && !(load(b) & occupied));
            if (b == c && !has_run) return s;
        }
    }

    uint64_t load(size_t s) const noexcept {
        // Under the stripe locks: relaxed would do, acquire costs nothing extra on x86.
        size_t const g = group_of(s);
        return grouped_slots::slot_in(slots_.load_group(g), static_cast<unsigned>(s - g * spg_),
                                      geo_.remainder_bits + 3);
    }
    void store(size_t s, uint64_t v) noexcept { slots_.set_unsynchronized(s, v); }

    // Division-free (core/qf/slot_storage.hpp, group_divider): the scans call it for every slot.
    size_t group_of(size_t s) const noexcept { return slots_.group_of(s); }

    geometry geo_;
    grouped_slots slots_;
    size_t total_ = 0;
    unsigned spg_ = 0;
    size_t stripe_count_ = 0;
    std::unique_ptr<stripe[]> stripes_;
};

static_assert(amq_filter<externally_locked>);

}  // namespace qmer::qf
