// qmer query: reads -> canonical k-mers -> hashes -> filter lookups -> verdicts (DESIGN.md, data
// flow). One TBB parallel_pipeline: a serial in-order stage reads batches of reads (or pairs); a
// parallel stage scans, hashes and looks up their k-mers (prefetched in groups) and formats their
// output text; a serial in-order stage writes it, so the output is in input order and does not
// depend on the thread count.

#include <tbb/parallel_pipeline.h>

#include <array>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <variant>

#include "app/common/batch_pool.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/progress.hpp"
#include "app/common/threads.hpp"
#include "app/filters/registry.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "app/query/options.hpp"
#include "app/query/report.hpp"
#include "app/query/verdict.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"
#include "io/output_file.hpp"
#include "io/paired_reader.hpp"
#include "io/same_file.hpp"
#include "io/sequence_reader.hpp"

namespace qmer::app {
namespace {

// One batch of reads (or pairs) and everything the parallel stage makes of it.
struct query_chunk {
    io::paired_batch reads;  // single-end input uses reads.first only
    std::string tsv;
    std::array<std::string, 2> matched, unmatched;  // per mate
    query_totals totals;

    void reset_outputs() {
        tsv.clear();
        for (auto& s : matched) s.clear();
        for (auto& s : unmatched) s.clear();
        totals = {};
    }
};

// The input side: one file, two mate files, or one interleaved file.
class read_source {
  public:
    read_source(query_options const& o, io::reader_options options) {
        if (o.reads.size() == 2) {
            if (o.interleaved) throw usage_error("--interleaved takes one reads file, not two");
            paired_.emplace(o.reads[0], o.reads[1], options);
        } else if (o.interleaved) {
            paired_.emplace(o.reads[0], options);
        } else {
            single_.emplace(o.reads[0], options);
        }
    }
    bool paired() const noexcept { return paired_.has_value(); }
    bool next(io::paired_batch& batch) {
        if (paired_) return paired_->next_batch(batch);
        batch.second.clear();
        return single_->next_batch(batch.first);
    }

