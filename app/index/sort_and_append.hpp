#pragma once
// The two steps every sorted build shares (app/index/sorted_build.hpp, superkmer_bins.hpp): a
// unit's values sorted in cache, and the units handed in order to the level's writer while the
// next ones are sorted.

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "app/common/interrupt.hpp"
#include "app/common/progress.hpp"
#include "core/qf/stored/segments.hpp"
#include "core/qf/stored/writer.hpp"

namespace qmer::app {

// Where a sorted build's fingerprints go: a unit's sorted, deduplicated fingerprints at a time,
// in increasing order across calls. Returns how many of them it took, fewer once the level is
// full: a rank_select_writer (the first level written straight in the query layout) or the
// concurrent table's append_sorted (a build in several passes, whose crowded windows' k-mers are
// inserted one by one afterwards).
using sorted_sink = std::function<size_t(std::span<uint64_t const>)>;

// LSD radix sort of values below 2^bits in digits of at most 13 bits (counters stay in L1), through
// a scratch buffer of the same size: 2 passes for the usual 25 bits, several times faster than
// std::sort on buckets of ~10^4 values (bench/MEASUREMENTS.md, "Sorted build"). Every digit's
// counts come from one read of the values (not one per pass), and a digit that all values share
// moves nothing.
void radix_sort(std::vector<uint32_t>& a, std::vector<uint32_t>& scratch, unsigned bits);

// Units [first, last) (buckets or bins) through `sorted(unit, out)` in parallel and handed to
// `append(unit, out)` in order. Serial: the next unit; parallel: its sorted values, into `out` (a
// std::vector<Value> that holds an earlier unit's: `sorted` replaces them; cleared first, a
// resize zeroed it all); serial in order: the append, which returns false once the level took
// less than all (nothing after goes in: larger fingerprints). Tokens bound the sorted units
// waiting for the append; each token's vector is reused from unit to unit (a fresh one per unit
// cost page faults on every unit: a bin's values take megabytes). False once an append did.
//
// Token: what a unit in flight holds (a std::vector<Value> of its sorted values, or more), made
// once per token and handed to `sorted` and `append` unit after unit.
template <typename Token, typename Sorted, typename Append>
inline bool append_tokens_in_order(uint32_t first, uint32_t last, unsigned threads, Sorted&& sorted,
                                   Append&& append, progress_meter* progress) {
    size_t const tokens = 2 * static_cast<size_t>(threads);
    std::vector<Token> buffers(tokens);
    // The free buffers: taken by the input stage (serial), given back by the append (serial);
    // never more in flight than tokens, so one is always free when the input stage runs.
    std::vector<Token*> free;
    for (auto& b : buffers) free.push_back(&b);
    std::mutex free_mutex;
    uint32_t next = first;
    uint32_t appended = 0;
    bool complete = true;
    struct unit {
        uint32_t number;
        Token* out;
    };
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, unit>(tbb::filter_mode::serial_in_order,
                                             [&](tbb::flow_control& fc) -> unit {
                                                 if (next == last || interrupted()) {
                                                     fc.stop();
                                                     return {};
                                                 }
                                                 std::lock_guard lock(free_mutex);
                                                 Token* out = free.back();
                                                 free.pop_back();
                                                 return {next++, out};
                                             }) &
                    tbb::make_filter<unit, unit>(tbb::filter_mode::parallel,
                                                 [&](unit u) {
                                                     sorted(u.number, *u.out);
                                                     return u;
                                                 }) &
                    tbb::make_filter<unit, void>(tbb::filter_mode::serial_in_order, [&](unit u) {
                        auto const began = std::chrono::steady_clock::now();
                        if (complete && !append(u.number, *u.out)) complete = false;
                        if (progress != nullptr)
                            progress->add_serial(std::chrono::duration<double>(
                                                     std::chrono::steady_clock::now() - began)
                                                     .count());
                        if (progress != nullptr)
                            progress->advance(static_cast<double>(++appended) / (last - first));
                        std::lock_guard lock(free_mutex);
                        free.push_back(u.out);
                    }));
    throw_if_interrupted();
    return complete;
}

template <typename Value, typename Sorted, typename Append>
inline bool append_in_order(uint32_t first, uint32_t last, unsigned threads, Sorted&& sorted,
                            Append&& append, progress_meter* progress) {
    return append_tokens_in_order<std::vector<Value>>(
        first, last, threads, std::forward<Sorted>(sorted), std::forward<Append>(append), progress);
}

// A level in the rank-select layout written from sorted units, each unit's middle by the thread
// that sorted it (core/qf/stored/segments.hpp): the level's one writer, which takes what is left
// in order, and where the words go, in order.
struct level_writer_sink {
    qf::rank_select_writer& writer;
    std::function<void(std::span<uint64_t const>)> emit;
};

// Units [first, last) written into `level`, each unit's middle by the thread that made it and
// the rest by the level's one writer, in order (core/qf/stored/segments.hpp): the words the one
// writer alone would write, with little left to it. `make(unit, token)` fills a token, in
// parallel; a Token has a qf::unit_segment `segment`, and size() and fp(i), the unit's
// fingerprints: strictly increasing, none below the units before (a unit's first may equal the
// last one's last: it goes in once). False once the level took less than all.
template <typename Token, typename Make>
inline bool append_segments_in_order(level_writer_sink const& level, uint32_t first, uint32_t last,
                                     unsigned threads, Make&& make, progress_meter* progress) {
    qf::rank_select::shape const shape = level.writer.shape();
    // Each thread's writer of middles (its buffers ~0.5 MiB), kept from unit to unit.
    struct writing {
        std::optional<qf::rank_select_writer> writer;
        std::vector<uint64_t> piece;
    };
    tbb::enumerable_thread_specific<writing> local;
    auto const made = [&](uint32_t unit, Token& t) {
        make(unit, t);
        auto const fp = [&](size_t i) { return t.fp(i); };
        qf::find_unit_segment(shape, t.size(), fp, t.segment);
        if (!t.segment.found) return;
        writing& mine = local.local();
        if (!mine.writer) mine.writer.emplace(shape);
        qf::write_unit_segment(t.segment, fp, *mine.writer, mine.piece);
    };
    bool any = false;
    uint64_t last_fp = 0;
    std::vector<uint64_t> piece;
    auto const append = [&](uint32_t, Token& t) {
        auto const fp = [&](size_t i) { return t.fp(i); };
        size_t const n = t.size();
        size_t const at = any && n != 0 && fp(0) == last_fp ? 1 : 0;
        size_t const took = qf::append_unit(level.writer, t.segment, n, at, fp, level.emit, piece);
        if (took != 0) {
            any = true;
            last_fp = fp(at + took - 1);
        }
        return at + took == n;
    };
    return append_tokens_in_order<Token>(first, last, threads, made, append, progress);
}

// The same for units whose sorted, distinct fingerprints go to `sink` whole.
template <typename Sorted>
inline bool append_in_order(uint32_t first, uint32_t last, unsigned threads, Sorted&& sorted,
                            sorted_sink const& sink, progress_meter* progress) {
    return append_in_order<uint64_t>(
        first, last, threads, std::forward<Sorted>(sorted),
        [&](uint32_t, std::vector<uint64_t> const& fps) { return sink(fps) == fps.size(); },
        progress);
}

}  // namespace qmer::app
