#pragma once
// The sorted build of a minimizer-local first level from super-k-mers (KMC's design:
// Deorowicz et al., "KMC 2: fast and resource-frugal k-mer counting", Bioinformatics 2015, bins
// of super-k-mers on disk, each then expanded and sorted in memory).
//
// The reading pass stores each super-k-mer (a run of consecutive k-mers sharing their minimizer,
// core/kmer/minimizer.hpp) once, in the bin its minimizer's spread selects (the top bits of every
// hash it gives, core/kmer/sequence_hashing.hpp): its k-mer count, 32 bits of the spread, its
// first k-mer's word and the bases that follow (record layout in superkmer_bins.cpp), ~15 bytes
// for ~6.5 k-mers of random sequence (2.3 bytes a k-mer position) instead of 4 bytes of
// fingerprint per position. The fill expands each record into its canonical k-mers and hashes
// them there (the reading pass hashes nothing but what it counts).
//
// Since a window of the table is a range of the minimizer's spread, a bin holds whole windows,
// and the overloaded windows (core/kmer/sequence_hashing.hpp) are found from the records alone:
// a window's positions (the records' k-mer counts) bound its distinct fingerprints, so only
// windows with more positions than the threshold are expanded and counted exactly. Their k-mers
// are hashed plainly from the records there and then (the build from fingerprints read the
// references once more for them), kept by the bin of that plain hash, and each bin of the fill
// is its unmarked records' fingerprints merged with those: one sorted append.
//
// Memory: records and plain values stay in memory up to a budget; beyond it they go to an
// unnamed scratch file (io/spill_file.hpp), opened at the first chunk that needs it. Either way
// the index is the same: the marks and fingerprints depend on the records only.

#include <tbb/enumerable_thread_specific.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/common/progress.hpp"
#include "app/index/sort_and_append.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/fingerprint.hpp"
#include "core/qf/stored/minimizer_gate.hpp"
#include "core/qf/stored/writer.hpp"
#include "core/sketch/group_sampled_count.hpp"
#include "core/sketch/hyperloglog.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {

// Memory for chunks that are written once and freed a group (a bin of a store) at a time: an
// anonymous mapping reserved up front (address space only), one range per group, each handed out
// from its start, and a shared range for a group whose own is full; besides, a second range per
// group for its run, bytes that any thread appends (extend()). The ranges of 8 neighbouring
// groups go back to the system in one madvise once all 8 are done (a fill sorts bins in order),
// so that the index file's page cache, written meanwhile, can take the pages (fresh pages cost
// the most on a virtual machine whose host reclaims free guest memory: ARCHITECTURE.md, "How the
// default index is built"), and one TLB shootdown serves 8 bins instead of one per 8-32 KiB chunk.
// malloc's free() of many small blocks would not give the pages back at all.
class chunk_arena {
  public:
    static constexpr size_t page = 4096;
    // bytes: the most it hands out in all (the budget); groups: ranges of the address space of
    // group_bytes each (rounded up to whole pages), besides the shared range of `bytes`.
    explicit chunk_arena(uint64_t bytes, uint32_t groups = 0, uint64_t group_bytes = 0);
    chunk_arena(chunk_arena const&) = delete;
    chunk_arena& operator=(chunk_arena const&) = delete;
    ~chunk_arena();
    // Room for `bytes` (rounded up to whole pages) for `group`, or nullptr once the budget (or
    // what allow() lets it hand out) is used up.
    uint8_t* take(uint32_t group, size_t bytes) noexcept;
    // Room for `bytes` more at the end of the group's run, a second range of the group's (as
    // large as its own, beside take()'s chunks), by any thread: the budget pays for the run's
    // pages as it reaches them, not for whole chunks. nullptr once the range or the budget has no
    // room for them; the run is then closed for good, so that it is one range of whole values.
    uint8_t* extend(uint32_t group, size_t bytes) noexcept;
    // Whether groups have runs (their address space was granted).
    bool has_runs() const noexcept { return groups_ != 0; }
    uint8_t* run_of(uint32_t group) const noexcept { return run_base(group); }
    uint64_t run_bytes(uint32_t group) const noexcept {
        return groups_ == 0 ? 0 : run_used_[group].at.load(std::memory_order_relaxed) & ~closed;
    }
    void allow(uint64_t bytes) noexcept { allowed_.store(bytes, std::memory_order_relaxed); }
    // The pages from `at` (a page boundary) over `bytes` (rounded up to whole pages) back to the
    // system at once: a chunk's end whose bytes moved elsewhere.
    static void release(uint8_t* at, uint64_t bytes) noexcept;
    // Gives back every page handed to `group`: each chunk it took from the shared range (listed
    // by the caller, for_each_chunk(f(at, bytes))) at once, its own range with those of its batch
    // (`batch` neighbouring groups, as a fill that sorts bins in order frees them) once all of
    // them are given back. Nothing may be taken for the group afterwards.
    template <typename ForEachChunk>
    void give_back(uint32_t group, ForEachChunk&& for_each_chunk) noexcept {
        for_each_chunk([this](uint8_t* at, size_t bytes) {
            if (at >= shared_base_) release(at, bytes);
        });
        if (groups_ != 0) done_with(group);
    }

