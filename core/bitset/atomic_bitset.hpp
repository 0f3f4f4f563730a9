#pragma once
// A lock-free concurrent bit set over 64-bit atomic words (approach 4 of the blog post
// "Write your own concurrent Java BitSet with blackjack and thread safety"), and the aligned,
// huge-page-advised word array it (and the cuckoo filter) stores its state in.
//
// Thread safety: every member except the constructors, the destructor and store_words() may be
// called from any number of threads at once. Each operation touches exactly one word with one
// atomic instruction (a load, or one fetch_or / fetch_and / fetch_xor), so operations on different
// bits of the same word never lose each other's updates (that post's neighbouring-bit race) and no
// operation ever waits for another: the bit set is wait-free, not only lock-free.
//
// Memory orders (ARCHITECTURE.md: acquire/release by default, each choice stated):
//   get()                  acquire load: a reader that sees a bit another thread set also sees
//                          every write that thread made before setting it (e.g. data the bit
//                          publishes).
//   set(), clear(), flip() release RMW: the write publishes what the caller wrote before it. The
//                          RMW itself is what makes concurrent updates of one word safe; the order
//                          only concerns other memory.
//   test_and_set()         acq_rel RMW: the caller acts on the old value ("I was first"), so it
//                          must also see what the previous setter published.
// On x86-64 all of these compile to the same instructions as seq_cst (plain mov for loads, lock-
// prefixed RMW for updates), so the choice costs nothing there; it matters on ARM and POWER.

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <stdexcept>
#include <utility>

namespace qmer {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "qmer needs lock-free 64-bit atomics");

// An array of std::atomic<uint64_t>, zero-initialised, aligned to a 64-byte cache line, and for
// arrays of 2 MiB or more aligned to 2 MiB and advised MADV_HUGEPAGE before the first touch. Random
// access into a large filter is bound by TLB misses with 4 KiB pages (random rates drop by a third
// and latency nearly doubles: bench/BASELINES.md), so large filters ask for transparent huge pages.
class atomic_word_array {
  public:
    static constexpr size_t cache_line = 64;
    static constexpr size_t huge_page = size_t{2} << 20;

