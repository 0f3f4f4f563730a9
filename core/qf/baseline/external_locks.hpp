#pragma once
// The externally locked quotient filter: the sequential quotient filter (Maier, Sanders, Williger,
// "Concurrent Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 2, Table 1)
// guarded by an external array of mutexes, one per stripe of ~4096 slots. It is the baseline the
// paper's section 5 measures its locally locked and lock-free filters against ("QF with external
// locks"), kept for that comparison; qmer indexes with the locally locked filter.
//
// The table, its layout and its algorithm are the sequential filter's
// (core/qf/baseline/sequential.hpp, sequential_table; core/qf/three_bit_layout.hpp): this file adds
// only the locks. 2^q canonical slots are followed by a 256-slot overflow area (no wrap-around, so
// slot 0 always starts a cluster and lock order is slot order). Runs are sorted by remainder,
// clusters by quotient.
//
// Concurrency: insert and contains may be called from any number of threads at once.
// - A stripe is a run of whole groups (~4096 slots). A write stores a whole 64-bit group, so two
//   stripes must never share one: with stripes of exactly 4096 slots and groups of 3, 5, 6 or 7
//   slots, two threads holding neighbouring stripes could each store their own copy of the group
//   between them and lose one slot's write (regression test
//   externally_locked_stripes_split_a_group).
// - An operation on canonical slot c holds every stripe of its footprint: from the start of c's
//   cluster (the last unshifted slot at or before c) to the first empty slot at or after c. That
//   covers everything the sequential insert and lookup read or write: the insert's shift ends at
//   that empty slot. Every thread that writes a slot holds its stripe, so a footprint read under
//   its locks stays as read until they are released: its left end is an unshifted slot that only
//   operations of this cluster rewrite, and its right end an empty slot that an insert to its left
//   can fill only with that slot in its own footprint.
// - The footprint is found by reading (atomic group loads, no locks needed to read without a data
//   race), then taking its stripes in ascending order and reading it again, until it is read under
//   locks already held. A footprint reaching below the lowest stripe held drops every lock and
//   starts again from the lower stripe, so no thread ever waits for a lower stripe while holding a
//   higher one (no deadlock).
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
#include "core/qf/baseline/sequential.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/slot_storage.hpp"
#include "core/qf/three_bit_layout.hpp"

namespace qmer::qf {

class external_locks_filter {
  public:
    static constexpr size_t slots_per_lock = 4096;  // about: a stripe is whole groups
    static constexpr size_t overflow_slots = 256;

    external_locks_filter(unsigned quotient_bits, unsigned remainder_bits)
        : table_(quotient_bits, remainder_bits, overflow_slots),
          groups_per_stripe_(
              std::max<size_t>(1, slots_per_lock / table_.layout().slots_per_group())),
          stripe_count_((table_.layout().group_count() + groups_per_stripe_ - 1) /
                        groups_per_stripe_),
          stripes_(std::make_unique<stripe[]>(stripe_count_)) {}

    insert_result insert(uint64_t h) {
        size_t const c = table_.geometry().quotient(h);
        footprint held(*this, c);
        insert_result const res = table_.insert(h);
        if (res == insert_result::inserted)
            stripes_[stripe_of(c)].count.fetch_add(1, std::memory_order_relaxed);
        return res;
    }

    bool contains(uint64_t h) const {
        footprint held(*this, table_.geometry().quotient(h));
        return table_.contains(h);
    }

    void prefetch(uint64_t h) const noexcept {
        table_.slots().prefetch(table_.geometry().quotient(h));
    }

    size_t size() const noexcept {
        size_t n = 0;
        for (size_t i = 0; i < stripe_count_; ++i)
            n += stripes_[i].count.load(std::memory_order_relaxed);
        return n;
    }
    size_t capacity() const noexcept { return size_t{1} << table_.geometry().quotient_bits; }
    size_t memory_bytes() const noexcept {
        return table_.slots().memory_bytes() + stripe_count_ * sizeof(stripe) + sizeof(*this);
    }
    // 1 - (1 - 2^-(q+r))^n: an absent key is a false positive when some stored element has its
    // whole q + r bit fingerprint (section 2: ~ n / 2^(q+r) = fill * 2^-r).
    static double expected_fpr(unsigned q, unsigned r, size_t n) noexcept {
        double const p = std::ldexp(1.0, -static_cast<int>(q + r));
        return -std::expm1(static_cast<double>(n) * std::log1p(-p));
    }
    double false_positive_rate() const noexcept {
        return expected_fpr(quotient_bits(), remainder_bits(), size());
    }
    unsigned quotient_bits() const noexcept { return table_.geometry().quotient_bits; }
    unsigned remainder_bits() const noexcept { return table_.geometry().remainder_bits; }
    grouped_slots const& slots() const noexcept { return table_.slots(); }

    // The stripe whose lock guards slot s: the stripe of its group.
    size_t stripe_of(size_t s) const noexcept {
        return table_.layout().group_of(s) / groups_per_stripe_;
    }

    // Index loading: the groups slots().groups() held and the size() they had. Not concurrent
    // with any other operation (the filter is being built); release stores publish the words to
    // whichever thread the filter is handed to.
    void restore(std::span<uint64_t const> words, size_t size) {
        auto groups = table_.slots().groups();
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

    // The stripes lo..hi (inclusive) of canonical slot c's footprint, locked in ascending order
    // for the lifetime of the object.
    class footprint {
      public:
        footprint(external_locks_filter const& f, size_t c) : f_(f), lo_(f.stripe_of(c)), hi_(lo_) {
            f_.stripes_[lo_].lock.lock();
            grouped_slots const& s = f_.table_.slots();
            scan::layout const& l = f_.table_.layout();
            for (;;) {
                uint64_t gv = 0;
                // Slot 0 is never shifted (no wrap-around): in a table only ever changed under
                // these locks the scan finds a stop; npos only from a damaged table.
                size_t const start = scan::last_stop_at_or_before(s, l, c, gv);
                size_t const low = start == scan::npos ? 0 : f_.stripe_of(start);
                if (low < lo_) {
                    unlock_all();
                    lo_ = low;
                    for (size_t i = lo_; i <= hi_; ++i) f_.stripes_[i].lock.lock();
                    continue;
                }
                size_t const end = scan::first_hole_at_or_after(s, l, c, gv);
                size_t const high = end == scan::npos ? f_.stripe_count_ - 1 : f_.stripe_of(end);
                if (high <= hi_) return;  // both ends read under locks held throughout
                while (hi_ < high) f_.stripes_[++hi_].lock.lock();
            }
        }
        ~footprint() { unlock_all(); }
        footprint(footprint const&) = delete;
        footprint& operator=(footprint const&) = delete;

      private:
        void unlock_all() noexcept {
            for (size_t i = lo_; i <= hi_; ++i) f_.stripes_[i].lock.unlock();
        }

        external_locks_filter const& f_;
        size_t lo_;
        size_t hi_;
    };

    sequential_table table_;
    size_t groups_per_stripe_;
    size_t stripe_count_;
    std::unique_ptr<stripe[]> stripes_;
};

static_assert(amq_filter<external_locks_filter>);

}  // namespace qmer::qf