  private:
    uint8_t* group_base(uint32_t group) const noexcept { return base_ + group * group_bytes_; }
    uint8_t* run_base(uint32_t group) const noexcept { return group_base(groups_ + group); }
    // A group's range goes back with its batch's: the ranges of `batch` neighbouring groups in one
    // madvise once the last of them is done (one TLB shootdown for the batch).
    void done_with(uint32_t group) noexcept;
    static constexpr uint32_t batch = 8;
    // A run's cursor once closed (its length in the bits below).
    static constexpr uint64_t closed = uint64_t{1} << 63;
    // A chunk's bytes are 32 bits: a run stops below 4 GiB.
    static constexpr uint64_t most_run_bytes = (uint64_t{1} << 32) - page;
    // Whether the budget has room for `bytes` more (taken from it if so).
    bool charge(uint64_t bytes) noexcept;
    // Each group's cursor on its own cache line: the threads extend every run at once.
    struct alignas(64) cursor {
        std::atomic<uint64_t> at{0};
    };

    uint8_t* base_ = nullptr;
    uint64_t reserved_ = 0;
    uint64_t size_ = 0;
    uint32_t groups_ = 0;  // 0: the shared range only (the address space for groups was refused)
    uint64_t group_bytes_ = 0;
    uint8_t* shared_base_ = nullptr;
    std::unique_ptr<std::atomic<uint64_t>[]> group_used_;
    std::unique_ptr<cursor[]> run_used_;                   // a run's end
    std::unique_ptr<std::atomic<uint32_t>[]> batch_done_;  // groups done, per batch
    std::atomic<uint64_t> shared_used_{0};
    std::atomic<uint64_t> used_{0};
    std::atomic<uint64_t> allowed_{~uint64_t{0}};
};

// Bytes of many bins packed in one mapping, bin after bin with no gap: a bin's pages go back to
// the system once every bin with bytes in them is released (a page holds the ends of neighbouring
// bins, which a fill releases about in order).
class packed_bins {
  public:
    packed_bins() = default;
    packed_bins(packed_bins const&) = delete;
    packed_bins& operator=(packed_bins const&) = delete;
    ~packed_bins();
    // Room for bytes[b] bytes of each bin b: false (and no room) if the mapping is refused.
    bool make(std::vector<size_t> const& bytes);
    uint8_t* of(uint32_t bin) const noexcept { return base_ + first_[bin]; }
    // The bin's bytes are no longer needed (once per bin; from any thread).
    void release(uint32_t bin) noexcept;
    // The pages still held.
    uint64_t held_bytes() const noexcept;

  private:
    uint8_t* base_ = nullptr;
    size_t size_ = 0;
    std::vector<size_t> first_;                       // per bin and one past the last: offsets
    std::unique_ptr<std::atomic<uint32_t>[]> users_;  // per page: bins with bytes in it, unreleased
};