    atomic_word_array() = default;
    explicit atomic_word_array(size_t count) : count_(count) {
        if (count == 0) return;
        size_t const bytes = count * sizeof(std::atomic<uint64_t>);
        size_t const align = bytes >= huge_page ? huge_page : cache_line;
        size_t const rounded =
            (bytes + align - 1) / align * align;  // aligned_alloc needs a multiple
        void* raw = std::aligned_alloc(align, rounded);
        if (raw == nullptr) throw std::bad_alloc();
        // Advise before touching: the kernel then backs the range with huge pages when it faults it
        // in below. A failure only means smaller pages, so it is ignored.
        if (align == huge_page) (void)::madvise(raw, rounded, MADV_HUGEPAGE);
        words_ = static_cast<std::atomic<uint64_t>*>(raw);
        // Begin each atomic's lifetime with value 0 (std::atomic is not implicit-lifetime).
        for (size_t i = 0; i < count; ++i) new (words_ + i) std::atomic<uint64_t>(0);
    }
    atomic_word_array(atomic_word_array const&) = delete;
    atomic_word_array& operator=(atomic_word_array const&) = delete;
    atomic_word_array(atomic_word_array&& other) noexcept
        : words_(std::exchange(other.words_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    atomic_word_array& operator=(atomic_word_array&& other) noexcept {
        if (this != &other) {
            release();
            words_ = std::exchange(other.words_, nullptr);
            count_ = std::exchange(other.count_, 0);
        }
        return *this;
    }
    ~atomic_word_array() { release(); }

    size_t size() const noexcept { return count_; }
    size_t memory_bytes() const noexcept { return count_ * sizeof(uint64_t); }
    std::atomic<uint64_t>& operator[](size_t i) noexcept { return words_[i]; }
    std::atomic<uint64_t> const& operator[](size_t i) const noexcept { return words_[i]; }
    std::atomic<uint64_t> const* data() const noexcept { return words_; }

    // Raw words out, for the index file. Each word is read atomically (acquire); a copy taken while
    // writers run is a mix of moments, so take it when the filter is quiescent.
    void copy_to(std::span<uint64_t> out) const {
        if (out.size() != count_)
            throw std::invalid_argument("atomic_word_array::copy_to: size mismatch");
        for (size_t i = 0; i < count_; ++i) out[i] = words_[i].load(std::memory_order_acquire);
    }
    // Raw words in (loading an index). Not concurrent with other writers: the filter is being
    // built. Release stores, so whatever later hands the filter to other threads publishes them
    // (a release fence would do the same, but ThreadSanitizer does not model fences).
    void copy_from(std::span<uint64_t const> in) {
        if (in.size() != count_)
            throw std::invalid_argument("atomic_word_array::copy_from: size mismatch");
        for (size_t i = 0; i < count_; ++i) words_[i].store(in[i], std::memory_order_release);
    }

  private:
    void release() noexcept {
        // std::atomic<uint64_t> is trivially destructible: freeing the storage ends the lifetimes.
        std::free(words_);
        words_ = nullptr;
        count_ = 0;
    }

    std::atomic<uint64_t>* words_ = nullptr;
    size_t count_ = 0;
};

// A fixed-size set of `size()` bits, all initially clear.
class atomic_bitset {
  public:
    atomic_bitset() = default;
    explicit atomic_bitset(size_t bits) : bits_(bits), words_((bits + 63) / 64) {}

    size_t size() const noexcept { return bits_; }
    size_t word_count() const noexcept { return words_.size(); }
    size_t memory_bytes() const noexcept { return words_.memory_bytes(); }

    bool get(size_t i) const noexcept {
        return (words_[i >> 6].load(std::memory_order_acquire) & mask(i)) != 0;
    }
    void set(size_t i) noexcept { words_[i >> 6].fetch_or(mask(i), std::memory_order_release); }
    void clear(size_t i) noexcept { words_[i >> 6].fetch_and(~mask(i), std::memory_order_release); }
    void flip(size_t i) noexcept { words_[i >> 6].fetch_xor(mask(i), std::memory_order_release); }
    // Sets bit i and returns its previous value: exactly one of several concurrent callers on a
    // clear bit gets false (the fetch_or's are totally ordered on the word).
    bool test_and_set(size_t i) noexcept {
        return (words_[i >> 6].fetch_or(mask(i), std::memory_order_acq_rel) & mask(i)) != 0;
    }

    // Word-level access for filters that set several bits of one word in one instruction.
    uint64_t load_word(size_t w) const noexcept {
        return words_[w].load(std::memory_order_acquire);
    }
    // Returns the word's previous value (so the caller can tell which bits it changed).
    uint64_t fetch_or_word(size_t w, uint64_t bits) noexcept {
        return words_[w].fetch_or(bits, std::memory_order_acq_rel);
    }
    void prefetch_word(size_t w) const noexcept { __builtin_prefetch(words_.data() + w, 0, 3); }

    // Number of set bits (a snapshot word by word; exact when no writer runs).
    size_t count() const noexcept {
        size_t n = 0;
        for (size_t w = 0; w < words_.size(); ++w) n += std::popcount(load_word(w));
        return n;
    }

    // The words themselves, for the index file to write without a copy (read when quiescent).
    std::span<std::atomic<uint64_t> const> words() const noexcept {
        return {words_.data(), words_.size()};
    }
    // Raw words for the index file; bits past size() in the last word are always zero.
    void copy_words_to(std::span<uint64_t> out) const { words_.copy_to(out); }
    void copy_words_from(std::span<uint64_t const> in) {
        if (!in.empty() && (bits_ & 63) != 0 && (in.back() >> (bits_ & 63)) != 0)
            throw std::invalid_argument("atomic_bitset: bits set past the end of the set");
        words_.copy_from(in);
    }

  private:
    static constexpr uint64_t mask(size_t i) noexcept { return uint64_t{1} << (i & 63); }

    size_t bits_ = 0;
    atomic_word_array words_;
};

}  // namespace qmer
