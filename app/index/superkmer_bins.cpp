#include "app/index/superkmer_bins.hpp"

#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include "app/common/interrupt.hpp"
#include "app/index/bin_hashing.hpp"
#include "core/kmer/encoding.hpp"
#include "core/kmer/minimizer.hpp"
#include "core/qf/stored/segments.hpp"

namespace qmer::app {
namespace {

// A record: its k-mer count n (one byte), the 32 bits of its minimizer's spread below the bin
// bits (the window and the extra window bits, which the fill and the marks need: 4 bytes that
// spare recomputing the minimizer, a multiply per base, in both), its first k-mer's forward strand
// (8 bytes), and the last n - 1 bases of its last k-mer's (2 bits each, the last base lowest, in
// as few bytes as hold them). Runs are cut at k + 1 k-mers so those bases fit one word: random
// sequence has runs of ~6.5, at most a few times w; longer ones come from repeats of one m-mer.
constexpr size_t low_at = 1;                            // the spread's 32 bits
constexpr size_t first_at = low_at + sizeof(uint32_t);  // the first k-mer
constexpr size_t header_bytes = first_at + sizeof(uint64_t);

constexpr size_t record_bytes(unsigned kmers) noexcept {
    return header_bytes + (2 * (kmers - 1) + 7) / 8;
}
constexpr unsigned max_run_of(unsigned k) noexcept {
    return k + 1;
}
constexpr unsigned max_run = 33;
constexpr size_t max_record_bytes = record_bytes(max_run);

// At most 2^12 bins (each thread's buffers of all bins stay small), at least 2^10 where the
// windows allow it, and enough that a bin's fingerprints relative to its first fit 31 bits.
constexpr unsigned max_bin_bits = 12;
constexpr unsigned wanted_bin_bits = 10;
constexpr unsigned most_window_bits_per_bin = 20;
constexpr size_t min_buffer_bytes = 4096;
// The smallest buffer, and the slabs (per thread) that buffers below a page are sliced from.
constexpr size_t min_slice_bytes = 256;
constexpr size_t slab_lines = 1024;  // 64 KiB
// The plain values' first buffer of a bin and thread: a few crowded windows give a few hundred
// bytes per bin and thread.
constexpr size_t plain_first_bytes = 256;
// K-mers the fill gathers before hashing them (16 KiB of k-mers and 16 of spreads: in L1).
constexpr size_t hash_batch = 1024;

// A record's fields, as add() stores them (the tail's bases in its low 2 (n - 1) bits).
struct record_fields {
    unsigned n = 0;
    uint32_t low = 0;
    uint64_t first = 0, tail = 0;
};
// `end`: where the bytes the record lies in end. The tail is loaded as a whole word where 8 bytes
// follow the header (all but a bin's last few records): a copy of its 0-8 bytes branches on their
// count, which varies from record to record. The bits past it (the next record's) are masked off:
// decoding never reads them, but distinct_records compares tails whole.
inline record_fields read_record(uint8_t const* record, uint8_t const* end) {
    record_fields r;
    r.n = record[0];
    std::memcpy(&r.low, record + low_at, sizeof r.low);
    std::memcpy(&r.first, record + first_at, sizeof r.first);
    unsigned const tail_bits = 2 * (r.n - 1);
    if (end - (record + header_bytes) >= static_cast<std::ptrdiff_t>(sizeof r.tail)) [[likely]] {
        std::memcpy(&r.tail, record + header_bytes, sizeof r.tail);
        r.tail &= tail_bits == 0 ? 0 : ~uint64_t{0} >> (64 - tail_bits);
    } else {
        std::memcpy(&r.tail, record + header_bytes, (tail_bits + 7) / 8);
    }
    return r;
}

// Decodes one record: its canonical k-mers into `kmers` (in order) and the top bin_bits + 32 bits
// of its minimizer's spread (the rest zero), returned. `bin_part`: the bin's bits in place.
inline uint64_t decode_record(uint8_t const* record, uint8_t const* end, unsigned k,
                              uint64_t bin_part, unsigned bin_bits, uint64_t* kmers) {
    record_fields const r = read_record(record, end);
    canonical_kmers(r.first, r.tail, r.n, k, kmers);
    return bin_part | (uint64_t{r.low} << (32 - bin_bits));
}

// Calls f(window offset in the bin, k-mers, where the record starts) for each record, without
// decoding its bases.
template <typename F>
void for_each_record_window(std::span<uint8_t const> bytes, unsigned offset_bits, F&& f) {
    size_t at = 0;
    while (at < bytes.size()) {
        unsigned const n = bytes[at];
        uint32_t low;
        std::memcpy(&low, bytes.data() + at + low_at, sizeof low);
        f(offset_bits == 0 ? 0 : low >> (32 - offset_bits), n, at);
        at += record_bytes(n);
    }
}

// The distinct records among those starting at `records` (offsets into `bytes`), each kept at its
// first occurrence, in order. A repeat gives the same super-k-mer many times (the crowded windows'
// positions of a repetitive genome are mostly copies: ARCHITECTURE.md, "How the default index is
// built"), and each copy
// would otherwise be decoded and hashed twice in mark() and its plain values written,
// read back and sorted once more in the fill. Two records are the same when their k-mer count,
// first k-mer and following bases are (the spread is the k-mers' minimizer's).
std::vector<size_t> distinct_records(std::span<uint8_t const> bytes,
                                     std::vector<size_t> const& records) {
    // A slot holds a record's identity itself (n = 0: empty), so that a probe reads one slot
    // and no record: the records a table of a crowded bin points at are megabytes apart.
    struct identity {
        uint64_t first = 0, tail = 0;
        uint64_t n = 0;
        bool operator==(identity const&) const = default;
    };
    size_t const slots = std::bit_ceil(std::max<size_t>(2 * records.size(), 16));  // half full
    std::vector<identity> table(slots);
    std::vector<size_t> distinct;
    distinct.reserve(records.size());
    for (size_t at : records) {
        record_fields const r = read_record(bytes.data() + at, bytes.data() + bytes.size());
        identity const id{r.first, r.tail, r.n};
        uint64_t h = (id.first ^ (id.tail * 0x9E3779B97F4A7C15ULL) ^ id.n) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        for (size_t slot = h & (slots - 1);; slot = (slot + 1) & (slots - 1)) {
            if (table[slot].n == 0) {
                table[slot] = id;
                distinct.push_back(at);
                break;
            }
            if (table[slot] == id) break;
        }
    }
    return distinct;
}

void sort_unique(std::vector<uint32_t>& values, unsigned bits) {
    std::vector<uint32_t> scratch;
    radix_sort(values, scratch, bits);
    values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

chunk_arena::chunk_arena(uint64_t bytes, uint32_t groups, uint64_t group_bytes)
    : size_(bytes / page * page) {
    if (size_ == 0) return;
    auto const reserve = [](uint64_t n) -> uint8_t* {
        void* const at = ::mmap(nullptr, n, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return at == MAP_FAILED ? nullptr : static_cast<uint8_t*>(at);
    };
    group_bytes = (group_bytes + page - 1) / page * page;
    if (groups > 0 && group_bytes > 0 &&
        (base_ = reserve(2 * group_bytes * groups + size_)) != nullptr) {
        groups_ = groups;
        group_bytes_ = group_bytes;
        reserved_ = 2 * group_bytes * groups + size_;
        group_used_ = std::make_unique<std::atomic<uint64_t>[]>(groups);
        run_used_ = std::make_unique<cursor[]>(groups);
        batch_done_ = std::make_unique<std::atomic<uint32_t>[]>((groups + batch - 1) / batch);
    } else if ((base_ = reserve(size_)) != nullptr) {
        reserved_ = size_;  // a limited address space (ulimit -v): the shared range only
    } else {
        size_ = 0;  // no address space: every chunk goes to the scratch file
        return;
    }
    shared_base_ = base_ + (reserved_ - size_);
}

chunk_arena::~chunk_arena() {
    if (base_ != nullptr) ::munmap(base_, reserved_);
}

bool chunk_arena::charge(uint64_t bytes) noexcept {
    // A CAS, not an add undone on failure: an undone overdraw would refuse others meanwhile.
    uint64_t at = used_.load(std::memory_order_relaxed);
    do {
        if (at + bytes > std::min<uint64_t>(size_, allowed_.load(std::memory_order_relaxed)))
            return false;
    } while (!used_.compare_exchange_weak(at, at + bytes, std::memory_order_relaxed));
    return true;
}

uint8_t* chunk_arena::extend(uint32_t group, size_t bytes) noexcept {
    if (group >= groups_) return nullptr;
    std::atomic<uint64_t>& run = run_used_[group].at;
    uint64_t const limit = std::min(group_bytes_, most_run_bytes);
    auto const pages_to = [](uint64_t end) { return (end + page - 1) / page * page; };
    uint64_t at = run.load(std::memory_order_relaxed);
    for (;;) {
        if (at & closed) return nullptr;
        uint64_t const end = at + bytes;
        // The pages the run reaches anew are paid before the run grows; if another thread grew
        // it first, they are paid back and the room asked again.
        uint64_t const fresh = pages_to(end) - pages_to(at);
        bool const room = end <= limit && (fresh == 0 || charge(fresh));
        if (run.compare_exchange_weak(at, room ? end : at | closed, std::memory_order_relaxed))
            return room ? run_base(group) + at : nullptr;
        if (room && fresh != 0) used_.fetch_sub(fresh, std::memory_order_relaxed);
    }
}

uint8_t* chunk_arena::take(uint32_t group, size_t bytes) noexcept {
    uint64_t const rounded = (bytes + page - 1) / page * page;
    // The budget first, then the place.
    if (!charge(rounded)) return nullptr;
    if (group < groups_) {
        std::atomic<uint64_t>& used = group_used_[group];
        uint64_t in = used.load(std::memory_order_relaxed);
        while (in + rounded <= group_bytes_)
            if (used.compare_exchange_weak(in, in + rounded, std::memory_order_relaxed))
                return group_base(group) + in;
    }
    // The shared range holds the whole budget, so what the budget let through fits.
    return shared_base_ + shared_used_.fetch_add(rounded, std::memory_order_relaxed);
}

void chunk_arena::done_with(uint32_t group) noexcept {
    uint32_t const first = group / batch * batch;
    uint32_t const size = std::min(batch, groups_ - first);
    // acq_rel: the last group's release sees every other group's taking done (they happened
    // before each group's done_with, which the counter orders).
    if (batch_done_[group / batch].fetch_add(1, std::memory_order_acq_rel) + 1 != size) return;
    uint32_t const last = first + size - 1;
    release(group_base(first), (last - first) * group_bytes_ + group_used_[last].load());
    release(run_base(first), (last - first) * group_bytes_ + (run_used_[last].at.load() & ~closed));
}

void chunk_arena::release(uint8_t* at, uint64_t bytes) noexcept {
    if (bytes != 0) ::madvise(at, (bytes + page - 1) / page * page, MADV_DONTNEED);
}

packed_bins::~packed_bins() {
    if (base_ != nullptr) ::munmap(base_, size_);
}

bool packed_bins::make(std::vector<size_t> const& bytes) {
    constexpr size_t page = chunk_arena::page;
    first_.assign(bytes.size() + 1, 0);
    for (size_t b = 0; b < bytes.size(); ++b) first_[b + 1] = first_[b] + bytes[b];
    size_t const pages = (first_.back() + page - 1) / page;
    if (pages == 0) return true;
    void* const at = ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return false;
    base_ = static_cast<uint8_t*>(at);
    size_ = pages * page;
    users_ = std::make_unique<std::atomic<uint32_t>[]>(pages);
    for (size_t b = 0; b < bytes.size(); ++b)
        if (bytes[b] != 0)
            for (size_t p = first_[b] / page; p * page < first_[b + 1]; ++p)
                users_[p].fetch_add(1, std::memory_order_relaxed);
    return true;
}

void packed_bins::release(uint32_t bin) noexcept {
    constexpr size_t page = chunk_arena::page;
    if (base_ == nullptr || first_[bin] == first_[bin + 1]) return;
    // The pages no other bin still needs, in runs: one madvise per run.
    size_t run = 0, runs_from = 0;
    for (size_t p = first_[bin] / page; p * page < first_[bin + 1]; ++p) {
        // acq_rel: the last releaser sees the other bins' reads of the page done.
        if (users_[p].fetch_sub(1, std::memory_order_acq_rel) == 1) {
            if (run == 0) runs_from = p;
            ++run;
            continue;
        }
        chunk_arena::release(base_ + runs_from * page, run * page);
        run = 0;
    }
    chunk_arena::release(base_ + runs_from * page, run * page);
}

uint64_t packed_bins::held_bytes() const noexcept {
    uint64_t held = 0;
    for (size_t p = 0; p < size_ / chunk_arena::page; ++p)
        if (users_[p].load(std::memory_order_relaxed) != 0) held += chunk_arena::page;
    return held;
}

binned_store::binned_store(uint32_t bins, size_t buffer_bytes, chunk_arena& memory,
                           uint32_t first_group, std::function<io::spill_file&()> open_file,
                           size_t first_bytes)
    : bins_(bins),
      buffer_bytes_((std::max(buffer_bytes, min_buffer_bytes) + chunk_arena::page - 1) /
                    chunk_arena::page * chunk_arena::page),
      first_bytes_(first_bytes == 0
                       ? buffer_bytes_
                       : std::clamp(std::bit_ceil(first_bytes), min_slice_bytes, buffer_bytes_)),
      memory_(memory),
      first_group_(first_group),
      open_file_(std::move(open_file)),
      runs_(memory.has_runs()),
      local_([this, bins] {
          thread_bins mine;
          buffer first;
          if (runs_ && appenders_.fetch_add(1, std::memory_order_relaxed) >= own_buffer_threads) {
              // every bin's run, with no end a value could pass
              first.in_run = true;
              first.capacity = ~uint32_t{0} >> 1;
          }
          mine.buffers.assign(bins, first);
          mine.staging.resize(bins);
          return mine;
      }) {}

void binned_store::put_line(uint8_t* to, uint8_t const* line) noexcept {
#if defined(__SSE2__)
    if (reinterpret_cast<uintptr_t>(to) % line_bytes == 0) {
        auto* const out = reinterpret_cast<__m128i*>(to);
        auto const* const in = reinterpret_cast<__m128i const*>(line);
        for (int i = 0; i < 4; ++i) _mm_stream_si128(out + i, _mm_load_si128(in + i));
        return;
    }
#endif
    std::memcpy(to, line, line_bytes);
}

void binned_store::publish() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

uint8_t* binned_store::slab_slice(thread_bins& mine, size_t bytes) {
    size_t const lines = bytes / line_bytes;
    if (mine.slab_left < lines) {
        mine.slabs.push_back(std::make_unique<slab_line[]>(slab_lines));
        mine.slab_left = slab_lines;
    }
    mine.slab_left -= lines;
    return mine.slabs.back()[slab_lines - mine.slab_left - lines].bytes;
}

void binned_store::leave_run(thread_bins& mine, uint32_t bin) {
    buffer& b = mine.buffers[bin];
    uint32_t const staged = b.staged;
    b = buffer{};
    renew(mine, bin);  // room for a line at least: its first buffer
    uint8_t* const line = mine.staging[bin].bytes;
    b.staged = staged;
    if (b.staged >= line_bytes) {
        put_line(b.at, line);
        b.size = line_bytes;
        b.staged -= line_bytes;
        std::memcpy(line, line + line_bytes, b.staged);
    }
}

void binned_store::renew(thread_bins& mine, uint32_t bin) {
    flush(mine, bin);
    buffer& b = mine.buffers[bin];
    size_t const bytes = b.next == 0 ? first_bytes_ : b.next;
    b.next = static_cast<uint32_t>(std::min(2 * bytes, buffer_bytes_));
    b.in_arena = b.in_slab = false;
    if (bytes < chunk_arena::page) {
        b.at = slab_slice(mine, bytes);
        b.in_slab = true;
    } else if (uint8_t* const at = memory_.take(first_group_ + bin, bytes)) {
        b.at = at;
        b.in_arena = true;
    } else {
        if (mine.spills.empty()) mine.spills.resize(bins_);
        std::vector<uint8_t>& spill = mine.spills[bin];
        spill.resize(buffer_bytes_);
        b.at = spill.data();
        b.capacity = static_cast<uint32_t>(buffer_bytes_);
        return;
    }
    b.capacity = static_cast<uint32_t>(bytes);
}

void binned_store::flush(thread_bins& mine, uint32_t bin) {
    buffer& b = mine.buffers[bin];
    if (b.in_run) {
        if (b.staged == 0) return;
        if (uint8_t* const to = memory_.extend(first_group_ + bin, b.staged)) {
            std::memcpy(to, mine.staging[bin].bytes, b.staged);
            b.staged = 0;
            return;
        }
        leave_run(mine, bin);
    }
    if (b.staged != 0) {
        std::memcpy(b.at + b.size, mine.staging[bin].bytes, b.staged);
        b.size += b.staged;
        b.staged = 0;
    }
    if (b.size == 0) return;
    chunk c;
    c.bytes = b.size;
    if (b.in_arena || b.in_slab) {
        c.memory = b.at;  // the slice is the chunk; the next one is taken by renew()
        c.in_slab = b.in_slab;
        b.at = nullptr;
        b.capacity = 0;
    } else {
        c.offset = open_file_().append(b.at, b.size);
        file_bytes_.fetch_add(c.bytes, std::memory_order_relaxed);
    }
    b.size = 0;
    if (mine.chunks.empty()) mine.chunks.resize(bins_);
    mine.chunks[bin].push_back(c);
}

template <typename F>
void binned_store::for_each_list(uint32_t bin, F&& f) {
    if (!runs_of_.empty()) f(runs_of_[bin]);
    for (auto& mine : local_)
        if (!mine.chunks.empty()) f(mine.chunks[bin]);
}

void binned_store::flush_all() {
    if (flushed_) return;
    flushed_ = true;
    for (auto& mine : local_) {
        for (uint32_t bin = 0; bin < bins_; ++bin) flush(mine, bin);
        std::vector<buffer>().swap(mine.buffers);
        std::vector<staging_line>().swap(mine.staging);
        std::vector<std::vector<uint8_t>>().swap(mine.spills);
    }
    if (runs_) {  // each run a chunk, its bin's first
        runs_of_.resize(bins_);
        for (uint32_t bin = 0; bin < bins_; ++bin)
            if (uint64_t const bytes = memory_.run_bytes(first_group_ + bin); bytes != 0) {
                chunk c;
                c.memory = memory_.run_of(first_group_ + bin);
                c.bytes = static_cast<uint32_t>(bytes);
                runs_of_[bin].push_back(c);
            }
    }
    std::vector<size_t> sizes(bins_, 0);
    for (uint32_t bin = 0; bin < bins_; ++bin)
        for_each_list(bin, [&](std::vector<chunk> const& chunks) {
            for (size_t i = 0; i < chunks.size(); ++i)
                sizes[bin] += moving(chunks[i], i + 1 == chunks.size());
        });
    if (!packed_.make(sizes)) return;  // no address space: the bytes stay where they are
    // Bins in parallel: a task touches its own bin's chunk lists and its own packed bytes.
    tbb::parallel_for(uint32_t{0}, bins_, [&](uint32_t bin) { pack(bin, packed_.of(bin)); });
    for (auto& mine : local_) {  // no chunk lies in a slab any more
        std::vector<std::unique_ptr<slab_line[]>>().swap(mine.slabs);
        mine.slab_left = 0;
    }
}

size_t binned_store::moving(chunk const& c, bool last) noexcept {
    if (c.in_slab) return c.bytes;
    // An arena chunk (and a run) starts at a page boundary.
    return last && c.memory != nullptr ? c.bytes % chunk_arena::page : 0;
}

void binned_store::pack(uint32_t bin, uint8_t* to) {
    for_each_list(bin, [&](std::vector<chunk>& chunks) {
        for (size_t i = 0; i < chunks.size(); ++i) {
            chunk& c = chunks[i];
            size_t const n = moving(c, i + 1 == chunks.size());
            if (n == 0) continue;
            c.bytes -= static_cast<uint32_t>(n);
            std::memcpy(to, c.memory + c.bytes, n);
            c.tail = to;
            c.tail_bytes = static_cast<uint16_t>(n);
            to += n;
            // A slab goes as a whole, once every chunk in it moved.
            if (!c.in_slab) chunk_arena::release(c.memory + c.bytes, n);
            if (c.bytes == 0) c.memory = nullptr;
            c.in_slab = false;
        }
    });
}

uint64_t binned_store::held_bytes() const {
    constexpr uint64_t page = chunk_arena::page;
    auto const pages = [](uint64_t bytes) { return (bytes + page - 1) / page * page; };
    uint64_t held = packed_.held_bytes();
    auto const add = [&](std::vector<chunk> const& chunks) {
        for (chunk const& c : chunks)
            if (c.memory != nullptr && !c.in_slab) held += pages(c.bytes);
    };
    for (auto const& chunks : runs_of_) add(chunks);
    if (runs_ && !flushed_)
        for (uint32_t bin = 0; bin < bins_; ++bin)
            held += pages(memory_.run_bytes(first_group_ + bin));
    for (auto const& mine : local_) {
        held += mine.slabs.size() * slab_lines * line_bytes;
        held += mine.staging.size() * sizeof(staging_line) + mine.buffers.size() * sizeof(buffer);
        for (buffer const& b : mine.buffers)
            if (b.in_arena) held += pages(b.size);
        for (auto const& spill : mine.spills) held += spill.capacity();
        for (auto const& chunks : mine.chunks) add(chunks);
    }
    return held;
}

void binned_store::read(uint32_t bin, bool release, std::vector<uint8_t>& bytes) {
    size_t total = 0;
    for_each_list(bin, [&](std::vector<chunk> const& chunks) {
        for (chunk const& c : chunks) total += c.bytes + c.tail_bytes;
    });
    bytes.resize(total);
    size_t at = 0;
    for_each_list(bin, [&](std::vector<chunk> const& chunks) {
        for (chunk const& c : chunks) {
            if (c.memory != nullptr)
                std::memcpy(bytes.data() + at, c.memory, c.bytes);
            else if (c.bytes != 0)
                open_file_().read(c.offset, bytes.data() + at, c.bytes);
            at += c.bytes;
            if (c.tail_bytes != 0) std::memcpy(bytes.data() + at, c.tail, c.tail_bytes);
            at += c.tail_bytes;
        }
    });
    if (!release) return;
    memory_.give_back(first_group_ + bin, [&](auto&& give) {
        for_each_list(bin, [&](std::vector<chunk> const& chunks) {
            for (chunk const& c : chunks)
                if (c.memory != nullptr && !c.in_slab) give(c.memory, c.bytes);
        });
    });
    packed_.release(bin);
    for_each_list(bin, [](std::vector<chunk>& chunks) { std::vector<chunk>().swap(chunks); });
}

unsigned superkmer_bins::bin_bits_of(qf::geometry g, unsigned window_bits) noexcept {
    unsigned const fp_bits = g.fingerprint_bits();
    unsigned const needed = fp_bits > 31 ? fp_bits - 31 : 0;
    // Never finer than the windows: a bin holds whole windows.
    return std::min(window_bits, std::max(needed, wanted_bin_bits));
}

bool superkmer_bins::fits(unsigned bins, qf::geometry g, unsigned window_bits) noexcept {
    return window_bits >= bins && bins >= 1 && bins <= max_bin_bits &&
           g.fingerprint_bits() <= bins + 31 && window_bits - bins <= most_window_bits_per_bin &&
           window_bits + level_window_extra_bits <= bins + 32;
}

bool superkmer_bins::supports(qf::geometry g, unsigned window_bits) noexcept {
    return fits(bin_bits_of(g, window_bits), g, window_bits);
}

bool superkmer_bins::fits(qf::geometry g, unsigned window_bits) const noexcept {
    return fits(bin_bits_, g, window_bits);
}

void superkmer_bins::set_table(local_kmer_hashing const& hashing, qf::geometry g) {
    if (!fits(g, hashing.window_bits()))
        throw std::logic_error("superkmer_bins: the table does not fit the bins");
    hashing_.emplace(hashing);
    g_ = g;
}

double superkmer_bins::expected_bytes_per_position(unsigned k, unsigned minimizer_length) noexcept {
    double const w = static_cast<double>(k - minimizer_length + 1);
    double const kmers = (w + 1) / 2;  // per super-k-mer, for random minimizers
    return (static_cast<double>(header_bytes) + (kmers - 1) / 4 + 0.5) / kmers;
}

uint64_t superkmer_bins::working_bytes(unsigned bin_bits, unsigned window_bits,
                                       uint64_t kmer_positions, unsigned threads,
                                       size_t buffer_bytes_per_thread) noexcept {
    uint64_t const bins = uint64_t{1} << bin_bits;
    uint64_t const buffer = std::max<uint64_t>(min_buffer_bytes, buffer_bytes_per_thread / bins);
    uint64_t const buffers = uint64_t{threads} * bins * buffer;
    // A bin being sorted, +25% for uneven bins: its records (~2 bytes a position), its values,
    // the radix scratch, the plain values and their scratch (4 bytes each) and 8 more (its
    // fingerprints, 8 bytes each until the fill handed the sink 4-byte offsets: kept as margin,
    // the limits were measured with it), for each of the fill's 2 tokens per thread; and a
    // marking task's 14 bytes a window.
    uint64_t const bin_positions = kmer_positions / bins * 5 / 4 + 1;
    uint64_t const sorting = 2 * uint64_t{threads} * bin_positions * 26;
    uint64_t const windows = uint64_t{threads} * 16
                             << (window_bits - std::min(window_bits, bin_bits));
    // Where each chunk went: ~48 bytes per chunk of a minimal buffer.
    uint64_t const chunks = kmer_positions * 3 / min_buffer_bytes * 48;
    return buffers + sorting + windows + chunks;
}

superkmer_bins::superkmer_bins(local_kmer_hashing const& hashing, qf::geometry g,
                               uint64_t memory_budget, std::string temp_folder,
                               size_t buffer_bytes_per_thread)
    : superkmer_bins(hashing.scanner(), bin_bits_of(g, hashing.window_bits()), memory_budget,
                     std::move(temp_folder), buffer_bytes_per_thread) {
    set_table(hashing, g);
}

superkmer_bins::superkmer_bins(minimizer_scanner const& scanner, unsigned bin_bits,
                               uint64_t memory_budget, std::string temp_folder,
                               size_t buffer_bytes_per_thread, sketch::group_sampled_count* counter)
    : scanner_(scanner),
      counting_hasher_(scanner.seed()),
      counter_(counter),
      bin_bits_(bin_bits),
      temp_folder_(std::move(temp_folder)),
      // A group per bin of each store, of twice a bin's even share of the budget: bins are about
      // even (a hash spreads the records), and one that outgrows its range goes on in the shared.
      memory_(memory_budget, uint32_t{2} << bin_bits_, 2 * (memory_budget >> bin_bits_)),
      records_(uint32_t{1} << bin_bits_, buffer_bytes_per_thread >> bin_bits_, memory_, 0,
               [this]() -> io::spill_file& {
                   std::lock_guard lock(file_mutex_);
                   if (!file_) file_ = std::make_unique<io::spill_file>(temp_folder_);
                   return *file_;
               }),
      plain_(
          uint32_t{1} << bin_bits_, buffer_bytes_per_thread >> bin_bits_, memory_,
          uint32_t{1} << bin_bits_,
          [this]() -> io::spill_file& {
              std::lock_guard lock(file_mutex_);
              if (!file_) file_ = std::make_unique<io::spill_file>(temp_folder_);
              return *file_;
          },
          plain_first_bytes) {
    if (bin_bits < 1 || bin_bits > max_bin_bits)
        throw std::logic_error("superkmer_bins: 1 to 12 bin bits");
}

uint64_t superkmer_bins::add(std::string_view seq) {
    auto& mine = records_.mine();
    unsigned const bin_shift = 64 - bin_bits_;
    unsigned const low_shift = 32 - bin_bits_;
    uint64_t kmers = 0;
    unsigned const k = scanner_.k();
    kmer_hasher const hasher = counting_hasher_;
    sketch::group_sampled_count* const counter = counter_;
    auto const record = [&](uint64_t first, uint64_t last, unsigned n, uint64_t minimizer) {
        kmers += n;
        uint64_t const spread = minimizer_spread(minimizer);
        // n and the spread's low bits as one word (its top 3 bytes are overwritten by `first`).
        static_assert(low_at == 1 && first_at == 5);
        uint64_t const head = n | ((spread >> low_shift) & 0xFFFFFFFFu) << 8;
        uint64_t const tail = n == 1 ? 0 : last & (~uint64_t{0} >> (64 - 2 * (n - 1)));
        records_.emplace<max_record_bytes>(mine, static_cast<uint32_t>(spread >> bin_shift),
                                           record_bytes(n), [&](uint8_t* at) {
                                               std::memcpy(at, &head, sizeof head);
                                               std::memcpy(at + first_at, &first, sizeof first);
                                               std::memcpy(at + header_bytes, &tail, sizeof tail);
                                           });
        // The distinct count takes the k-mers of a sample of the minimizers (chosen by the
        // spread's low bits, which place nothing): an eighth of the hashing that counting every
        // k-mer cost (core/sketch/group_sampled_count.hpp).
        if (counter != nullptr) {
            unsigned const stratum = sketch::group_sampled_count::stratum_of(spread);
            if (stratum != sketch::group_sampled_count::not_sampled) {
                uint64_t kmers_of_run[max_run];
                canonical_kmers(first, tail, n, k, kmers_of_run);
                for (unsigned i = 0; i < n; ++i) counter->add(stratum, hasher(kmers_of_run[i]));
            }
        }
    };
    scanner_.for_each_super_kmer(seq, record, max_run_of(k));
    binned_store::publish();
    return kmers;
}

uint64_t superkmer_bins::first_fingerprint(uint32_t bin) const noexcept {
    return bin_bits_ == 0 ? 0 : g_.fingerprint(uint64_t{bin} << (64 - bin_bits_));
}

uint64_t superkmer_bins::last_fingerprint(uint32_t bin) const noexcept {
    if (bin + 1 == bin_count()) return g_.fingerprint(~uint64_t{0});
    return g_.fingerprint((uint64_t{bin + 1} << (64 - bin_bits_)) - 1);
}

uint64_t superkmer_bins::held_bytes() const {
    return records_.held_bytes() + plain_.held_bytes();
}

void superkmer_bins::finish_reading() {
    records_.flush_all();
}

void superkmer_bins::count_every_kmer(sketch::hyperloglog& counter) {
    records_.flush_all();
    unsigned const k = scanner_.k();
    kmer_hasher const hasher = counting_hasher_;
    tbb::parallel_for(uint32_t{0}, bin_count(), [&](uint32_t bin) {
        throw_if_interrupted();
        std::vector<uint8_t> bytes;
        records_.read(bin, false, bytes);
        uint64_t kmers[max_run];
        for_each_record_window(bytes, 0, [&](uint32_t, unsigned n, size_t at) {
            record_fields const r = read_record(bytes.data() + at, bytes.data() + bytes.size());
            canonical_kmers(r.first, r.tail, n, k, kmers);
            for (unsigned i = 0; i < n; ++i) counter.add(hasher(kmers[i]));
        });
    });
}

void superkmer_bins::mark(overloaded_windows& marks, double threshold) {
    records_.flush_all();
    unsigned const k = hashing_->k();
    unsigned const offset_bits = hashing_->window_bits() - bin_bits_;
    unsigned const plain_shift = 64 - bin_bits_;
    // Bins in parallel; each task sets mark bits with atomic ORs (neighbouring bins' windows
    // share words) and appends plain values through its thread's buffers. Ctrl-C is seen
    // between bins.
    tbb::parallel_for(uint32_t{0}, bin_count(), [&](uint32_t bin) {
        throw_if_interrupted();
        std::vector<uint8_t> bytes;
        records_.read(bin, false, bytes);
        if (bytes.empty()) return;
        uint8_t const* const bytes_end = bytes.data() + bytes.size();
        // A window's positions bound its distinct fingerprints: only windows with more than the
        // threshold are counted exactly.
        // 4-byte counts, which stop at `cap` (past the threshold: all the test needs), so that a
        // bin's counts stay in L2 beside its records (2^15-2^20 windows a bin).
        auto const cap = static_cast<uint32_t>(
            std::min(std::floor(threshold) + 1, static_cast<double>(uint32_t{1} << 31)));
        std::vector<uint32_t> positions(size_t{1} << offset_bits, 0);
        size_t bin_records = 0;
        for_each_record_window(bytes, offset_bits, [&](uint32_t offset, unsigned n, size_t) {
            positions[offset] = std::min(positions[offset] + n, cap);
            ++bin_records;
        });
        std::vector<uint8_t> candidate(positions.size(), 0);
        bool any = false;
        for (size_t w = 0; w < positions.size(); ++w)
            if (static_cast<double>(positions[w]) > threshold) candidate[w] = 1, any = true;
        if (!any) return;
        uint64_t const first_window = uint64_t{bin} << offset_bits;
        uint64_t const first = first_fingerprint(bin);
        // The candidates' distinct fingerprints, each window's own (relative to the bin's first):
        // a window's fingerprints are a range (the fingerprint grows with the hash), and two
        // windows share at most their boundary one, so the key 2 v + (window & 1) keeps a
        // boundary fingerprint of both windows apart and radix-sorts in 32 bits. A k-mer
        // repeating the one before it (a homopolymer's) is skipped at once.
        // Where the candidates' records start: each offset written, kept if a candidate's (no
        // branch: on a repetitive genome a record is a candidate's about as often as not).
        std::vector<size_t> records(bin_records);
        size_t kept = 0;
        for_each_record_window(bytes, offset_bits, [&](uint32_t offset, unsigned, size_t at) {
            records[kept] = at;
            kept += candidate[offset];
        });
        records.resize(kept);
        records = distinct_records(bytes, records);
        uint64_t const bin_part = uint64_t{bin} << (64 - bin_bits_);
        uint64_t kmers[max_run];
        std::vector<uint32_t> keys;
        for (size_t at : records) {
            uint64_t const spread =
                decode_record(bytes.data() + at, bytes_end, k, bin_part, bin_bits_, kmers);
            uint32_t const parity = hashing_->window_of(spread) & 1;
            uint64_t previous = ~uint64_t{0};
            for (unsigned i = 0; i < bytes[at]; ++i) {
                if (kmers[i] == previous) continue;
                previous = kmers[i];
                auto const v = static_cast<uint32_t>(
                    g_.fingerprint(hashing_->local_hash(kmers[i], spread)) - first);
                keys.push_back(2 * v + parity);
            }
        }
        sort_unique(keys, static_cast<unsigned>(std::bit_width(last_fingerprint(bin) - first)) + 1);
        // Each key's window: the one whose range holds v, or at a shared boundary the one of its
        // parity. Windows are walked in order beside the keys.
        unsigned const window_shift = 64 - hashing_->window_bits();
        auto last_of = [&](uint64_t offset) {  // the window's last fingerprint, relative
            uint64_t const window = first_window + offset;
            return (window == (~uint64_t{0} >> window_shift)
                        ? g_.fingerprint(~uint64_t{0})
                        : g_.fingerprint(((window + 1) << window_shift) - 1)) -
                   first;
        };
        std::vector<uint32_t> distinct(positions.size(), 0);
        uint64_t w = 0, w_last = last_of(0);
        for (uint32_t key : keys) {
            uint64_t const v = key >> 1;
            while (v > w_last) w_last = last_of(++w);
            // v == w_last may also be the first of window w + 1: the parity says which.
            uint64_t const owner = (v == w_last && w + 1 < positions.size() &&
                                    ((first_window + w + 1) & 1) == (key & 1))
                                       ? w + 1
                                       : w;
            ++distinct[owner];
        }
        std::vector<uint8_t> marked(positions.size(), 0);
        bool any_marked = false;
        for (size_t o = 0; o < positions.size(); ++o) {
            if (!candidate[o] || static_cast<double>(distinct[o]) <= threshold) continue;
            uint64_t const window = first_window + o;
            std::atomic_ref<uint64_t>(marks.bits[window / 64])
                .fetch_or(uint64_t{1} << (window % 64), std::memory_order_relaxed);
            marks.marked.fetch_add(1, std::memory_order_relaxed);
            marked[o] = 1;
            any_marked = true;
        }
        if (!any_marked) return;
        // The marked windows' k-mers by their plain hash, into that hash's bin.
        auto& mine = plain_.mine();
        for (size_t at : records) {
            uint64_t const spread =
                decode_record(bytes.data() + at, bytes_end, k, bin_part, bin_bits_, kmers);
            if (!marked[hashing_->window_of(spread) - first_window]) continue;
            for (unsigned i = 0; i < bytes[at]; ++i) {
                uint64_t const h = hashing_->plain_hash(kmers[i]);
                uint32_t const to = bin_bits_ == 0 ? 0 : static_cast<uint32_t>(h >> plain_shift);
                auto const value = static_cast<uint32_t>(g_.fingerprint(h) - first_fingerprint(to));
                plain_.append<sizeof value>(mine, to, &value, sizeof value);
            }
        }
        binned_store::publish();
    });
    plain_.flush_all();
}

void superkmer_bins::sorted_bin(uint32_t bin, overloaded_windows const& marks,
                                std::vector<uint32_t>& offsets) {
    // The thread's buffers, reused from bin to bin: fresh ones cost page faults on every bin.
    fill_scratch& mine = scratch_.local();
    std::vector<uint8_t>& bytes = mine.bytes;
    records_.read(bin, true, bytes);
    uint64_t const first = first_fingerprint(bin);
    auto const bits = static_cast<unsigned>(std::bit_width(last_fingerprint(bin) - first));
    bool const any_marks = marks.marked.load(std::memory_order_relaxed) != 0;
    // The bin's k-mers, counted from the record headers, so that the loop below writes its values
    // with no capacity check; the hashing and the geometry copied into locals, which the stores
    // cannot alias (members are reloaded after each store otherwise).
    size_t total = 0;
    for_each_record_window(bytes, 0, [&](uint32_t, unsigned n, size_t) { total += n; });
    std::vector<uint32_t>& values = offsets;
    if (values.size() < total) values.resize(total);
    uint32_t* out = values.data();
    local_kmer_hashing const hashing = *hashing_;
    qf::geometry const g = g_;
    qf::gate_bits* const gate = gate_;
    unsigned const k = hashing.k();
    uint64_t const bin_part = uint64_t{bin} << (64 - bin_bits_);
    unsigned const low_shift = 32 - bin_bits_;
    // The records' k-mers and their spreads gathered a batch at a time, then hashed in one loop
    // (app/index/bin_hashing.hpp says why).
    mine.kmers.resize(hash_batch + max_run + expand_slack);
    mine.spreads.resize(hash_batch + max_run + expand_slack);
    run_expander const expand = run_expander_for_this_cpu();
    uint64_t* const kmers = mine.kmers.data();
    uint64_t* const spreads = mine.spreads.data();
    size_t gathered = 0;
    auto const hash_gathered = [&] {
        local_fingerprint_offsets(hashing, g, first, kmers, spreads, gathered, out);
        out += gathered;
        gathered = 0;
    };
    uint8_t const* const bytes_end = bytes.data() + bytes.size();
    for (size_t at = 0; at < bytes.size(); at += record_bytes(bytes[at])) {
        record_fields const r = read_record(bytes.data() + at, bytes_end);
        uint64_t const spread = bin_part | (uint64_t{r.low} << low_shift);
        if (any_marks && marks.is_marked(hashing.window_of(spread))) continue;
        // The record's k-mers share their hash's window and low bits: one bit for them all.
        if (gate != nullptr) gate->set(hashing.local_hash(0, spread));
        expand(r.first, r.tail, r.n, k, spread, kmers + gathered, spreads + gathered);
        gathered += r.n;
        if (gathered >= hash_batch) hash_gathered();
    }
    hash_gathered();
    values.resize(static_cast<size_t>(out - values.data()));
    radix_sort(values, mine.tmp, bits);  // may swap values' array with tmp's: both persist
    plain_.read(bin, true, bytes);
    std::vector<uint32_t>& plain = mine.plain;
    plain.resize(bytes.size() / sizeof(uint32_t));
    // Each value once, as offsets from the bin's first fingerprint (4 bytes each: the append
    // widens them in pieces that stay in cache, where a vector of 8-byte fingerprints went
    // through memory twice more, written here and read back there). Values are below 2^31, so
    // the first is never taken for a repeat of the sentinel.
    uint32_t last = ~uint32_t{0};
    if (plain.empty()) {  // in place: the write never passes the read
        values.resize(unique_copy(values.data(), values.size(), last, values.data()));
        return;
    }
    std::memcpy(plain.data(), bytes.data(), plain.size() * sizeof(uint32_t));
    radix_sort(plain, mine.tmp, bits);
    // The union of the two sorted lists in one pass, as runs of values below the next plain
    // value, each found by a galloping search: plain values are few (the marked windows', ~1% of
    // a bin). A branch-free merge (each step's pointers moved by the comparison of what they
    // point at) chains every load to the one before, which would dominate this function where
    // every bin has some plain values (bench/MEASUREMENTS.md, "Sorted build").
    std::vector<uint32_t>& merged = mine.merged;
    merged.resize(values.size() + plain.size());
    uint32_t* to = merged.data();
    uint32_t const* v = values.data();
    uint32_t const* const v_end = v + values.size();
    for (uint32_t const bound : plain) {
        size_t step = 1;
        while (step < static_cast<size_t>(v_end - v) && v[step] < bound) step *= 2;
        uint32_t const* const run_end = std::lower_bound(
            v + step / 2, v + std::min(step, static_cast<size_t>(v_end - v)), bound);
        to += unique_copy(v, static_cast<size_t>(run_end - v), last, to);
        v = run_end;
        to += unique_copy(&bound, 1, last, to);  // a value equal to it is dropped as a repeat next
    }
    to += unique_copy(v, static_cast<size_t>(v_end - v), last, to);
    merged.resize(static_cast<size_t>(to - merged.data()));
    offsets.swap(merged);
}

bool superkmer_bins::append_to(sorted_sink const& sink, overloaded_windows const& marks,
                               unsigned threads, progress_meter* progress) {
    records_.flush_all();
    plain_.flush_all();
    // Neighbouring bins can share their boundary fingerprint (a bin is a range of hashes): it
    // goes in once, with the first bin that has it.
    bool any = false;
    uint64_t last = 0;
    // A bin's offsets widened to fingerprints a piece at a time (16 KiB: in L1 for the sink).
    constexpr size_t piece = 2048;
    std::vector<uint64_t> fps(piece);
    auto const append = [&](uint32_t bin, std::vector<uint32_t> const& offsets) {
        uint64_t const base = first_fingerprint(bin);
        size_t at = any && !offsets.empty() && base + offsets[0] == last ? 1 : 0;
        while (at < offsets.size()) {
            size_t const n = std::min(piece, offsets.size() - at);
            for (size_t i = 0; i < n; ++i) fps[i] = base + offsets[at + i];
            size_t const took = sink(std::span<uint64_t const>(fps.data(), n));
            if (took != 0) {
                any = true;
                last = fps[took - 1];
            }
            if (took != n) return false;
            at += n;
        }
        return true;
    };
    return append_in_order<uint32_t>(
        0, bin_count(), threads,
        [&](uint32_t bin, std::vector<uint32_t>& offsets) { sorted_bin(bin, marks, offsets); },
        append, progress);
}

bool superkmer_bins::append_to(level_writer_sink const& level, overloaded_windows const& marks,
                               unsigned threads, progress_meter* progress) {
    records_.flush_all();
    plain_.flush_all();
    // What a bin in flight holds: its offsets and its middle segment's words.
    struct token {
        std::vector<uint32_t> offsets;
        uint64_t base = 0;
        qf::unit_segment segment;
        size_t size() const noexcept { return offsets.size(); }
        uint64_t fp(size_t i) const noexcept { return base + offsets[i]; }
    };
    return append_segments_in_order<token>(
        level, 0, bin_count(), threads,
        [&](uint32_t bin, token& t) {
            sorted_bin(bin, marks, t.offsets);
            t.base = first_fingerprint(bin);
        },
        progress);
}

}  // namespace qmer::app
