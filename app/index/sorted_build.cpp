#include "app/index/sorted_build.hpp"

#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "app/common/interrupt.hpp"

namespace qmer::app {
namespace {

// 26 bits below the bucket bits: two 13-bit radix passes per bucket, and on the benchmark
// reference (37-bit fingerprints) 2048 buckets, whose tails (one cache line each, per thread) stay
// in L2 while a thread scatters; 4096 buckets made the scatter ~35% of the build.
constexpr unsigned low_bits_target = 26;
constexpr unsigned min_bucket_bits = 6;
constexpr unsigned max_bucket_bits = 20;

unsigned bucket_bits_of(qf::geometry g) noexcept {
    unsigned const fp_bits = g.fingerprint_bits();
    unsigned const wanted = fp_bits > low_bits_target ? fp_bits - low_bits_target : 0;
    return std::min(fp_bits, std::clamp(wanted, min_bucket_bits, max_bucket_bits));
}

// LSD radix sort of values below 2^bits in digits of at most 13 bits (counters stay in L1), through
// a scratch buffer of the same size: 2 passes for the usual 25 bits, ~3x faster than std::sort on
// buckets of ~10^4 values.
void radix_sort(std::vector<uint32_t>& a, std::vector<uint32_t>& scratch, unsigned bits) {
    if (bits == 0 || a.size() < 2) return;
    unsigned const passes = (bits + 12) / 13;
    unsigned const digit = (bits + passes - 1) / passes;
    std::vector<uint32_t> count(size_t{1} << digit);
    scratch.resize(a.size());
    for (unsigned pass = 0, shift = 0; pass < passes; ++pass, shift += digit) {
        uint32_t const mask = (uint32_t{1} << digit) - 1;
        std::fill(count.begin(), count.end(), 0);
        for (uint32_t v : a) ++count[(v >> shift) & mask];
        uint32_t sum = 0;
        for (auto& c : count) sum += std::exchange(c, sum);
        for (uint32_t v : a) scratch[count[(v >> shift) & mask]++] = v;
        a.swap(scratch);
    }
}

}  // namespace

bool fingerprint_buckets::supports(qf::geometry g) noexcept {
    return g.fingerprint_bits() <= 32 + max_bucket_bits;
}

uint32_t fingerprint_buckets::bucket_count(qf::geometry g) noexcept {
    return uint32_t{1} << bucket_bits_of(g);
}

fingerprint_buckets::fingerprint_buckets(qf::geometry g, uint32_t first, uint32_t last,
                                         size_t reserve_per_bucket, window_marks* marks)
    : g_(g),
      marks_(marks),
      low_bits_(g.fingerprint_bits() - bucket_bits_of(g)),
      low_mask_(low_bits_ == 0 ? 0 : ~uint64_t{0} >> (64 - low_bits_)),
      first_(first),
      last_(last),
      local_([n = last - first, reserve_per_bucket] {
          std::vector<std::vector<uint32_t>> buckets(n);
          for (auto& b : buckets) b.reserve(reserve_per_bucket);
          return buckets;
      }) {}

std::vector<uint64_t> fingerprint_buckets::gather(uint32_t bucket) {
    size_t total = 0;
    for (auto& parts : local_) total += parts[bucket - first_].size();
    std::vector<uint32_t> lows, scratch;
    lows.reserve(total);
    for (auto& parts : local_) {
        auto& part = parts[bucket - first_];
        lows.insert(lows.end(), part.begin(), part.end());
        std::vector<uint32_t>().swap(part);  // free as we go
    }
    radix_sort(lows, scratch, low_bits_);
    std::vector<uint64_t> fps;
    fps.reserve(lows.size());
    uint64_t const high = uint64_t{bucket} << low_bits_;
    for (size_t i = 0; i < lows.size(); ++i)
        if (i == 0 || lows[i] != lows[i - 1]) fps.push_back(high | lows[i]);
    if (marks_ != nullptr) marks_->filter_bucket(fps, high, high + (uint64_t{1} << low_bits_));
    return fps;
}

void window_marks::filter_bucket(std::vector<uint64_t>& fps, uint64_t lo, uint64_t hi) {
    unsigned const shift = 64 - window_bits;
    uint64_t const space = g.fingerprint_space();
    // The windows of the smallest and the largest hash with fingerprint fp.
    auto first_window = [&](uint64_t fp) { return g.hash_of_fingerprint(fp) >> shift; };
    auto last_window = [&](uint64_t fp) {
        return fp + 1 < space ? (g.hash_of_fingerprint(fp + 1) - 1) >> shift
                              : (~uint64_t{0}) >> shift;
    };
    // A window lies inside the bucket when its first and last fingerprints do.
    auto inside = [&](uint64_t w) {
        uint64_t const first_fp = g.fingerprint(w << shift);
        uint64_t const last_fp = g.fingerprint(((w + 1) << shift) - 1);
        return first_fp >= lo && last_fp < hi;
    };
    size_t out = 0;
    for (size_t i = 0; i < fps.size();) {
        uint64_t const w = first_window(fps[i]);
        size_t j = i;
        while (j < fps.size() && first_window(fps[j]) == w) ++j;
        bool const overloaded = static_cast<double>(j - i) > threshold && inside(w);
        if (overloaded) {
            std::atomic_ref<uint64_t>(bits[w / 64])
                .fetch_or(uint64_t{1} << (w % 64), std::memory_order_relaxed);
            marked.fetch_add(1, std::memory_order_relaxed);
        }
        for (size_t t = i; t < j; ++t) {
            // Dropped only if every hash with this fingerprint is in window w: one that a
            // neighbouring, unmarked window's hash can have stays (an extra fingerprint costs a
            // false positive; a missing one would be a false negative).
            if (overloaded && last_window(fps[t]) == w) {
                dropped.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            fps[out++] = fps[t];
        }
        i = j;
    }
    fps.resize(out);
}

bool fingerprint_buckets::append_to(qf::expandable_filter& filter,
                                    qf::locally_locked_filter::sorted_append_state& state,
                                    unsigned threads) {
    uint32_t next = first_;
    bool complete = true;
    // Serial: the next bucket number; parallel: gather, sort, deduplicate; serial in order:
    // append. Tokens bound the sorted buckets waiting for the append.
    tbb::parallel_pipeline(
        2 * static_cast<size_t>(threads),
        tbb::make_filter<void, uint32_t>(tbb::filter_mode::serial_in_order,
                                         [&](tbb::flow_control& fc) -> uint32_t {
                                             if (next == last_ || interrupted()) {
                                                 fc.stop();
                                                 return 0;
                                             }
                                             return next++;
                                         }) &
            tbb::make_filter<uint32_t, std::vector<uint64_t>>(
                tbb::filter_mode::parallel, [&](uint32_t b) { return gather(b); }) &
            tbb::make_filter<std::vector<uint64_t>, void>(
                tbb::filter_mode::serial_in_order, [&](std::vector<uint64_t> const& fps) {
                    // Once level 0 is full, everything after stays out too (larger fingerprints).
                    if (complete && filter.append_sorted(fps, state) != fps.size())
                        complete = false;
                }));
    throw_if_interrupted();
    return complete;
}

unsigned plan_passes(uint64_t kmer_positions, uint64_t budget_bytes) {
    double const need =
        static_cast<double>(bucket_bytes_per_position) * static_cast<double>(kmer_positions);
    double const passes =
        std::ceil(need / static_cast<double>(std::max<uint64_t>(budget_bytes, 1)));
    return static_cast<unsigned>(std::clamp(passes, 1.0, 64.0));
}

}  // namespace qmer::app