  private:
    std::optional<io::sequence_reader> single_;
    std::optional<io::paired_reader> paired_;
};

// The name a pair is reported under: mate 1's name without a trailing /1.
std::string_view pair_id(std::string_view name) {
    return io::mate_base_name(name);
}

struct output_set {
    std::unique_ptr<io::output_file> tsv;
    std::unique_ptr<io::output_file> summary;
    std::array<std::unique_ptr<io::output_file>, 2> matched, unmatched;
};

// "--matched out.fq.gz" with two mate files writes out_1.fq.gz and out_2.fq.gz: pairs stay
// together, mate files stay mate files.
std::string mate_path(std::string const& path, int mate) {
    static constexpr std::string_view suffixes[] = {
        ".fastq.gz", ".fq.gz", ".fastq", ".fq", ".fasta.gz", ".fa.gz", ".fasta", ".fa", ".gz"};
    for (auto s : suffixes)
        if (path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0)
            return path.substr(0, path.size() - s.size()) + "_" + std::to_string(mate) +
                   std::string(s);
    return path + "_" + std::to_string(mate);
}

// The whole query against one filter, its k-mers hashed the way the index was built
// (core/kmer/sequence_hashing.hpp). before_commit() runs once every read is answered and before
// any output is made final; it may throw to refuse them (a failed index checksum).
template <typename Filter, typename Hashing>
void query_with_hashing(query_options const& o, io::index_file const& index, unsigned threads,
                        read_source& source, Filter const& filter, Hashing const& hashing,
                        progress_meter& progress, std::function<void()> const& before_commit) {
    auto const& header = index.header();

    verdict_rule rule;
    rule.kmer_fpr = header.fpr;
    rule.min_hits = o.min_hits;
    rule.min_containment = o.min_containment;
    std::string rule_text =
        rule.is_default()
            ? "hits >= smallest t with P(Binomial(kmers, fpr) >= t) <= 1e-5 (fpr = " +
                  std::to_string(header.fpr) + ")"
            : std::string("hits >= ") + std::to_string(std::max<int64_t>(o.min_hits, 0)) +
                  " and containment >= " + std::to_string(std::max(o.min_containment, 0.0));
    if (o.quick)
        rule_text +=
            "; --quick: a read's lookups stop once it has the hits to match, so matched "
            "reads' kmers and hits count only the k-mers looked up";

    verdict_table const verdicts(rule);

    index_description const described{index.path(), header.k,        header.filter,
                                      header.fpr,   header.elements, header.hash_seed};
    bool const two_files = o.reads.size() == 2;
    bool const paired = source.paired();

    // Open every output before reading anything: a bad output path fails at once.
    output_set out;
    out.tsv = std::make_unique<io::output_file>(o.output);
    auto open_fastq = [&](std::string const& path, auto& slots) {
        if (path.empty()) return;
        io::output_options const opts{.compress_by_name = true, .threads = threads > 1 ? 1u : 0u};
        if (two_files) {
            slots[0] = std::make_unique<io::output_file>(mate_path(path, 1), opts);
            slots[1] = std::make_unique<io::output_file>(mate_path(path, 2), opts);
        } else {
            slots[0] = std::make_unique<io::output_file>(path, opts);
        }
    };
    open_fastq(o.matched, out.matched);
    open_fastq(o.unmatched, out.unmatched);
    if (!o.summary.empty()) out.summary = std::make_unique<io::output_file>(o.summary);
    out.tsv->write(tsv_preamble(described, rule_text, o.reads));

    bool const want_matched = !o.matched.empty(), want_unmatched = !o.unmatched.empty();
    size_t const tokens = 2 * static_cast<size_t>(threads) + 1;
    batch_pool<query_chunk> pool(tokens);
    query_totals totals;

    // The most k-mers a sequence can hold (one per position; invalid bases only remove some).
    auto max_kmers = [k = uint64_t{header.k}](std::string_view seq) -> uint64_t {
        return seq.size() >= k ? seq.size() - k + 1 : 0;
    };
    // Adds seq's k-mers and their hits; with --quick, stops once hits reach `settle`.
    auto count_hits = [&](std::string_view seq, uint64_t& kmers, uint64_t& hits, uint64_t settle) {
        if (!o.quick) {
            kmers += for_each_kmer_hash(filter, hashing, seq,
                                        [&](uint64_t h) { hits += contains_read_only(filter, h); });
        } else if (hits < settle) {
            kmers += for_each_kmer_hash(filter, hashing, seq, [&](uint64_t h) {
                hits += contains_read_only(filter, h);
                return hits < settle;
            });
        }
    };

    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, query_chunk*>(tbb::filter_mode::serial_in_order,
                                                     [&](tbb::flow_control& fc) -> query_chunk* {
                                                         if (interrupted()) {
                                                             fc.stop();
                                                             return nullptr;
                                                         }
                                                         query_chunk* chunk = pool.take();
                                                         if (!source.next(chunk->reads)) {
                                                             pool.give_back(chunk);
                                                             fc.stop();
                                                             return nullptr;
                                                         }
                                                         return chunk;
                                                     }) &
                    tbb::make_filter<query_chunk*, query_chunk*>(
                        tbb::filter_mode::parallel,
                        [&](query_chunk* chunk) {
                            chunk->reset_outputs();
                            auto& t = chunk->totals;
                            auto const& first = chunk->reads.first;
                            auto const& second = chunk->reads.second;
                            for (size_t i = 0; i < first.size(); ++i) {
                                auto const r1 = first[i];
                                uint64_t kmers = 0, hits = 0;
                                uint64_t const settle =
                                    o.quick ? verdicts.hits_settling_match(
                                                  max_kmers(r1.sequence) +
                                                  (paired ? max_kmers(second[i].sequence) : 0))
                                            : 0;
                                count_hits(r1.sequence, kmers, hits, settle);
                                if (paired) count_hits(second[i].sequence, kmers, hits, settle);
                                bool const match = verdicts.matches(kmers, hits);
                                append_tsv_line(chunk->tsv, paired ? pair_id(r1.name) : r1.name,
                                                kmers, hits, match);
                                t.bases +=
                                    r1.sequence.size() + (paired ? second[i].sequence.size() : 0);
                                t.reads += paired ? 2 : 1;
                                t.pairs += paired;
                                t.kmers += kmers;
                                t.hits += hits;
                                (match ? t.matched : t.unmatched) += 1;
                                if (match ? want_matched : want_unmatched) {
                                    auto& dest = match ? chunk->matched : chunk->unmatched;
                                    append_record(dest[0], r1);
                                    if (paired) append_record(dest[two_files ? 1 : 0], second[i]);
                                }
                            }
                            return chunk;
                        }) &
                    tbb::make_filter<query_chunk*, void>(
                        tbb::filter_mode::serial_in_order, [&](query_chunk* chunk) {
                            out.tsv->write(chunk->tsv);
                            for (int m = 0; m < 2; ++m) {
                                if (out.matched[m]) out.matched[m]->write(chunk->matched[m]);
                                if (out.unmatched[m]) out.unmatched[m]->write(chunk->unmatched[m]);
                            }
                            auto const& t = chunk->totals;
                            totals.reads += t.reads;
                            totals.pairs += t.pairs;
                            totals.matched += t.matched;
                            totals.unmatched += t.unmatched;
                            totals.kmers += t.kmers;
                            totals.hits += t.hits;
                            totals.bases += t.bases;
                            progress.update(totals.reads, totals.bases);
                            pool.give_back(chunk);
                        }));
    throw_if_interrupted();
    before_commit();

