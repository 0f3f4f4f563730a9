// qmer index: references -> canonical k-mers -> hashes -> filter -> index file (DESIGN.md, data
// flow). One TBB parallel_pipeline per pass over the references: a serial in-order stage reads
// their text one file after another and cuts it into chunks at record boundaries
// (io/chunked_reader.hpp); a parallel stage parses the chunks; a serial in-order stage settles
// them (numbers the records, throws the first malformed one, in file order); a parallel stage
// scans, hashes and inserts their k-mers.

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/parallel_sort.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "app/common/batch_pool.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/memory_limit.hpp"
#include "app/common/progress.hpp"
#include "app/common/threads.hpp"
#include "app/filters/registry.hpp"
#include "app/index/options.hpp"
#include "app/index/sorted_build.hpp"
#include "app/index/superkmer_bins.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "core/error.hpp"
#include "core/kmer/hash.hpp"
#include "core/sketch/group_sampled_count.hpp"
#include "core/sketch/hyperloglog.hpp"
#include "io/chunked_reader.hpp"
#include "io/index_file.hpp"
#include "io/output_file.hpp"
#include "io/same_file.hpp"
#include "io/sequence_reader.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {
namespace {

inline constexpr size_t chunk_bases = size_t{1} << 20;

struct build_counts {
    std::atomic<uint64_t> kmers{0};
    uint64_t records = 0;
    uint64_t bases = 0;
    uint64_t scratch_bytes = 0;   // what a spilled sorted build wrote to its scratch file
    unsigned passes = 0;          // reads of the references by a sorted build in slices (> 1)
    uint64_t longest_record = 0;  // bases
};

// One chunk of the references on its way through the pipeline.
struct reference_chunk {
    io::text_chunk text;
    io::record_batch batch;
    std::shared_ptr<io::chunked_reader> reader;  // the file it is of (kept while it is settled)
    size_t file = 0;                             // that file's place among the references
    std::exception_ptr problem;                  // the file could not be opened
    bool holds_a_kmer = false;                   // a record of the chunk has k bases in a row
};

// Reads the references one after the other, in order, through the chunked reader's stages. A
// reference read from elsewhere (index_options::read_from) keeps its own name in messages.
class reference_stream {
  public:
    reference_stream(index_options const& o, io::reader_options options)
        : names_(o.references),
          paths_(o.read_from.empty() ? o.references : o.read_from),
          options_(options),
          k_(o.k),
          allow_empty_(o.allow_empty),
          holds_kmers_(o.references.size(), false) {}

    // The input stage (serial, in order): the next chunk of the current or a following file;
    // false at the end. A file that cannot be opened is a chunk whose settle() throws, so that
    // the problems of the files before it come first.
    bool cut(reference_chunk& chunk) {
        chunk.problem = nullptr;
        chunk.batch.clear();
        while (!failed_) {
            if (!reader_) {
                if (next_path_ == paths_.size()) return false;
                try {
                    reader_ = std::make_shared<io::chunked_reader>(paths_[next_path_], options_);
                } catch (...) {
                    chunk.reader = nullptr;
                    chunk.file = next_path_;
                    chunk.problem = std::current_exception();
                    failed_ = true;
                    return true;
                }
                ++next_path_;
            }
            chunk.reader = reader_;
            chunk.file = next_path_ - 1;
            if (reader_->cut(chunk.text, chunk.batch)) return true;
            reader_.reset();
        }
        return false;
    }

    // The parsing stage (parallel): the records, and whether they hold a k-mer (which costs the
    // first record's first k bases, as a rule).
    void parse(reference_chunk& chunk) const {
        chunk.holds_a_kmer = false;
        if (!chunk.reader) return;
        io::chunked_reader::parse(chunk.text, chunk.batch);
        for (io::sequence_record const r : chunk.batch)
            if (holds_a_kmer(r.sequence, k_)) {
                chunk.holds_a_kmer = true;
                break;
            }
    }

    // The settling stage (serial, in order): the chunk's records final, or the first problem.
    void settle(reference_chunk& chunk) {
        try {
            if (chunk.problem) std::rethrow_exception(chunk.problem);
            chunk.reader->settle(chunk.text, chunk.batch);
            if (chunk.holds_a_kmer) holds_kmers_[chunk.file] = true;
        } catch (input_error const& e) {
            std::string const& path = paths_[chunk.file];
            std::string const& name = names_[chunk.file];
            std::string message = e.what();
            if (path != name && message.starts_with(path))
                throw input_error(name + message.substr(path.size()));
            throw;
        }
    }

    // The three stages in the calling thread, for a pass without a pipeline: the next chunk's
    // records in chunk.batch (never none); false at the end.
    bool next(reference_chunk& chunk) {
        while (cut(chunk)) {
            parse(chunk);
            settle(chunk);
            if (!chunk.batch.empty()) return true;
        }
        return false;
    }

    // After every reference was read to its end: a reference with no k-mer (an empty file, only N,
    // records shorter than k) is an input error unless --allow-empty, since a failed download
    // would otherwise make an index that silently matches nothing of it.
    void check_every_reference_held_a_kmer() const {
        if (allow_empty_) return;
        for (size_t f = 0; f < names_.size(); ++f)
            if (!holds_kmers_[f])
                throw input_error(names_[f] + ": no k-mer in it (k = " + std::to_string(k_) +
                                  "): it is empty, only N, or every record is shorter than k; "
                                  "give --allow-empty to index it all the same");
    }

  private:
    std::vector<std::string> const& names_;
    std::vector<std::string> const& paths_;
    io::reader_options options_;
    unsigned k_;
    bool allow_empty_;
    std::vector<bool> holds_kmers_;  // per reference, from the settling stage (serial)
    size_t next_path_ = 0;
    std::shared_ptr<io::chunked_reader> reader_;
    bool failed_ = false;
};

// Counts the k-mer positions of the references: an upper bound of their distinct k-mers, used to
// size filters that cannot grow when the user gave no --expected.
uint64_t count_kmer_positions(index_options const& o, kmer_scanner const& scanner) {
    for (auto const& p : o.references)
        if (p == "-")
            throw usage_error("--filter " + o.filter +
                              " cannot grow and reads stdin only once: give --expected N");
    reference_stream refs(o, {});
    reference_chunk chunk;
    uint64_t total = 0;
    while (refs.next(chunk)) {
        throw_if_interrupted();
        for (io::sequence_record const r : chunk.batch) total += scanner.count(r.sequence);
    }
    refs.check_every_reference_held_a_kmer();
    return total;
}

[[noreturn]] void memory_exceeded(uint64_t need, uint64_t limit, std::string const& requested) {
    throw capacity_error("the index needs " + human_bytes(static_cast<double>(need)) +
                         ", more than the memory limit of " +
                         human_bytes(static_cast<double>(limit)) +
                         (requested.empty() ? " (80% of this machine's memory)" : "") +
                         ": raise --max-memory, use a larger --fpr, or a machine with more memory");
}

// A cheap upper bound of the references' distinct k-mers for a growing filter's first level, from
// their sizes (distinct k-mers <= bases): plain files count their bytes, gzip/BGZF files 4x theirs
// (sequence compresses ~3.5-4x). The expandable filter starts every level at 1/8 of its final size,
// so an overestimate costs little; stdin and unreadable files count nothing (the filter grows).
uint64_t estimate_kmers_from_sizes(std::vector<std::string> const& paths) {
    uint64_t total = 0;
    for (auto const& path : paths) {
        if (path == "-") continue;
        std::error_code ec;
        auto const size = std::filesystem::file_size(path, ec);
        if (ec) continue;
        unsigned char magic[2] = {0, 0};
        if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
            if (std::fread(magic, 1, 2, f) != 2) magic[0] = 0;
            std::fclose(f);
        }
        bool const gzip = magic[0] == 0x1f && magic[1] == 0x8b;
        total += gzip ? 4 * size : size;
    }
    return total;
}

