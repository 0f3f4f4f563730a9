#include "app/index/counted_build.hpp"

#include <bit>
#include <utility>

#include "app/filters/kinds/expandable.hpp"
#include "app/index/insert_build.hpp"
#include "app/index/sorted_bins.hpp"
#include "app/index/sorted_build.hpp"
#include "core/kmer/sequence_hashing.hpp"

namespace qmer::app {
namespace {

// Hands op only the k-mers of overloaded windows (their plain hashes): the pass that inserts what
// the sorted build dropped from those windows.
struct overloaded_kmers_hashing {
    local_kmer_hashing const& local;
    template <typename F>
    bool for_each(std::string_view seq, F&& f) const {
        return local.for_each_overloaded(seq, std::forward<F>(f));
    }
};

// The kind whose first level this builds, as its errors name it.
constexpr std::string_view filter_name = filter_codec<filter_kind::expandable>::name;

}  // namespace

bool streams_level(std::string const& output) {
    return io::index_writer::can_rewrite(output);
}

counted_build build_counted(
    qf::expandable_options const& options,
    std::function<std::unique_ptr<qf::expandable_filter>()> const& make_filter,
    io::index_header& header, reference_pass const& pass, counted_build_settings const& settings,
    build_counts& counts, reference_census const& census,
    std::unique_ptr<superkmer_bins> gathered) {
    unsigned const k = pass.refs.k;
    unsigned const threads = pass.threads;
    progress_meter& progress = pass.progress;
    uint64_t const seed = settings.seed;
    build_memory const& memory = settings.memory;
    uint64_t const max_memory = memory.limit;
    std::string const& scratch = settings.scratch_folder;
    auto const first = qf::expandable_filter::plan_first_level(options);
    qf::geometry const g = first.g;
    written_first_level level{first, {}, 0, 0, {}};
    qf::rank_select::shape const shape = level.shape();
    uint64_t const written_bytes = shape.words() * sizeof(uint64_t);
    counted_build out;
    unsigned const m = locality_minimizer_length(k);
    unsigned const bits = locality_window_bits(g.canonical_slots());
    bool const local = !(settings.plain_hash || m == 0 || bits == 0);
    // A new minimizer-local index carries the window bits its later levels read (scheme 2).
    hash_scheme_params const scheme{hash_scheme::minimizer_local_levels, m, bits, {}};
    auto use_filter = [&]() -> qf::expandable_filter& {
        out.filter = make_filter();
        if (out.filter->memory_bytes() > max_memory)
            memory_exceeded(out.filter->memory_bytes(), memory);
        return *out.filter;
    };
    // The writer's path needs the scratch file's bins as a fallback (fingerprints of at most 44
    // bits), so that no limit it fits sends the build to the concurrent table: elsewhere the
    // concurrent table is made at once and filled while the references are read.
    bool const direct = spilled_fingerprint_buckets::supports(g);
    // A minimizer-local level is built from super-k-mer bins wherever they hold it; from those the
    // counting read gathered where they fit the table, else by reading the references again
    // (and the counts start over: the reading below counts them).
    bool const superkmers = local && direct && superkmer_bins::supports(g, bits);
    if (gathered && !(superkmers && gathered->fits(g, bits))) {
        gathered.reset();
        counts.reset();
    }
    if (!direct) use_filter();
    // The super-k-mer build holds the minimizer gate beside the table (2^bits x 32 bits).
    uint64_t const table_bytes = (direct ? written_bytes : out.filter->memory_bytes()) +
                                 (superkmers ? qf::gate_words(bits) * sizeof(uint64_t) : 0);
    superkmer_plan const sk =
        superkmers ? plan_superkmer_build(gathered ? std::countr_zero(gathered->bin_count())
                                                   : superkmer_bins::bin_bits_of(g, bits),
                                          bits, table_bytes, max_memory, census, k, m, threads,
                                          streams_level(settings.output))
                   : superkmer_plan{};
    // --max-memory is a promise: a limit the build cannot keep is refused here, before any k-mer
    // is stored, with what it would need.
    require_least_memory(
        superkmers ? sk.least : least_build_memory(g, table_bytes, direct, census, threads),
        table_bytes, memory);

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
        require_scratch_room(scratch,
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
    auto insert = [&](qf::expandable_filter& f, auto const& hashing, build_counts& into) {
        insert_into_filter(f, hashing, pass, into, memory, filter_name);
    };

    auto const bases = static_cast<double>(census.bases);
    plain_kmer_hashing const plain(k, seed);
    if (plan.passes == 0 || !local) {
        if (plan.passes == 0 || !build_from_sorted_bins(g, sink, plain, pass, counts, census, plan,
                                                        scratch, nullptr, [](auto&) {})
                                     .complete) {
            build_counts again;
            progress.begin_phase("inserting k-mers", bases, "bp", plan.passes == 0);
            insert(filter(), plain, plan.passes == 0 ? counts : again);
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
        local_kmer_hashing const unmarked(k, seed, m, bits, {}, extra);
        if (gathered) {
            gathered->set_table(unmarked, g);
        } else {
            if (sk.expected_record_bytes > static_cast<double>(sk.memory_budget))
                require_scratch_room(
                    scratch, static_cast<uint64_t>(sk.expected_record_bytes) - sk.memory_budget,
                    "its super-k-mers on random sequence, less what memory holds");
            gathered = std::make_unique<superkmer_bins>(unmarked, g, sk.memory_budget, scratch,
                                                        sk.buffer_bytes_per_thread);
            progress.begin_phase("reading k-mers", bases, "bp", true);
            read_reference_spans(
                pass, counts, [&](std::string_view seq) { return gathered->add(seq); },
                [] { return false; });
        }
        superkmer_bins& bins = *gathered;
        // The minimizer gate, set by the fill: it needs the spread's bits at the hash's bottom.
        std::optional<qf::gate_bits> gate;
        if (scheme.extra_window_bits() >= std::bit_width(qf::gate_bits_per_window - 1)) {
            gate.emplace(bits);
            level.gate_window_bits = bits;
            bins.set_gate(&*gate);
        }
        overloaded_windows marks;
        marks.bits.assign(((uint64_t{1} << bits) + 63) / 64, 0);
        progress.begin_phase("finding crowded windows", 0, "", false);
        bins.mark(marks, overload_threshold(g.canonical_slots(), bits));
        header.hash = scheme;
        header.hash.overloaded = marks.bits;
        // The level goes straight into the index file as its blocks are made, where the file can
        // have its header's counts written last: no copy of the level in memory (the size of the
        // index, in fresh pages) and no pass over it after the fill.
        if (writer && streams_level(settings.output)) {
            io::index_header provisional = header;
            auto const arrays = level.arrays();
            finish_header(provisional, settings.origin, header_params(arrays), 0,
                          counts.kmers.load());
            out.streamed = std::make_unique<io::index_writer>(settings.output, provisional,
                                                              io::header_counts::rewritten_later);
            out.streamed->add_section(arrays[0].params, arrays[0].words);
            out.streamed->begin_section(arrays[1].params, shape.words());
        }
        progress.begin_phase("filling the table", 1, "", false);
        // With threads to spare, each bin's middle is written by the thread that sorted it
        // (core/qf/stored/segments.hpp); on one thread that only adds the search for its cuts.
        bool const complete =
            writer && threads > 1
                ? bins.append_to(level_writer_sink{*writer, keep}, marks, threads, &progress)
                : bins.append_to(sink, marks, threads, &progress);
        counts.scratch_bytes = bins.file_bytes();
        if (gate) level.gate = gate->take();
        gathered.reset();  // the bins' memory, before a fallback's filter takes its own
        if (!complete) {   // everything again, the ordinary way (inserts of stored: no-ops)
            local_kmer_hashing const hashing(k, seed, m, bits, header.hash.overloaded, extra);
            build_counts again;
            progress.begin_phase("inserting k-mers", bases, "bp", false);
            insert(local_filter(), hashing, again);
        }
        return done();
    }
    window_marks marks(g, bits, overload_threshold(g.canonical_slots(), bits));
    // The k-mers of the windows marked so far, hashed plainly, into a sorted collection.
    auto crowded = [&](auto& plain_collection) {
        local_kmer_hashing const marked(k, seed, m, bits, marks.bits);
        build_counts again;
        (void)insert_references(plain_collection, overloaded_kmers_hashing{marked}, pass, again);
    };
    auto const result =
        build_from_sorted_bins(g, sink, local_kmer_hashing(k, seed, m, bits, {}, extra), pass,
                               counts, census, plan, scratch, &marks, crowded);
    header.hash = scheme;
    header.hash.overloaded = std::move(marks.bits);
    local_kmer_hashing const hashing(k, seed, m, bits, header.hash.overloaded, extra);
    build_counts again;
    if (!result.complete) {  // everything again, the ordinary way (inserts of stored: no-ops)
        progress.begin_phase("inserting k-mers", bases, "bp", false);
        insert(local_filter(), hashing, again);
    } else if (!result.crowded_done && marks.marked.load() != 0) {
        // Several passes: what the marked windows dropped, hashed plainly, one by one.
        progress.begin_phase("reading the k-mers of crowded windows", bases, "bp", false);
        insert(local_filter(), overloaded_kmers_hashing{hashing}, again);
    }
    return done();
}

}  // namespace qmer::app
