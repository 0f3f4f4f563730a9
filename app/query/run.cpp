// qmer query: reads -> canonical k-mers -> hashes -> filter lookups -> verdicts (ARCHITECTURE.md,
// data flow). One TBB parallel_pipeline: a serial in-order stage reads the reads' text and cuts it
// into chunks at record boundaries (io/chunked_reader.hpp); a parallel stage parses each chunk; a
// serial in-order stage settles the chunks (numbers their records, throws the first malformed one,
// in file order); a parallel stage scans, hashes and looks up their k-mers (prefetched in groups)
// in every index in turn and formats their output text; a serial in-order stage writes it, so the
// output is in input order and does not depend on the thread count. Paired input (two mate files,
// or --interleaved) goes the same way, its mates paired by the settling stage
// (io/chunked_paired_reader.hpp). A panel (several -x indexes) reads the reads once.

#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <variant>

#include "app/common/batch_pool.hpp"
#include "app/common/interrupt.hpp"
#include "app/common/memory_limit.hpp"
#include "app/common/progress.hpp"
#include "app/common/threads.hpp"
#include "app/filters/registry.hpp"
#include "app/pipeline/gated_lookups.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "app/query/assignment.hpp"
#include "app/query/options.hpp"
#include "app/query/output_names.hpp"
#include "app/query/panel.hpp"
#include "app/query/reference_report.hpp"
#include "app/query/report.hpp"
#include "app/query/verdict.hpp"
#include "core/error.hpp"
#include "core/kmer/scanner.hpp"
#include "io/chunked_paired_reader.hpp"
#include "io/chunked_reader.hpp"
#include "io/index_file.hpp"
#include "io/index_use.hpp"
#include "io/output_file.hpp"
#include "io/paired_reader.hpp"
#include "io/reference_catalog.hpp"
#include "io/same_file.hpp"
#include "io/sequence_reader.hpp"

namespace qmer::app {
namespace {

struct read_counts {
    uint64_t kmers = 0;
    uint64_t hits = 0;
};

// One batch of reads (or pairs) and everything the parallel stage makes of it.
struct query_chunk {
    io::text_chunk text;                           // single-end input: the text of reads.first
    io::paired_chunk mates_text;                   // paired input: the text of both mates
    io::paired_batch reads;                        // single-end input uses reads.first only
    std::vector<std::vector<read_counts>> counts;  // per index, per read
    std::vector<uint64_t> hits;                    // one read's hits per index
    std::string tsv;
    std::array<std::string, 2> matched, unmatched;  // per mate
    std::vector<std::array<std::string, 2>> split;  // per category, per mate
    query_totals totals;
    panel_totals panel;
    // A many-reference index: per read (pair), the classes of its hits (class_offsets[i] ..
    // class_offsets[i + 1] in class_hits), the assigner's scratch, and the batch's per-reference
    // sums.
    std::vector<class_count> class_hits;
    std::vector<size_t> class_offsets;
    std::vector<uint32_t> hit_ids, scratch, touched;
    assignment assigned;
    reference_totals references;

    void reset_outputs(size_t indexes, size_t split_categories) {
        counts.resize(indexes);
        hits.resize(indexes);
        tsv.clear();
        for (auto& s : matched) s.clear();
        for (auto& s : unmatched) s.clear();
        split.resize(split_categories);
        for (auto& mates : split)
            for (auto& s : mates) s.clear();
        totals = {};
        panel = panel_totals(indexes);
    }
};

// The input side: one file, two mate files, or one interleaved file, cut into chunks that several
// threads parse.
class read_source {
  public:
    read_source(query_options const& o, io::reader_options options) {
        if (o.reads.size() == 2) {
            if (o.interleaved) throw usage_error("--interleaved takes one reads file, not two");
            paired_.emplace(o.reads[0], o.reads[1], options);
            return;
        }
        // One file, opened once (it may be standard input): a SAM/BAM/CRAM flagged paired holds
        // pairs; read as single reads, a file must not mix single reads and pairs.
        options.uniform_pairing = true;
        io::chunked_reader reads(o.reads[0], options);
        if (o.interleaved || reads.flagged_paired())
            paired_.emplace(std::move(reads));
        else
            single_.emplace(std::move(reads));
    }
    bool paired() const noexcept { return paired_.has_value(); }

    // The input stage (serial, in order): the next chunk; false at the end of the input.
    bool cut(query_chunk& chunk) {
        if (paired_) return paired_->cut(chunk.mates_text);
        chunk.reads.second.clear();
        return single_->cut(chunk.text, chunk.reads.first);
    }
    // The parsing stage (parallel).
    void parse(query_chunk& chunk) const {
        if (paired_)
            io::chunked_paired_reader::parse(chunk.mates_text);
        else
            io::chunked_reader::parse(chunk.text, chunk.reads.first);
    }
    // The settling stage (serial, in order): the chunk's reads (pairs) final, or the first error
    // thrown.
    void settle(query_chunk& chunk) {
        if (paired_)
            paired_->settle(chunk.mates_text, chunk.reads);
        else
            single_->settle(chunk.text, chunk.reads.first);
    }

  private:
    std::optional<io::chunked_reader> single_;
    std::optional<io::chunked_paired_reader> paired_;
};

// The name a pair is reported under: mate 1's name without a trailing /1.
std::string_view pair_id(std::string_view name) {
    return io::mate_base_name(name);
}

// One index's lookups over a batch, behind one virtual call per batch: the per-k-mer loop is a
// template instantiated per filter kind and hash scheme (chosen once per index, never per k-mer).
class index_lookup {
  public:
    virtual ~index_lookup() = default;
    // out[i]: the k-mers looked up and their hits for read (pair) i. With --quick, a read's lookups
    // stop once its hits settle a match under `verdicts`.
    virtual void count(io::paired_batch const& reads, bool paired,
                       std::vector<read_counts>& out) const = 0;
};

// Owner is the filter's owner: a unique_ptr to a filter loaded into its own memory, or the
// rank-select levels read in place from the index file's bytes.
template <typename Owner, typename Hashing>
class index_lookup_of final : public index_lookup {
  public:
    index_lookup_of(Owner owner, Hashing const& hashing, verdict_table const& verdicts, bool quick,
                    std::optional<qf::minimizer_gate> gate)
        : owner_(std::move(owner)),
          hashing_(hashing),
          verdicts_(verdicts),
          quick_(quick),
          gate_(gate) {}