// Reads the references once and hands every piece of their sequences to `insert_span` (from the
// pipeline's threads; it returns the piece's k-mers). `stop()` is asked after each chunk is
// settled (a filter that filled up, or outgrew the memory limit, throws or stops the reading
// there: no later chunk is taken).
template <typename InsertSpan, typename Stop>
void read_reference_spans(index_options const& o, unsigned threads, build_counts& counts,
                          progress_meter& progress, InsertSpan&& insert_span, Stop&& stop) {
    size_t const tokens = 2 * static_cast<size_t>(threads);
    batch_pool<reference_chunk> pool(tokens);
    reference_stream refs(o, {.decompression_threads = threads > 1 ? threads : 0});
    // A chromosome is one record: split long records into pieces of chunk_bases k-mer start
    // positions (each piece carries the k - 1 bases the next one starts with), so every core
    // works on it and an interrupt is seen within one piece.
    auto insert_sequence = [&](std::string_view seq) -> uint64_t {
        if (seq.size() <= chunk_bases + o.k) return insert_span(seq);
        size_t const pieces = (seq.size() - o.k + 1 + chunk_bases - 1) / chunk_bases;
        std::atomic<uint64_t> kmers{0};
        tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
            throw_if_interrupted();
            size_t const start = p * chunk_bases;
            kmers.fetch_add(insert_span(seq.substr(start, chunk_bases + o.k - 1)),
                            std::memory_order_relaxed);
        });
        return kmers.load();
    };

    // Set by the settling stage when stop() says so; the input stage then cuts no more.
    std::atomic<bool> stopping{false};
    // Serial, in input order: the next chunk of the references' text.
    auto cut_stage = [&](tbb::flow_control& fc) -> reference_chunk* {
        if (interrupted() || stopping.load(std::memory_order_relaxed)) {
            fc.stop();
            return nullptr;
        }
        reference_chunk* chunk = pool.take();
        if (!refs.cut(*chunk)) {
            pool.give_back(chunk);
            fc.stop();
            return nullptr;
        }
        return chunk;
    };
    // Parallel: the chunk's records.
    auto parse_stage = [&](reference_chunk* chunk) {
        refs.parse(*chunk);
        return chunk;
    };
    // Serial, in input order: the records made final and counted; stop() asked.
    auto settle_stage = [&](reference_chunk* chunk) {
        if (stopping.load(std::memory_order_relaxed)) {
            chunk->batch.clear();  // cut before the stop was seen: not taken
            return chunk;
        }
        refs.settle(*chunk);
        io::record_batch const& batch = chunk->batch;
        counts.records += batch.size();
        counts.bases += batch.sequence_bytes();
        for (io::sequence_record const r : batch)
            counts.longest_record = std::max<uint64_t>(counts.longest_record, r.sequence.size());
        progress.update(counts.records, counts.bases);
        if (stop()) stopping.store(true, std::memory_order_relaxed);
        return chunk;
    };
    // Parallel: scan, hash and insert the chunk's k-mers.
    auto insert_stage = [&](reference_chunk* chunk) {
        throw_if_interrupted();
        uint64_t kmers = 0;
        for (io::sequence_record const r : chunk->batch) kmers += insert_sequence(r.sequence);
        counts.kmers.fetch_add(kmers, std::memory_order_relaxed);
        pool.give_back(chunk);
    };
    using tbb::filter_mode;
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, reference_chunk*>(filter_mode::serial_in_order, cut_stage) &
                    tbb::make_filter<reference_chunk*, reference_chunk*>(filter_mode::parallel,
                                                                         parse_stage) &
                    tbb::make_filter<reference_chunk*, reference_chunk*>(
                        filter_mode::serial_in_order, settle_stage) &
                    tbb::make_filter<reference_chunk*, void>(filter_mode::parallel, insert_stage));
    throw_if_interrupted();
    if (!stopping.load()) refs.check_every_reference_held_a_kmer();
}

// Every k-mer of the references into `filter`, hashed by `hashing`.
template <typename Filter, typename Hashing>
void insert_references(Filter& filter, Hashing const& hashing, index_options const& o,
                       unsigned threads, build_counts& counts, progress_meter& progress,
                       uint64_t max_memory) {
    std::atomic<bool> full{false};
    auto insert_span = [&](std::string_view seq) {
        return for_each_kmer_hash(filter, hashing, seq, [&](uint64_t h) {
            if (filter.insert(h) == insert_result::full)
                full.store(true, std::memory_order_relaxed);
        });
    };
    read_reference_spans(o, threads, counts, progress, insert_span, [&] {
        // A growing filter takes memory as it fills: stop before the machine swaps.
        if (filter.memory_bytes() > max_memory)
            memory_exceeded(filter.memory_bytes(), max_memory, o.max_memory);
        return full.load(std::memory_order_relaxed);
    });
    if (full.load())
        throw capacity_error("the " + o.filter + " filter is full after " +
                             std::to_string(filter.size()) +
                             " k-mers: give a larger --expected, or use --filter expandable, "
                             "which grows");
}

// The distinct-count pass, driven through insert_references() like a filter: every k-mer's hash
// goes into a HyperLogLog sketch (16 KiB, 0.81% standard error).
struct distinct_counter {
    sketch::hyperloglog sketch;
    insert_result insert(uint64_t h) noexcept {
        sketch.add(h);
        return insert_result::inserted;
    }
    size_t memory_bytes() const noexcept { return sketch.memory_bytes(); }
    size_t size() const noexcept { return 0; }
};

// Only regular files can be read twice (not stdin, a pipe or a process substitution).
bool rereadable(std::string const& path) {
    std::error_code ec;
    return path != "-" && std::filesystem::is_regular_file(path, ec);
}

// The paths the passes read (index_options::read_from, else the references' own).
std::vector<std::string> const& read_paths(index_options const& o) {
    return o.read_from.empty() ? o.references : o.read_from;
}

bool all_rereadable(std::vector<std::string> const& paths) {
    for (auto const& p : paths) {
        std::error_code ec;
        if (p == "-" || !std::filesystem::is_regular_file(p, ec)) return false;
    }
    return true;
}

// What the distinct-count pass measured.
struct reference_census {
    uint64_t distinct_estimate = 0;  // raised by 3 standard errors
    uint64_t kmer_positions = 0;
    uint64_t bases = 0;
    uint64_t longest_record = 0;
};

// What a counting read measured: the distinct estimate raised by 3 standard errors, so that level
// 0 holds every k-mer but about 1 time in 1000, and never above the k-mer positions read, which
// bound it (on random sequence nearly every k-mer is distinct: the margin only made the table
// larger). Sketch: a hyperloglog or a group_sampled_count.
template <typename Sketch>
reference_census census_of(Sketch const& sketch, build_counts const& counts) {
    uint64_t const positions = counts.kmers.load();
    auto const raised =
        static_cast<uint64_t>(std::ceil(sketch.estimate() * (1 + 3 * sketch.standard_error())));
    return {std::min(raised, positions) + 1, positions, counts.bases, counts.longest_record};
}

// A growing filter's first level sized from the references' distinct k-mers, counted in a first
// pass: reading and scanning twice costs less than the doublings a guessed size leads to (each
// migrates the whole level), and the level ends as full as the estimate allows. The estimate is
// raised by 3 standard errors, so level 0 holds every k-mer but about 1 time in 1000.
reference_census count_references(index_options const& o, unsigned threads,
                                  progress_meter& progress) {
    // The bases to read, guessed from the files' sizes; the later passes know them.
    progress.begin_phase("counting k-mers",
                         static_cast<double>(estimate_kmers_from_sizes(read_paths(o))), "bp", false,
                         true);
    distinct_counter counter;
    build_counts counts;
    insert_references(counter, plain_kmer_hashing(o.k, o.seed), o, threads, counts, progress,
                      ~uint64_t{0});
    return census_of(counter.sketch, counts);
}

// Hands op only the k-mers of overloaded windows (their plain hashes): the pass that inserts what
// the sorted build dropped from those windows.
struct overloaded_kmers_hashing {
    local_kmer_hashing const& local;
    template <typename F>
    bool for_each(std::string_view seq, F&& f) const {
        return local.for_each_overloaded(seq, std::forward<F>(f));
    }
};

// Where a spilled sorted build keeps its scratch file: --temp-dir, else the index's folder.
std::string temp_folder(index_options const& o) {
    if (!o.temp_dir.empty()) return o.temp_dir;
    std::string folder = std::filesystem::path(o.output).parent_path().string();
    return folder.empty() ? "." : folder;
}

// Stdin and pipes can be read only once: copies them into scratch files in temp_folder(o)
// (their size on disk, compressed as they come), kept open in `copies`, and points o.read_from
// at them and at the other references, so that every pass reads them like files. Nothing when
// every reference can be read again.
void copy_what_cannot_be_read_twice(index_options& o,
                                    std::vector<std::unique_ptr<io::spill_file>>& copies,
                                    progress_meter& progress) {
    if (all_rereadable(o.references)) return;
    progress.begin_phase("copying what cannot be read twice to a scratch file", 0, "", false);
    o.read_from.clear();
    for (auto const& reference : o.references) {
        if (rereadable(reference)) {
            o.read_from.push_back(reference);
            continue;
        }
        copies.push_back(std::make_unique<io::spill_file>(temp_folder(o)));
        copies.back()->copy_from(reference);
        o.read_from.push_back(copies.back()->proc_path());
    }
}

// How the sorted build keeps its fingerprints (app/index/sorted_build.hpp).
struct sorted_build_plan {
    // 0: no sorted build (insert k-mer by k-mer, which needs no memory beyond the table).
    unsigned passes = 0;
    bool spill = false;  // one pass, the fingerprints in a scratch file (then passes == 1)
    size_t spill_buffer_bytes_per_thread = 0;
};

// Each thread's bin buffers in a spilled build take at most this (and at least 4 KiB per bin).
constexpr size_t max_spill_buffer_bytes_per_thread = size_t{32} << 20;

// What a build holds besides its table and its fingerprints: the process itself (code, thread
// pools, the sketch), the reading pipeline's batches (2 per thread, 4 MiB each) and the longest
// record, which is read whole: the parser's buffer and its copy in a batch, and part of another
// (200 Mbp in two records of 100 Mbp at -t 1, 2 and 4: 250-280 MB above the table and the
// scratch buffers; this gives 64 MiB + 2.5 x 100 MB + the batches).
constexpr uint64_t process_bytes = uint64_t{64} << 20;
uint64_t build_overhead_bytes(uint64_t longest_record, unsigned threads) {
    return process_bytes + uint64_t{2} * threads * io::record_batch::default_byte_budget +
           longest_record * 5 / 2;
}

// What a build holds at its fullest besides its fingerprints (the buckets, or the scratch file's
// buffers and bins): the concurrent table is filled while the references are read, so it adds to
// the overhead; the level a rank_select_writer writes (`table_after_reading`) is made only once
// they have been read, with the process and the bins being sorted, the reading's batches and
// records gone (2.4 Gbp repetitive: 2.41 GiB peak for a 2.28 GiB index).
uint64_t build_held_bytes(uint64_t table_bytes, bool table_after_reading,
                          reference_census const& census, unsigned threads) {
    uint64_t const overhead = build_overhead_bytes(census.longest_record, threads);
    if (!table_after_reading) return table_bytes + overhead;
    return std::max(overhead, table_bytes + process_bytes);
}

