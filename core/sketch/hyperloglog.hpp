#pragma once
// A concurrent HyperLogLog sketch (Flajolet et al. 2007) of 64-bit hashes: estimates how many
// distinct hashes were added, in 2^p bytes, with a relative standard error of 1.04 / sqrt(2^p)
// (0.81% at p = 14). qmer index uses it to size the first level of a growing filter from the
// references' distinct k-mers before inserting them (a growing level that starts at its final size
// never migrates).
//
// Concurrency: add() is lock-free from any number of threads. A register only ever rises (a CAS
// loop raising it to the max), and max is order-independent, so the registers after every add()
// returned - hence the estimate - do not depend on the interleaving. Relaxed order suffices: the
// caller reads the estimate after joining the adding threads, which orders every add before it.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace qmer::sketch {

class hyperloglog {
  public:
    explicit hyperloglog(unsigned precision = 14)
        : p_(precision), registers_(std::make_unique<std::atomic<uint8_t>[]>(size_t{1} << p_)) {
        if (p_ < 4 || p_ > 18) throw std::invalid_argument("hyperloglog: precision must be 4..18");
    }

    // Register = the top p bits; rank = 1 + the leading zeros of the other 64 - p bits.
    void add(uint64_t h) noexcept {
        auto& reg = registers_[h >> (64 - p_)];
        uint64_t const rest = h << p_;
        auto const rank =
            static_cast<uint8_t>(rest == 0 ? 64 - p_ + 1 : std::countl_zero(rest) + 1);
        uint8_t seen = reg.load(std::memory_order_relaxed);
        // Most adds find the register already as high (it saturates after a few thousand adds):
        // a plain load, no write, so threads do not fight over the register's cache line.
        while (seen < rank && !reg.compare_exchange_weak(seen, rank, std::memory_order_relaxed)) {
        }
    }

    // The raw estimate alpha_m m^2 / sum 2^-M[j], with linear counting m ln(m / zeros) while it is
    // below 2.5 m (the raw estimate is biased there). No large-range correction: 64-bit hashes.
    double estimate() const noexcept {
        size_t const m = size_t{1} << p_;
        double sum = 0;
        size_t zeros = 0;
        for (size_t j = 0; j < m; ++j) {
            uint8_t const v = registers_[j].load(std::memory_order_relaxed);
            sum += std::ldexp(1.0, -static_cast<int>(v));
            zeros += v == 0;
        }
        double const md = static_cast<double>(m);
        double const alpha = 0.7213 / (1 + 1.079 / md);
        double const raw = alpha * md * md / sum;
        if (raw <= 2.5 * md && zeros != 0) return md * std::log(md / static_cast<double>(zeros));
        return raw;
    }

    // The relative standard error of estimate().
    double standard_error() const noexcept {
        return 1.04 / std::sqrt(std::ldexp(1.0, static_cast<int>(p_)));
    }
    size_t memory_bytes() const noexcept { return size_t{1} << p_; }

  private:
    unsigned p_;
    std::unique_ptr<std::atomic<uint8_t>[]> registers_;
};

}  // namespace qmer::sketch
