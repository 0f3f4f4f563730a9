#include "app/index/append_bins.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>

#include "app/common/interrupt.hpp"

namespace qmer::app {

append_bins::append_bins(unsigned bin_bits, io::spill_file* file, size_t buffer_values)
    : bin_bits_(bin_bits),
      file_(file),
      buffer_values_(std::max(buffer_values, min_buffer_values)),
      local_([bins = uint32_t{1} << bin_bits, spilled = file != nullptr] {
          thread_bins mine;
          mine.buffers.resize(bins);
          if (spilled) mine.written.resize(bins);
          return mine;
      }) {}

void append_bins::flush(thread_bins& mine, uint32_t bin) {
    auto& buffer = mine.buffers[bin];
    if (buffer.empty()) return;
    uint64_t const offset = file_->append(buffer.data(), buffer.size() * sizeof(uint64_t));
    mine.written[bin].push_back({offset, buffer.size()});
    buffer.clear();
}

void append_bins::sort_bins(std::function<void(uint32_t, std::vector<uint64_t>&)> const& each) {
    if (file_ != nullptr) {
        // What the buffers still hold goes to the file too; then the buffers are freed.
        for (auto& mine : local_) {
            for (uint32_t bin = 0; bin < bins(); ++bin) flush(mine, bin);
            std::vector<std::vector<uint64_t>>().swap(mine.buffers);
        }
        sorted_at_.assign(bins(), {0, 0});
    } else {
        sorted_.resize(bins());
    }
    std::atomic<uint64_t> kept{0};
    tbb::parallel_for(uint32_t{0}, bins(), [&](uint32_t bin) {
        throw_if_interrupted();
        std::vector<uint64_t> values;
        size_t total = 0;
        for (auto& mine : local_)
            if (file_ != nullptr)
                for (auto const& part : mine.written[bin]) total += part.values;
            else
                total += mine.buffers[bin].size();
        values.reserve(total);
        for (auto& mine : local_) {
            if (file_ != nullptr) {
                for (auto const& part : mine.written[bin]) {
                    size_t const at = values.size();
                    values.resize(at + part.values);
                    file_->read(part.offset, values.data() + at, part.values * sizeof(uint64_t));
                    // Never read again: its room goes to the sorted bins written back, so the
                    // file peaks near 8 bytes a position rather than 8 more per distinct hash.
                    (void)file_->release(part.offset, part.values * sizeof(uint64_t));
                }
                std::vector<segment>().swap(mine.written[bin]);
            } else {
                values.insert(values.end(), mine.buffers[bin].begin(), mine.buffers[bin].end());
                std::vector<uint64_t>().swap(mine.buffers[bin]);
            }
        }
        std::vector<uint64_t> scratch;
        radix_sort_hashes(values, scratch, 64 - bin_bits_);
        std::vector<uint64_t>().swap(scratch);
        values.erase(std::unique(values.begin(), values.end()), values.end());
        each(bin, values);
        kept.fetch_add(values.size(), std::memory_order_relaxed);
        // Written back sorted: the passes after this one read it without sorting it again.
        if (file_ != nullptr) {
            if (!values.empty())
                sorted_at_[bin] = {file_->append(values.data(), values.size() * sizeof(uint64_t)),
                                   values.size()};
        } else {
            values.shrink_to_fit();
            sorted_[bin] = std::move(values);
        }
    });
    distinct_ = kept.load();
}

void append_bins::read(uint32_t bin, std::vector<uint64_t>& out) const {
    if (file_ == nullptr) {
        out.assign(sorted_[bin].begin(), sorted_[bin].end());
        return;
    }
    segment const at = sorted_at_[bin];
    out.resize(at.values);
    if (at.values != 0) file_->read(at.offset, out.data(), at.values * sizeof(uint64_t));
}

void radix_sort_hashes(std::vector<uint64_t>& a, std::vector<uint64_t>& scratch, unsigned bits) {
    constexpr unsigned max_digit_bits = 14;
    if (a.size() < 2 || bits == 0) return;
    if (a.size() < 256) {
        std::sort(a.begin(), a.end());
        return;
    }
    bits = std::min(bits, 64u);
    unsigned const passes = (bits + max_digit_bits - 1) / max_digit_bits;
    unsigned const digit_bits = (bits + passes - 1) / passes;
    size_t const cells = size_t{1} << digit_bits;
    uint64_t const mask = cells - 1;
    // Every digit's counts from one read of the values (32 bits each: a bin holds fewer than
    // 2^32 values by the memory plan; larger inputs are sorted by std::sort).
    if (a.size() > std::numeric_limits<uint32_t>::max()) {
        std::sort(a.begin(), a.end());
        return;
    }
    std::vector<uint32_t> count(passes * cells, 0);
    for (uint64_t v : a)
        for (unsigned d = 0; d < passes; ++d) ++count[d * cells + ((v >> (d * digit_bits)) & mask)];
    scratch.resize(a.size());
    for (unsigned d = 0; d < passes; ++d) {
        uint32_t* c = count.data() + d * cells;
        if (std::any_of(c, c + cells, [n = a.size()](uint32_t x) { return x == n; }))
            continue;  // a digit all values share
        uint32_t sum = 0;
        for (size_t i = 0; i < cells; ++i) {
            uint32_t const here = c[i];
            c[i] = sum;
            sum += here;
        }
        unsigned const shift = d * digit_bits;
        for (uint64_t v : a) scratch[c[(v >> shift) & mask]++] = v;
        a.swap(scratch);
    }
}

void sorted_stash::put(std::span<uint64_t const> values) {
    if (values.empty()) return;
    size_ += values.size();
    if (file_ == nullptr) {
        memory_.insert(memory_.end(), values.begin(), values.end());
        return;
    }
    parts_.push_back(
        {file_->append(values.data(), values.size_bytes()), values.size(), size_ - values.size()});
}

void sorted_stash::read(uint64_t from, uint64_t count, std::vector<uint64_t>& out) const {
    out.resize(count);
    if (count == 0) return;
    if (from > size_ || count > size_ - from)
        throw std::logic_error("sorted_stash: a read past the end");
    if (file_ == nullptr) {
        std::copy_n(memory_.begin() + static_cast<std::ptrdiff_t>(from), count, out.begin());
        return;
    }
    // The part holding `from`: the last that starts at or before it.
    auto p = std::upper_bound(parts_.begin(), parts_.end(), from,
                              [](uint64_t at, part const& x) { return at < x.first; });
    uint64_t done = 0;
    for (--p; done < count; ++p) {
        uint64_t const skip = from + done - p->first;
        uint64_t const n = std::min(count - done, p->values - skip);
        file_->read(p->offset + skip * sizeof(uint64_t), out.data() + done, n * sizeof(uint64_t));
        done += n;
    }
}

}  // namespace qmer::app
