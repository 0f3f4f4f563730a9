#pragma once
// Packed slots for the quotient filter family (ARCHITECTURE.md "Concurrency rules"): slot_count
// slots of slot_bits bits each (1..64), packed floor(64 / slot_bits) to a std::atomic<uint64_t>
// group. A slot never straddles two groups, so one slot - and every slot of its group - is read
// with one atomic load and changed with one CAS. Slot i of a group occupies bits [i * slot_bits,
// (i+1) * slot_bits). The bits past slots_per_group * slot_bits in a group are unused and always
// zero.
//
// Thread safety: get/load_group/cas_group are safe from any number of threads. set_unsynchronized
// is a relaxed read-modify-write of the group and is only for code with a single writer (the
// sequential filter, building a table before it is shared). Construction and destruction are not
// concurrent with anything.
//
// Memory: the group array is 64-byte aligned (a cache line holds 8 whole groups, so a prefetch of a
// group brings its neighbours), zero-initialised, and tables of 2 MiB or more ask the kernel for
// transparent huge pages: 4 KiB pages cost a third of the random-access rate (bench/BASELINES.md).

#include <sys/mman.h>

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <stdexcept>
#include <utility>

namespace qmer::qf {

// slot / slots_per_group without a divide instruction (a 64-bit division costs ~40 cycles, and the
// scans ask for every slot they read): a shift when slots_per_group is a power of two, else the
// high 64 bits of slot * ceil(2^64 / slots_per_group), exact for every slot below 2^41 (the
// error, below slot / 2^64, stays under the 1 / slots_per_group gap to the next integer; Lemire,
// Kaser, Kurz, "Faster Remainder by Direct Computation", Software: Practice and Experience 2019).
// Tables hold at most 2^40 canonical slots plus their overflow, so every slot is below 2^41.
class group_divider {
  public:
    group_divider() = default;
    explicit group_divider(unsigned slots_per_group) : spg_(slots_per_group) {
        pow2_ = (spg_ & (spg_ - 1)) == 0;
        while ((1u << log2_) < spg_) ++log2_;
        magic_ = pow2_ ? 0 : ~uint64_t{0} / spg_ + 1;
    }
    size_t group_of(size_t slot) const noexcept {
        __extension__ using u128 = unsigned __int128;
        if (pow2_) return slot >> log2_;
        return static_cast<size_t>((static_cast<u128>(slot) * magic_) >> 64);
    }
    // The slot's lane in its group.
    unsigned lane_of(size_t slot, size_t group) const noexcept {
        return static_cast<unsigned>(slot - group * spg_);
    }

  private:
    unsigned spg_ = 1;
    bool pow2_ = true;
    unsigned log2_ = 0;
    uint64_t magic_ = 0;
};

class grouped_slots {
  public:
    grouped_slots() = default;

    grouped_slots(size_t slot_count, unsigned slot_bits)
        : slot_count_(slot_count),
          slot_bits_(slot_bits),
          slots_per_group_(slot_bits == 0 ? 0 : 64 / slot_bits),
          group_count_(
              slots_per_group_ == 0 ? 0 : (slot_count + slots_per_group_ - 1) / slots_per_group_) {
        if (slot_bits < 1 || slot_bits > 64)
            throw std::invalid_argument("grouped_slots: slot_bits must be in 1..64");
        divider_ = group_divider(slots_per_group_);
        allocate();
    }

    grouped_slots(grouped_slots const&) = delete;
    grouped_slots& operator=(grouped_slots const&) = delete;
    grouped_slots(grouped_slots&& other) noexcept { swap(other); }
    grouped_slots& operator=(grouped_slots&& other) noexcept {
        grouped_slots tmp(std::move(other));
        swap(tmp);
        return *this;
    }
    ~grouped_slots() { release(); }

    size_t slot_count() const noexcept { return slot_count_; }
    unsigned slot_bits() const noexcept { return slot_bits_; }
    unsigned slots_per_group() const noexcept { return slots_per_group_; }
    size_t group_count() const noexcept { return group_count_; }
    size_t group_of(size_t slot) const noexcept { return divider_.group_of(slot); }
    unsigned index_in_group(size_t slot) const noexcept {
        return divider_.lane_of(slot, group_of(slot));
    }
    group_divider const& divider() const noexcept { return divider_; }

