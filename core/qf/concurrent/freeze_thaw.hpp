#pragma once
// Between the two layouts of a level: a quiescent locally locked filter's table written in the
// rank-select layout (freezing: how a level built by inserts is saved) and a rank-select table
// turned back into a concurrent one (thawing: an index opened to append to).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"

namespace qmer::qf {

// A quiescent locally locked filter's current table in the rank-select layout: its shape, and
// its words through emit(std::span<uint64_t const>) in order, a chunk at a time. Returns the
// number of fingerprints written.
inline rank_select::shape rank_select_shape_of(locally_locked_filter const& f) {
    return {f.geometry().canonical_slots(), f.total_slots(), f.geometry().remainder_bits};
}
template <typename Emit>
uint64_t write_rank_select(locally_locked_filter const& f, Emit&& emit) {
    rank_select_writer w(rank_select_shape_of(f));
    constexpr size_t chunk = size_t{1} << 12;
    std::vector<uint64_t> fps;
    fps.reserve(chunk);
    auto put = [&] {
        if (w.append(fps, emit) != fps.size())
            throw std::invalid_argument("quotient table: more elements than its slots hold");
        fps.clear();
    };
    f.for_each_fingerprint([&](uint64_t fp) {
        fps.push_back(fp);
        if (fps.size() == chunk) put();
    });
    put();
    return w.finish(emit);
}

// The same table in the sequential layout again, as sorted fingerprints: calls
// sink(std::span<uint64_t const>) with consecutive chunks of the fingerprints of t in increasing
// order (for locally_locked_filter::append_sorted, which rebuilds the concurrent table).
template <typename Sink>
void for_each_fingerprint_chunk(rank_select_table const& t, Sink&& sink) {
    constexpr size_t chunk = size_t{1} << 16;
    std::vector<uint64_t> fps;
    fps.reserve(chunk);
    t.for_each_fingerprint([&](uint64_t fp) {
        fps.push_back(fp);
        if (fps.size() == chunk) {
            sink(std::span<uint64_t const>(fps));
            fps.clear();
        }
    });
    if (!fps.empty()) sink(std::span<uint64_t const>(fps));
}

// The concurrent filter again from a rank-select table (an index opened to append to): an empty
// table of the same geometry and slot count, refilled by append_sorted in one pass. Throws
// std::invalid_argument if the words are not a consistent table of that shape.
inline std::unique_ptr<locally_locked_filter> thaw_rank_select(rank_select_table const& t,
                                                               growing_policy policy) {
    auto f = std::make_unique<locally_locked_filter>(
        t.geometry(), static_cast<size_t>(t.shape().total_slots), policy);
    locally_locked_filter::sorted_append_state st;
    for_each_fingerprint_chunk(t, [&](std::span<uint64_t const> fps) {
        size_t const took = f->append_sorted(fps, st);
        if (took != fps.size())
            throw std::invalid_argument("rank-select table: a run runs past the last slot");
    });
    if (f->size() != t.size())
        throw std::invalid_argument("rank-select table: element count does not match");
    return f;
}

}  // namespace qmer::qf