// Bytes per bin in memory or in a scratch file that is opened on first need. The first two
// threads to append have buffers of their own per bin: slices of the arena while it has room
// (kept as they are when full), else appended to the file when full; below a page, slices of the
// thread's slabs. Every other thread appends a bin's values to the bin's run (chunk_arena::extend:
// one range per bin, shared by those threads), a staging line of whole values at a time, while
// the run has room, then to buffers of its own. A value never straddles two chunks, so a bin's
// chunks read back in any order are a sequence of whole values.
//
// A thread's own buffers leave its last page of every bin half used during the appends, half a
// page per bin and thread (2 MiB a thread with 2^10 bins, 64 MiB on 32 threads), and the budget
// pays for whole buffers before they are written: 16 threads' buffers of 32 KiB for 2^10 bins
// (512 MiB) passed the 256 MiB a 50 Mbp build allows, and the rest of its records went to the
// scratch file through buffers of their own (bench/index/reading_memory_bench.cpp). The runs hold
// the values and each bin's last, partly written page, however many threads append to them, but
// cost each value a shared cursor's update and stores that read the line first (a private
// buffer's full lines are written with non-temporal stores): a build on one or two threads reads
// ~15% faster with its own buffers, and their pages are no more than the runs' pages.
//
// flush_all() moves the bytes of every last, partly used page (each run's, each thread's last
// chunk's of a bin) and the slab slices into one dense mapping (packed_bins) and gives their
// pages back: what the store holds after the appends is its values' bytes and less than a page
// per arena chunk. The mapping is outside the arena's budget, which counted those bytes already.
//
// Values reach a buffer through a staging line per bin (software write-combining): a thread
// writes to all of its 2^10+ bins at random, so a value stored straight into its buffer began a
// new cache line every few values, each a miss that first reads the line it is about to overwrite
// (ARCHITECTURE.md, "How the default index is built"). The staging lines (128 bytes per bin, in L2)
// take the values; a run takes a line's whole values once they are 64 bytes or more, a buffer each
// full 64-byte line with non-temporal stores, which write it without reading it.
class binned_store {
  public:
    // The largest value append() and emplace() take.
    static constexpr size_t max_room = 64;
    // The threads with buffers of their own from the start (the first to append).
    static constexpr unsigned own_buffer_threads = 2;

    // bins: the number of bins; buffer_bytes: each thread's buffer per bin (rounded up to whole
    // pages); memory: where chunks go while it has room (bin b's in group first_group + b), else
    // to open_file()'s scratch file. first_bytes (a power of 2, 0: buffer_bytes): a thread's first
    // buffer of a bin, each next one twice the last up to buffer_bytes; those below a page are
    // slices of the thread's own slabs, so that a store of few values (the plain values of a few
    // crowded windows) takes a few hundred bytes per bin and thread, not a page.
    binned_store(uint32_t bins, size_t buffer_bytes, chunk_arena& memory, uint32_t first_group,
                 std::function<io::spill_file&()> open_file, size_t first_bytes = 0);

    struct thread_bins;
    // The calling thread's buffers (a TLS lookup: take it once per sequence, not per value).
    thread_bins& mine() { return local_.local(); }
    // Adds `bytes` (at most Room, which `data` must hold) to `bin` through the thread's buffers.
    // Room bytes are copied whatever `bytes` is (a copy of constant size is a few moves; one of
    // variable size is a libc call per record, a large share of the reading's time).
    template <size_t Room>
    void append(thread_bins& mine, uint32_t bin, void const* data, size_t bytes) {
        emplace<Room>(mine, bin, bytes, [&](uint8_t* at) { std::memcpy(at, data, Room); });
    }
    // The same, with write(at) storing the value straight into the staging line (at most Room
    // bytes from `at`): a value put together on the stack and copied is loaded back across the
    // smaller stores that made it, which the store buffer cannot forward.
    template <size_t Room, typename Write>
    void emplace(thread_bins& mine, uint32_t bin, size_t bytes, Write&& write) {
        static_assert(Room <= max_room);
        buffer& b = mine.buffers[bin];
        if (b.size + b.staged + Room > b.capacity) [[unlikely]]  // 0 without a buffer
            renew(mine, bin);
        uint8_t* const line = mine.staging[bin].bytes;
        write(line + b.staged);
        b.staged += static_cast<uint32_t>(bytes);
        if (b.staged >= line_bytes) {
            if (b.in_run) [[likely]] {
                to_run(mine, bin);
                return;
            }
            put_line(b.at + b.size, line);
            b.size += line_bytes;
            b.staged -= line_bytes;
            std::memcpy(line, line + line_bytes, Room);  // what is left: less than Room bytes
        }
    }
    // After a thread's last append of a batch, before another thread may read what it wrote:
    // non-temporal stores are weakly ordered (an sfence makes them visible in order).
    static void publish() noexcept;
    // Buffers to chunks, the buffers freed and the chunks' last bytes packed: after the last
    // append (later calls do nothing).
    void flush_all();
    // A bin's bytes into `bytes`, its chunks in the order the threads wrote them; `release` frees
    // the bin (its memory at once: nothing is added to it afterwards).
    void read(uint32_t bin, bool release, std::vector<uint8_t>& bytes);