    void count(io::paired_batch const& reads, bool paired,
               std::vector<read_counts>& out) const override {
        auto const& filter = this->filter();
        uint64_t const k = hashing_.k();
        // The most k-mers a sequence can hold (one per position; invalid bases only remove some).
        auto max_kmers = [k](std::string_view seq) -> uint64_t {
            return seq.size() >= k ? seq.size() - k + 1 : 0;
        };
        // Adds seq's k-mers and their hits; with --quick, stops once hits reach `settle`.
        auto count_hits = [&](std::string_view seq, uint64_t& kmers, uint64_t& hits,
                              uint64_t settle) {
            if (!quick_) {
                kmers += for_each_kmer_hash_grouped(
                    filter, hashing_, seq, [&](std::span<uint64_t const> group) {
                        hits += count_contained_read_only(filter, group);
                    });
            } else if (hits < settle) {
                kmers += for_each_kmer_hash_grouped(filter, hashing_, seq, [&](uint64_t h) {
                    hits += contains_read_only(filter, h);
                    return hits < settle;
                });
            }
        };
        auto const& first = reads.first;
        auto const& second = reads.second;
        out.resize(first.size());
        if constexpr (minimizer_local_hashing<Hashing>) {
            if (gate_) {
                batch_kmer_hashing const blocks(hashing_, simd_);
                for (size_t i = 0; i < first.size(); ++i) {
                    auto const r1 = first[i];
                    uint64_t const settle = quick_
                                                ? verdicts_.hits_settling_match(
                                                      max_kmers(r1.sequence) +
                                                      (paired ? max_kmers(second[i].sequence) : 0))
                                                : 0;
                    gated_read read;
                    count_gated(filter, *gate_, hashing_, blocks, r1.sequence, read, quick_,
                                settle);
                    if (paired)
                        count_gated(filter, *gate_, hashing_, blocks, second[i].sequence, read,
                                    quick_, settle);
                    out[i] = {read.kmers, read.hits};
                }
                return;
            }
        }
        for (size_t i = 0; i < first.size(); ++i) {
            auto const r1 = first[i];
            uint64_t kmers = 0, hits = 0;
            uint64_t const settle =
                quick_ ? verdicts_.hits_settling_match(max_kmers(r1.sequence) +
                                                       (paired ? max_kmers(second[i].sequence) : 0))
                       : 0;
            count_hits(r1.sequence, kmers, hits, settle);
            if (paired) count_hits(second[i].sequence, kmers, hits, settle);
            out[i] = {kmers, hits};
        }
    }

  private:
    auto const& filter() const {
        if constexpr (requires { *owner_; })
            return *owner_;
        else
            return owner_;
    }
    Owner owner_;
    Hashing hashing_;
    verdict_table const& verdicts_;
    bool quick_;
    std::optional<qf::minimizer_gate> gate_;  // the index's, read in place (minimizer-local only)
    simd_level simd_ = best_simd_level();     // of the gated groups' block hashing
};

// The rule an index's verdict follows: the options' minimums, else the rule its preset recorded,
// else the default rule, with that index's false-positive rate.
verdict_rule rule_for(query_options const& o, io::index_header const& h) {
    return verdict_rule::for_index(h.fpr, h.preset, h.preset_min_containment, o.min_hits,
                                   o.min_containment);
}

// An index whose preset rule cannot tell unrelated reads from host reads: its minimum containment
// stands against the share of a random read's k-mers the index holds by chance (its distinct
// k-mers over the 4^k / 2 canonical ones, plus the filter's false positives), which grows with the
// reference and shrinks with k. Where that share reaches half the minimum, many unrelated reads
// pass: said once per index (a long-preset index of a human genome holds a third of all 17-mers).
void note_preset_chance(std::string const& path, io::index_header const& h,
                        verdict_rule const& rule, bool quiet) {
    if (quiet || rule.from_options || h.preset.empty() || rule.min_containment <= 0) return;
    double const canonical = std::ldexp(1.0, 2 * static_cast<int>(h.k) - 1);
    double const chance = std::min(1.0, static_cast<double>(h.elements) / canonical + h.fpr);
    if (chance < rule.min_containment / 2) return;
    std::fprintf(stderr,
                 "qmer: note: '%s' (--preset %s, k = %u) holds %.1f%% of all %u-mers: an unrelated "
                 "read holds about that share of its k-mers by chance, against the preset's "
                 "minimum containment of %.1f%%, so unrelated reads may be called; build with a "
                 "larger -k, or query with --min-containment\n",
                 path.c_str(), h.preset.c_str(), h.k, 100 * chance, h.k,
                 100 * rule.min_containment);
}

// One index of the query, loaded and ready to answer.
struct query_index {
    query_index(index_spec s, io::index_file f, verdict_rule const& rule)
        : spec(std::move(s)), file(std::move(f)), verdicts(rule) {}

    index_spec spec;
    io::index_file file;
    verdict_table verdicts;
    std::unique_ptr<index_lookup> lookup;
    // --mmap of a format-3 index: its checksum, summed on a thread of its own while the reads are
    // answered; a mismatch refuses every output before it is made final.
    std::future<void> checksum;
    // Held while a private copy answers: other queries of the file then share its mapping.
    std::optional<io::index_exclusive_use> exclusive_use;
    // A many-reference index: its catalog, its level (whose slots carry class ids, read in place
    // like any level) and how its reads are assigned to references (app/query/assignment.hpp).
    std::optional<io::reference_catalog> catalog;
    std::optional<qf::rank_select_table> classes_level;
    io::class_overflow overflow;  // the ids its slots escape (io/reference_catalog.hpp)
    std::unique_ptr<reference_assigner> assigner;