    // Everything is written; make the files final (each one's temporary renamed into place).
    out.tsv->commit();
    for (auto* set : {&out.matched, &out.unmatched})
        for (auto& f : *set)
            if (f) f->commit();
    if (out.summary) {
        out.summary->write(summary_json(totals, described, rule_text, o.reads,
                                        progress.elapsed_seconds(), cpu_seconds(), peak_rss_bytes(),
                                        threads));
        out.summary->commit();
    }
    uint64_t const units = paired ? totals.pairs : totals.reads;
    char extra[160];
    std::snprintf(
        extra, sizeof extra, "%llu of %llu %s matched (%.4f%%)",
        static_cast<unsigned long long>(totals.matched), static_cast<unsigned long long>(units),
        paired ? "pairs" : "reads",
        units ? 100.0 * static_cast<double>(totals.matched) / static_cast<double>(units) : 0.0);
    progress.finish(extra);
}

template <typename Filter>
void query_with_filter(query_options const& o, io::index_file const& index, unsigned threads,
                       read_source& source, Filter const& filter, progress_meter& progress,
                       std::function<void()> const& before_commit) {
    auto const& h = index.header();
    with_kmer_hashing(h.k, h.hash_seed, h.hash, [&](auto const& hashing) {
        query_with_hashing(o, index, threads, source, filter, hashing, progress, before_commit);
    });
}

// Filters of the older formats and the other kinds: loaded into their own memory, frozen.
template <filter_kind Kind>
void query_with(query_options const& o, io::index_file& index, unsigned threads,
                read_source& source) {
    progress_meter progress("qmer query", o.quiet);
    auto const filter = filter_codec<Kind>::load(index);
    index.release_sections();  // the filter holds its own copy now
    // Nobody writes to a loaded index during a query: filters that can, answer it without locks.
    if constexpr (requires { filter->freeze(); }) filter->freeze();
    query_with_filter(o, index, threads, source, *filter, progress, [] {});
}

// The default filter in format 3: answered in place from the file's bytes, mapped (--mmap: the
// first read is answered at once, and only the pages lookups touch are read) or read into huge
// pages (the default: no TLB miss per lookup). The checksum over the whole file is
// computed on a thread of its own while the reads are answered, and a mismatch refuses every
// output before it is made final (a damaged word can give wrong answers, never a hang or crash:
// core/qf/rank_select.hpp).
void query_in_place(query_options const& o, io::index_file const& index,
                    qf::rank_select_levels const& levels, unsigned threads, read_source& source) {
    progress_meter progress("qmer query", o.quiet);
    auto checksum = std::async(std::launch::async, [&index] { index.check_checksum(); });
    query_with_filter(o, index, threads, source, levels, progress, [&] { checksum.get(); });
}

// Refuses an output that is an input (the index, a reads file) or another output, before anything
// is opened: every name the query would write, the mates' names included.
void refuse_same_files(query_options const& o) {
    std::vector<io::named_file> inputs{{o.index, "index"}};
    for (auto const& r : o.reads) inputs.push_back({r, "reads"});
    std::vector<io::named_file> outputs{{o.output, "-o"}};
    if (!o.summary.empty()) outputs.push_back({o.summary, "--summary"});
    for (auto const& [path, option] :
         {std::pair{&o.matched, "--matched"}, std::pair{&o.unmatched, "--unmatched"}}) {
        if (path->empty()) continue;
        if (o.reads.size() == 2) {
            outputs.push_back({mate_path(*path, 1), std::string(option) + ", mate 1"});
            outputs.push_back({mate_path(*path, 2), std::string(option) + ", mate 2"});
        } else {
            outputs.push_back({*path, option});
        }
    }
    io::refuse_same_files(inputs, outputs);
}

}  // namespace

void run_query(query_options const& o) {
    if (o.reads.empty() || o.reads.size() > 2)
        throw usage_error("query takes one reads file, or two for paired reads");
    refuse_same_files(o);
    interrupt_guard const guard;
    unsigned const threads = resolve_threads(o.threads);
    thread_limit const limit(threads);
    // The reads are opened first: a missing or unreadable reads file is reported at once, not
    // after a host-sized index has been read (seconds). 1 MB of sequence per batch (~7,000 reads
    // of 150 bp): per-batch costs stay negligible, and the 2t + 1 batches in flight (with their
    // output text) keep peak memory small.
    read_source source(
        o, {.decompression_threads = threads > 1 ? threads : 0, .batch_bytes = size_t{1} << 20});
    io::index_file index(o.index, io::index_check::deferred);
    filter_kind const kind = filter_kind_of_index(index);
    std::optional<qf::rank_select_levels> levels;
    try {
        levels = rank_select_levels_of(index);
    } catch (index_error const&) {
        index.check_checksum();  // a damaged file rather than a bad build: say so
        throw;
    }
    if (levels) {
        if (o.mmap) {
            query_in_place(o, index, *levels, threads, source);
        } else {
            // The same file again, read into huge pages (io::index_memory): at most one copy
            // lives at a time, as the mapping above is dropped first.
            std::string const path = index.path();
            levels.reset();
            index = io::index_file(path, io::index_check::deferred, io::index_memory::huge_pages,
                                   throw_if_interrupted);
            index.check_checksum();  // summed while it was read: refuse before any lookup
            levels = rank_select_levels_of(index);
            if (!levels) throw index_error("'" + path + "': changed while it was opened");
            query_in_place(o, index, *levels, threads, source);
        }
        return;
    }
    // Every other index is copied into its filter: check the whole file first, as at any load.
    index.check_checksum();
    visit_filter_kind(kind, [&](auto kind_constant) {
        query_with<kind_constant.value>(o, index, threads, source);
    });
}

}  // namespace qmer::app