    uint64_t file_bytes() const noexcept { return file_bytes_.load(std::memory_order_relaxed); }
    // The memory it holds (between appends): the pages of the arena under its chunks and open
    // buffers, the packed mapping's, the threads' slabs, staging lines and buffers' bookkeeping
    // (bins read and released excluded).
    uint64_t held_bytes() const;

    static constexpr size_t line_bytes = 64;
    // `bytes` at `memory` or `offset`, then `tail_bytes` at `tail`: its last bytes, which
    // flush_all() moved to the packed mapping (a value may straddle the two).
    struct chunk {
        uint64_t offset = 0;        // in the file, when `memory` is null
        uint8_t* memory = nullptr;  // in the arena, or in a thread's slab
        uint8_t* tail = nullptr;
        uint32_t bytes = 0;
        uint16_t tail_bytes = 0;  // less than a page
        bool in_slab = false;     // freed with the store, not with its bin
    };
    // A bin's buffer: its run (`in_run`: no buffer of its own, room without end), or a slice of
    // the arena, which becomes the chunk as it is (no copy), or, once the arena is used up, the
    // thread's spill buffer of the bin, written to the file when full; a small one (below a
    // page), a slice of the thread's slab. `size`: whole lines written to it; `staged`: bytes in
    // the bin's staging line, not yet in it (whole values, for a run); `capacity`: its bytes (0:
    // none yet); `next`: the next one's (0: the first).
    struct buffer {
        uint8_t* at = nullptr;
        uint32_t size = 0;
        uint32_t capacity = 0;
        uint32_t staged = 0;
        uint32_t next = 0;
        bool in_arena = false;
        bool in_slab = false;
        bool in_run = false;
    };
    struct alignas(line_bytes) staging_line {
        uint8_t bytes[line_bytes + max_room];
    };
    struct alignas(line_bytes) slab_line {
        uint8_t bytes[line_bytes];
    };
    struct thread_bins {
        std::vector<buffer> buffers;               // per bin, until full
        std::vector<staging_line> staging;         // per bin
        std::vector<std::vector<chunk>> chunks;    // per bin, from the first chunk of its own
        std::vector<std::vector<uint8_t>> spills;  // per bin, from the first spill buffer
        std::vector<std::unique_ptr<slab_line[]>> slabs;
        size_t slab_left = 0;  // lines left at the end of the last slab
    };

  private:
    // 64 bytes from `line` to `to`: non-temporal where `to` is a whole line.
    static void put_line(uint8_t* to, uint8_t const* line) noexcept;
    // The bin's staged values (64 to 127 bytes) to its run, or, if the run has no room, to the
    // thread's own buffers from now on.
    void to_run(thread_bins& mine, uint32_t bin) {
        buffer& b = mine.buffers[bin];
        uint8_t* const to = memory_.extend(first_group_ + bin, b.staged);
        if (to == nullptr) [[unlikely]] {
            leave_run(mine, bin);
            return;
        }
        // Two copies of a constant 64 bytes, overlapping: a copy of variable size is a libc call.
        uint8_t const* const line = mine.staging[bin].bytes;
        std::memcpy(to, line, line_bytes);
        std::memcpy(to + b.staged - line_bytes, line + b.staged - line_bytes, line_bytes);
        // The run's next two lines, which this bin's next values will likely go to, fetched for
        // writing now (2^10 bins' two lines stay in L2 until then): a store to a line not in the
        // cache waits for it to be read first.
        uintptr_t const next = (reinterpret_cast<uintptr_t>(to) + b.staged) | (line_bytes - 1);
        __builtin_prefetch(reinterpret_cast<uint8_t const*>(next + 1), 1);
        __builtin_prefetch(reinterpret_cast<uint8_t const*>(next + 1 + line_bytes), 1);
        b.staged = 0;
    }
    // The bin's values go to the thread's own buffers from now on, its staged ones first.
    void leave_run(thread_bins& mine, uint32_t bin);
    void flush(thread_bins& mine, uint32_t bin);
    // Flushes the bin's buffer and gives it room for its next capacity.
    void renew(thread_bins& mine, uint32_t bin);
    // `bytes` (a whole number of lines) of the thread's slabs.
    static uint8_t* slab_slice(thread_bins& mine, size_t bytes);
    // What flush_all() moves of a chunk to the packed mapping (`last`: its thread's last of the
    // bin): a slab slice whole, the last arena chunk's bytes past its last whole page.
    static size_t moving(chunk const& c, bool last) noexcept;
    // The bin's moving bytes to `to`, their arena pages given back.
    void pack(uint32_t bin, uint8_t* to);
    // f(chunks) for the bin's run (a list of none or one chunk) and each thread's chunks of it.
    template <typename F>
    void for_each_list(uint32_t bin, F&& f);

