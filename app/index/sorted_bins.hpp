#pragma once
// The sorted build of a counted first level (app/index/sorted_build.hpp): the references are read
// once per pass, their fingerprints gathered into buckets (in memory, or in a scratch file with
// plan.spill), each pass's buckets sorted and handed to `sink` in order.

#include <memory>
#include <string>

#include "app/index/memory_plan.hpp"
#include "app/index/reference_census.hpp"
#include "app/index/reference_reading.hpp"
#include "app/index/sorted_build.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {

struct sorted_build_result {
    bool complete = true;       // false: level 0 filled up first (an estimate far too low)
    bool crowded_done = false;  // the crowded windows' k-mers went in with the append
};

// With `marks` (the minimizer-local scheme), overloaded windows are marked and their
// fingerprints dropped; in one pass, `crowded(plain)` then reads the references again and
// gathers those windows' k-mers, hashed plainly, into `plain`, which is merged into the append
// (window_marks); in several passes the marks are complete only at the end, and the caller
// inserts those k-mers one by one. Not complete if level 0 filled up first: the caller then
// inserts every k-mer the ordinary way. The first pass's counts are the build's.
template <typename Hashing, typename Crowded>
sorted_build_result build_from_sorted_bins(qf::geometry g, sorted_sink const& sink,
                                           Hashing const& hashing, reference_pass const& pass,
                                           build_counts& counts, reference_census const& census,
                                           sorted_build_plan plan,
                                           std::string const& scratch_folder, window_marks* marks,
                                           Crowded&& crowded) {
    unsigned const threads = pass.threads;
    progress_meter& progress = pass.progress;
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
        io::spill_file file(scratch_folder);
        spilled_fingerprint_buckets collected(g, file, plan.spill_buffer_bytes_per_thread, marks);
        progress.begin_phase("reading k-mers", bases, "bp", true);
        (void)insert_references(collected, hashing, pass, counts);
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
        (void)insert_references(collected, hashing, pass, counts);
        return append_marked(collected, [&] {
            return std::make_unique<fingerprint_buckets>(g, 0, buckets, 0, nullptr);
        });
    }
    bool complete = true;
    counts.passes = plan.passes;
    for (unsigned p = 0; p < plan.passes && complete; ++p) {
        uint32_t const first = static_cast<uint32_t>(uint64_t{buckets} * p / plan.passes);
        uint32_t const last = static_cast<uint32_t>(uint64_t{buckets} * (p + 1) / plan.passes);
        fingerprint_buckets collected(g, first, last, per_bucket, marks);
        build_counts pass_counts;
        std::string const of_passes =
            " (pass " + std::to_string(p + 1) + " of " + std::to_string(plan.passes) + ")";
        progress.begin_phase("reading k-mers" + of_passes, bases, "bp", p == 0);
        (void)insert_references(collected, hashing, pass, p == 0 ? counts : pass_counts);
        progress.begin_phase("filling the table" + of_passes, 1, "", false);
        complete = collected.append_to(sink, threads, &progress);
    }
    return {complete, false};
}

}  // namespace qmer::app