// The least --max-memory a counted build can keep to: its table (`table_bytes`: the level written
// in the rank-select layout, or the concurrent table where the bins cannot hold the
// fingerprints), the overhead, and the least a scratch-file build needs (4 KiB per bin and
// thread, and the bins being sorted), so that every limit it accepts gives the same index: the
// sorted build's, never the k-mer by k-mer inserts', which would stop level 0 at its growth fill
// and start a second level. Below it the build is refused before any k-mer is stored.
uint64_t least_build_memory(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                            reference_census const& census, unsigned threads) {
    uint64_t const scratch =
        spilled_fingerprint_buckets::supports(g)
            ? spilled_fingerprint_buckets::memory_bytes(g, census.kmer_positions, threads, 0)
            : 0;
    return build_held_bytes(table_bytes, table_after_reading, census, threads) + scratch;
}

// Fingerprints stay in memory (one pass, no disk) while they take at most half of what the table
// and the overhead leave of the memory limit, and no more than the larger of the table's own
// size and 256 MiB, so that a build's peak stays near its index's size (the scratch file is as
// fast: 11.1 against 12.3 s for 200 Mbp, bench/scale/README.md); beyond that they go to a
// scratch file (one pass whatever the limit); where that does not fit either (fingerprints too
// long for the bins, or a limit too tight for the bins' buffers), the references are read once
// per slice that fits, and failing that k-mers are inserted one by one (no memory beyond the
// table).
sorted_build_plan plan_sorted_build(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                                    uint64_t max_memory, reference_census const& census,
                                    unsigned threads) {
    if (!fingerprint_buckets::supports(g)) return {};
    // Buckets in memory are held while the references are read and while the table is filled.
    uint64_t const used = table_bytes + build_overhead_bytes(census.longest_record, threads);
    uint64_t const left = max_memory > used ? max_memory - used : 0;
    double const in_memory =
        static_cast<double>(bucket_bytes_per_position) * static_cast<double>(census.kmer_positions);
    uint64_t const roomy = std::max<uint64_t>(table_bytes, uint64_t{256} << 20);
    if (in_memory <= static_cast<double>(std::min(left / 2, roomy))) return {1, false, 0};
    uint64_t const held = build_held_bytes(table_bytes, table_after_reading, census, threads);
    uint64_t const spill_left = max_memory > held ? max_memory - held : 0;
    // A quarter of what is left for the buffers, else the least they take (4 KiB per bin and
    // thread: the limit least_build_memory() accepts).
    size_t const roomy_buffers = static_cast<size_t>(std::min<uint64_t>(
        max_spill_buffer_bytes_per_thread, spill_left / 4 / std::max(1u, threads)));
    for (size_t const buffers : {roomy_buffers, size_t{0}})
        if (spilled_fingerprint_buckets::supports(g) &&
            spilled_fingerprint_buckets::memory_bytes(g, census.kmer_positions, threads, buffers) <=
                spill_left)
            return {1, true, buffers};
    unsigned const passes =
        plan_passes(census.kmer_positions, std::min<uint64_t>(left / 2, uint64_t{4} << 30));
    if (in_memory / passes > static_cast<double>(left)) return {};
    return {passes, false, 0};
}

// A scratch file that would fill its folder's disk is refused once the references are counted,
// before their k-mers are gathered, not when the disk fills minutes later (a human-sized build
// writes 9 GiB or more). Reading the references in slices instead would need no disk, but it
// builds with the plain hash (its crowded windows are known only at the end): not the index
// every other limit gives, and slower to query.
void require_scratch_room(std::string const& folder, uint64_t need, char const* why) {
    uint64_t const room = io::free_bytes_in(folder);
    if (need <= room) return;
    throw output_error("'" + folder + "': the build's scratch file would take " +
                       human_bytes(static_cast<double>(need)) + " (" + why +
                       "), and the folder has " + human_bytes(static_cast<double>(room)) +
                       " free: give --temp-dir a folder with more room, or raise --max-memory "
                       "(the k-mers are then held in memory)");
}

// How a build from super-k-mers (app/index/superkmer_bins.hpp) keeps to the memory limit: the
// records it keeps in memory (the rest go to the scratch file) and each thread's buffers. Records
// are held while the references are read and freed bin by bin as the level is written; the plan
// counts them whole beside the bins being sorted.
struct superkmer_plan {
    uint64_t least = 0;  // the least --max-memory it keeps to (records all in the file)
    uint64_t memory_budget = 0;
    size_t buffer_bytes_per_thread = 0;
    double expected_record_bytes = 0;  // on random sequence
};

// The most super-k-mer records a build keeps in memory, whatever the limit allows: what keeps its
// peak near the index's size, and at least 256 MiB. Where the level is buffered before it is
// written (output to stdout), the records may take the table's own size less what the reading holds
// beside them; where it goes straight into the index file (streamed_level), the level takes no
// memory, and the records may take 1.4x the table less the reading: fewer go through the scratch
// file (each byte there is written, read back and held twice in the page cache), and the peak stays
// under issue 16's 1.5x the index.
inline constexpr double streamed_records_per_table_byte = 1.4;

uint64_t records_in_memory(uint64_t table_bytes, uint64_t longest_record, unsigned threads,
                           size_t buffer_bytes_per_thread, bool streamed_level) {
    uint64_t const reading =
        build_overhead_bytes(longest_record, threads) + uint64_t{threads} * buffer_bytes_per_thread;
    uint64_t const room = streamed_level ? static_cast<uint64_t>(streamed_records_per_table_byte *
                                                                 static_cast<double>(table_bytes))
                                         : table_bytes;
    return std::max<uint64_t>(room > reading ? room - reading : 0, uint64_t{256} << 20);
}

// Whether the default build's level goes straight into the index file (io::index_writer's
// rewritten header): a regular file, not stdout or a device.
bool streams_level(index_options const& o) {
    return io::index_writer::can_rewrite(o.output);
}

superkmer_plan plan_superkmer_build(unsigned bin_bits, unsigned window_bits, uint64_t table_bytes,
                                    uint64_t max_memory, reference_census const& census, unsigned k,
                                    unsigned minimizer_length, unsigned threads,
                                    bool streamed_level) {
    superkmer_plan plan;
    uint64_t const held = build_held_bytes(table_bytes, true, census, threads);
    plan.least = held + superkmer_bins::working_bytes(bin_bits, window_bits, census.kmer_positions,
                                                      threads, 0);
    uint64_t const spare = max_memory > plan.least ? max_memory - plan.least : 0;
    plan.buffer_bytes_per_thread = static_cast<size_t>(
        std::min<uint64_t>(max_spill_buffer_bytes_per_thread, spare / 4 / std::max(1u, threads)));
    uint64_t const working = superkmer_bins::working_bytes(
        bin_bits, window_bits, census.kmer_positions, threads, plan.buffer_bytes_per_thread);
    uint64_t const left = max_memory > held + working ? max_memory - held - working : 0;
    plan.memory_budget =
        std::min(left / 2, records_in_memory(table_bytes, census.longest_record, threads,
                                             plan.buffer_bytes_per_thread, streamed_level));
    plan.expected_record_bytes = superkmer_bins::expected_bytes_per_position(k, minimizer_length) *
                                 static_cast<double>(census.kmer_positions);
    return plan;
}

// References this large (k-mer positions guessed from the files' sizes) are counted and gathered
// in one read; smaller ones are counted first (a second read costs them little, and a table of
// fewer than ~2^17 slots has fewer windows than the gathering bins).
constexpr uint64_t gather_while_counting_from = uint64_t{1} << 23;
// The bins of a read that gathers before the table is sized: as few as the table the files' sizes
// allow fits (a bin's fingerprints relative to its first in 31 bits), at least 2^10: each thread
// writes to every bin's buffer, and 2^12 of them (TLB and cache misses on each record) made the
// reading ~10% slower than 2^10 at 500 Mbp. A table no larger than that guess fits them if its
// windows are no finer than the bins (from ~2^15 slots).
unsigned gathering_bin_bits(unsigned guessed_fingerprint_bits) noexcept {
    return std::clamp(guessed_fingerprint_bits > 31 ? guessed_fingerprint_bits - 31 : 0, 10u, 12u);
}

bool gathers_while_counting(index_options const& o) {
    return !o.plain_hash && locality_minimizer_length(o.k) != 0 &&
           estimate_kmers_from_sizes(read_paths(o)) >= gather_while_counting_from;
}

// The largest relative standard error of the one read's sampled count that sizes the table
// (a margin of 3 of them); beyond it every k-mer is counted again from the bins. Random sequence
// gives ~0.4%, the bench/scale repetitive reference 0.45%.
constexpr double most_sampled_count_error = 0.01;