    uint32_t bins_;
    size_t buffer_bytes_;
    size_t first_bytes_;
    chunk_arena& memory_;
    uint32_t first_group_;
    std::atomic<uint64_t> file_bytes_{0};
    std::function<io::spill_file&()> open_file_;
    packed_bins packed_;
    bool runs_;
    std::atomic<unsigned> appenders_{0};  // threads that took their buffers
    bool flushed_ = false;
    std::vector<std::vector<chunk>> runs_of_;  // per bin, after flush_all(): its run as a chunk
    tbb::enumerable_thread_specific<thread_bins, tbb::cache_aligned_allocator<thread_bins>,
                                    tbb::ets_key_per_instance>
        local_;
};

// The marks of a minimizer-local first level: bit w set, window w is overloaded (its k-mers take
// the plain hash). 2^window_bits bits, the header's hash_scheme_params::overloaded.
struct overloaded_windows {
    std::vector<uint64_t> bits;
    std::atomic<uint64_t> marked{0};
    bool is_marked(uint64_t window) const noexcept {
        return (bits[window / 64] >> (window % 64)) & 1;
    }
};

class superkmer_bins {
  public:
    // hashing: the index's minimizer-local scheme, without marks; g: the first level's geometry.
    // Records and plain values stay in memory up to memory_budget bytes; beyond it they go to a
    // scratch file in temp_folder. buffer_bytes_per_thread: each thread's buffers, all bins.
    superkmer_bins(local_kmer_hashing const& hashing, qf::geometry g, uint64_t memory_budget,
                   std::string temp_folder, size_t buffer_bytes_per_thread);
    // Bins made before the table is sized (the first read both counts and gathers): 2^bin_bits
    // bins of `scanner`'s super-k-mers; `counter`, if given, takes the plain hash (`seed`'s) of
    // every k-mer whose minimizer it samples (its group: the minimizer's spread). set_table()
    // before mark().
    superkmer_bins(minimizer_scanner const& scanner, unsigned bin_bits, uint64_t memory_budget,
                   std::string temp_folder, size_t buffer_bytes_per_thread,
                   sketch::group_sampled_count* counter = nullptr);

    // Whether these bins can fill a first level of geometry g with `window_bits` (as supports(),
    // for their bin count), and then the table they fill.
    bool fits(qf::geometry g, unsigned window_bits) const noexcept;
    void set_table(local_kmer_hashing const& hashing, qf::geometry g);
    // At most this much of the memory budget may hold records from now on (a build that sizes
    // its table only after the reading raises it as the count grows).
    void allow_in_memory(uint64_t bytes) noexcept { memory_.allow(bytes); }

    // Whether the bins can hold g's first level built with `window_bits`: a bin's fingerprints
    // relative to its first fit 31 bits with at most 2^12 bins, and a bin holds at most 2^20
    // windows.
    static bool supports(qf::geometry g, unsigned window_bits) noexcept;
    // Super-k-mers' bytes per k-mer position on random sequence (2 / (w + 1) records a position,
    // each 13 bytes of header and first k-mer and a byte per 4 more k-mers): what plans expect.
    static double expected_bytes_per_position(unsigned k, unsigned minimizer_length) noexcept;
    // What 2^bin_bits bins hold in memory besides their records: `threads` threads' buffers and
    // the bins being marked or sorted (the fill's tokens), for `kmer_positions` positions.
    static uint64_t working_bytes(unsigned bin_bits, unsigned window_bits, uint64_t kmer_positions,
                                  unsigned threads, size_t buffer_bytes_per_thread) noexcept;