    index_description describe() const {
        auto const& h = file.header();
        index_description d;
        d.name = spec.name;
        d.path = file.path();
        d.k = h.k;
        d.filter = h.filter;
        d.fpr = h.fpr;
        d.elements = h.elements;
        d.hash_seed = h.hash_seed;
        d.preset = h.preset;
        d.preset_min_containment = h.preset_min_containment;
        return d;
    }
};

template <typename Owner>
std::unique_ptr<index_lookup> make_lookup(Owner owner, io::index_header const& h,
                                          verdict_table const& verdicts, bool quick,
                                          std::optional<qf::minimizer_gate> gate = std::nullopt) {
    return with_kmer_hashing(h.k, h.hash_seed, h.hash,
                             [&](auto const& hashing) -> std::unique_ptr<index_lookup> {
                                 using hashing_type = std::decay_t<decltype(hashing)>;
                                 return std::make_unique<index_lookup_of<Owner, hashing_type>>(
                                     std::move(owner), hashing, verdicts, quick, gate);
                             });
}

// A rank-select table, or an index's levels of them, looked up with the select of `Select`
// (core/qf/stored/select.hpp: broadword, or pdep where this CPU does it in hardware).
template <typename Table, typename Select>
struct selecting {
    Table table;
    void prefetch(uint64_t h) const noexcept { table.prefetch(h); }
    void prefetch_local(uint64_t h) const noexcept { table.prefetch_local(h); }
    void prefetch_first(uint64_t h) const noexcept requires requires { table.prefetch_first(h); }
    { table.prefetch_first(h); }
    bool contains(uint64_t h) const noexcept { return table.template contains<Select>(h); }
    uint64_t count_contained(std::span<uint64_t const> hashes) const noexcept requires requires {
        table.template count_contained<Select>(hashes);
    }
    { return table.template count_contained<Select>(hashes); }
};

// An index built in one go has one level: answered from that table directly, without a loop over
// levels around every lookup and prefetch. The select is chosen here, once per index.
std::unique_ptr<index_lookup> rank_select_lookup(qf::rank_select_levels&& levels,
                                                 std::optional<qf::minimizer_gate> gate,
                                                 io::index_header const& h,
                                                 verdict_table const& verdicts, bool quick) {
    auto with = [&](auto select) {
        using S = decltype(select);
        if (levels.levels() == 1)
            return make_lookup(selecting<qf::rank_select_table, S>{levels.level(0)}, h, verdicts,
                               quick, gate);
        return make_lookup(selecting<qf::rank_select_levels, S>{std::move(levels)}, h, verdicts,
                           quick, gate);
    };
    if (qf::rank_select::pdep_is_fast()) return with(qf::rank_select::pdep_select{});
    return with(qf::rank_select::broadword_select{});
}

// Whether the default filter's index may be read into private memory (the faster lookups) rather
// than answered from the shared mapping: not when another query holds the index now
// (io/index_use.hpp), nor when the copy would not fit the memory this process can still take (the
// kernel's MemAvailable and its cgroups' room; a copy that does not fit would end in swap or the
// OOM killer, as six queries of one 4 GiB index on a 23 GiB node did). Says so on stderr when it
// maps instead. A query that copies holds the index's exclusive use until it ends.
bool private_copy_fits(query_index& q, bool quiet) {
    std::string const& path = q.file.path();
    auto use = io::index_exclusive_use::try_take(path);
    char const* why = nullptr;
    uint64_t const need = q.file.file_bytes() + (uint64_t{64} << 20);
    uint64_t const free = free_memory_bytes();
    if (!use)
        why = "another qmer is answering from it";
    else if (need > free)
        why = "a private copy would not fit the memory left";
    if (why) {
        if (!quiet)
            std::fprintf(stderr,
                         "qmer: note: '%s' answered from the shared mapping, as with --mmap: %s "
                         "(%s free)\n",
                         path.c_str(), why, human_bytes(static_cast<double>(free)).c_str());
        return false;
    }
    q.exclusive_use = std::move(use);
    return true;
}

// Loads an opened index for querying. The default filter in format 3 is answered in place from
// the file's bytes, mapped (--mmap: the first read is answered at once, and only the pages
// lookups touch are read) or read into huge pages (the default: no TLB miss per lookup); a damaged
// word there can give wrong answers, never a hang or crash (core/qf/stored/table.hpp). Filters of
// the older formats and the other kinds are copied into their own memory and frozen.
std::unique_ptr<query_index> load_index(index_spec spec, io::index_file opened,
                                        query_options const& o) {
    verdict_rule const rule = rule_for(o, opened.header());
    note_preset_chance(spec.path, opened.header(), rule, o.quiet);
    auto q = std::make_unique<query_index>(std::move(spec), std::move(opened), rule);
    io::index_file& file = q->file;
    filter_kind const kind = filter_kind_of_index(file);
    std::optional<qf::rank_select_levels> levels;
    try {
        levels = rank_select_levels_of(file);
    } catch (index_error const&) {
        file.check_checksum();  // a damaged file rather than a bad build: say so
        throw;
    }
    if (levels) {
        bool const mapped = o.mmap || !private_copy_fits(*q, o.quiet);
        if (mapped) {
            q->checksum = std::async(std::launch::async, [&file] { file.check_checksum(); });
        } else {
            // The same file again, read into huge pages (io::index_memory): at most one copy
            // lives at a time, as the mapping above is dropped first.
            std::string const path = file.path();
            levels.reset();
            // Read with the query's threads (at most 8: beyond that the copy is bound by memory
            // bandwidth, not by the kernel's page faults and copies that threads share out).
            unsigned const copy_threads = std::min(resolve_threads(o.threads), 8u);
            file = io::index_file(path, io::index_check::deferred, io::index_memory::huge_pages,
                                  throw_if_interrupted, copy_threads);
            file.check_checksum();  // summed while it was read: refuse before any lookup
            levels = rank_select_levels_of(file);
            if (!levels) throw index_error("'" + path + "': changed while it was opened");
        }
        if ((q->catalog = reference_catalog_of(file))) {
            if (o.quick)
                throw usage_error("--quick does not apply to a many-reference index ('" +
                                  file.path() +
                                  "'): every k-mer is looked up to rank the references");
            q->classes_level = levels->level(0);
            q->overflow = filter_codec<filter_kind::expandable>::overflow_in_place(file);
            q->assigner = std::make_unique<reference_assigner>(
                *q->catalog, q->verdicts,
                assignment_rule{.clearzone = o.clearzone, .ties_to_group = o.ties_to_group},
                file.header().fpr, file.header().elements);
            return q;
        }
        q->lookup = rank_select_lookup(std::move(*levels), minimizer_gate_of(file), file.header(),
                                       q->verdicts, o.quick);
        return q;
    }
    // Every other index is copied into its filter: check the whole file first, as at any load.
    file.check_checksum();
    visit_filter_kind(kind, [&](auto kind_constant) {
        auto filter = filter_codec<kind_constant.value>::load(file);
        file.release_sections();  // the filter holds its own copy now
        // Nobody writes to a loaded index during a query: filters that can, answer it without
        // locks.
        if constexpr (requires { filter->freeze(); }) filter->freeze();
        q->lookup = make_lookup(std::move(filter), file.header(), q->verdicts, o.quick);
    });
    return q;
}

// The FASTQ outputs one path option names: the file, or its two mate files when the reads are two
// files (pairs stay together, mate files stay mate files).
std::vector<std::pair<std::string, std::string>> fastq_outputs(query_options const& o,
                                                               std::string const& path,
                                                               std::string const& role) {
    if (o.reads.size() != 2) return {{path, role}};
    return {{mate_path(path, 1), role + ", mate 1"}, {mate_path(path, 2), role + ", mate 2"}};
}

// The categories a read may get, in the order of their --split-by-category files: a panel's
// indexes, multiple, none; a many-reference index's references, its groups (with
// --ties-to-group), ambiguous, none.
std::vector<std::string> categories_of(query_options const& o, std::vector<index_spec> const& panel,
                                       io::reference_catalog const* catalog) {
    std::vector<std::string> out;
    if (catalog == nullptr) {
        for (size_t c = 0; c < panel.size() + 2; ++c) out.emplace_back(category_name(c, panel));
        return out;
    }
    for (auto const& r : catalog->references) out.push_back(r.name);
    if (o.ties_to_group)
        for (auto const& g : reference_groups(*catalog).names) out.push_back(g);
    out.emplace_back(category_ambiguous);
    out.emplace_back(category_none);
    return out;
}

// The --split-by-category files, per category.
std::vector<std::string> split_paths(query_options const& o,
                                     std::vector<std::string> const& categories) {
    std::vector<std::string> out;
    if (o.split_by_category.empty()) return out;
    for (auto const& c : categories) out.push_back(category_path(o.split_by_category, c));
    return out;
}

// What every batch is answered against, fixed before the first read.
struct query_plan {
    query_options const& o;
    std::vector<std::unique_ptr<query_index>> const& indexes;
    std::vector<index_spec> const& panel;
    bool panel_form;       // -x indexes: a category per read, hits per index
    bool many_references;  // one many-reference index: a category per read, its best references
    bool paired;           // pairs (two files or interleaved): one verdict per pair
    bool two_files;        // mate 2's output text goes to its own file
    bool want_matched, want_unmatched, want_split;
    // What each reads output's name asks for (output_names.hpp).
    record_format matched_format, unmatched_format, split_format;
    std::vector<std::string> categories;  // in the order of the --split-by-category files
    kmer_scanner scanner;  // counts a read's k-mers when --quick stops the lookups early