// The one read of a large default build (issue 16: KMC reads its input once): the distinct k-mers
// are counted (from those of one minimizer in eight, core/sketch/group_sampled_count.hpp) while
// their super-k-mers go into `gathered`'s bins. The table is sized only at the end, so records stay
// in memory while they take less than the first level that the count so far calls for (less what
// the reading holds, and at least 256 MiB; the count only grows), which keeps the peak near the
// index's size as a build counted first does; the rest goes to the scratch file.
// `table_bytes_for(distinct)`: that level's size.
reference_census count_and_gather(index_options const& o, unsigned threads,
                                  progress_meter& progress, build_counts& counts,
                                  uint64_t max_memory,
                                  std::function<uint64_t(uint64_t)> const& table_bytes_for,
                                  unsigned guessed_fingerprint_bits,
                                  std::unique_ptr<superkmer_bins>& gathered) {
    unsigned const m = locality_minimizer_length(o.k);
    uint64_t const guessed = estimate_kmers_from_sizes(read_paths(o));
    uint64_t const process = build_overhead_bytes(0, threads);
    size_t const buffers = static_cast<size_t>(std::min<uint64_t>(
        max_spill_buffer_bytes_per_thread,
        (max_memory > process ? max_memory - process : 0) / 8 / std::max(1u, threads)));
    uint64_t const held = process + uint64_t{threads} * buffers;
    uint64_t const cap = max_memory > held ? (max_memory - held) / 2 : 0;
    // The scratch file's room, from the guess: what memory will not hold of the super-k-mers.
    double const expected =
        superkmer_bins::expected_bytes_per_position(o.k, m) * static_cast<double>(guessed);
    double const in_memory = static_cast<double>(std::min(cap, table_bytes_for(guessed)));
    if (expected > in_memory)
        require_scratch_room(temp_folder(o), static_cast<uint64_t>(expected - in_memory),
                             "its super-k-mers on random sequence, less what memory holds");
    sketch::group_sampled_count sketch;
    gathered = std::make_unique<superkmer_bins>(minimizer_scanner(o.k, m, o.seed),
                                                gathering_bin_bits(guessed_fingerprint_bits), cap,
                                                temp_folder(o), buffers, &sketch);
    superkmer_bins& bins = *gathered;
    bool const streamed = streams_level(o);
    auto const allow = [&] {
        uint64_t const table = table_bytes_for(static_cast<uint64_t>(sketch.estimate()));
        bins.allow_in_memory(std::min(
            cap, records_in_memory(table, counts.longest_record, threads, buffers, streamed)));
    };
    allow();
    progress.begin_phase("reading k-mers", static_cast<double>(guessed), "bp", true, true);
    // After every batch (an estimate is ~20 us; a batch is 4 MiB of sequence or one longer
    // record). Counting batches and allowing every 16th, as before, left a reference of 100 Mbp
    // records (a human genome's chromosomes) at the first allowance, 256 MiB, for its first 16
    // records: most of it went through the scratch file.
    read_reference_spans(
        o, threads, counts, progress, [&](std::string_view seq) { return bins.add(seq); },
        [&] {
            allow();
            return false;
        });
    if (sketch.standard_error() <= most_sampled_count_error) return census_of(sketch, counts);
    // The k-mers sit under too few minimizers for the sample (a tandem repeat: perhaps none of
    // them was sampled): counted again, every one, from the bins (a margin of 3 such errors, or the
    // positions, would make the table larger than the k-mers need).
    progress.begin_phase("counting every k-mer", 0, "", false);
    sketch::hyperloglog every;
    bins.count_every_kmer(every);
    return census_of(every, counts);
}

// The sorted build of a counted first level (app/index/sorted_build.hpp): the references are read
// once per pass, their fingerprints gathered into buckets (in memory, or in a scratch file in
// `temp_dir` with plan.spill), each pass's buckets sorted and handed to `sink` in order.
// With `marks` (the minimizer-local scheme), overloaded windows are marked and their
// fingerprints dropped; in one pass, `crowded(plain)` then reads the references again and
// gathers those windows' k-mers, hashed plainly, into `plain`, which is merged into the append
// (window_marks); in several passes the marks are complete only at the end, and the caller
// inserts those k-mers one by one. False if level 0 filled up first (an estimate far too low):
// the caller then inserts every k-mer the ordinary way. The first pass's counts are the build's.
struct sorted_build_result {
    bool complete = true;
    bool crowded_done = false;  // the crowded windows' k-mers went in with the append
};

template <typename Hashing, typename Crowded>
sorted_build_result sorted_build(qf::geometry g, sorted_sink const& sink, Hashing const& hashing,
                                 index_options const& o, unsigned threads, build_counts& counts,
                                 progress_meter& progress, reference_census const& census,
                                 sorted_build_plan plan, window_marks* marks, Crowded&& crowded) {
    auto const bases = static_cast<double>(census.bases);
    // One pass: mark, gather the crowded windows' k-mers, append both merged.
    auto append_marked = [&](auto& collected, auto make_plain) -> sorted_build_result {
        if (marks == nullptr) {
            progress.begin_phase("filling the table", 1, "", false);
            return {collected.append_to(sink, threads, &progress), false};
        }
        progress.begin_phase("finding crowded windows", 0, "", false);
        marks->now = window_marks::stage::mark;
        collected.sort_and_mark(threads);
        marks->now = window_marks::stage::drop;
        if (marks->marked.load() == 0) {
            progress.begin_phase("filling the table", 1, "", false);
            return {collected.append_to(sink, threads, &progress), true};
        }
        auto plain = make_plain();
        progress.begin_phase("reading the k-mers of crowded windows", bases, "bp", false);
        crowded(*plain);
        progress.begin_phase("filling the table", 1, "", false);
        return {collected.append_to(sink, threads, &progress, plain.get()), true};
    };
    if (plan.spill) {
        io::spill_file file(temp_folder(o));
        spilled_fingerprint_buckets collected(g, file, plan.spill_buffer_bytes_per_thread, marks);
        progress.begin_phase("reading k-mers", bases, "bp", true);
        insert_references(collected, hashing, o, threads, counts, progress, ~uint64_t{0});
        auto const result = append_marked(collected, [&] {
            return std::make_unique<spilled_fingerprint_buckets>(
                g, file, plan.spill_buffer_bytes_per_thread, nullptr);
        });
        counts.scratch_bytes = file.size();
        return result;
    }
    uint32_t const buckets = fingerprint_buckets::bucket_count(g);
    // Room for each thread's share of a bucket, +10%: uniform hashes fill buckets evenly.
    size_t const per_bucket = static_cast<size_t>(1.1 * static_cast<double>(census.kmer_positions) /
                                                  buckets / std::max(1u, threads));
    if (plan.passes == 1) {
        fingerprint_buckets collected(g, 0, buckets, per_bucket, marks);
        progress.begin_phase("reading k-mers", bases, "bp", true);
        insert_references(collected, hashing, o, threads, counts, progress, ~uint64_t{0});
        return append_marked(collected, [&] {
            return std::make_unique<fingerprint_buckets>(g, 0, buckets, 0, nullptr);
        });
    }
    bool complete = true;
    counts.passes = plan.passes;
    for (unsigned pass = 0; pass < plan.passes && complete; ++pass) {
        uint32_t const first = static_cast<uint32_t>(uint64_t{buckets} * pass / plan.passes);
        uint32_t const last = static_cast<uint32_t>(uint64_t{buckets} * (pass + 1) / plan.passes);
        fingerprint_buckets collected(g, first, last, per_bucket, marks);
        build_counts pass_counts;
        std::string const of_passes =
            " (pass " + std::to_string(pass + 1) + " of " + std::to_string(plan.passes) + ")";
        progress.begin_phase("reading k-mers" + of_passes, bases, "bp", pass == 0);
        insert_references(collected, hashing, o, threads, pass == 0 ? counts : pass_counts,
                          progress, ~uint64_t{0});
        progress.begin_phase("filling the table" + of_passes, 1, "", false);
        complete = collected.append_to(sink, threads, &progress);
    }
    return {complete, false};
}

// What a counted build made: usually its one level, written straight in the rank-select layout
// the index stores (no concurrent table is ever made); the concurrent filter when the build read
// the references in several passes, inserted k-mers one by one, or filled level 0 (an estimate far
// too low).
struct counted_build {
    std::optional<written_first_level> level;
    std::unique_ptr<qf::expandable_filter> filter;
    // The index file the level was streamed into as it was made (the default build to a regular
    // file): its header still needs the final counts (finish_header, index_writer::rewrite).
    std::unique_ptr<io::index_writer> streamed;
};

// The fields every index records of how it was made, from the build's results: the filter's
// parameters, its element count, the k-mers read (with those of earlier builds, for --append),
// the version, the command and the references (added to those already there).
void finish_header(io::index_header& header, index_options const& o,
                   std::vector<uint64_t> filter_params, uint64_t elements, uint64_t kmers_scanned) {
    header.filter_params = std::move(filter_params);
    header.elements = elements;
    header.kmers_scanned = kmers_scanned;
    header.qmer_version = QMER_VERSION;
    header.command = o.command_line;
    header.inputs.insert(header.inputs.end(), o.references.begin(), o.references.end());
}