    // From the reading pipeline's threads: seq's super-k-mers into their bins. Returns its k-mers.
    uint64_t add(std::string_view seq);

    // Every k-mer of the bins, by its plain hash (the counting hash of add()), into `counter`:
    // for a build whose sampled count is too uncertain to size the table by (a reference of a
    // few minimizers). After every add(); in parallel over the bins.
    void count_every_kmer(sketch::hyperloglog& counter);

    // Marks the windows holding more than `threshold` distinct fingerprints (bits sized for the
    // scheme's window bits) and keeps their k-mers' plain hashes for the fill. After every add().
    void mark(overloaded_windows& marks, double threshold);

    // The fill sets each unmarked record's bit in `gate` (core/qf/stored/minimizer_gate.hpp), a
    // gate of the table's windows, which must outlive append_to(); none by default.
    void set_gate(qf::gate_bits* gate) noexcept { gate_ = gate; }

    // Every bin's fingerprints, sorted and deduplicated, to `sink` in order (the marked windows'
    // k-mers by their plain hash): false if the sink took less than all (the level filled up).
    bool append_to(sorted_sink const& sink, overloaded_windows const& marks, unsigned threads,
                   progress_meter* progress = nullptr);
    // The same into a level's writer, each bin's middle written by the thread that sorted it
    // (core/qf/stored/segments.hpp): the same words, with little left to the one writer.
    bool append_to(level_writer_sink const& level, overloaded_windows const& marks,
                   unsigned threads, progress_meter* progress = nullptr);

    // The memory the bins hold in all (between adds): their records' and plain values' pages,
    // each thread's open buffers and staging lines.
    uint64_t held_bytes() const;
    // After the last add(): every thread's buffers flushed, their last pages packed (mark() and
    // count_every_kmer() do it first).
    void finish_reading();

    // The bytes that went through the scratch file (0: none was needed).
    uint64_t file_bytes() const noexcept { return records_.file_bytes() + plain_.file_bytes(); }

    uint32_t bin_count() const noexcept { return uint32_t{1} << bin_bits_; }
    static unsigned bin_bits_of(qf::geometry g, unsigned window_bits) noexcept;

  private:
    // The fingerprint range [first, last] of bin b (hashes b * 2^(64 - bin bits) onwards).
    uint64_t first_fingerprint(uint32_t bin) const noexcept;
    uint64_t last_fingerprint(uint32_t bin) const noexcept;
    // Bin b's fingerprints, sorted and deduplicated, into `offsets`: each less the bin's first.
    void sorted_bin(uint32_t bin, overloaded_windows const& marks, std::vector<uint32_t>& offsets);
    // Each filling thread's buffers, kept from bin to bin.
    struct fill_scratch {
        std::vector<uint8_t> bytes;
        std::vector<uint32_t> plain, tmp, merged;
        std::vector<uint64_t> kmers, spreads;  // a batch to hash
    };

    static bool fits(unsigned bin_bits, qf::geometry g, unsigned window_bits) noexcept;

    minimizer_scanner scanner_;
    kmer_hasher counting_hasher_;
    sketch::group_sampled_count* counter_ = nullptr;
    qf::gate_bits* gate_ = nullptr;
    std::optional<local_kmer_hashing> hashing_;  // set_table()
    qf::geometry g_{};
    unsigned bin_bits_;
    std::string temp_folder_;
    std::unique_ptr<io::spill_file> file_;
    std::mutex file_mutex_;
    chunk_arena memory_;
    binned_store records_;
    binned_store plain_;  // u32: plain fingerprints relative to their bin's first
    tbb::enumerable_thread_specific<fill_scratch, tbb::cache_aligned_allocator<fill_scratch>,
                                    tbb::ets_key_per_instance>
        scratch_;
};

}  // namespace qmer::app