    query_plan(query_options const& options, std::vector<std::unique_ptr<query_index>> const& ix,
               std::vector<index_spec> const& p, bool paired_reads)
        : o(options),
          indexes(ix),
          panel(p),
          panel_form(options.index.empty()),
          many_references(!panel_form && ix.front()->catalog.has_value()),
          paired(paired_reads),
          two_files(options.reads.size() == 2),
          want_matched(!options.matched.empty()),
          want_unmatched(!options.unmatched.empty()),
          want_split(!options.split_by_category.empty()),
          matched_format(record_format_by_name(options.matched)),
          unmatched_format(record_format_by_name(options.unmatched)),
          split_format(record_format_by_name(options.split_by_category)),
          categories(categories_of(options, p, many_references ? &*ix.front()->catalog : nullptr)),
          scanner(ix.front()->file.header().k) {}

    // The verdict rule in words, for the TSV preamble and the summary.
    std::string rule_text() const {
        return panel_form ? panel_verdict_text(rule())
                          : indexes.front()->verdicts.rule().describe(o.quick);
    }

    // The panel's rule: the options', and the indexes whose preset adds a minimum containment.
    panel_rule rule() const {
        panel_rule out{o.min_hits, o.min_containment, o.quick, ""};
        out.presets = panel_presets_text(described(), out);
        return out;
    }