// The default filter from files: the sorted build when the buckets fit, minimizer-local unless
// --plain-hash or k is too short (core/kmer/sequence_hashing.hpp); records the scheme in header.
// `make_filter` makes the empty concurrent filter of `options`, where one is needed.
template <typename MakeFilter>
counted_build build_counted_expandable(qf::expandable_options const& options,
                                       MakeFilter&& make_filter, io::index_header& header,
                                       index_options const& o, unsigned threads,
                                       build_counts& counts, progress_meter& progress,
                                       uint64_t max_memory, reference_census const& census,
                                       std::unique_ptr<superkmer_bins> gathered) {
    auto const first = qf::expandable_filter::plan_first_level(options);
    qf::geometry const g = first.g;
    written_first_level level{first, {}, 0};
    qf::rank_select::shape const shape = level.shape();
    uint64_t const written_bytes = shape.words() * sizeof(uint64_t);
    counted_build out;
    unsigned const m = locality_minimizer_length(o.k);
    unsigned const bits = locality_window_bits(g.canonical_slots());
    bool const local = !(o.plain_hash || m == 0 || bits == 0);
    // A new minimizer-local index carries the window bits its later levels read (scheme 2).
    hash_scheme_params const scheme{hash_scheme::minimizer_local_levels, m, bits, {}};
    auto use_filter = [&]() -> qf::expandable_filter& {
        out.filter = make_filter();
        if (out.filter->memory_bytes() > max_memory)
            memory_exceeded(out.filter->memory_bytes(), max_memory, o.max_memory);
        return *out.filter;
    };
    // The writer's path needs the scratch file's bins as a fallback (fingerprints of at most 44
    // bits), so that no limit it fits sends the build to the concurrent table: elsewhere the
    // concurrent table is made at once and filled as before.
    bool const direct = spilled_fingerprint_buckets::supports(g);
    // A minimizer-local level is built from super-k-mer bins wherever they hold it; from those the
    // counting read gathered where they fit the table, else by reading the references again
    // (and the counts start over: the reading below counts them).
    bool const superkmers = local && direct && superkmer_bins::supports(g, bits);
    if (gathered && !(superkmers && gathered->fits(g, bits))) {
        gathered.reset();
        counts.kmers.store(0);
        counts.records = counts.bases = counts.longest_record = 0;
    }
    if (!direct) use_filter();
    uint64_t const table_bytes = direct ? written_bytes : out.filter->memory_bytes();
    superkmer_plan const sk =
        superkmers ? plan_superkmer_build(gathered ? std::countr_zero(gathered->bin_count())
                                                   : superkmer_bins::bin_bits_of(g, bits),
                                          bits, table_bytes, max_memory, census, o.k, m, threads,
                                          streams_level(o))
                   : superkmer_plan{};
    // --max-memory is a promise (issue 16): a limit the build cannot keep is refused here, before
    // any k-mer is stored, with what it would need.
    if (uint64_t const least =
            superkmers ? sk.least : least_build_memory(g, table_bytes, direct, census, threads);
        least > max_memory)
        throw capacity_error(
            "building the index needs at least " + human_bytes(static_cast<double>(least)) +
            " (its table " + human_bytes(static_cast<double>(table_bytes)) +
            ", the rest for reading the references), more than the memory limit of " +
            human_bytes(static_cast<double>(max_memory)) +
            (o.max_memory.empty() ? " (80% of this machine's memory)" : "") +
            ": raise --max-memory, use a larger --fpr, or a machine with more memory");

    // One pass (in memory or through a scratch file): the writer. Several passes, or none: the
    // concurrent table, which the crowded windows' k-mers are then inserted into one by one.
    sorted_build_plan plan =
        superkmers ? sorted_build_plan{1, false, 0}
                   : plan_sorted_build(g, table_bytes, direct, max_memory, census, threads);
    std::optional<qf::rank_select_writer> writer;
    auto keep = [&](std::span<uint64_t const> words) {
        if (out.streamed) return out.streamed->put(words);
        if (level.words.empty()) level.words.reserve(shape.words());
        level.words.insert(level.words.end(), words.begin(), words.end());
    };
    qf::locally_locked_filter::sorted_append_state state;
    sorted_sink sink;
    if (direct && plan.passes == 1) {
        writer.emplace(shape, first.room);
        sink = [&](std::span<uint64_t const> fps) { return writer->append(fps, keep); };
    } else {
        // Planned for the writer: plan again for the concurrent table, which is filled while the
        // references are read.
        qf::expandable_filter& f = out.filter ? *out.filter : use_filter();
        if (direct)
            plan = plan_sorted_build(g, f.memory_bytes(), false, max_memory, census, threads);
        sink = [&](std::span<uint64_t const> fps) { return f.append_sorted(fps, state); };
    }
    if (plan.spill)
        require_scratch_room(temp_folder(o),
                             spilled_fingerprint_buckets::least_file_bytes(census.kmer_positions),
                             "at least: 4 bytes a k-mer position");
    // k-mers to insert one by one need the concurrent filter: it takes what the writer wrote
    // (for a moment both are in memory; only when level 0 filled up, about 1 build in 1000).
    auto filter = [&]() -> qf::expandable_filter& {
        if (out.filter) return *out.filter;
        writer->finish(keep);
        if (out.streamed) {  // the words back from the file, which is given up
            out.streamed->end_section();
            level.words = out.streamed->words_of(1);
            out.streamed.reset();
        }
        qf::rank_select_table const written(shape, level.words, writer->size());
        qf::expandable_filter& f = use_filter();
        refill_first_level(f, written);
        level.words = {};
        writer.reset();
        return f;
    };
    auto done = [&]() -> counted_build {
        if (writer) {
            level.elements = writer->finish(keep);
            if (out.streamed) out.streamed->end_section();
            out.level = std::move(level);
        }
        return std::move(out);
    };

    auto const bases = static_cast<double>(census.bases);
    plain_kmer_hashing const plain(o.k, o.seed);
    if (plan.passes == 0 || !local) {
        if (plan.passes == 0 || !sorted_build(g, sink, plain, o, threads, counts, progress, census,
                                              plan, nullptr, [](auto&) {})
                                     .complete) {
            build_counts again;
            progress.begin_phase("inserting k-mers", bases, "bp", plan.passes == 0);
            insert_references(filter(), plain, o, threads, plan.passes == 0 ? counts : again,
                              progress, max_memory);
        }
        return done();
    }
    // The filter its inserts go to reads them as the header's scheme says (the levels they may
    // push: scheme 2's window bits). Only here: the plain branch above writes a plain header, and
    // the filter's levels must then read plain hashes unchanged.
    auto local_filter = [&]() -> qf::expandable_filter& {
        qf::expandable_filter& f = filter();
        f.set_level_windows(header.hash.level_windows());
        return f;
    };
    unsigned const extra = scheme.extra_window_bits();
    if (superkmers) {
        local_kmer_hashing const unmarked(o.k, o.seed, m, bits, {}, extra);
        if (gathered) {
            gathered->set_table(unmarked, g);
        } else {
            if (sk.expected_record_bytes > static_cast<double>(sk.memory_budget))
                require_scratch_room(
                    temp_folder(o),
                    static_cast<uint64_t>(sk.expected_record_bytes) - sk.memory_budget,
                    "its super-k-mers on random sequence, less what memory holds");
            gathered = std::make_unique<superkmer_bins>(unmarked, g, sk.memory_budget,
                                                        temp_folder(o), sk.buffer_bytes_per_thread);
            progress.begin_phase("reading k-mers", bases, "bp", true);
            read_reference_spans(
                o, threads, counts, progress,
                [&](std::string_view seq) { return gathered->add(seq); }, [] { return false; });
        }
        superkmer_bins& bins = *gathered;
        overloaded_windows marks;
        marks.bits.assign(((uint64_t{1} << bits) + 63) / 64, 0);
        progress.begin_phase("finding crowded windows", 0, "", false);
        bins.mark(marks, overload_threshold(g.canonical_slots(), bits));
        header.hash = scheme;
        header.hash.overloaded = marks.bits;
        // The level goes straight into the index file as its blocks are made, where the file can
        // have its header's counts written last: no copy of the level in memory (the size of the
        // index, in fresh pages) and no pass over it after the fill (README, issue 16's section).
        if (writer && streams_level(o)) {
            io::index_header provisional = header;
            auto const arrays = level.arrays();
            finish_header(provisional, o, header_params(arrays), 0, counts.kmers.load());
            out.streamed = std::make_unique<io::index_writer>(o.output, provisional,
                                                              io::header_counts::rewritten_later);
            out.streamed->add_section(arrays[0].params, arrays[0].words);
            out.streamed->begin_section(arrays[1].params, shape.words());
        }
        progress.begin_phase("filling the table", 1, "", false);
        bool const complete = bins.append_to(sink, marks, threads, &progress);
        counts.scratch_bytes = bins.file_bytes();
        gathered.reset();  // the bins' memory, before a fallback's filter takes its own
        if (!complete) {   // everything again, the ordinary way (inserts of stored: no-ops)
            local_kmer_hashing const hashing(o.k, o.seed, m, bits, header.hash.overloaded, extra);
            build_counts again;
            progress.begin_phase("inserting k-mers", bases, "bp", false);
            insert_references(local_filter(), hashing, o, threads, again, progress, max_memory);
        }
        return done();
    }
    window_marks marks(g, bits, overload_threshold(g.canonical_slots(), bits));
    // The k-mers of the windows marked so far, hashed plainly, into a sorted collection.
    auto crowded = [&](auto& plain_collection) {
        local_kmer_hashing const marked(o.k, o.seed, m, bits, marks.bits);
        build_counts again;
        insert_references(plain_collection, overloaded_kmers_hashing{marked}, o, threads, again,
                          progress, ~uint64_t{0});
    };
    auto const result = sorted_build(g, sink, local_kmer_hashing(o.k, o.seed, m, bits, {}, extra),
                                     o, threads, counts, progress, census, plan, &marks, crowded);
    header.hash = scheme;
    header.hash.overloaded = std::move(marks.bits);
    local_kmer_hashing const hashing(o.k, o.seed, m, bits, header.hash.overloaded, extra);
    build_counts again;
    if (!result.complete) {  // everything again, the ordinary way (inserts of stored: no-ops)
        progress.begin_phase("inserting k-mers", bases, "bp", false);
        insert_references(local_filter(), hashing, o, threads, again, progress, max_memory);
    } else if (!result.crowded_done && marks.marked.load() != 0) {
        // Several passes: what the marked windows dropped, hashed plainly, one by one.
        progress.begin_phase("reading the k-mers of crowded windows", bases, "bp", false);
        insert_references(local_filter(), overloaded_kmers_hashing{hashing}, o, threads, again,
                          progress, max_memory);
    }
    return done();
}

