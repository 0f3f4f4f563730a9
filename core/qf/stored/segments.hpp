#pragma once
// One level in the rank-select layout written by several threads: the sorted fingerprints come in
// units (the bins of qmer index's sorted build, each a range of fingerprints), and each unit's
// middle is written by the thread that sorted it, between two clean cuts (writer.hpp,
// end_segment): block boundaries below which every run of the unit's fingerprints has ended. Only
// the few blocks around each unit boundary are left to the one writer that takes the units in
// order, so the serial part of a level's writing is a copy of the middles' words.
//
// Why the cuts can be found without the units before: a fingerprint's slot is the first free one
// at or after its quotient, so in increasing order slot_i = max(q_i, slot_{i-1} + 1), which is
// max(q_j + (i - j)) over j <= i: a prefix maximum. Placed from a unit's own first fingerprint,
// slot_i^local = max over the unit's j <= i; the units before add one term, c + i (c: the first
// slot they leave free). A cut at S with k of the unit's fingerprints below it stays clean when
// c + k <= S; the serial writer checks that when the unit's turn comes, and writes the whole unit
// itself in the rare case it fails (a run from the units before reaching past the cut).
//
// Words are the serial writer's byte for byte: each segment starts fresh at a clean cut, where a
// block's offset is 0 and no run is open, exactly as the one writer would find it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/qf/stored/block_format.hpp"
#include "core/qf/stored/writer.hpp"

namespace qmer::qf {

// A unit's middle segment: fingerprints [first, last) of the unit fill blocks
// [first_block, last_block), whose words are `words` once written. The serial writer may start
// the middle at a later clean cut (starts): where the units before reach past the first.
struct unit_segment {
    struct cut {
        size_t block = 0, index = 0;  // the cut's block; the unit's first fingerprint past it
    };
    static constexpr unsigned max_starts = 64;
    bool found = false;
    size_t first = 0, last = 0;
    size_t first_block = 0, last_block = 0;
    uint64_t last_fp = 0;
    cut starts[max_starts];  // clean cuts from the first on, below last_block
    unsigned start_count = 0;
    std::vector<uint64_t> words;

