// The default kind's own build and append (filter_codec<filter_kind::expandable>, declared in
// app/filters/kinds/expandable.hpp): a counted build whose first level is written in the
// rank-select layout the index stores, and an append that merges into that layout.

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/filters/kinds/expandable.hpp"
#include "app/index/counted_build.hpp"
#include "app/index/index_build.hpp"
#include "app/index/insert_build.hpp"
#include "app/index/merge_append.hpp"
#include "app/index/reference_census.hpp"

namespace qmer::app {
namespace {

using codec = filter_codec<filter_kind::expandable>;

// The census of a default build: for large references, in the same read as the gathering of
// their super-k-mers into `gathered` (count_and_gather).
reference_census take_census(index_build& b, reference_set const& refs, build_counts& counts,
                             std::unique_ptr<superkmer_bins>& gathered) {
    index_options const& o = b.options;
    if (!gathers_while_counting(refs, o.plain_hash)) return count_references(b.pass(refs), o.seed);
    // The first level a distinct count calls for (as the counted build plans it).
    auto const first_level_for = [&](uint64_t distinct) {
        filter_plan const p = plan_of(o, std::max<uint64_t>(distinct, 1), true);
        return written_first_level{
            qf::expandable_filter::plan_first_level(codec::options(p)), {}, 0, 0, {}};
    };
    gathering how{.seed = o.seed,
                  .memory_limit = b.memory.limit,
                  .scratch_folder = b.scratch_folder,
                  .streamed_level = streams_level(o.output),
                  .table_bytes_for = [&](uint64_t distinct) -> uint64_t {
                      try {
                          return first_level_for(distinct).shape().words() * sizeof(uint64_t);
                      } catch (std::invalid_argument const&) {
                          return 0;  // no such table: refused later, with the count
                      }
                  },
                  .guessed_fingerprint_bits = 64};
    try {
        how.guessed_fingerprint_bits =
            first_level_for(estimate_kmers_from_sizes(refs.paths)).plan.g.fingerprint_bits();
    } catch (std::invalid_argument const&) {
        // no such table: bins that fit none
    }
    return count_and_gather(b.pass(refs), how, counts, gathered);
}

// With --expected, the references are counted all the same where they are files, and the sorted
// build fills a first level sized from --expected where it holds them (room left for later
// --append runs), and from the count where it does not: an --expected below the count would mean
// inserts into a first level of 1/8 of it and the levels it grew, a build many times slower, more
// bits per k-mer, and each query paying every level for its absent k-mers (bench/MEASUREMENTS.md).
uint64_t expected_after_census(uint64_t expected, reference_census const& census) {
    if (census.distinct_estimate > expected) {
        std::fprintf(stderr,
                     "qmer: note: --expected %llu is below the references' ~%llu distinct "
                     "k-mers: the index is made for the count\n",
                     static_cast<unsigned long long>(expected),
                     static_cast<unsigned long long>(census.distinct_estimate));
        return census.distinct_estimate;
    }
    if (census.distinct_estimate < expected / 2)
        std::fprintf(stderr,
                     "qmer: note: --expected %llu is more than twice the references' ~%llu "
                     "distinct k-mers: the first level is made for --expected (room for "
                     "--append runs); without --expected it is made for the count, the "
                     "smallest index\n",
                     static_cast<unsigned long long>(expected),
                     static_cast<unsigned long long>(census.distinct_estimate));
    return expected;
}

}  // namespace

void codec::build(index_build& b) {
    index_options& o = b.options;
    // The counted build reads the references twice: stdin and pipes are copied first (their size on
    // disk, compressed as they come) and built from like files, rather than grown into k-mer by
    // k-mer, which costs many times the sorted fill per k-mer (bench/MEASUREMENTS.md).
    b.copy_what_cannot_be_read_twice();
    reference_set const refs = reference_set::of(o);
    uint64_t expected = o.expected;
    reference_census census;
    build_counts counts;
    // The super-k-mers a counting read gathered (large builds: one read, not two).
    std::unique_ptr<superkmer_bins> gathered;
    bool measured = false;
    if (expected == 0) {
        census = take_census(b, refs, counts, gathered);
        expected = census.distinct_estimate;
        measured = true;
    } else if (all_rereadable(refs.paths)) {
        census = take_census(b, refs, counts, gathered);
        expected = expected_after_census(expected, census);
        measured = true;
    }
    filter_plan const plan = plan_of(o, expected, measured);
    require_memory_for_plan<codec>(plan, b.memory);
    if (!measured) {
        auto filter = planned(o.filter, plan, [&] { return create(plan); });
        insert_and_write<codec>(b, new_header(o), std::move(filter), 0);
        return;
    }
    // The filter is made only if the build needs one; its plan is checked here all the same.
    qf::expandable_options const options = planned(o.filter, plan, [&] {
        qf::expandable_options const made = codec::options(plan);
        (void)qf::expandable_filter::plan_first_level(made);
        return made;
    });
    io::index_header header = new_header(o);
    counted_build_settings const settings{.seed = o.seed,
                                          .plain_hash = o.plain_hash,
                                          .memory = b.memory,
                                          .output = o.output,
                                          .scratch_folder = b.scratch_folder,
                                          .origin = b.origin()};
    counted_build built = build_counted(
        options, [plan] { return create(plan); }, header, b.pass(refs), settings, counts, census,
        std::move(gathered));
    if (!built.level) {
        write_filter_index<codec>(b, header, *built.filter, counts, 0);
        return;
    }
    written_first_level const& level = *built.level;
    auto const arrays = level.arrays();
    finish_header(header, b.origin(), header_params(arrays), level.elements, counts.kmers.load());
    b.progress.begin_phase("writing the index", 0, "", false);
    if (built.streamed) {
        if (level.gate_window_bits != 0) built.streamed->add_section(arrays[2].params, level.gate);
        std::vector<std::vector<uint64_t>> params;
        for (auto const& a : arrays) params.push_back(a.params);
        built.streamed->rewrite(header, params);
        throw_if_interrupted();
        built.streamed->commit();
    } else {
        io::index_writer writer(o.output, header);
        level.save(writer);
        throw_if_interrupted();
        writer.commit();
    }
    report_built(o.output, b.scratch_folder, b.progress, counts, level.elements,
                 static_cast<double>(level.shape().words() * sizeof(uint64_t)));
    note_levels(o.output, 1);
}

bool codec::append(index_build& b, io::index_file const& existing) {
    // The merge reads the references twice where a level does not fit its slots (then the
    // inserts read them), so stdin and pipes are copied first, as for a build.
    b.copy_what_cannot_be_read_twice();
    reference_set const refs = reference_set::of(b.options);
    if (!all_rereadable(refs.paths)) return false;
    std::optional<qf::rank_select_levels> const levels = open_in_place(existing);
    if (!levels) return false;
    build_counts merged;
    merge_settings const settings{.fill = b.options.fill,
                                  .memory = b.memory,
                                  .scratch_folder = b.scratch_folder,
                                  .output = b.options.output,
                                  .origin = b.origin()};
    auto const done =
        append_by_merge(*levels, gate_in_place(existing), existing, b.pass(refs), settings, merged);
    if (!done) return false;
    std::string const how = done->added_levels == 0
                                ? "; the new k-mers were merged into the top level in one pass"
                                : "; the new k-mers were merged into the top level and " +
                                      std::to_string(done->added_levels) + " new level" +
                                      (done->added_levels == 1 ? "" : "s") + " in one pass";
    report_built(b.options.output, b.scratch_folder, b.progress, merged, done->elements, 0,
                 how.c_str());
    return true;
}

}  // namespace qmer::app
