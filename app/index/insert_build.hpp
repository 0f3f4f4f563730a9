#pragma once
// The insert build: every k-mer of the references inserted one by one into a filter, within the
// memory limit. The whole build of the kinds without one of their own (a fixed filter sized from
// --expected or the k-mer positions, a growing one from a distinct count) and of their appends;
// the default filter's fallback where its sorted build does not fit.

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "app/common/interrupt.hpp"
#include "app/filters/codec.hpp"
#include "app/index/build_report.hpp"
#include "app/index/index_build.hpp"
#include "app/index/memory_plan.hpp"
#include "app/index/preset.hpp"
#include "app/index/reference_census.hpp"
#include "app/index/reference_reading.hpp"
#include "core/error.hpp"
#include "core/kmer/sequence_hashing.hpp"

namespace qmer::app {

// Every k-mer of the references into `filter`, hashed by `hashing`; the reading stops with a
// capacity_error when the filter outgrows the memory limit (a growing filter takes memory as it
// fills: stopped before the machine swaps) or is full (a fixed one, --filter `kind`).
template <typename Filter, typename Hashing>
void insert_into_filter(Filter& filter, Hashing const& hashing, reference_pass const& pass,
                        build_counts& counts, build_memory const& memory, std::string_view kind) {
    bool const full = insert_references(filter, hashing, pass, counts, [&] {
        if (filter.memory_bytes() > memory.limit) memory_exceeded(filter.memory_bytes(), memory);
        return false;
    });
    if (full)
        throw capacity_error("the " + std::string(kind) + " filter is full after " +
                             std::to_string(filter.size()) +
                             " k-mers: give a larger --expected, or use --filter expandable, "
                             "which grows");
}

// The plan a new filter is sized by.
inline filter_plan plan_of(index_options const& o, uint64_t expected, bool measured) {
    return {.expected = expected,
            .fpr = o.fpr,
            .cascading = o.cascading,
            .first_level_fill = o.fill,
            .expected_measured = measured};
}

// No filter takes fewer than log2(1 / fpr) bits per k-mer (Bloom filters 1.44x that, the quotient
// filters 3 status bits more); a kind may take less up front (codec::least_bytes_at_start).
// Checked before the table is allocated (and zeroed).
template <typename Codec>
void require_memory_for_plan(filter_plan const& plan, build_memory const& memory) {
    double least = static_cast<double>(plan.expected) * std::log2(1 / plan.fpr) / 8;
    if constexpr (requires { Codec::least_bytes_at_start(plan, least); })
        least = Codec::least_bytes_at_start(plan, least);
    if (least > static_cast<double>(memory.limit))
        memory_exceeded(static_cast<uint64_t>(least), memory);
}

// `plan_or_make()` (which plans or makes the filter of `plan`), its errors said as the user's:
// a geometry the filter has no room for (its quotient or remainder bits) is a usage error, an
// allocation the machine refuses (within --max-memory raised by hand) a capacity error.
template <typename Fn>
decltype(auto) planned(std::string_view kind, filter_plan const& plan, Fn&& plan_or_make) {
    try {
        return plan_or_make();
    } catch (std::invalid_argument const& e) {
        throw usage_error("--filter " + std::string(kind) + " cannot be planned for " +
                          std::to_string(plan.expected) + " k-mers at --fpr " +
                          std::to_string(plan.fpr) + ": " + e.what());
    } catch (std::bad_alloc const&) {
        throw capacity_error("the index for " + std::to_string(plan.expected) +
                             " k-mers needs more memory than this machine gives: lower "
                             "--expected, use a larger --fpr, or a machine with more memory");
    }
}

// A new index's header before its filter is built.
inline io::index_header new_header(index_options const& o) {
    io::index_header header;
    header.k = o.k;
    header.hash_seed = o.seed;
    header.filter = o.filter;
    header.fpr = o.fpr;
    header.expected = o.expected;
    record_preset(header, o);
    return header;
}

// Writes `filter` as the index b.options.output, the header finished, and says what was built.
template <typename Codec>
void write_filter_index(index_build& b, io::index_header header,
                        typename Codec::filter_type& filter, build_counts const& counts,
                        uint64_t previous_kmers) {
    index_options const& o = b.options;
    // Tables that growing left behind are no longer read by anyone: free them first.
    if constexpr (requires { filter.release_retired_tables(); }) filter.release_retired_tables();
    uint64_t const elements = filter.size();
    finish_header(header, b.origin(), Codec::params(filter), elements,
                  previous_kmers + counts.kmers.load());
    b.progress.begin_phase("writing the index", 0, "", false);
    io::index_writer writer(o.output, header);
    Codec::save(filter, writer);
    throw_if_interrupted();
    writer.commit();
    // What the user keeps: the file (the saved layout can be smaller than the filter in memory).
    report_built(o.output, b.scratch_folder, b.progress, counts, elements,
                 static_cast<double>(filter.memory_bytes()));
    if constexpr (requires { filter.levels(); }) note_levels(o.output, filter.levels());
}

// Every k-mer of the references inserted into `filter` (new, or opened to append to), hashed as
// `header` says, and the index written.
template <typename Codec>
void insert_and_write(index_build& b, io::index_header const& header,
                      std::unique_ptr<typename Codec::filter_type> filter,
                      uint64_t previous_kmers) {
    if (filter->memory_bytes() > b.memory.limit) memory_exceeded(filter->memory_bytes(), b.memory);
    build_counts counts;
    reference_set const refs = reference_set::of(b.options);
    with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
        insert_into_filter(*filter, hashing, b.pass(refs), counts, b.memory, b.options.filter);
    });
    write_filter_index<Codec>(b, header, *filter, counts, previous_kmers);
}

// A new index of a kind built by inserts: sized from --expected; without it from a distinct count
// (a growing filter) or the k-mer positions (a fixed one), read first. Stdin and pipes are copied
// to scratch files for that first read (their size on disk) instead of being refused.
template <typename Codec>
void build_by_inserts(index_build& b) {
    index_options& o = b.options;
    uint64_t expected = o.expected;
    bool measured = false;
    if (expected == 0) {
        b.copy_what_cannot_be_read_twice();
        reference_set const refs = reference_set::of(o);
        if (Codec::grows) {
            measured = true;
            expected = count_references(b.pass(refs), o.seed).distinct_estimate;
        } else {
            expected = count_kmer_positions(refs, o.filter);
        }
    }
    filter_plan const plan = plan_of(o, expected, measured);
    require_memory_for_plan<Codec>(plan, b.memory);
    auto filter = planned(o.filter, plan, [&] { return Codec::create(plan); });
    insert_and_write<Codec>(b, new_header(o), std::move(filter), 0);
}

}  // namespace qmer::app