    // The first of the starts that the units before leave clean: `next` is the first slot they
    // leave free, `skipped` how many of this unit's first fingerprints they already hold (a
    // shared boundary fingerprint). Null when none is.
    cut const* start_after(uint64_t next, size_t skipped, uint64_t block_slots) const noexcept {
        for (unsigned i = 0; i < start_count; ++i)
            if (next + (starts[i].index - skipped) <= starts[i].block * block_slots)
                return &starts[i];
        return nullptr;
    }
};

// The middle of a unit of n fingerprints fp(0) < fp(1) < ... (all below the canonical slots'
// fingerprints), found in `seg` (its words kept): from its first clean cut past the first quotient
// (and up to max_starts - 1 later ones, for the serial writer to choose from) to its last, at or
// below the last quotient (so the next unit, whose first quotient may be this one's last, never
// reaches below it). seg.found is false when the unit has no two cuts.
template <typename FpAt>
void find_unit_segment(rank_select::shape const& shape, size_t n, FpAt&& fp, unit_segment& seg) {
    seg.found = false;
    seg.start_count = 0;
    seg.first = seg.last = seg.first_block = seg.last_block = 0;
    if (n < 2) return;
    unsigned const r = shape.remainder_bits;
    uint64_t const s = shape.block_slots();
    // Local placement: `next` is the first slot left free, `bound` the first block boundary at
    // or after it. A fingerprint of quotient q has a cut before it when bound <= q (the earlier
    // ones are below next <= bound, and their quotients below next too); a repeated quotient never
    // does (next > q then), so the loop needs no test for a new quotient. Divisions only where
    // next passes a boundary, about once a block.
    auto const boundary_at_or_after = [s](uint64_t slot) { return (slot + s - 1) / s * s; };
    uint64_t next = (fp(0) >> r) + 1;
    uint64_t bound = boundary_at_or_after(next);
    for (size_t i = 1; i < n; ++i) {
        uint64_t const q = fp(i) >> r;
        if (bound <= q) [[unlikely]] {
            if (seg.start_count < unit_segment::max_starts)
                seg.starts[seg.start_count++] = {static_cast<size_t>(bound / s), i};
            seg.last_block = static_cast<size_t>(q / s);
            seg.last = i;
        }
        next = std::max(q, next) + 1;
        if (next > bound) bound = boundary_at_or_after(next);
    }
    // The starts lie below the last cut (a start at it would leave an empty middle).
    while (seg.start_count > 0 && seg.starts[seg.start_count - 1].index >= seg.last)
        --seg.start_count;
    seg.found = seg.start_count > 0 && seg.last_block * s <= shape.canonical_slots;
    if (!seg.found) return;
    seg.first = seg.starts[0].index;
    seg.first_block = seg.starts[0].block;
    seg.last_fp = fp(seg.last - 1);
}

// Writes a found segment's words with `w` (any writer of the same shape, restarted here; reused
// from unit to unit by the thread that owns it), its fingerprints widened through `piece`.
template <typename FpAt>
void write_unit_segment(unit_segment& seg, FpAt&& fp, rank_select_writer& w,
                        std::vector<uint64_t>& piece) {
    seg.words.clear();
    auto keep = [&](std::span<uint64_t const> words) {
        seg.words.insert(seg.words.end(), words.begin(), words.end());
    };
    w.restart_at(seg.first_block);
    if (piece.empty()) piece.resize(2048);
    for (size_t at = seg.first; at < seg.last;) {
        size_t const n = std::min(piece.size(), seg.last - at);
        for (size_t i = 0; i < n; ++i) piece[i] = fp(at + i);
        if (w.append(std::span<uint64_t const>(piece.data(), n), keep) != n)
            throw std::logic_error("unit segment: the writer refused a fingerprint");
        at += n;
    }
    w.end_segment(seg.last_block, keep);
}

// The serial writer's turn for a unit: its fingerprints [skipped, n) into `w`, the level's one
// writer, which emits through `emit`: the head up to the first start the units before leave
// clean, then the middle's words as written, then the tail. Where no start is clean, or the
// level might not hold the whole unit (max_elements), the whole unit through `w`. Returns how
// many of [skipped, n) went in: fewer once the level is full.
template <typename FpAt, typename Emit>
size_t append_unit(rank_select_writer& w, unit_segment const& seg, size_t n, size_t skipped,
                   FpAt&& fp, Emit&& emit, std::vector<uint64_t>& piece) {
    if (piece.empty()) piece.resize(2048);
    auto const feed = [&](size_t from, size_t to) {
        size_t const begin = from;
        while (from < to) {
            size_t const count = std::min(piece.size(), to - from);
            for (size_t i = 0; i < count; ++i) piece[i] = fp(from + i);
            size_t const took = w.append(std::span<uint64_t const>(piece.data(), count), emit);
            from += took;
            if (took != count) break;
        }
        return from - begin;
    };
    uint64_t const s = w.shape().block_slots();
    unit_segment::cut const* const start =
        seg.found && skipped <= seg.first && w.size() + (n - skipped) <= w.max_elements()
            ? seg.start_after(w.next_slot(), skipped, s)
            : nullptr;
    if (start == nullptr) return feed(skipped, n);
    size_t const head = feed(skipped, start->index);
    if (head != start->index - skipped) return head;
    w.end_segment(start->block, emit);
    size_t const from_word = (start->block - seg.first_block) * rank_select::block_words;
    emit(std::span<uint64_t const>(seg.words).subspan(from_word));
    w.resume_at(seg.last_block, seg.last_fp, seg.last - start->index);
    return (seg.last - skipped) + feed(seg.last, n);
}

}  // namespace qmer::qf
