#pragma once
// The locked bit sets of the blog post "Write your own concurrent Java BitSet with blackjack and
// thread safety", for bench/filters/bitset_bench.cpp only (qmer's bit set is the
// lock-free core/bitset/atomic_bitset.hpp). Plain uint64_t words behind:
//   mutex_bitset     one std::mutex around every operation ("synchronized")
//   rwlock_bitset    one std::shared_mutex: get() shares it, set/clear/flip take it exclusively
//   striped_bitset   one std::shared_mutex per stripe of words (fine-grained locking), each on its
//                    own cache line so stripes do not falsely share
// Same interface as atomic_bitset's get/set/clear/flip.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace qmer::bench {

class mutex_bitset {
  public:
    explicit mutex_bitset(size_t bits) : words_((bits + 63) / 64) {}
    bool get(size_t i) {
        std::lock_guard lock(mutex_);
        return (words_[i >> 6] >> (i & 63)) & 1;
    }
    void set(size_t i) {
        std::lock_guard lock(mutex_);
        words_[i >> 6] |= uint64_t{1} << (i & 63);
    }
    void clear(size_t i) {
        std::lock_guard lock(mutex_);
        words_[i >> 6] &= ~(uint64_t{1} << (i & 63));
    }
    void flip(size_t i) {
        std::lock_guard lock(mutex_);
        words_[i >> 6] ^= uint64_t{1} << (i & 63);
    }

  private:
    std::mutex mutex_;
    std::vector<uint64_t> words_;
};

class rwlock_bitset {
  public:
    explicit rwlock_bitset(size_t bits) : words_((bits + 63) / 64) {}
    bool get(size_t i) {
        std::shared_lock lock(mutex_);
        return (words_[i >> 6] >> (i & 63)) & 1;
    }
    void set(size_t i) {
        std::unique_lock lock(mutex_);
        words_[i >> 6] |= uint64_t{1} << (i & 63);
    }
    void clear(size_t i) {
        std::unique_lock lock(mutex_);
        words_[i >> 6] &= ~(uint64_t{1} << (i & 63));
    }
    void flip(size_t i) {
        std::unique_lock lock(mutex_);
        words_[i >> 6] ^= uint64_t{1} << (i & 63);
    }

  private:
    std::shared_mutex mutex_;
    std::vector<uint64_t> words_;
};

class striped_bitset {
  public:
    // `words_per_stripe` words share one lock; the post's segments.
    explicit striped_bitset(size_t bits, size_t words_per_stripe = 8)
        : words_((bits + 63) / 64),
          per_stripe_(words_per_stripe),
          stripes_((words_.size() + words_per_stripe - 1) / words_per_stripe) {}
    bool get(size_t i) {
        std::shared_lock lock(stripe(i));
        return (words_[i >> 6] >> (i & 63)) & 1;
    }
    void set(size_t i) {
        std::unique_lock lock(stripe(i));
        words_[i >> 6] |= uint64_t{1} << (i & 63);
    }
    void clear(size_t i) {
        std::unique_lock lock(stripe(i));
        words_[i >> 6] &= ~(uint64_t{1} << (i & 63));
    }
    void flip(size_t i) {
        std::unique_lock lock(stripe(i));
        words_[i >> 6] ^= uint64_t{1} << (i & 63);
    }

  private:
    struct alignas(64) padded_lock {
        std::shared_mutex m;
    };
    std::shared_mutex& stripe(size_t i) { return stripes_[(i >> 6) / per_stripe_].m; }

    std::vector<uint64_t> words_;
    size_t per_stripe_;
    std::vector<padded_lock> stripes_;
};

}  // namespace qmer::bench
