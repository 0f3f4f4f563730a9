#include "app/index/sorted_build.hpp"

#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <span>
#include <utility>

#include "app/common/interrupt.hpp"
#include "app/index/sort_and_append.hpp"

namespace qmer::app {
namespace {

// 26 bits below the bucket bits: two 13-bit radix passes per bucket, and on the benchmark
// reference (37-bit fingerprints) 2048 buckets, whose tails (one cache line each, per thread) stay
// in L2 while a thread scatters (with 4096 buckets they do not, and the scatter becomes a large
// share of the build: bench/MEASUREMENTS.md, "Sorted build"). Every build of
// g shares this layout: the window marks judge only windows inside one bucket, so it is part of
// what makes the index the same whatever the memory limit.
constexpr unsigned low_bits_target = 26;
constexpr unsigned min_bucket_bits = 6;
constexpr unsigned max_bucket_bits = 20;

unsigned bucket_bits_of(qf::geometry g) noexcept {
    unsigned const fp_bits = g.fingerprint_bits();
    unsigned const wanted = fp_bits > low_bits_target ? fp_bits - low_bits_target : 0;
    return std::min(fp_bits, std::clamp(wanted, min_bucket_bits, max_bucket_bits));
}

// Appends to `out` the fingerprints of one bucket from its sorted parts below the bucket bits
// (`lows`, duplicates adjacent), with `marks` filtering the bucket's overloaded windows.
template <typename Low>
void append_bucket(std::span<Low const> lows, uint64_t bucket, unsigned low_bits,
                   window_marks* marks, std::vector<uint64_t>& out) {
    uint64_t const high = bucket << low_bits;
    size_t const start = out.size();
    for (size_t i = 0; i < lows.size(); ++i)
        if (i == 0 || lows[i] != lows[i - 1]) out.push_back(high | lows[i]);
    if (marks == nullptr) return;
    std::vector<uint64_t> fps(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
    marks->filter_bucket(fps, high, high + (uint64_t{1} << low_bits));
    out.resize(start);
    out.insert(out.end(), fps.begin(), fps.end());
}

// The sorted union of two sorted, deduplicated fingerprint lists (a fingerprint in both once).
std::vector<uint64_t> merged(std::vector<uint64_t> const& a, std::vector<uint64_t> const& b) {
    if (b.empty()) return a;
    std::vector<uint64_t> out;
    out.reserve(a.size() + b.size());
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

// Spilled bins: at most 2^12 of them (the buffers of every bin stay small), at least 2^10 where the
// buckets allow it (bins of even size), never finer than the buckets, and fine enough that a
// fingerprint's part below its bin bits fits 32 bits.
constexpr unsigned max_bin_bits = 12;
constexpr unsigned wanted_bin_bits = 10;

unsigned bin_bits_of(qf::geometry g) noexcept {
    unsigned const fp_bits = g.fingerprint_bits();
    unsigned const needed = fp_bits > 32 ? fp_bits - 32 : 0;
    return std::min(bucket_bits_of(g), std::max(needed, wanted_bin_bits));
}

// Each thread's buffer of a bin holds at least this many fingerprints (4 KiB: one write each).
constexpr size_t min_buffer_values = 1024;

size_t buffer_values_of(qf::geometry g, size_t buffer_bytes_per_thread) noexcept {
    size_t const bins = size_t{1} << bin_bits_of(g);
    return std::max(min_buffer_values, buffer_bytes_per_thread / sizeof(uint32_t) / bins);
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
    if (!sorted_) radix_sort(lows, scratch, low_bits_);
    std::vector<uint64_t> fps;
    fps.reserve(lows.size());
    append_bucket(std::span<uint32_t const>(lows), bucket, low_bits_, marks_, fps);
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
    bool const marking = now != stage::drop, dropping = now != stage::mark;
    size_t out = 0;
    for (size_t i = 0; i < fps.size();) {
        uint64_t const w = first_window(fps[i]);
        uint64_t const last_fp = last_fingerprint(w);  // the last whose smallest hash is in w
        size_t j = i;
        while (j < fps.size() && fps[j] <= last_fp) ++j;
        bool overloaded = false;
        if (marking) {
            overloaded = static_cast<double>(j - i) > threshold && inside(w);
            if (overloaded) {
                std::atomic_ref<uint64_t>(bits[w / 64])
                    .fetch_or(uint64_t{1} << (w % 64), std::memory_order_relaxed);
                marked.fetch_add(1, std::memory_order_relaxed);
            }
        } else {
            overloaded = is_marked(w);
        }
        if (!dropping) {
            out = j;  // nothing moves
            i = j;
            continue;
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

bool window_marks::mark_unsorted(std::span<uint32_t const> values, uint64_t base,
                                 unsigned value_bits, unsigned bucket_low_bits,
                                 double most_candidate_share) {
    if (values.empty()) return true;
    unsigned const shift = 64 - window_bits;
    uint64_t const space = g.fingerprint_space();
    uint64_t const end = std::min(space, base + (uint64_t{1} << value_bits));  // exclusive
    if (base >= end) return true;
    // Cells of 2^c fingerprints, at most a quarter of the narrowest window (space / 2^bits
    // rounded down), so that the cells a window touches hold little beyond it; at most 2^20
    // cells (coarser cells only let more windows through to the exact count).
    uint64_t const narrowest = std::max<uint64_t>(space >> window_bits, 1);
    unsigned const quarter = std::bit_width(narrowest) > 3 ? std::bit_width(narrowest) - 3 : 0;
    unsigned const c =
        std::min(value_bits, std::max(quarter, value_bits > 20 ? value_bits - 20 : 0));
    size_t const cells = (size_t{1} << (value_bits - c));
    // below[i]: the positions in cells before cell i.
    std::vector<uint32_t> below(cells + 1, 0);
    for (uint32_t v : values) ++below[(v >> c) + 1];
    for (size_t i = 0; i < cells; ++i) below[i + 1] += below[i];

    // The fingerprints of window w are those whose smallest hash lies in it (filter_bucket's
    // first_window): (last_fingerprint(w - 1), last_fingerprint(w)]. filter_bucket judges w only
    // when its first and last fingerprints lie in one bucket (`inside`), where that bucket holds
    // them all.
    uint64_t const last_window_number = (~uint64_t{0}) >> shift;
    uint64_t const first_window = g.hash_of_fingerprint(base) >> shift;
    uint64_t const last_window =
        end < space ? (g.hash_of_fingerprint(end) - 1) >> shift : last_window_number;
    struct candidate {
        uint64_t window, lo, hi;  // its fingerprints, [lo, hi] (relative to base)
    };
    std::vector<candidate> candidates;
    uint64_t candidate_positions = 0;
    uint64_t previous_last = first_window == 0 ? 0 : last_fingerprint(first_window - 1);
    for (uint64_t w = first_window;; ++w) {
        uint64_t const first_fp = g.fingerprint(w << shift);
        uint64_t const last_fp = last_fingerprint(w);
        uint64_t const lo = w == 0 ? 0 : previous_last + 1;
        previous_last = last_fp;
        if (first_fp >= base && last_fp < end &&
            first_fp >> bucket_low_bits == last_fp >> bucket_low_bits && lo <= last_fp) {
            uint64_t const positions = below[((last_fp - base) >> c) + 1] - below[(lo - base) >> c];
            if (static_cast<double>(positions) > threshold) {
                candidates.push_back({w, lo - base, last_fp - base});
                candidate_positions += positions;
            }
        }
        if (w == last_window) break;
    }
    if (candidates.empty()) return true;
    if (static_cast<double>(candidate_positions) >
        most_candidate_share * static_cast<double>(values.size()))
        return false;

    // The candidates' cells, sorted and deduplicated: exact distinct counts.
    std::vector<uint8_t> wanted(cells, 0);
    for (auto const& k : candidates)
        std::fill(wanted.begin() + static_cast<std::ptrdiff_t>(k.lo >> c),
                  wanted.begin() + static_cast<std::ptrdiff_t>(k.hi >> c) + 1, uint8_t{1});
    std::vector<uint32_t> picked, scratch;
    for (uint32_t v : values)
        if (wanted[v >> c]) picked.push_back(v);
    radix_sort(picked, scratch, value_bits);
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    for (auto const& k : candidates) {
        auto const from = std::lower_bound(picked.begin(), picked.end(), k.lo);
        auto const to = std::upper_bound(from, picked.end(), k.hi);
        if (static_cast<double>(to - from) > threshold) {
            std::atomic_ref<uint64_t>(bits[k.window / 64])
                .fetch_or(uint64_t{1} << (k.window % 64), std::memory_order_relaxed);
            marked.fetch_add(1, std::memory_order_relaxed);
        }
    }
    return true;
}

bool fingerprint_buckets::append_to(sorted_sink const& sink, unsigned threads,
                                    progress_meter* progress, fingerprint_buckets* plain) {
    return append_in_order(
        first_, last_, threads,
        [&](uint32_t b, std::vector<uint64_t>& out) {
            out = plain ? merged(gather(b), plain->gather(b)) : gather(b);
        },
        sink, progress);
}

void fingerprint_buckets::sort_and_mark(unsigned /*threads*/, progress_meter* /*progress*/) {
    sorted_ = true;
    if (local_.empty()) return;  // nothing was read
    // Buckets in parallel (the command's thread limit applies); each is one task's alone.
    tbb::parallel_for(first_, last_, [&](uint32_t bucket) {
        // Every thread's part of the bucket into the first thread's, sorted and deduplicated.
        auto parts = local_.begin();
        auto& first = (*parts)[bucket - first_];
        for (++parts; parts != local_.end(); ++parts) {
            auto& part = (*parts)[bucket - first_];
            first.insert(first.end(), part.begin(), part.end());
            std::vector<uint32_t>().swap(part);
        }
        std::vector<uint32_t> scratch;
        radix_sort(first, scratch, low_bits_);
        first.erase(std::unique(first.begin(), first.end()), first.end());
        first.shrink_to_fit();
        if (marks_ != nullptr) {
            std::vector<uint64_t> fps;
            append_bucket(std::span<uint32_t const>(first), bucket, low_bits_, marks_, fps);
        }
    });
}

bool spilled_fingerprint_buckets::supports(qf::geometry g) noexcept {
    return fingerprint_buckets::supports(g) && bin_bits_of(g) <= max_bin_bits &&
           g.fingerprint_bits() - bin_bits_of(g) <= 32;
}

uint64_t spilled_fingerprint_buckets::memory_bytes(qf::geometry g, uint64_t kmer_positions,
                                                   unsigned threads,
                                                   size_t buffer_bytes_per_thread) noexcept {
    uint64_t const bins = uint64_t{1} << bin_bits_of(g);
    uint64_t const buffers =
        uint64_t{threads} * bins * buffer_values_of(g, buffer_bytes_per_thread) * sizeof(uint32_t);
    // A bin being sorted: its values, the radix scratch and its fingerprints (4 + 4 + 8 bytes
    // each), +25% for uneven bins, for each of the pipeline's 2 tokens per thread.
    uint64_t const bin_values = kmer_positions / bins * 5 / 4 + 1;
    uint64_t const sorting = 2 * uint64_t{threads} * bin_values * 16;
    // Where each buffer went: 12 bytes per written buffer.
    uint64_t const segments = kmer_positions / min_buffer_values * 16;
    return buffers + sorting + segments;
}

spilled_fingerprint_buckets::spilled_fingerprint_buckets(qf::geometry g, io::spill_file& file,
                                                         size_t buffer_bytes_per_thread,
                                                         window_marks* marks)
    : g_(g),
      file_(file),
      marks_(marks),
      bin_shift_(g.fingerprint_bits() - bin_bits_of(g)),
      bin_mask_(bin_shift_ == 0 ? 0 : ~uint64_t{0} >> (64 - bin_shift_)),
      bins_(uint32_t{1} << bin_bits_of(g)),
      low_bits_(g.fingerprint_bits() - bucket_bits_of(g)),
      buffer_values_(buffer_values_of(g, buffer_bytes_per_thread)),
      local_([bins = bins_] {
          thread_bins mine;
          mine.buffers.resize(bins);
          mine.written.resize(bins);
          return mine;
      }) {}

void spilled_fingerprint_buckets::flush(thread_bins& mine, uint32_t bin) {
    auto& buffer = mine.buffers[bin];
    if (buffer.empty()) return;
    uint64_t const offset = file_.append(buffer.data(), buffer.size() * sizeof(uint32_t));
    mine.written[bin].push_back({offset, static_cast<uint32_t>(buffer.size())});
    buffer.clear();
}

std::vector<uint32_t> spilled_fingerprint_buckets::read_bin(uint32_t bin, bool release) {
    size_t total = 0;
    for (auto& mine : local_)
        for (auto const& part : mine.written[bin]) total += part.values;
    std::vector<uint32_t> values(total);
    size_t at = 0;
    for (auto& mine : local_) {
        for (auto const& part : mine.written[bin]) {
            file_.read(part.offset, values.data() + at, part.values * sizeof(uint32_t));
            at += part.values;
        }
        if (release) std::vector<segment>().swap(mine.written[bin]);
    }
    return values;
}

std::vector<uint64_t> spilled_fingerprint_buckets::bin_fingerprints(
    uint32_t bin, std::vector<uint32_t> const& values) {
    // The bin's buckets one after the other, each as fingerprint_buckets::gather() gives it.
    std::vector<uint64_t> fps;
    fps.reserve(values.size());
    unsigned const buckets_bits = bin_shift_ - low_bits_;
    uint64_t const first_bucket = uint64_t{bin} << buckets_bits;
    uint32_t const low_mask = low_bits_ == 0 ? 0 : ~uint32_t{0} >> (32 - low_bits_);
    std::vector<uint32_t> lows;
    for (size_t i = 0; i < values.size();) {
        uint32_t const bucket = low_bits_ >= 32 ? 0 : values[i] >> low_bits_;
        size_t j = i;
        lows.clear();
        while (j < values.size() && (low_bits_ >= 32 ? 0 : values[j] >> low_bits_) == bucket)
            lows.push_back(values[j++] & low_mask);
        append_bucket(std::span<uint32_t const>(lows), first_bucket + bucket, low_bits_, marks_,
                      fps);
        i = j;
    }
    return fps;
}

std::vector<uint64_t> spilled_fingerprint_buckets::sorted_bin(uint32_t bin) {
    std::vector<uint32_t> values = read_bin(bin, true);
    if (sorted_bins_.empty() || sorted_bins_[bin] == 0) {
        std::vector<uint32_t> scratch;
        radix_sort(values, scratch, bin_shift_);
    }
    return bin_fingerprints(bin, values);
}

void spilled_fingerprint_buckets::flush_all() {
    // What the threads' buffers still hold goes to the file too; then the buffers are freed.
    for (auto& mine : local_) {
        for (uint32_t bin = 0; bin < std::min<size_t>(bins_, mine.buffers.size()); ++bin)
            flush(mine, bin);
        std::vector<std::vector<uint32_t>>().swap(mine.buffers);
    }
}

void spilled_fingerprint_buckets::sort_and_mark(unsigned /*threads*/,
                                                progress_meter* /*progress*/) {
    flush_all();
    if (marks_ == nullptr || local_.empty()) return;  // nothing to mark, or nothing was read
    sorted_bins_.assign(bins_, 0);
    // Bins in parallel (the command's thread limit applies); each task sets mark bits with
    // atomic ORs, as filter_bucket does, and only its own bin's lists and flag. Ctrl-C is seen
    // between bins (this phase reads the whole scratch file back: 9 GiB at 2.4 Gbp).
    tbb::parallel_for(uint32_t{0}, bins_, [&](uint32_t bin) {
        throw_if_interrupted();
        std::vector<uint32_t> values = read_bin(bin, false);
        if (marks_->mark_unsorted(values, uint64_t{bin} << bin_shift_, bin_shift_, low_bits_,
                                  max_candidate_share))
            return;
        // Crowded by repeats: most of the bin would be sorted to count it, and its positions
        // are mostly repeats. Sorted and deduplicated once here and written back as one piece,
        // it is read back smaller and not sorted again.
        std::vector<uint32_t> scratch;
        radix_sort(values, scratch, bin_shift_);
        std::vector<uint32_t>().swap(scratch);
        values.erase(std::unique(values.begin(), values.end()), values.end());
        (void)bin_fingerprints(bin, values);
        for (auto& mine : local_) std::vector<segment>().swap(mine.written[bin]);
        if (!values.empty()) {
            uint64_t const offset = file_.append(values.data(), values.size() * sizeof(uint32_t));
            local_.begin()->written[bin].push_back({offset, static_cast<uint32_t>(values.size())});
        }
        sorted_bins_[bin] = 1;
    });
}

bool spilled_fingerprint_buckets::append_to(sorted_sink const& sink, unsigned threads,
                                            progress_meter* progress,
                                            spilled_fingerprint_buckets* plain) {
    flush_all();
    if (plain != nullptr) plain->flush_all();
    return append_in_order(
        0, bins_, threads,
        [&](uint32_t bin, std::vector<uint64_t>& out) {
            out = plain ? merged(sorted_bin(bin), plain->sorted_bin(bin)) : sorted_bin(bin);
        },
        sink, progress);
}

void refill_first_level(qf::expandable_filter& filter, qf::rank_select_table const& written) {
    qf::locally_locked_filter::sorted_append_state state;
    qf::for_each_fingerprint_chunk(written, [&](std::span<uint64_t const> fps) {
        if (filter.append_sorted(fps, state) != fps.size())
            throw std::logic_error("qmer index: level 0 did not take back what it held");
    });
}

unsigned plan_passes(uint64_t kmer_positions, uint64_t budget_bytes) {
    double const need =
        static_cast<double>(bucket_bytes_per_position) * static_cast<double>(kmer_positions);
    double const passes =
        std::ceil(need / static_cast<double>(std::max<uint64_t>(budget_bytes, 1)));
    return static_cast<unsigned>(std::clamp(passes, 1.0, 64.0));
}

}  // namespace qmer::app