    std::vector<index_description> described() const {
        std::vector<index_description> out;
        for (auto const& index : indexes) out.push_back(index->describe());
        if (!panel_form) out[0].name.clear();
        return out;
    }
};

// The text one read (pair) adds to an output: mate 1, then mate 2 in its own file or after it.
// `option` and `path` name the output when its name asks for FASTQ and the reads are FASTA.
void append_read(query_plan const& plan, std::array<std::string, 2>& dest,
                 io::sequence_record const& r1, io::sequence_record const* r2, record_format format,
                 char const* option, std::string const& path) {
    bool const written = append_record(dest[0], r1, format) &&
                         (!r2 || append_record(dest[plan.two_files ? 1 : 0], *r2, format));
    if (!written)
        throw usage_error(std::string(option) + " '" + path +
                          "': a FASTQ name, but the reads are FASTA (no qualities): give it a " +
                          "FASTA name (.fa, .fasta, .fna) or none of these suffixes");
}

// A many-reference index's lookups over a batch: per read (pair), its k-mers and the classes of
// its hits with their counts (one lookup per k-mer, whatever the number of references: the slot's
// class id names them all). Hits are the k-mers found in any reference.
void count_classes(query_index const& index, io::paired_batch const& reads, bool paired,
                   query_chunk& chunk) {
    qf::rank_select_table const& table = *index.classes_level;
    io::index_header const& h = index.file.header();
    plain_kmer_hashing const hashing(h.k, h.hash_seed);
    auto& counts = chunk.counts[0];
    counts.resize(reads.first.size());
    chunk.class_hits.clear();
    chunk.class_offsets.assign(1, 0);
    std::vector<uint32_t>& ids = chunk.hit_ids;
    uint64_t const escape = index.catalog->has_overflow() ? index.catalog->escape() : ~uint64_t{0};
    uint64_t const classes = index.catalog->classes.size();
    for (size_t i = 0; i < reads.first.size(); ++i) {
        ids.clear();
        uint64_t kmers = 0;
        auto scan = [&](std::string_view seq) {
            // One k-mer at a time, its line prefetched 8 k-mers ahead (for_each_kmer_hash):
            // groups of 64 hashed and prefetched before their lookups, as the default query
            // does, were slower here (a value table's blocks hold fewer slots, and a group's
            // 2-line prefetches outrun the core's outstanding misses; bench/references).
            kmers += for_each_kmer_hash(table, hashing, seq, [&](uint64_t x) {
                uint64_t id = table.find(x);
                if (id == qf::rank_select_table::absent) return;
                // A rare class: its id in the overflow, by fingerprint (a damaged index may
                // have none there: then the k-mer counts as absent).
                if (id == escape &&
                    (id = index.overflow.find(table.geometry().fingerprint(x))) == UINT64_MAX)
                    return;
                // A damaged slot (a mapped index is answered before its checksum is) may name
                // no class: counted as absent, never read past the table.
                if (id >= classes) return;
                ids.push_back(static_cast<uint32_t>(id));
            });
        };
        scan(reads.first[i].sequence);
        if (paired) scan(reads.second[i].sequence);
        std::sort(ids.begin(), ids.end());
        for (size_t a = 0; a < ids.size();) {
            size_t b = a;
            while (b < ids.size() && ids[b] == ids[a]) ++b;
            chunk.class_hits.push_back({ids[a], static_cast<uint32_t>(b - a)});
            a = b;
        }
        counts[i] = {kmers, ids.size()};
        chunk.class_offsets.push_back(chunk.class_hits.size());
    }
}

// A many-reference index: the read's best references, its category and its TSV line. Returns
// whether a reference's verdict matched.
bool answer_many_references(query_plan const& plan, query_chunk& chunk, size_t i,
                            std::string_view id, uint64_t kmers, io::sequence_record const& r1,
                            io::sequence_record const* mate) {
    query_index const& index = *plan.indexes[0];
    std::span<class_count const> const classes(
        chunk.class_hits.data() + chunk.class_offsets[i],
        chunk.class_hits.data() + chunk.class_offsets[i + 1]);
    index.assigner->assign(kmers, classes, chunk.scratch, chunk.touched, chunk.assigned);
    assignment const& a = chunk.assigned;
    auto const& groups = index.assigner->groups();
    chunk.references.count(a, groups);
    append_reference_tsv_line(chunk.tsv, id, kmers, a.hits,
                              reference_category(a, *index.catalog, groups),
                              index.assigner->best_text(a));
    chunk.totals.hits += a.hits;
    chunk.totals.containment.add(kmers, a.hits);
    if (plan.want_split) {
        // categories_of's order: references, groups (--ties-to-group), ambiguous, none.
        size_t const refs = index.catalog->references.size();
        size_t const groups_shown = plan.o.ties_to_group ? groups.names.size() : 0;
        size_t const c = a.best.empty()          ? refs + groups_shown + 1
                         : a.category >= 0       ? static_cast<size_t>(a.category)
                         : a.group_category >= 0 ? refs + static_cast<size_t>(a.group_category)
                                                 : refs + groups_shown;
        append_read(plan, chunk.split[c], r1, mate, plan.split_format, "--split-by-category",
                    plan.o.split_by_category);
    }
    return !a.best.empty();
}

// One index: the read's hits against the rule; its TSV line. Returns the match.
bool answer_one_index(query_plan const& plan, query_chunk& chunk, size_t i, std::string_view id,
                      uint64_t kmers) {
    uint64_t const hits = chunk.counts[0][i].hits;
    bool const match = plan.indexes[0]->verdicts.matches(kmers, hits);
    append_tsv_line(chunk.tsv, id, kmers, hits, match);
    chunk.totals.hits += hits;
    chunk.totals.containment.add(kmers, hits);
    return match;
}

// A panel: every index's verdict, the read's category, its TSV line and its --split-by-category
// text. Returns whether any index matched.
bool answer_panel(query_plan const& plan, query_chunk& chunk, size_t i, std::string_view id,
                  uint64_t kmers, io::sequence_record const& r1, io::sequence_record const* mate) {
    size_t const n = plan.indexes.size();
    size_t matched_count = 0, last = 0;
    for (size_t j = 0; j < n; ++j) {
        uint64_t const hits = chunk.counts[j][i].hits;
        chunk.hits[j] = hits;
        chunk.panel.hits[j] += hits;
        chunk.panel.containment[j].add(kmers, hits);
        chunk.totals.hits += hits;
        if (plan.indexes[j]->verdicts.matches(kmers, hits)) {
            ++matched_count;
            last = j;
            ++chunk.panel.matched[j];
        }
    }
    size_t const category = category_of(matched_count, last, n);
    ++chunk.panel.categories[category];
    append_panel_tsv_line(chunk.tsv, id, kmers, chunk.hits, category_name(category, plan.panel));
    if (plan.want_split)
        append_read(plan, chunk.split[category], r1, mate, plan.split_format, "--split-by-category",
                    plan.o.split_by_category);
    return matched_count > 0;
}

// The parallel stage: looks up one batch in every index and formats everything it adds to the
// outputs, in input order.
void answer_chunk(query_plan const& plan, query_chunk& chunk) {
    size_t const n = plan.indexes.size();
    chunk.reset_outputs(n, plan.want_split ? plan.categories.size() : 0);
    if (plan.many_references) {
        query_index const& index = *plan.indexes[0];
        size_t const refs = index.catalog->references.size();
        chunk.scratch.resize(refs);
        chunk.references = reference_totals(refs, index.assigner->groups().names.size());
        count_classes(index, chunk.reads, plan.paired, chunk);
    } else {
        for (size_t j = 0; j < n; ++j)
            plan.indexes[j]->lookup->count(chunk.reads, plan.paired, chunk.counts[j]);
    }
    auto& t = chunk.totals;
    auto const& first = chunk.reads.first;
    auto const& second = chunk.reads.second;
    for (size_t i = 0; i < first.size(); ++i) {
        auto const r1 = first[i];
        io::sequence_record r2;
        if (plan.paired) r2 = second[i];
        io::sequence_record const* mate = plan.paired ? &r2 : nullptr;
        std::string_view const id = plan.paired ? pair_id(r1.name) : r1.name;
        uint64_t kmers = chunk.counts[0][i].kmers;
        // --quick stops each panel index's lookups at its own k-mer: count them all here (a scan
        // without hashing or lookups). A settled index keeps its match, as its threshold was
        // taken for at least as many k-mers (verdict.hpp, hits_settling_match).
        if (plan.panel_form && plan.o.quick)
            kmers = plan.scanner.count(r1.sequence) +
                    (plan.paired ? plan.scanner.count(r2.sequence) : 0);
        bool const match = plan.panel_form ? answer_panel(plan, chunk, i, id, kmers, r1, mate)
                           : plan.many_references
                               ? answer_many_references(plan, chunk, i, id, kmers, r1, mate)
                               : answer_one_index(plan, chunk, i, id, kmers);
        t.bases += r1.sequence.size() + (plan.paired ? r2.sequence.size() : 0);
        t.reads += plan.paired ? 2 : 1;
        t.pairs += plan.paired;
        t.kmers += kmers;
        (match ? t.matched : t.unmatched) += 1;
        if (match && plan.want_matched)
            append_read(plan, chunk.matched, r1, mate, plan.matched_format, "--matched",
                        plan.o.matched);
        else if (!match && plan.want_unmatched)
            append_read(plan, chunk.unmatched, r1, mate, plan.unmatched_format, "--unmatched",
                        plan.o.unmatched);
    }
}

// Every output of the query, opened before anything is read (a bad path fails at once) and made
// final only after the last batch (each file's temporary renamed into place).
class query_outputs {
  public:
    query_outputs(query_plan const& plan, unsigned threads) {
        auto const& o = plan.o;
        tsv_ = std::make_unique<io::output_file>(o.output);
        io::output_options const fastq_options{.compress_by_name = true,
                                               .threads = threads > 1 ? 1u : 0u};
        auto open_fastq = [&](std::string const& path, auto& slots) {
            if (path.empty()) return;
            auto const files = fastq_outputs(o, path, "");
            for (size_t m = 0; m < files.size(); ++m)
                slots[m] = std::make_unique<io::output_file>(files[m].first, fastq_options);
        };
        open_fastq(o.matched, matched_);
        open_fastq(o.unmatched, unmatched_);
        auto const split_files = split_paths(o, plan.categories);
        split_.resize(split_files.size());
        for (size_t c = 0; c < split_files.size(); ++c) open_fastq(split_files[c], split_[c]);
        if (!o.summary.empty()) summary_ = std::make_unique<io::output_file>(o.summary);
    }

