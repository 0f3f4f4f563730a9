#pragma once
// Reading the references of `qmer index`: one TBB parallel_pipeline per pass over them. A serial
// in-order stage reads their text one file after another and cuts it into chunks at record
// boundaries (io/chunked_reader.hpp); a parallel stage parses the chunks; a serial in-order stage
// settles them (numbers the records, throws the first malformed one, in file order); a parallel
// stage scans, hashes and inserts their k-mers. Every build route reads the references through
// read_reference_spans() or insert_references().

#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "app/common/batch_pool.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/progress.hpp"
#include "app/index/options.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "io/chunked_reader.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {

// A long record is split into pieces of this many k-mer start positions.
inline constexpr size_t chunk_bases = size_t{1} << 20;

// A FASTA record is read in pieces of about this many bytes of text, each carrying the k - 1
// bases before it (io/chunked_reader.hpp, record_split): a chromosome held whole, as text
// and again parsed, would take twice its size besides the build's own memory.
inline constexpr size_t reference_piece_bytes = size_t{1} << 20;

// The pieces (and chunks) of a pipeline on `threads` threads, which holds 2 chunks a thread, each
// as text and as records: smaller with more threads, so that what is in flight stays near 4 MiB,
// as on one thread (it adds to the super-k-mer bins at the end of the reading, the build's
// peak; a chunk of 128 KiB still costs the pipeline next to nothing: one of 64 KiB made the
// reading of a 49 Mbp record on -t 16 a third slower, on a machine that ran 2 of the threads).
inline size_t reference_piece_bytes_for(unsigned threads) {
    return std::clamp<size_t>((size_t{1} << 20) / std::max(1u, threads), size_t{128} << 10,
                              reference_piece_bytes);
}

// The chunks a pipeline on `threads` threads has in flight: 2 a thread up to 4 threads, then one
// more a thread: the threads' chunks and a few that the serial stages work on or wait with, so
// that on many threads the text in flight grows by one piece a thread (128 KiB pieces in 2 chunks
// a thread held 16 MiB on 32 threads, an eighth of the index of a 50 Mbp reference).
inline size_t reference_tokens_for(unsigned threads) {
    unsigned const t = std::max(1u, threads);
    return size_t{t} + std::min(t, 4u);
}

// What a pass over the references counted.
struct build_counts {
    std::atomic<uint64_t> kmers{0};
    uint64_t records = 0;
    uint64_t bases = 0;
    uint64_t scratch_bytes = 0;   // what a spilled sorted build wrote to its scratch file
    unsigned passes = 0;          // reads of the references by a sorted build in slices (> 1)
    uint64_t longest_record = 0;  // bases

    void reset() {
        kmers.store(0);
        records = bases = longest_record = 0;
    }
};

// The references of a build: their names (what messages say) and the paths they are read from
// (the names, or scratch copies of stdin and pipes, which cannot be read twice).
struct reference_set {
    std::vector<std::string> names;
    std::vector<std::string> paths;
    unsigned k = 31;
    bool allow_empty = false;  // a reference without a k-mer is no error

    static reference_set of(index_options const& o) {
        return {o.references, o.read_from.empty() ? o.references : o.read_from, o.k, o.allow_empty};
    }
};

// What every pass over the references needs besides what it does with their k-mers.
struct reference_pass {
    reference_set const& refs;
    unsigned threads;
    progress_meter& progress;
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
// reference read from a scratch copy keeps its own name in messages. A long FASTA record comes in
// pieces (reference_piece_bytes): a chunk whose text.continues_record() has the previous chunk's
// last record continued as its first, with text.repeated_bases() bases repeated; tally() counts
// such a record once.
class reference_stream {
  public:
    // piece_bytes: the pieces' size (reference_piece_bytes; tests use smaller ones). Chunks of
    // records are cut at that size too, so that each thread's chunks in flight stay small.
    reference_stream(reference_set const& refs, io::reader_options options,
                     size_t piece_bytes = reference_piece_bytes)
        : refs_(refs),
          options_(options),
          piece_bytes_(piece_bytes),
          holds_kmers_(refs.names.size(), false) {}

    // The input stage (serial, in order): the next chunk of the current or a following file;
    // false at the end. A file that cannot be opened is a chunk whose settle() throws, so that
    // the problems of the files before it come first.
    bool cut(reference_chunk& chunk);
    // The parsing stage (parallel): the records, and whether they hold a k-mer (which costs the
    // first record's first k bases, as a rule).
    void parse(reference_chunk& chunk) const;
    // The settling stage (serial, in order): the chunk's records final, or the first problem.
    void settle(reference_chunk& chunk);
    // The three stages in the calling thread, for a pass without a pipeline: the next chunk's
    // records in chunk.batch (never none); false at the end.
    bool next(reference_chunk& chunk);
    // Adds a settled chunk's records to counts (records, bases, longest_record), a record in
    // pieces once and at its whole length. Serial, in input order (the settling stage).
    void tally(reference_chunk const& chunk, build_counts& counts);
    // After every reference was read to its end: a reference with no k-mer (an empty file, only N,
    // records shorter than k) is an input error unless allow_empty, since a failed download
    // would otherwise make an index that silently matches nothing of it.
    void check_every_reference_held_a_kmer() const;