// The build's last line: k-mers, distinct k-mers, the index's size (the file's; `memory_bytes`
// where it cannot be read) and what the memory limit made the build do.
void report_built(index_options const& o, progress_meter& progress, build_counts const& counts,
                  uint64_t elements, double memory_bytes, char const* how = "") {
    std::error_code size_error;
    auto const file_bytes = static_cast<double>(std::filesystem::file_size(o.output, size_error));
    double const bytes = !size_error ? file_bytes : memory_bytes;
    char extra[1024];
    // How the memory limit shaped the build, when it did: a user who sees extra passes may give
    // a --temp-dir with room, or more memory.
    std::string scratch;
    if (counts.scratch_bytes != 0)
        scratch.append("; ")
            .append(human_bytes(static_cast<double>(counts.scratch_bytes)))
            .append(" of k-mers went through a scratch file in '")
            .append(temp_folder(o))
            .append("'");
    if (counts.passes > 1)
        scratch.append("; the references were read in ")
            .append(std::to_string(counts.passes))
            .append(" passes to keep to the memory limit");
    std::snprintf(extra, sizeof extra, "%s k-mers, %s distinct, index %s %s (%.2f bits/k-mer)%s%s",
                  human_count(static_cast<double>(counts.kmers.load()), "").c_str(),
                  human_count(static_cast<double>(elements), "").c_str(),
                  human_bytes(bytes).c_str(), size_error ? "in memory" : "on disk",
                  elements ? 8.0 * bytes / static_cast<double>(elements) : 0.0, scratch.c_str(),
                  how);
    progress.finish(extra);
}

// A grown index answers each absent k-mer from every level (README, "Limitations"): say so when
// an index of 3 levels or more is written, and what gives one level again.
void note_levels(index_options const& o, size_t levels) {
    if (levels >= 3)
        std::fprintf(stderr,
                     "qmer: note: '%s' has %zu levels: a query looks up each absent k-mer in all "
                     "%zu, several times the cost of a one-level index; one 'qmer index' run over "
                     "all the references builds one level\n",
                     o.output.c_str(), levels, levels);
}

// --append by a sorted merge (issue 16: an append should not insert k-mer by k-mer, ~95 ns each
// and far more into a minimizer-local index, whose windows crowd clusters): the hashes of the new
// k-mers that no level holds are gathered, sorted and made distinct, and written as one
// sequential pass per level (rank_select::rank_select_writer): the top level merged with its
// stored fingerprints (at the smallest size it passes through that holds them, or its final
// size, filled to its room), and where it has no room for them all, one new level holding the
// rest: at the smallest size an ordinary pushed level passes through that holds it, or past its
// final size sized for it (expandable_filter::plan_sized_level: the slots it needs at --fill,
// the remainder bits of the level's place in the stack); the levels below the top copied word for
// word. Taken when the index is the default filter in the rank-select layout without cascading
// inserts, the references can be read (files) and their hashes fit in memory. Otherwise, or when
// a level does not fit its slots, it returns nothing and writes nothing, and the caller appends
// k-mer by k-mer as before.
//
// One sized level rather than the levels the filter would push one by one (level i with 2^i
// times level 0's slots and R0 + i remainder bits): an index grown 64x had 7 levels, 22 bits per
// k-mer, and each absent k-mer was looked up in all 7 (0.31x a one-level index's queries,
// bench/append/README.md); with one sized level it has 2, about the bits per k-mer of a
// one-level index. Theorem 2's bound holds as for the pushed levels (core/qf/expandable.hpp,
// "Sized levels"). Which new k-mer goes to the top and which to the new level does not matter to
// a query (it looks in every level); each level's k-mers must only be spread over its whole
// table: each goes where a mix of its hash ranks it, the lowest ranks to the top.
//
// Hashes, not fingerprints, are gathered: the new level's fingerprint space (its slots times
// 2^(R0 + i)) is no power-of-two multiple of the top's, so one level's fingerprint cannot be had
// from the other's. The index it writes holds the same k-mers as the inserts' (up to which k-mers
// share a fingerprint with one already stored: both store a fingerprint once per level), in
// fewer levels, and loads, queries and appends alike. Returns the elements of the new index and
// the levels it added, or nothing.
struct merge_did_not_fit {};

// The gathering pass's filter: k-mers that some level holds already are left out (an insert
// checks them too), the rest are kept, each reading thread's in a vector of its own. So no
// gathered hash has a fingerprint the top level stores (contains() compares exactly that
// fingerprint), and the merged top level holds its own elements plus the gathered ones,
// distinct: a size known before the level is written.
struct new_kmer_hashes {
    tbb::enumerable_thread_specific<std::vector<uint64_t>>& kept;
    qf::rank_select_levels const& levels;
    insert_result insert(uint64_t h) {
        if (levels.contains(h)) return insert_result::already_present;
        kept.local().push_back(h);
        return insert_result::inserted;
    }
    void prefetch(uint64_t h) const noexcept { levels.prefetch(h); }
    size_t memory_bytes() const noexcept { return 0; }  // planned up front
    size_t size() const noexcept { return 0; }
};

// A level as the sorted append writes it: its shape, its room, and its section's parameters.
struct planned_level {
    qf::expandable_filter::level_table table;
    uint64_t room = 0;      // the elements it takes before it would grow or push the next level
    uint64_t elements = 0;  // what it will hold once written

    qf::rank_select::shape shape() const noexcept {
        return {table.g.canonical_slots(), table.total_slots, table.g.remainder_bits};
    }
    std::vector<uint64_t> params() const {
        return {table.g.quotient_bits,     table.g.remainder_bits,     table.total_slots, elements,
                table.g.canonical_slots(), qf::rank_select::layout_tag};
    }
};

// The rank a gathered hash's level is chosen by: a bijective mix of it (the k-mer hash's
// finalizer, core/kmer/hash.hpp; a minimizer-local hash's top bits are its window's, shared with
// its neighbours), so that the k-mers each level takes are spread over its table like the ones
// before them.
uint64_t level_rank(uint64_t h) noexcept {
    return kmer_hasher{}(h);
}

struct sorted_append {
    uint64_t elements = 0;      // of the whole index
    unsigned added_levels = 0;  // pushed by the append
};