    void write_preamble(std::string const& text) { tsv_->write(text); }

    // The serial in-order stage: one batch's text, in input order.
    void write(query_chunk const& chunk) {
        tsv_->write(chunk.tsv);
        for (int m = 0; m < 2; ++m) {
            if (matched_[m]) matched_[m]->write(chunk.matched[m]);
            if (unmatched_[m]) unmatched_[m]->write(chunk.unmatched[m]);
            for (size_t c = 0; c < split_.size(); ++c)
                if (split_[c][m]) split_[c][m]->write(chunk.split[c][m]);
        }
    }

    // After the last batch (and every deferred checksum): the files made final; the summary,
    // built by `summary_text` only when asked for, last.
    template <typename SummaryText>
    void commit(SummaryText&& summary_text) {
        tsv_->commit();
        for (auto* set : {&matched_, &unmatched_})
            for (auto& f : *set)
                if (f) f->commit();
        for (auto& mates : split_)
            for (auto& f : mates)
                if (f) f->commit();
        if (summary_) {
            summary_->write(summary_text());
            summary_->commit();
        }
    }

  private:
    std::unique_ptr<io::output_file> tsv_;
    std::unique_ptr<io::output_file> summary_;
    std::array<std::unique_ptr<io::output_file>, 2> matched_, unmatched_;
    std::vector<std::array<std::unique_ptr<io::output_file>, 2>> split_;  // per category
};

// The pipeline: cut (serial, in order), parse (parallel), settle (serial, in order), answer
// (parallel), write (serial, in order); 2t + 1 chunks in flight.
template <typename Write>
void read_answer_write(query_plan const& plan, read_source& source, unsigned threads,
                       Write&& write) {
    size_t const tokens = 2 * static_cast<size_t>(threads) + 1;
    batch_pool<query_chunk> pool(tokens);
    auto cut = [&](tbb::flow_control& fc) -> query_chunk* {
        if (interrupted()) {
            fc.stop();
            return nullptr;
        }
        query_chunk* chunk = pool.take();
        if (!source.cut(*chunk)) {
            pool.give_back(chunk);
            fc.stop();
            return nullptr;
        }
        return chunk;
    };
    auto parse = [&](query_chunk* chunk) {
        source.parse(*chunk);
        return chunk;
    };
    auto settle = [&](query_chunk* chunk) {
        source.settle(*chunk);
        return chunk;
    };
    auto answer = [&](query_chunk* chunk) {
        answer_chunk(plan, *chunk);
        return chunk;
    };
    auto write_out = [&](query_chunk* chunk) {
        write(*chunk);
        pool.give_back(chunk);
    };
    using tbb::filter_mode;
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, query_chunk*>(filter_mode::serial_in_order, cut) &
            tbb::make_filter<query_chunk*, query_chunk*>(filter_mode::parallel, parse) &
            tbb::make_filter<query_chunk*, query_chunk*>(filter_mode::serial_in_order, settle) &
            tbb::make_filter<query_chunk*, query_chunk*>(filter_mode::parallel, answer) &
            tbb::make_filter<query_chunk*, void>(filter_mode::serial_in_order, write_out));
    throw_if_interrupted();
}

// The tie rule of a many-reference query, in words (the TSV's "# best:" line).
std::string tie_rule_text(query_options const& o) {
    std::string text =
        "the references with the most hits among those whose verdict matches; a reference within "
        "max(" +
        std::to_string(o.clearzone) +
        ", d - 1) hits of the best ties with it, d the least count with P(Binomial(kmers, p) "
        ">= d) <= 0.001, p = fpr x the best's share of the index's k-mers; one best reference is "
        "the category, several are 'ambiguous'";
    if (o.ties_to_group) text += ", or their group where they all belong to one";
    return text;
}

// The closing line's tail: how many reads (pairs) matched.
std::string matched_text(query_plan const& plan, query_totals const& totals) {
    uint64_t const units = plan.paired ? totals.pairs : totals.reads;
    char text[200];
    std::snprintf(
        text, sizeof text, "%llu of %llu %s matched%s (%.4f%%)",
        static_cast<unsigned long long>(totals.matched), static_cast<unsigned long long>(units),
        plan.paired ? "pairs" : "reads",
        plan.panel_form && plan.indexes.size() > 1 ? " by an index" : "",
        units ? 100.0 * static_cast<double>(totals.matched) / static_cast<double>(units) : 0.0);
    return text;
}

// The whole query: every read looked up in every index, in one pass over the reads. Stages: plan,
// open the outputs, read-answer-write, check the deferred checksums, commit, summary, closing line.
void query_indexes(query_options const& o, std::vector<std::unique_ptr<query_index>>& indexes,
                   std::vector<index_spec> const& panel, unsigned threads, read_source& source,
                   progress_meter& progress) {
    query_plan const plan(o, indexes, panel, source.paired());
    std::string const rule_text = plan.rule_text();
    auto const described = plan.described();
    panel_rule const prule = plan.rule();

    query_outputs out(plan, threads);
    io::reference_catalog const* catalog = plan.many_references ? &*indexes[0]->catalog : nullptr;
    if (plan.panel_form)
        out.write_preamble(panel_tsv_preamble(described, prule, o.reads, plan.paired));
    else if (catalog)
        out.write_preamble(
            reference_tsv_preamble(described[0], *catalog, rule_text, tie_rule_text(o), o.reads));
    else
        out.write_preamble(tsv_preamble(described[0], rule_text, o.reads));

    query_totals totals;
    panel_totals panel_sums(indexes.size());
    reference_totals reference_sums(catalog ? catalog->references.size() : 0,
                                    catalog ? indexes[0]->assigner->groups().names.size() : 0);
    read_answer_write(plan, source, threads, [&](query_chunk const& chunk) {
        out.write(chunk);
        totals.add(chunk.totals);
        panel_sums.add(chunk.panel);
        if (catalog) reference_sums.add(chunk.references);
        progress.update(totals.reads, totals.bases);
    });
    for (auto& index : indexes)
        if (index->checksum.valid()) index->checksum.get();

    out.commit([&] {
        double const wall = progress.elapsed_seconds(), cpu = cpu_seconds();
        if (plan.panel_form)
            return panel_summary_json(totals, panel_sums, described, rule_text, o.reads, wall, cpu,
                                      peak_rss_bytes(), threads);
        std::string text = summary_json(totals, described[0], rule_text, o.reads, wall, cpu,
                                        peak_rss_bytes(), threads);
        // A many-reference index: its per-reference table first (FastQ Screen's, Seal's
        // refstats), then the summary's usual members.
        if (catalog)
            text.insert(
                text.find('\n') + 1,
                reference_summary_json(reference_sums, *catalog, indexes[0]->assigner->groups()));
        return text;
    });
    progress.finish(matched_text(plan, totals));
}

// Refuses a "-" (standard output) where the query derives several names from it: each mate's
// file (two reads files), each category's file.
void refuse_derived_stdout(query_options const& o) {
    if (o.split_by_category == "-")
        throw usage_error(
            "--split-by-category -: one file per category is named after this path, "
            "so it cannot be standard output; give a name (e.g. out.fq.gz -> "
            "out.NAME.fq.gz)");
    if (o.reads.size() != 2) return;
    for (auto const& [path, option] :
         {std::pair{&o.matched, "--matched"}, std::pair{&o.unmatched, "--unmatched"}})
        if (*path == "-")
            throw usage_error(std::string(option) +
                              " -: the reads are two mate files, written to two files named after "
                              "this path, so it cannot be standard output; give a name (e.g. "
                              "clean.fq.gz -> clean_1.fq.gz, clean_2.fq.gz)");
}

// Refuses, before anything is opened: an input given twice (a reads file as both mates, an index
// twice in a panel); an output that is an input or another output, or two outputs on standard
// output; every name the query would write, the mates' names included.
void refuse_same_files(query_options const& o, std::vector<index_spec> const& panel,
                       std::vector<std::string> const& categories) {
    refuse_derived_stdout(o);
    std::vector<io::named_file> inputs;
    if (!o.index.empty()) inputs.push_back({o.index, "index"});
    for (auto const& spec : panel)
        if (o.index.empty()) inputs.push_back({spec.path, "-x " + spec.name});
    for (size_t m = 0; m < o.reads.size(); ++m)
        inputs.push_back(
            {o.reads[m], o.reads.size() == 2 ? "reads, mate " + std::to_string(m + 1) : "reads"});
    std::vector<io::named_file> outputs{{o.output, "-o"}};
    if (!o.summary.empty()) outputs.push_back({o.summary, "--summary"});
    for (auto const& [path, option] :
         {std::pair{&o.matched, "--matched"}, std::pair{&o.unmatched, "--unmatched"}}) {
        if (path->empty()) continue;
        for (auto& [file, role] : fastq_outputs(o, *path, option)) outputs.push_back({file, role});
    }
    auto const split = split_paths(o, categories);
    for (size_t c = 0; c < split.size(); ++c)
        for (auto& [file, role] :
             fastq_outputs(o, split[c], "--split-by-category, " + categories[c]))
            outputs.push_back({file, role});
    io::refuse_same_files(inputs, outputs);
    io::refuse_repeated_inputs(
        {inputs.end() - static_cast<std::ptrdiff_t>(o.reads.size()), inputs.end()});
    if (o.index.empty())
        io::refuse_repeated_inputs(
            {inputs.begin(), inputs.end() - static_cast<std::ptrdiff_t>(o.reads.size())});
}

// The indexes of the command line: the one positional INDEX, or every -x. Panel indexes must exist
// (a usage error, before anything is read or written).
std::vector<index_spec> indexes_of(query_options const& o) {
    if (!o.index.empty()) {
        if (!o.panel.empty())
            throw usage_error("give the indexes either as INDEX or with -x, not both");
        return {{"", o.index}};
    }
    if (o.panel.empty()) throw usage_error("query needs an index: INDEX READS, or -x INDEX");
    auto panel = parse_panel(o.panel);
    for (auto const& spec : panel) {
        std::error_code ec;
        if (!std::filesystem::exists(spec.path, ec))
            // The exit status of a missing index is an input error's, as for INDEX.
            throw input_error("-x " + spec.name + ": '" + spec.path +
                              "': cannot open index: no such file");
    }
    for (auto const& r : o.reads)
        if (r.ends_with(".qmer"))
            throw usage_error("'" + r +
                              "' is given as reads: every index of a panel takes its own -x");
    return panel;
}

}  // namespace