    // Acquire by default: a reader that sees a slot written by a CAS (release) also sees everything
    // the writer did before it (earlier group CASes of the same shift, for instance).
    uint64_t load_group(size_t g, std::memory_order o = std::memory_order_acquire) const noexcept {
        assert(g < group_count_);
        return groups_[g].load(o);
    }

    // acq_rel on success: release publishes this change, acquire orders it after the writes that
    // produced the group value we replaced. acquire on failure: `expected` is refreshed with the
    // current value and the caller recomputes from it, so it must see what that value's writer saw.
    bool cas_group(size_t g, uint64_t& expected, uint64_t desired) noexcept {
        assert(g < group_count_);
        return groups_[g].compare_exchange_strong(expected, desired, std::memory_order_acq_rel,
                                                  std::memory_order_acquire);
    }

    static uint64_t slot_mask(unsigned slot_bits) noexcept {
        return slot_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << slot_bits) - 1;
    }
    static uint64_t slot_in(uint64_t group, unsigned index, unsigned slot_bits) noexcept {
        unsigned const shift = index * slot_bits;
        return shift >= 64 ? 0 : (group >> shift) & slot_mask(slot_bits);
    }
    static uint64_t with_slot(uint64_t group, unsigned index, unsigned slot_bits,
                              uint64_t value) noexcept {
        unsigned const shift = index * slot_bits;
        if (shift >= 64) return group;
        uint64_t const mask = slot_mask(slot_bits) << shift;
        return (group & ~mask) | ((value << shift) & mask);
    }

    uint64_t get(size_t slot) const noexcept {
        assert(slot < slot_count_);
        return slot_in(load_group(group_of(slot)), index_in_group(slot), slot_bits_);
    }

    // Single-writer only: a relaxed load and store. Concurrent readers still read whole groups
    // atomically (no torn group), but a concurrent writer's change could be lost.
    void set_unsynchronized(size_t slot, uint64_t value) noexcept {
        assert(slot < slot_count_);
        auto& word = groups_[group_of(slot)];
        word.store(with_slot(word.load(std::memory_order_relaxed), index_in_group(slot), slot_bits_,
                             value),
                   std::memory_order_release);
    }

    void prefetch(size_t slot) const noexcept {
        __builtin_prefetch(static_cast<void const*>(groups_ + group_of(slot)), 0, 3);
    }

    size_t memory_bytes() const noexcept { return bytes_; }

    std::span<std::atomic<uint64_t>> groups() noexcept { return {groups_, group_count_}; }
    std::span<std::atomic<uint64_t> const> groups() const noexcept {
        return {groups_, group_count_};
    }

    void swap(grouped_slots& other) noexcept {
        std::swap(slot_count_, other.slot_count_);
        std::swap(slot_bits_, other.slot_bits_);
        std::swap(slots_per_group_, other.slots_per_group_);
        std::swap(group_count_, other.group_count_);
        std::swap(divider_, other.divider_);
        std::swap(groups_, other.groups_);
        std::swap(bytes_, other.bytes_);
    }

  private:
    static constexpr size_t huge_page = size_t{2} << 20;

    void allocate() {
        if (group_count_ == 0) return;
        size_t const raw = group_count_ * sizeof(std::atomic<uint64_t>);
        // Large tables: round up to whole huge pages and align to one, so madvise covers them all.
        size_t const align = raw >= huge_page ? huge_page : 64;
        bytes_ = (raw + align - 1) / align * align;
        void* p = std::aligned_alloc(align, bytes_);
        if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        // Advice only: a kernel without THP refuses it and we run on 4 KiB pages, slower but
        // correct.
        if (raw >= huge_page) (void)madvise(p, bytes_, MADV_HUGEPAGE);
#endif
        groups_ = static_cast<std::atomic<uint64_t>*>(p);
        // Start each atomic's lifetime (and zero it) with placement new; the padding past the last
        // group is never read.
        static_assert(std::atomic<uint64_t>::is_always_lock_free);
        for (size_t g = 0; g < group_count_; ++g) new (groups_ + g) std::atomic<uint64_t>(0);
    }

    void release() noexcept {
        std::free(groups_);
        groups_ = nullptr;
    }

    size_t slot_count_ = 0;
    unsigned slot_bits_ = 0;
    unsigned slots_per_group_ = 0;
    group_divider divider_;
    size_t group_count_ = 0;
    std::atomic<uint64_t>* groups_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace qmer::qf