std::optional<sorted_append> append_by_merge(index_options const& o, io::index_file const& existing,
                                             unsigned threads, build_counts& counts,
                                             progress_meter& progress, uint64_t max_memory) {
    using stack = qf::expandable_filter;
    io::index_header const& header = existing.header();
    if (header.filter != "expandable" || !all_rereadable(read_paths(o))) return std::nullopt;
    std::optional<qf::rank_select_levels> levels = rank_select_levels_of(existing);
    if (!levels) return std::nullopt;
    auto const& sections = existing.sections();
    auto const& stack_params = sections[0].params;
    if (stack_params[4] != 0) return std::nullopt;  // cascading fills lower levels: not this way
    uint64_t const m0 = stack_params.size() == 9 ? stack_params[8] : uint64_t{1} << stack_params[6];
    auto const r0 = static_cast<unsigned>(stack_params[7]);
    double const grow_at = std::bit_cast<double>(stack_params[3]);
    auto room_of = [grow_at](qf::geometry g) {
        return static_cast<uint64_t>(grow_at * static_cast<double>(g.canonical_slots()));
    };
    auto const top_index = static_cast<unsigned>(levels->levels() - 1);
    qf::rank_select_table const& top = levels->level(top_index);
    auto const top_final = stack::plan_level(m0, r0, top_index, 0);
    if (!top_final || top.geometry().remainder_bits < top_final->g.remainder_bits)
        return std::nullopt;  // not a stack this code knows how to extend
    // The top's shapes, from the one it has now: its own where it is sized (above its final
    // size, which it never leaves); else its final size's, `early` doublings short of it.
    bool const top_sized = top.capacity() > top_final->g.canonical_slots();
    unsigned top_early = 0;
    for (unsigned early = 1; !top_sized && early <= stack::level_growths; ++early) {
        auto const smaller = stack::plan_level(m0, r0, top_index, early);
        if (!smaller || smaller->g.canonical_slots() < top.capacity()) break;
        top_early = early;
    }
    auto top_at = [&](unsigned early) -> qf::expandable_filter::level_table {
        if (top_sized)
            return {top.geometry(), static_cast<size_t>(sections[top_index + 1].params[2])};
        return *stack::plan_level(m0, r0, top_index, early);
    };
    if (auto const now = top_at(top_early); now.g.canonical_slots() != top.capacity() ||
                                            now.g.remainder_bits != top.geometry().remainder_bits)
        return std::nullopt;

    // In memory only, beside the mapped index, within half the limit: the gathered hashes (8
    // bytes a k-mer position, from the files' sizes; 16 at most while the reading threads'
    // vectors are joined), then the distinct ones with a byte for their level and the levels'
    // fingerprints (8 more each; their ranks, 8 bytes each, come and go before).
    uint64_t const positions = estimate_kmers_from_sizes(read_paths(o));
    if (17 * positions + existing.file_bytes() > max_memory / 2) return std::nullopt;

    std::vector<uint64_t> fresh;  // the new k-mers' hashes, sorted, without repeats
    {
        // Each thread's vector reserved for its share of the positions (address space: pages
        // are taken only as hashes are kept), so none is reallocated while it fills, holding
        // its old and new arrays at once, in what the memory check above counts.
        size_t const share =
            static_cast<size_t>(1.1 * static_cast<double>(positions) / std::max(1u, threads));
        tbb::enumerable_thread_specific<std::vector<uint64_t>> kept([share] {
            std::vector<uint64_t> v;
            v.reserve(share);
            return v;
        });
        new_kmer_hashes gather{kept, *levels};
        progress.begin_phase("reading k-mers", static_cast<double>(positions), "bp", true);
        with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
            insert_references(gather, hashing, o, threads, counts, progress, ~uint64_t{0});
        });
        progress.begin_phase("sorting k-mers", 1, "", false);
        size_t total = 0;
        for (auto const& v : kept) total += v.size();
        fresh.reserve(total);
        for (auto& v : kept) {
            fresh.insert(fresh.end(), v.begin(), v.end());
            std::vector<uint64_t>().swap(v);
        }
        tbb::parallel_sort(fresh.begin(), fresh.end());
        fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    }

    // The levels to write: the top at the smallest size it passes through that holds its
    // elements and the new ones, or at its final size, full, and then one more level for the
    // rest.
    std::vector<planned_level> plan;
    std::vector<uint64_t> takes;  // of the new k-mers, by level of `plan`
    {
        uint64_t const left = fresh.size();
        unsigned early = top_early;
        while (early > 0 && top.size() + left > room_of(top_at(early).g)) --early;
        planned_level l;
        l.table = top_at(early);
        l.room = room_of(l.table.g);
        plan.push_back(l);
        takes.push_back(std::min(left, l.room - std::min(l.room, top.size())));
        if (takes[0] < left) {
            // The rest: in the smallest size an ordinary pushed level passes through whose room
            // holds it (it grows from there as the inserts' would), else in a level sized for
            // it at --fill (never fuller than the stack's delta_grow: Theorem 2's bound).
            uint64_t const rest = left - takes[0];
            std::optional<qf::expandable_filter::level_table> shape;
            for (unsigned e = stack::level_growths + 1; !shape && e-- > 0;)
                if (auto const t = stack::plan_level(m0, r0, top_index + 1, e);
                    t && room_of(t->g) >= rest)
                    shape = t;
            if (!shape)
                shape =
                    stack::plan_sized_level(m0, r0, top_index + 1, rest, std::min(o.fill, grow_at));
            if (!shape) return std::nullopt;
            planned_level next;
            next.table = *shape;
            next.room = room_of(shape->g);
            plan.push_back(next);
            takes.push_back(rest);
        }
    }
    // Each new hash's level (an index into plan): the lowest ranks go to the top.
    std::vector<uint8_t> level_of(fresh.size(), 0);
    if (plan.size() > 1) {
        uint64_t last_rank = 0;  // the highest rank the top takes
        if (takes[0] != 0) {
            std::vector<uint64_t> ranks(fresh.size());
            for (size_t i = 0; i < fresh.size(); ++i) ranks[i] = level_rank(fresh[i]);
            auto const nth = ranks.begin() + static_cast<ptrdiff_t>(takes[0] - 1);
            std::nth_element(ranks.begin(), nth, ranks.end());
            last_rank = *nth;
        }
        for (size_t i = 0; i < fresh.size(); ++i)
            level_of[i] = takes[0] == 0 || level_rank(fresh[i]) > last_rank;
    }
    // Each level's new fingerprints, sorted and distinct (two hashes may share a fingerprint); a
    // level's elements, its own plus these, are then known before the file's header is written.
    // Each level reads the hashes through the window map of its final size
    // (core/qf/level_windows.hpp), as the filter and the queries do; a map other than the
    // identity reorders them, so each level's fingerprints are sorted after.
    std::vector<qf::level_window_map> maps;
    for (size_t j = 0; j < plan.size(); ++j) {
        auto const level = static_cast<unsigned>(top_index + j);
        maps.push_back(header.hash.level_windows().of(
            stack::final_slots(m0, level, plan[j].table.g.canonical_slots())));
    }
    std::vector<std::vector<uint64_t>> adds(plan.size());
    for (size_t j = 0; j < plan.size(); ++j) adds[j].reserve(takes[j]);
    for (size_t i = 0; i < fresh.size(); ++i) {
        size_t const j = level_of[i];
        adds[j].push_back(plan[j].table.g.fingerprint(maps[j].apply(fresh[i])));
    }
    fresh = {};
    level_of = {};
    for (size_t j = 0; j < plan.size(); ++j) {
        if (maps[j].moved != 0) tbb::parallel_sort(adds[j].begin(), adds[j].end());
        adds[j].erase(std::unique(adds[j].begin(), adds[j].end()), adds[j].end());
        plan[j].elements = (j == 0 ? top.size() : 0) + adds[j].size();
    }

    // The new index: the header and the sections as they were, but for the top level and the
    // level after it; each of those written while the file is, its fingerprints merged in
    // order, never held whole in memory. Ctrl-C is seen between chunks: the writer, destroyed
    // without commit(), removes its temporary file and the index stays as it was.
    io::index_header out = header;
    std::vector<std::vector<uint64_t>> params;
    for (size_t j = 0; j <= top_index; ++j) params.push_back(sections[j].params);
    params[0][5] = top_index + plan.size();
    for (auto const& l : plan) params.push_back(l.params());
    out.filter_params.clear();
    for (auto const& p : params)
        out.filter_params.insert(out.filter_params.end(), p.begin(), p.end());
    uint64_t elements = 0;
    for (size_t j = 0; j < top_index; ++j) elements += levels->level(j).size();
    for (auto const& l : plan) elements += l.elements;
    out.elements = elements;
    out.kmers_scanned = header.kmers_scanned + counts.kmers.load();
    out.qmer_version = QMER_VERSION;
    out.command = o.command_line;
    out.inputs.insert(out.inputs.end(), o.references.begin(), o.references.end());
    progress.begin_phase(plan.size() > 1 ? "writing the top level and a new level"
                                         : "merging into the top level and writing the index",
                         0, "", false);
    // Level plan[j], from `stored` (the top's own fingerprints, or none) merged with its share.
    auto write_level = [&](size_t j, qf::rank_select_table const* stored) {
        return [&, j, stored](io::index_writer::word_sink const& emit) {
            planned_level const& l = plan[j];
            // The room, or what the top holds already where inserts that raced with a push
            // took it a little past its room (delta_grow + 1/32 at most, Theorem 2's bound).
            qf::rank_select_writer writer(l.shape(), std::max(l.room, l.elements));
            std::vector<uint64_t> chunk;
            chunk.reserve(size_t{1} << 16);
            auto flush = [&] {
                throw_if_interrupted();
                if (writer.append(chunk, emit) != chunk.size()) throw merge_did_not_fit{};
                chunk.clear();
            };
            auto put = [&](uint64_t fp) {
                chunk.push_back(fp);
                if (chunk.size() == chunk.capacity()) flush();
            };
            std::vector<uint64_t> const& mine = adds[j];
            size_t next = 0;
            if (stored)
                stored->for_each_fingerprint([&](uint64_t fp) {
                    for (; next < mine.size() && mine[next] < fp; ++next) put(mine[next]);
                    put(fp);
                });
            for (; next < mine.size(); ++next) put(mine[next]);
            flush();
            if (writer.finish(emit) != l.elements) throw merge_did_not_fit{};
        };
    };
    try {
        // Destroyed without commit() on a throw: the temporary file goes, the index stays.
        io::index_writer writer(o.output, out);
        for (size_t j = 0; j < top_index + 1; ++j) writer.add_section(params[j], sections[j].words);
        for (size_t j = 0; j < plan.size(); ++j)
            writer.add_section(params[top_index + 1 + j], plan[j].shape().words(),
                               write_level(j, j == 0 ? &top : nullptr));
        throw_if_interrupted();
        writer.commit();
    } catch (merge_did_not_fit const&) {
        return std::nullopt;
    } catch (std::invalid_argument const&) {
        return std::nullopt;  // a run the layout cannot hold, or a damaged table: the other way
    }
    note_levels(o, top_index + plan.size());
    return sorted_append{elements, static_cast<unsigned>(plan.size() - 1)};
}