void run_query(query_options const& o) {
    if (o.reads.empty() || o.reads.size() > 2)
        throw usage_error("query takes one reads file, or two for paired reads");
    auto const panel = indexes_of(o);
    // --split-by-category names its files after the categories: with INDEX, a many-reference
    // index's references (its catalog, read from the file's head before anything else is done).
    std::optional<io::reference_catalog> split_catalog;
    if (!o.index.empty() && !o.split_by_category.empty()) {
        split_catalog = reference_catalog_of(io::index_file(o.index, io::index_check::deferred));
        if (!split_catalog)
            throw usage_error(
                "--split-by-category needs the indexes given with -x NAME=FILE, or a "
                "many-reference index (qmer index -r NAME=FILE ...)");
    }
    refuse_same_files(o, panel, categories_of(o, panel, split_catalog ? &*split_catalog : nullptr));
    interrupt_guard const guard;
    unsigned const threads = resolve_threads(o.threads);
    thread_limit const limit(threads);
    // The reads are opened first: a missing or unreadable reads file is reported at once, not
    // after a host-sized index has been read (seconds). 1 MB of sequence per batch (~7,000 reads
    // of 150 bp; a chunk of single-end text is 2 MB, ~6,000 such reads): per-batch costs stay
    // negligible, and the 2t + 1 batches in flight (with their text and output) keep peak memory
    // small.
    read_source source(
        o, {.decompression_threads = threads > 1 ? threads : 0, .batch_bytes = size_t{1} << 20});
    // Every header first (mapped, its sum deferred: cheap), so that a panel of mixed k fails
    // before any index is read into memory.
    std::vector<io::index_file> opened;
    for (auto const& spec : panel) {
        opened.emplace_back(spec.path, io::index_check::deferred);
        if (opened.back().header().k != opened.front().header().k)
            throw usage_error("-x " + spec.name + " ('" + spec.path +
                              "') has k = " + std::to_string(opened.back().header().k) +
                              ", but -x " + panel.front().name + " ('" + panel.front().path +
                              "') has k = " + std::to_string(opened.front().header().k) +
                              ": the indexes of one query must share k");
    }
    // An index of no k-mers (built with --allow-empty) answers every read "no": said, not
    // silent, since it makes depletion a no-op.
    for (size_t i = 0; i < panel.size(); ++i)
        if (opened[i].header().elements == 0)
            std::fprintf(stderr,
                         "qmer: warning: index '%s' is empty (its references held no k-mer): no "
                         "read matches it\n",
                         panel[i].path.c_str());
    std::vector<std::unique_ptr<query_index>> indexes;
    for (size_t i = 0; i < panel.size(); ++i) {
        indexes.push_back(load_index(panel[i], std::move(opened[i]), o));
        if (o.index.empty() && indexes.back()->catalog)
            throw usage_error("-x " + panel[i].name + " ('" + panel[i].path +
                              "') is a many-reference index: query it alone, as INDEX (it names "
                              "the reference of each read itself)");
    }
    progress_meter progress("qmer query", o.quiet);
    query_indexes(o, indexes, panel, threads, source, progress);
}

}  // namespace qmer::app
