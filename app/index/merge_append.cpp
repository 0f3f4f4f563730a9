#include "app/index/merge_append.hpp"

#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "app/common/interrupt.hpp"
#include "app/common/progress.hpp"
#include "app/index/append_bins.hpp"
#include "app/index/sort_and_append.hpp"
#include "app/pipeline/kmer_batches.hpp"
#include "core/error.hpp"
#include "core/kmer/hash.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/stored/segments.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"

namespace qmer::app {
namespace {

struct merge_did_not_fit {};

// A level as the sorted append writes it: its shape, its room, and its section's parameters.
struct planned_level {
    qf::expandable_filter::level_table table;
    uint64_t room = 0;      // the elements it takes before it would grow or push the next level
    uint64_t elements = 0;  // what it holds once written
    qf::level_window_map map;

    qf::rank_select::shape shape() const noexcept {
        return {table.g.canonical_slots(), table.total_slots, table.g.remainder_bits};
    }
    std::vector<uint64_t> params() const {
        return {table.g.quotient_bits,     table.g.remainder_bits,     table.total_slots, elements,
                table.g.canonical_slots(), qf::rank_select::layout_tag};
    }
    uint64_t fingerprint(uint64_t h) const noexcept { return table.g.fingerprint(map.apply(h)); }
};

// The rank a gathered hash's level is chosen by: a bijective mix of it (the k-mer hash's
// finalizer, core/kmer/hash.hpp; a minimizer-local hash's top bits are its window's, shared with
// its neighbours), so that the k-mers each level takes are spread over its table like the ones
// before them. Counted in cells of its top bits: the top level takes the lowest cells.
constexpr unsigned rank_cell_bits = 16;
uint32_t rank_cell(uint64_t h) noexcept {
    return static_cast<uint32_t>(kmer_hasher{}(h) >> (64 - rank_cell_bits));
}

// What the spilled way holds besides the index, the reading and the buffers, per thread: a bin
// in flight for each of a pipeline's 2 tokens (a level's hashes, fingerprints and their radix
// scratch: 24 bytes a hash; the sort before holds 16), and a rank histogram.
uint64_t per_thread_working_bytes(uint64_t positions, unsigned bin_bits) {
    uint64_t const largest_bin = (positions >> bin_bits) * 5 / 4 + append_bins::min_buffer_values;
    return 2 * largest_bin * 24 + (uint64_t{sizeof(uint32_t)} << rank_cell_bits);
}

// A level's share of one bin's sorted hashes: the fingerprints, in order, of those `takes` keeps.
template <typename Takes>
void level_share(planned_level const& l, std::vector<uint64_t> const& hashes, Takes&& takes,
                 std::vector<uint64_t>& fps, std::vector<uint64_t>& scratch) {
    fps.clear();
    for (uint64_t h : hashes)
        if (takes(h)) fps.push_back(l.fingerprint(h));
    // A map other than the identity reorders hashes below the bin's top bits.
    if (l.map.moved != 0) radix_sort_hashes(fps, scratch, l.table.g.fingerprint_bits());
}

// A unit of a level the merge writes (app/index/sort_and_append.hpp, append_segments_in_order):
// its sorted fingerprints, and buffers kept from unit to unit.
struct unit_fps {
    std::vector<uint64_t> fps, scratch, more;
    qf::unit_segment segment;
    size_t size() const noexcept { return fps.size(); }
    uint64_t fp(size_t i) const noexcept { return fps[i]; }
    // Distinct hashes can share a fingerprint: it goes in once (a segment's fingerprints are
    // strictly increasing).
    void make_distinct() { fps.erase(std::unique(fps.begin(), fps.end()), fps.end()); }
};

// The top level's stored fingerprints are read in parts of this many, about (blocks of its table
// at a time, each part by one thread), merged with the new ones of the same range.
constexpr uint64_t top_part_elements = uint64_t{1} << 17;

}  // namespace

unsigned append_bin_bits(uint64_t positions, qf::level_windows windows, unsigned wanted) {
    if (wanted == 0)
        wanted = std::clamp(static_cast<unsigned>(std::bit_width(positions >> 16)), 6u, 12u);
    unsigned const kept_in_order = windows.identity() ? 16u : windows.window_bits;
    return std::min({wanted, kept_in_order, 16u});
}

append_memory plan_append_memory(uint64_t positions, uint64_t index_bytes, unsigned threads,
                                 unsigned bin_bits, uint64_t limit) {
    threads = std::max(1u, threads);
    append_memory plan;
    uint64_t const held = index_bytes + build_overhead_bytes(0, threads);
    // In memory: 8 bytes a hash, twice that while a thread's bin vectors grow, counted twice
    // (the positions are estimated from the files' sizes, 4x a compressed one's).
    uint64_t const in_memory = 2 * (16 * positions + index_bytes) + held - index_bytes;
    uint64_t const bins = uint64_t{1} << bin_bits;
    uint64_t const segments = positions / append_bins::min_buffer_values * 16;
    uint64_t const working = threads * per_thread_working_bytes(positions, bin_bits) + segments;
    plan.least_spilled =
        held + working + threads * bins * append_bins::min_buffer_values * sizeof(uint64_t);
    // And, as the build's fingerprints (memory_plan.hpp), no more than the larger of the index's
    // size and 256 MiB: the scratch file's way is about as fast (97.6 Mbp onto a 0.5 Mbp index:
    // 2.3-2.4 s either way, 81 MiB peak against 1.07 GiB; bench/append/README.md), so a large
    // append keeps its peak near the index's size.
    uint64_t const roomy = std::max<uint64_t>(index_bytes, uint64_t{256} << 20);
    plan.in_memory = in_memory <= limit && 16 * positions <= roomy;
    // A quarter of what is left for the buffers, as the spilled build's (memory_plan.cpp).
    uint64_t const spare = limit > plan.least_spilled ? limit - plan.least_spilled : 0;
    uint64_t const buffer_bytes =
        std::min<uint64_t>(max_spill_buffer_bytes_per_thread, spare / 4 / threads);
    plan.buffer_values =
        std::max<size_t>(append_bins::min_buffer_values,
                         static_cast<size_t>(buffer_bytes / sizeof(uint64_t) / bins));
    return plan;
}

uint64_t append_index_bytes(io::index_file const& existing,
                            std::optional<qf::minimizer_gate> const& gate) {
    return existing.file_bytes() +
           (gate ? qf::gate_words(gate->window_bits()) * sizeof(uint64_t) : 0);
}

std::optional<sorted_append> append_by_merge(qf::rank_select_levels const& levels,
                                             std::optional<qf::minimizer_gate> const& stored_gate,
                                             io::index_file const& existing,
                                             reference_pass const& pass,
                                             merge_settings const& settings, build_counts& counts) {
    unsigned const threads = std::max(1u, pass.threads);
    progress_meter& progress = pass.progress;
    using stack = qf::expandable_filter;
    io::index_header const& header = existing.header();
    auto const& sections = existing.sections();
    auto const& stack_params = sections[0].params;
    if (stack_params[4] != 0) return std::nullopt;  // cascading fills lower levels: not this way
    // The levels' element counts are known once they are written: the header is rewritten then.
    if (!io::index_writer::can_rewrite(settings.output)) return std::nullopt;
    uint64_t const m0 = stack_params.size() == 9 ? stack_params[8] : uint64_t{1} << stack_params[6];
    auto const r0 = static_cast<unsigned>(stack_params[7]);
    double const grow_at = std::bit_cast<double>(stack_params[3]);
    auto room_of = [grow_at](qf::geometry g) {
        return static_cast<uint64_t>(grow_at * static_cast<double>(g.canonical_slots()));
    };
    auto const top_index = static_cast<unsigned>(levels.levels() - 1);
    qf::rank_select_table const& top = levels.level(top_index);
    auto const top_final = stack::plan_level(m0, r0, top_index, 0);
    if (!top_final || top.geometry().remainder_bits < top_final->g.remainder_bits)
        return std::nullopt;  // not a stack this code knows how to extend
    // The top's shapes, from the one it has now: its own where it is sized (above its final
    // size, which it never leaves); else its final size's, `early` doublings short of it.
    bool const top_sized = top.capacity() > top_final->g.canonical_slots();
    unsigned top_early = 0;
    for (unsigned early = 1; !top_sized && early <= stack::max_early(m0, r0, top_index); ++early) {
        auto const smaller = stack::plan_level(m0, r0, top_index, early);
        if (!smaller || smaller->g.canonical_slots() < top.capacity()) break;
        top_early = early;
    }
    auto top_at = [&](unsigned early) -> qf::expandable_filter::level_table {
        if (top_sized)
            return {top.geometry(), static_cast<size_t>(sections[top_index + 1].params[2])};
        return *stack::plan_level(m0, r0, top_index, early);
    };
    if (auto const now = top_at(top_early); now.g.canonical_slots() != top.capacity() ||
                                            now.g.remainder_bits != top.geometry().remainder_bits)
        return std::nullopt;

    // Where the new hashes go: in memory where they fit with room to spare, else a scratch file
    // (whose least need is refused here, before any k-mer is read, if the limit is below it).
    uint64_t const positions = estimate_kmers_from_sizes(pass.refs.paths);
    qf::level_windows const windows = header.hash.level_windows();
    unsigned const bin_bits = append_bin_bits(positions, windows, settings.bin_bits);
    append_memory const memory =
        plan_append_memory(positions, append_index_bytes(existing, stored_gate), threads, bin_bits,
                           settings.memory.limit);
    std::unique_ptr<io::spill_file> file;
    if (!memory.in_memory) {
        if (memory.least_spilled > settings.memory.limit)
            throw capacity_error(
                "'" + settings.output + "': appending needs at least " +
                human_bytes(static_cast<double>(memory.least_spilled)) + " (the index " +
                human_bytes(static_cast<double>(existing.file_bytes())) +
                ", the rest for reading and sorting the new k-mers through a scratch file), more "
                "than the memory limit of " +
                human_bytes(static_cast<double>(settings.memory.limit)) +
                (settings.memory.given ? "" : " (80% of this machine's memory)") +
                ": raise --max-memory");
        require_scratch_room(settings.scratch_folder, 8 * positions,
                             "at least: 8 bytes a k-mer position, the new k-mers' hashes");
        file = std::make_unique<io::spill_file>(settings.scratch_folder);
    }
    append_bins bins(bin_bits, file.get(), memory.buffer_values);
    // The index's minimizer gate, with the new k-mers' bits added as their bins are sorted
    // (core/qf/stored/minimizer_gate.hpp). Every reference k-mer sets its bit, those some level
    // holds already included: a k-mer held only by a fingerprint it shares with another was not
    // stored itself, and its bit may be clear.
    std::optional<qf::gate_bits> gate;
    if (stored_gate) {
        gate.emplace(stored_gate->window_bits());
        gate->merge(sections.back().words);
    }
    {
        // Every k-mer's hash goes to the bins. Those some level holds already are left out once
        // each bin is sorted and made distinct (an insert checks them too): looked up once per
        // distinct k-mer rather than per position, in hash order, which walks each level's
        // table from start to end. So no hash the merge writes has a fingerprint the top level
        // stores (contains() compares exactly that fingerprint).
        progress.begin_phase("reading k-mers", static_cast<double>(positions), "bp", true);
        with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
            read_reference_spans(
                pass, counts,
                [&](std::string_view seq) -> uint64_t {
                    append_bins::thread_bins& mine = bins.local();
                    uint64_t kmers = 0;
                    hashing.for_each(seq, [&](uint64_t h) {
                        bins.add(mine, h);
                        ++kmers;
                    });
                    return kmers;
                },
                [] { return false; });
        });
    }
    // Each bin sorted and made distinct, without the k-mers the index holds; the ranks' histogram
    // of the rest.
    progress.begin_phase("sorting k-mers", 0, "", false);
    std::vector<uint64_t> cells(size_t{1} << rank_cell_bits, 0);
    {
        // A cell holds about 2^-16 of the distinct hashes: 32 bits count it on any host.
        tbb::enumerable_thread_specific<std::vector<uint32_t>> local_cells(cells.size(), 0);
        bins.sort_bins([&](uint32_t, std::vector<uint64_t>& hashes) {
            if (gate)
                for (uint64_t h : hashes) gate->set(h);
            size_t kept = 0;
            for (size_t i = 0; i < hashes.size(); ++i) {
                if (i + prefetch_distance < hashes.size())
                    levels.prefetch(hashes[i + prefetch_distance]);
                if (!levels.contains(hashes[i])) hashes[kept++] = hashes[i];
            }
            hashes.resize(kept);
            auto& mine = local_cells.local();
            for (uint64_t h : hashes) ++mine[rank_cell(h)];
        });
        for (auto const& mine : local_cells)
            for (size_t c = 0; c < cells.size(); ++c) cells[c] += mine[c];
    }

    // The levels to write: the top at the smallest size it passes through that holds its
    // elements and the new ones, or at its final size, full, and then one more level for the
    // rest. The top takes the new hashes whose rank cell is below `top_cells`.
    std::vector<planned_level> plan;
    uint32_t top_cells = static_cast<uint32_t>(cells.size());
    uint64_t top_takes = bins.distinct();
    {
        uint64_t const left = bins.distinct();
        unsigned early = top_early;
        while (early > 0 && top.size() + left > room_of(top_at(early).g)) --early;
        planned_level l;
        l.table = top_at(early);
        l.room = room_of(l.table.g);
        plan.push_back(l);
        uint64_t const room_left = l.room - std::min(l.room, top.size());
        if (room_left < left) {
            top_cells = 0;
            top_takes = 0;
            while (top_cells < cells.size() && top_takes + cells[top_cells] <= room_left)
                top_takes += cells[top_cells++];
            // The rest: in the smallest size of the next level whose room holds it, down to
            // max_early doublings short of its final size (an early top level: a few k-mers
            // onto a large index take a level their size; it grows from there as any top level
            // does), else in a level sized for it at --fill (never fuller than the stack's
            // delta_grow: Theorem 2's bound).
            uint64_t const rest = left - top_takes;
            std::optional<qf::expandable_filter::level_table> shape;
            for (unsigned e = stack::max_early(m0, r0, top_index + 1) + 1; !shape && e-- > 0;)
                if (auto const t = stack::plan_level(m0, r0, top_index + 1, e);
                    t && room_of(t->g) >= rest)
                    shape = t;
            if (!shape)
                shape = stack::plan_sized_level(m0, r0, top_index + 1, rest,
                                                std::min(settings.fill, grow_at));
            if (!shape) return std::nullopt;
            planned_level next;
            next.table = *shape;
            next.room = room_of(shape->g);
            plan.push_back(next);
        }
    }
    // Each level reads the hashes through the window map of its final size
    // (core/qf/stored/level_windows.hpp), as the filter and the queries do.
    for (size_t j = 0; j < plan.size(); ++j)
        plan[j].map = windows.of(stack::final_slots(m0, static_cast<unsigned>(top_index + j),
                                                    plan[j].table.g.canonical_slots()));
    auto to_top = [top_cells](uint64_t h) { return rank_cell(h) < top_cells; };

    // The top level is merged in parts, each a range of its table's blocks that one thread
    // decodes (rank_select_table::for_each_fingerprint_in) and merges with the new fingerprints
    // of the same range. A part's first fingerprint is its first block's first quotient's.
    size_t const top_blocks = top.shape().blocks();
    uint64_t const part_elements =
        settings.top_part_elements != 0 ? settings.top_part_elements : top_part_elements;
    auto const parts = static_cast<uint32_t>(std::clamp<uint64_t>(
        (top.size() + top_takes) / part_elements + 1, 1, std::min<uint64_t>(top_blocks, 1 << 20)));
    auto part_block = [&](uint32_t part) { return top_blocks * part / parts; };
    auto part_first_fp = [&](uint32_t part) {
        return (part_block(part) * top.shape().block_slots()) << top.geometry().remainder_bits;
    };
    // The top's share, bin after bin, kept in order (in memory or in the scratch file as the bins
    // are), with where each part's fingerprints start in it.
    sorted_stash top_share(file.get());
    std::vector<uint64_t> part_starts(parts + 1, 0);
    struct token {
        std::vector<uint64_t> hashes, fps, scratch;
    };
    if (top_takes != 0) {
        progress.begin_phase("sorting the top level's k-mers", 1, "", false);
        uint32_t part = 1;
        (void)append_tokens_in_order<token>(
            0, bins.bins(), threads,
            [&](uint32_t bin, token& t) {
                bins.read(bin, t.hashes);
                level_share(plan[0], t.hashes, to_top, t.fps, t.scratch);
            },
            [&](uint32_t, token& t) {
                for (size_t i = 0; i < t.fps.size(); ++i)
                    for (; part < parts && t.fps[i] >= part_first_fp(part); ++part)
                        part_starts[part] = top_share.size() + i;
                top_share.put(t.fps);
                return true;
            },
            &progress);
        for (; part <= parts; ++part) part_starts[part] = top_share.size();
    }

    // The new index: the header and the sections as they were, but for the top level and the
    // level after it; each of those written while the file is, never held whole in memory, and
    // the counts it learns as it writes them rewritten at the end. Ctrl-C is seen between
    // chunks: the writer, destroyed without commit(), removes its temporary file and the index
    // stays as it was.
    io::index_header out = header;
    std::vector<std::vector<uint64_t>> params;
    auto set_params = [&] {
        params.resize(top_index + 1);
        for (size_t j = 0; j <= top_index; ++j) params[j] = sections[j].params;
        params[0][5] = top_index + plan.size();
        for (auto const& l : plan) params.push_back(l.params());
        if (gate) params.push_back(qf::minimizer_gate::params(gate->window_bits()));
        out.filter_params.clear();
        for (auto const& p : params)
            out.filter_params.insert(out.filter_params.end(), p.begin(), p.end());
        uint64_t elements = 0;
        for (size_t j = 0; j < top_index; ++j) elements += levels.level(j).size();
        for (auto const& l : plan) elements += l.elements;
        out.elements = elements;
    };
    set_params();
    out.kmers_scanned = header.kmers_scanned + counts.kmers.load();
    out.qmer_version = QMER_VERSION;
    out.command = settings.origin.command_line;
    out.inputs.insert(out.inputs.end(), settings.origin.references.begin(),
                      settings.origin.references.end());
    // The room, or what the top holds already where inserts that raced with a push took it a
    // little past its room (delta_grow + 1/32 at most, Theorem 2's bound).
    auto most_of = [&](size_t j) {
        return std::max(plan[j].room, (j == 0 ? top.size() + top_takes : bins.distinct()));
    };
    // The top as it was where it takes nothing and keeps its shape: its words copied.
    bool const top_unchanged = top_takes == 0 &&
                               plan[0].table.total_slots == top.shape().total_slots &&
                               plan[0].shape().canonical_slots == top.shape().canonical_slots &&
                               plan[0].shape().remainder_bits == top.shape().remainder_bits;
    if (top_unchanged) plan[0].elements = top.size();
    auto write_top = [&](io::index_writer::word_sink const& emit) {
        qf::rank_select_writer writer(plan[0].shape(), most_of(0));
        std::atomic<uint64_t> stored{0};
        bool const complete = append_segments_in_order<unit_fps>(
            {writer, emit}, 0, parts, threads,
            [&](uint32_t part, unit_fps& t) {
                t.fps.clear();
                // One count per part, not per fingerprint.
                stored.fetch_add(
                    top.for_each_fingerprint_in(part_block(part), part_block(part + 1),
                                                [&](uint64_t fp) { t.fps.push_back(fp); }),
                    std::memory_order_relaxed);
                uint64_t const from = part_starts[part], to = part_starts[part + 1];
                if (from == to) return;
                top_share.read(from, to - from, t.scratch);
                size_t const old_end = t.fps.size();
                t.fps.insert(t.fps.end(), t.scratch.begin(), t.scratch.end());
                std::inplace_merge(t.fps.begin(),
                                   t.fps.begin() + static_cast<std::ptrdiff_t>(old_end),
                                   t.fps.end());
                t.make_distinct();
            },
            &progress);
        // A table whose parts do not add up to its count is damaged: the other way.
        if (stored.load() != top.size())
            throw std::invalid_argument("rank-select table: element count does not match");
        if (!complete) throw merge_did_not_fit{};
        plan[0].elements = writer.finish(emit);
    };
    auto write_new = [&](io::index_writer::word_sink const& emit) {
        qf::rank_select_writer writer(plan[1].shape(), most_of(1));
        bool const complete = append_segments_in_order<unit_fps>(
            {writer, emit}, 0, bins.bins(), threads,
            [&](uint32_t bin, unit_fps& t) {
                bins.read(bin, t.more);
                level_share(
                    plan[1], t.more, [&](uint64_t h) { return !to_top(h); }, t.fps, t.scratch);
                t.make_distinct();
            },
            &progress);
        if (!complete) throw merge_did_not_fit{};
        plan[1].elements = writer.finish(emit);
    };
    try {
        // Destroyed without commit() on a throw: the temporary file goes, the index stays.
        io::index_writer writer(settings.output, out, io::header_counts::rewritten_later);
        for (size_t j = 0; j < top_index + 1; ++j) writer.add_section(params[j], sections[j].words);
        progress.begin_phase(plan.size() > 1 ? "writing the top level and a new level"
                                             : "merging into the top level and writing the index",
                             1, "", false);
        if (top_unchanged)
            writer.add_section(params[top_index + 1], sections[top_index + 1].words);
        else
            writer.add_section(params[top_index + 1], plan[0].shape().words(), write_top);
        if (plan.size() > 1)
            writer.add_section(params[top_index + 2], plan[1].shape().words(), write_new);
        if (gate) writer.add_section(params.back(), gate->words());
        set_params();
        writer.rewrite(out, params);
        throw_if_interrupted();
        writer.commit();
    } catch (merge_did_not_fit const&) {
        return std::nullopt;
    } catch (std::invalid_argument const&) {
        return std::nullopt;  // a run the layout cannot hold, or a damaged table: the other way
    }
    note_levels(settings.output, top_index + plan.size());
    counts.scratch_bytes = file ? file->size() : 0;
    return sorted_append{out.elements, static_cast<unsigned>(plan.size() - 1)};
}

}  // namespace qmer::app