template <filter_kind Kind>
void build_index(index_options const& given, unsigned threads) {
    using codec = filter_codec<Kind>;
    using filter_t = typename codec::filter_type;
    index_options o = given;  // o.read_from may name scratch copies of stdin or pipes
    std::vector<std::unique_ptr<io::spill_file>> copies;
    io::check_output_folder(o.output);  // fail before the work, not after it
    if (!o.temp_dir.empty()) io::spill_file probe(o.temp_dir);  // likewise
    progress_meter progress(o.append ? "qmer index --append" : "qmer index", o.quiet, o.timings);

    std::unique_ptr<filter_t> filter;
    std::function<std::unique_ptr<filter_t>()> make_filter;
    std::optional<qf::expandable_options> counted_options;  // a counted expandable build's
    std::optional<written_first_level> level;               // what it wrote, when it made no filter
    std::unique_ptr<io::index_writer> streamed;             // where it wrote it, if already there
    io::index_header header;
    uint64_t previous_kmers = 0;
    reference_census census;  // from the distinct-count pass, when there is one
    bool measured = false;
    build_counts counts;
    // The super-k-mers a counting read gathered (large default builds: one read, not two).
    std::unique_ptr<superkmer_bins> gathered;
    if (o.append) {
        io::index_file existing(o.output);
        header = existing.header();
        if (header.filter != o.filter)
            throw usage_error("'" + o.output + "' holds a " + header.filter + " index; --filter " +
                              o.filter + " cannot append to it");
        if (header.k != o.k)
            throw usage_error("'" + o.output + "' was built with k = " + std::to_string(header.k) +
                              "; append with -k " + std::to_string(header.k));
        // Another seed would hash the new k-mers where no query of this index looks for them.
        if (header.hash_seed != o.seed)
            throw usage_error("'" + o.output + "' was built with --seed " +
                              std::to_string(header.hash_seed) + "; append with --seed " +
                              std::to_string(header.hash_seed));
        if (o.plain_hash && header.hash.scheme != hash_scheme::plain)
            throw usage_error("'" + o.output +
                              "' is minimizer-local: its new k-mers must be hashed the same way, "
                              "drop --plain-hash");
        if constexpr (Kind == filter_kind::expandable) {
            // The sorted append reads the references twice if it does not fit (then the inserts
            // read them), so stdin and pipes are copied first, as for a build.
            copy_what_cannot_be_read_twice(o, copies, progress);
            build_counts merged;
            if (auto const done = append_by_merge(o, existing, threads, merged, progress,
                                                  memory_limit(o.max_memory))) {
                std::string const how =
                    done->added_levels == 0
                        ? "; the new k-mers were merged into the top level in one pass"
                        : "; the new k-mers were merged into the top level and " +
                              std::to_string(done->added_levels) + " new level" +
                              (done->added_levels == 1 ? "" : "s") + " in one pass";
                report_built(o, progress, merged, done->elements, 0, how.c_str());
                return;
            }
        }
        filter = codec::load(existing);
        if constexpr (Kind == filter_kind::expandable)
            filter->set_level_windows(header.hash.level_windows());
        previous_kmers = header.kmers_scanned;
    } else {
        uint64_t expected = o.expected;
        // Without --expected the references are counted first, so read twice, and so are the
        // default filter's with --expected (its sorted build, below). Stdin and pipes can be read
        // only once: they are copied into scratch files first (their size on disk, compressed as
        // they come) and built from like files, instead of growing a filter k-mer by k-mer
        // (issue 16: ~95 ns a k-mer) or, for fixed filters, being refused.
        bool const reads_twice = expected == 0 || Kind == filter_kind::expandable;
        if (reads_twice) copy_what_cannot_be_read_twice(o, copies, progress);
        // The count; for the default filter of large references, in the same read as the
        // gathering of their super-k-mers (count_and_gather).
        auto const count = [&] {
            if constexpr (Kind == filter_kind::expandable) {
                if (gathers_while_counting(o)) {
                    // The first level a distinct count calls for (as planned below).
                    auto const first_level_for = [&](uint64_t distinct) {
                        filter_plan const p{.expected = std::max<uint64_t>(distinct, 1),
                                            .fpr = o.fpr,
                                            .cascading = o.cascading,
                                            .first_level_fill = o.fill,
                                            .expected_measured = true};
                        return written_first_level{
                            qf::expandable_filter::plan_first_level(codec::options(p)), {}, 0};
                    };
                    auto const table_bytes_for = [&](uint64_t distinct) -> uint64_t {
                        try {
                            return first_level_for(distinct).shape().words() * sizeof(uint64_t);
                        } catch (std::invalid_argument const&) {
                            return 0;  // no such table: refused below, with the count
                        }
                    };
                    unsigned fingerprint_bits = 64;  // no such table: bins that fit none
                    try {
                        fingerprint_bits = first_level_for(estimate_kmers_from_sizes(read_paths(o)))
                                               .plan.g.fingerprint_bits();
                    } catch (std::invalid_argument const&) {
                    }
                    return count_and_gather(o, threads, progress, counts,
                                            memory_limit(o.max_memory), table_bytes_for,
                                            fingerprint_bits, gathered);
                }
            }
            return count_references(o, threads, progress);
        };
        if (expected == 0 && codec::grows) {
            measured = true;
            census = count();
            expected = census.distinct_estimate;
        } else if (expected == 0) {
            expected = count_kmer_positions(o, kmer_scanner(o.k));
        } else if (Kind == filter_kind::expandable && all_rereadable(read_paths(o))) {
            // --expected for the default filter from files (issue 16: no ~95 ns insert per k-mer
            // at host size): the references are counted all the same, and the sorted build fills
            // a first level sized from --expected where it holds them (room left for later
            // --append runs), and from the count where it does not. An --expected below the count
            // used to mean inserts into a first level of 1/8 of it and the levels it grew: 97.6
            // Mbp at --expected 500000 took 74 s and 7 levels (2 s and one level counted), 21.2
            // bits per k-mer against 14.7, and each query paid every level for its absent k-mers.
            census = count();
            measured = true;
            if (census.distinct_estimate > expected) {
                std::fprintf(stderr,
                             "qmer: note: --expected %llu is below the references' ~%llu distinct "
                             "k-mers: the index is made for the count\n",
                             static_cast<unsigned long long>(expected),
                             static_cast<unsigned long long>(census.distinct_estimate));
                expected = census.distinct_estimate;
            } else if (census.distinct_estimate < expected / 2)
                std::fprintf(stderr,
                             "qmer: note: --expected %llu is more than twice the references' ~%llu "
                             "distinct k-mers: the first level is made for --expected (room for "
                             "--append runs); without --expected it is made for the count, the "
                             "smallest index\n",
                             static_cast<unsigned long long>(expected),
                             static_cast<unsigned long long>(census.distinct_estimate));
        }
        // No filter takes fewer than log2(1 / fpr) bits per k-mer (Bloom filters 1.44x that, the
        // quotient filters 3 status bits more); the expandable filter starts a level it did not
        // count at 1/8 of its size. Checked before the table is allocated (and zeroed).
        double const least_bytes = static_cast<double>(expected) * std::log2(1 / o.fpr) / 8 /
                                   (Kind == filter_kind::expandable && !measured ? 8 : 1);
        if (uint64_t const limit = memory_limit(o.max_memory);
            least_bytes > static_cast<double>(limit))
            memory_exceeded(static_cast<uint64_t>(least_bytes), limit, o.max_memory);
        filter_plan const plan{.expected = expected,
                               .fpr = o.fpr,
                               .cascading = o.cascading,
                               .first_level_fill = o.fill,
                               .expected_measured = measured};
        make_filter = [plan] { return codec::create(plan); };
        try {
            // A counted expandable filter is made only if its build needs one (see
            // build_counted_expandable); its plan is checked here all the same.
            bool made_later = false;
            if constexpr (Kind == filter_kind::expandable) {
                if (measured) {
                    counted_options = codec::options(plan);
                    (void)qf::expandable_filter::plan_first_level(*counted_options);
                    made_later = true;
                }
            }
            if (!made_later) filter = make_filter();
        } catch (std::invalid_argument const& e) {
            // A geometry the filter has no room for (its quotient or remainder bits).
            throw usage_error("--filter " + o.filter + " cannot be planned for " +
                              std::to_string(expected) + " k-mers at --fpr " +
                              std::to_string(o.fpr) + ": " + e.what());
        } catch (std::bad_alloc const&) {
            // Within --max-memory (raised by hand) but more than the machine gives.
            throw capacity_error("the index for " + std::to_string(expected) +
                                 " k-mers needs more memory than this machine gives: lower "
                                 "--expected, use a larger --fpr, or a machine with more memory");
        }
        header.k = o.k;
        header.hash_seed = o.seed;
        header.filter = o.filter;
        header.fpr = o.fpr;
        header.expected = o.expected;
    }

    uint64_t const max_memory = memory_limit(o.max_memory);
    if (filter && filter->memory_bytes() > max_memory)
        memory_exceeded(filter->memory_bytes(), max_memory, o.max_memory);
    if constexpr (Kind == filter_kind::expandable) {
        if (measured) {
            auto built =
                build_counted_expandable(*counted_options, make_filter, header, o, threads, counts,
                                         progress, max_memory, census, std::move(gathered));
            filter = std::move(built.filter);
            level = std::move(built.level);
            streamed = std::move(built.streamed);
        } else {
            with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
                insert_references(*filter, hashing, o, threads, counts, progress, max_memory);
            });
        }
    } else {
        with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
            insert_references(*filter, hashing, o, threads, counts, progress, max_memory);
        });
    }

    uint64_t elements = 0;
    std::vector<filter_array> arrays;
    if (level) {
        elements = level->elements;
        arrays = level->arrays();
    } else {
        // Tables that growing left behind are no longer read by anyone: free them first.
        if constexpr (requires { filter->release_retired_tables(); })
            filter->release_retired_tables();
        elements = filter->size();
    }
    finish_header(header, o, level ? header_params(arrays) : codec::params(*filter), elements,
                  previous_kmers + counts.kmers.load());
    progress.begin_phase("writing the index", 0, "", false);
    if (streamed) {
        std::vector<std::vector<uint64_t>> params;
        for (auto const& a : arrays) params.push_back(a.params);
        streamed->rewrite(header, params);
        throw_if_interrupted();
        streamed->commit();
    } else {
        io::index_writer writer(o.output, header);
        if (level)
            level->save(writer);
        else
            codec::save(*filter, writer);
        throw_if_interrupted();
        writer.commit();
    }
    // What the user keeps: the file (the saved layout can be smaller than the filter in memory).
    report_built(o, progress, counts, elements,
                 level ? static_cast<double>(level->shape().words() * sizeof(uint64_t))
                       : static_cast<double>(filter->memory_bytes()));
    if constexpr (requires { filter->levels(); }) note_levels(o, filter ? filter->levels() : 1);
}

}  // namespace

void run_index(index_options const& given) {
    index_options o = given;
    check_index_parameters(o.k, o.fpr, o.fill, o.expected);  // core/bounds.hpp
    filter_kind const kind = parse_filter_kind(o.filter);
    // A filter whose false-positive rate is fixed (cuckoo) gets its best one when the user named
    // none; a --fpr it cannot honour stays an error (its codec says so).
    if (double const best = filter_kind_best_fpr(kind); !o.append && !o.fpr_given && o.fpr < best) {
        std::fprintf(stderr,
                     "qmer: note: --filter %s offers a false-positive rate of %g at best, above "
                     "the default --fpr %g: using --fpr %g\n",
                     o.filter.c_str(), best, o.fpr, best);
        o.fpr = best;
    }
    (void)memory_limit(o.max_memory);  // a bad --max-memory fails before any work
    // A reference that is the index would be replaced by it. With --append the index is read and
    // then replaced by design (the new one is renamed onto it), so it is the output, not an input.
    std::vector<io::named_file> references;
    for (auto const& r : o.references) references.push_back({r, "reference"});
    io::refuse_same_files(references, {{o.output, o.append ? "-o, --append" : "-o"}});
    io::refuse_repeated_inputs(references);
    if (o.append && !filter_kind_can_append(kind))
        throw usage_error("--append needs an index whose filter grows (" + filter_kind_list(true) +
                          "), not " + o.filter);
    interrupt_guard const guard;
    unsigned const threads = resolve_threads(o.threads);
    thread_limit const limit(threads);
    visit_filter_kind(kind,
                      [&](auto kind_constant) { build_index<kind_constant.value>(o, threads); });
}

}  // namespace qmer::app