  private:
    reference_set const& refs_;
    io::reader_options options_;
    size_t piece_bytes_;
    std::vector<bool> holds_kmers_;  // per reference, from the settling stage (serial)
    size_t next_path_ = 0;
    std::shared_ptr<io::chunked_reader> reader_;
    bool failed_ = false;
    uint64_t record_bases_ = 0;  // the bases so far of the last record tallied
};

// Reads the references once and hands every piece of their sequences to `insert_span` (from the
// pipeline's threads; it returns the piece's k-mers), as insert_span(piece), or as
// insert_span(file, piece) with the reference's place among refs.paths where it takes one (a
// many-reference build keeps each reference's k-mers apart). `stop()` is asked after each chunk is
// settled (a filter that filled up, or outgrew the memory limit, throws or stops the reading
// there: no later chunk is taken).
template <typename InsertSpan, typename Stop>
void read_reference_spans(reference_pass const& pass, build_counts& counts,
                          InsertSpan&& insert_span, Stop&& stop) {
    unsigned const threads = pass.threads;
    unsigned const k = pass.refs.k;
    progress_meter& progress = pass.progress;
    size_t const tokens = reference_tokens_for(threads);
    batch_pool<reference_chunk> pool(tokens);
    reference_stream refs(pass.refs, {.decompression_threads = threads > 1 ? threads : 0},
                          reference_piece_bytes_for(threads));
    // A chromosome is one record: split long records into pieces of chunk_bases k-mer start
    // positions (each piece carries the k - 1 bases the next one starts with), so every core
    // works on it and an interrupt is seen within one piece.
    auto insert_piece = [&](size_t file, std::string_view seq) -> uint64_t {
        if constexpr (std::is_invocable_v<InsertSpan&, size_t, std::string_view>)
            return insert_span(file, seq);
        else
            return insert_span(seq);
    };
    auto insert_sequence = [&](size_t file, std::string_view seq) -> uint64_t {
        if (seq.size() <= chunk_bases + k) return insert_piece(file, seq);
        size_t const pieces = (seq.size() - k + 1 + chunk_bases - 1) / chunk_bases;
        std::atomic<uint64_t> kmers{0};
        tbb::parallel_for(size_t{0}, pieces, [&](size_t p) {
            throw_if_interrupted();
            size_t const start = p * chunk_bases;
            kmers.fetch_add(insert_piece(file, seq.substr(start, chunk_bases + k - 1)),
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
        refs.tally(*chunk, counts);
        progress.update(counts.records, counts.bases);
        if (stop()) stopping.store(true, std::memory_order_relaxed);
        return chunk;
    };
    // Parallel: scan, hash and insert the chunk's k-mers.
    auto insert_stage = [&](reference_chunk* chunk) {
        throw_if_interrupted();
        uint64_t kmers = 0;
        for (io::sequence_record const r : chunk->batch)
            kmers += insert_sequence(chunk->file, r.sequence);
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

// Every k-mer of the references into `sink` (a filter, or a collection of hashes or
// fingerprints), hashed by `hashing`; `stop()` as for read_reference_spans(). True if the sink
// answered insert_result::full (then the reading stopped).
template <typename Sink, typename Hashing, typename Stop>
bool insert_references(Sink& sink, Hashing const& hashing, reference_pass const& pass,
                       build_counts& counts, Stop&& stop) {
    std::atomic<bool> full{false};
    auto insert_span = [&](std::string_view seq) {
        return for_each_kmer_hash(sink, hashing, seq, [&](uint64_t h) {
            if (sink.insert(h) == insert_result::full) full.store(true, std::memory_order_relaxed);
        });
    };
    read_reference_spans(pass, counts, insert_span,
                         [&] { return stop() || full.load(std::memory_order_relaxed); });
    return full.load();
}
template <typename Sink, typename Hashing>
bool insert_references(Sink& sink, Hashing const& hashing, reference_pass const& pass,
                       build_counts& counts) {
    return insert_references(sink, hashing, pass, counts, [] { return false; });
}

// Only regular files can be read twice (not stdin, a pipe or a process substitution).
bool rereadable(std::string const& path);
bool all_rereadable(std::vector<std::string> const& paths);

// A cheap upper bound of the references' distinct k-mers from their sizes (distinct k-mers <=
// bases): plain files count their bytes, gzip/BGZF files 4x theirs (sequence compresses
// ~3.5-4x); stdin and unreadable files count nothing.
uint64_t estimate_kmers_from_sizes(std::vector<std::string> const& paths);

// Where a build keeps its scratch files: `temp_dir`, else the folder of the index `output`.
std::string temp_folder(std::string const& temp_dir, std::string const& output);

// Stdin and pipes can be read only once: copies them into scratch files in `folder` (their size
// on disk, compressed as they come), kept open in `copies`, and points o.read_from at them and
// at the other references, so that every pass reads them like files. Nothing when every
// reference can be read again.
void copy_what_cannot_be_read_twice(index_options& o, std::string const& folder,
                                    std::vector<std::unique_ptr<io::spill_file>>& copies,
                                    progress_meter& progress);

}  // namespace qmer::app
