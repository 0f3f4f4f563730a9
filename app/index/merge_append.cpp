#include "app/index/merge_append.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "app/common/interrupt.hpp"
#include "core/kmer/hash.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"

namespace qmer::app {
namespace {

struct merge_did_not_fit {};

// The gathering pass's filter: k-mers that some level holds already are left out (an insert
// checks them too), the rest are kept, each reading thread's in a vector of its own. So no
// gathered hash has a fingerprint the top level stores (contains() compares exactly that
// fingerprint), and the merged top level holds its own elements plus the gathered ones,
// distinct: a size known before the level is written.
struct new_kmer_hashes {
    tbb::enumerable_thread_specific<std::vector<uint64_t>>& kept;
    qf::rank_select_levels const& levels;
    insert_result insert(uint64_t h) {
        if (levels.contains(h)) return insert_result::already_present;
        kept.local().push_back(h);
        return insert_result::inserted;
    }
    void prefetch(uint64_t h) const noexcept { levels.prefetch(h); }
    size_t memory_bytes() const noexcept { return 0; }  // planned up front
    size_t size() const noexcept { return 0; }
};

// A level as the sorted append writes it: its shape, its room, and its section's parameters.
struct planned_level {
    qf::expandable_filter::level_table table;
    uint64_t room = 0;      // the elements it takes before it would grow or push the next level
    uint64_t elements = 0;  // what it will hold once written

    qf::rank_select::shape shape() const noexcept {
        return {table.g.canonical_slots(), table.total_slots, table.g.remainder_bits};
    }
    std::vector<uint64_t> params() const {
        return {table.g.quotient_bits,     table.g.remainder_bits,     table.total_slots, elements,
                table.g.canonical_slots(), qf::rank_select::layout_tag};
    }
};

// The rank a gathered hash's level is chosen by: a bijective mix of it (the k-mer hash's
// finalizer, core/kmer/hash.hpp; a minimizer-local hash's top bits are its window's, shared with
// its neighbours), so that the k-mers each level takes are spread over its table like the ones
// before them.
uint64_t level_rank(uint64_t h) noexcept {
    return kmer_hasher{}(h);
}

}  // namespace

std::optional<sorted_append> append_by_merge(qf::rank_select_levels const& levels,
                                             io::index_file const& existing,
                                             reference_pass const& pass,
                                             merge_settings const& settings, build_counts& counts) {
    unsigned const threads = pass.threads;
    progress_meter& progress = pass.progress;
    using stack = qf::expandable_filter;
    io::index_header const& header = existing.header();
    auto const& sections = existing.sections();
    auto const& stack_params = sections[0].params;
    if (stack_params[4] != 0) return std::nullopt;  // cascading fills lower levels: not this way
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
    for (unsigned early = 1; !top_sized && early <= stack::level_growths; ++early) {
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

    // In memory only, beside the mapped index, within half the limit: the gathered hashes (8
    // bytes a k-mer position, from the files' sizes; 16 at most while the reading threads'
    // vectors are joined), then the distinct ones with a byte for their level and the levels'
    // fingerprints (8 more each; their ranks, 8 bytes each, come and go before).
    uint64_t const positions = estimate_kmers_from_sizes(pass.refs.paths);
    if (17 * positions + existing.file_bytes() > settings.memory_limit / 2) return std::nullopt;

    std::vector<uint64_t> fresh;  // the new k-mers' hashes, sorted, without repeats
    {
        // Each thread's vector reserved for its share of the positions (address space: pages
        // are taken only as hashes are kept), so none is reallocated while it fills, holding
        // its old and new arrays at once, in what the memory check above counts.
        size_t const share =
            static_cast<size_t>(1.1 * static_cast<double>(positions) / std::max(1u, threads));
        tbb::enumerable_thread_specific<std::vector<uint64_t>> kept([share] {
            std::vector<uint64_t> v;
            v.reserve(share);
            return v;
        });
        new_kmer_hashes gather{kept, levels};
        progress.begin_phase("reading k-mers", static_cast<double>(positions), "bp", true);
        with_kmer_hashing(header.k, header.hash_seed, header.hash, [&](auto const& hashing) {
            (void)insert_references(gather, hashing, pass, counts);
        });
        progress.begin_phase("sorting k-mers", 1, "", false);
        size_t total = 0;
        for (auto const& v : kept) total += v.size();
        fresh.reserve(total);
        for (auto& v : kept) {
            fresh.insert(fresh.end(), v.begin(), v.end());
            std::vector<uint64_t>().swap(v);
        }
        tbb::parallel_sort(fresh.begin(), fresh.end());
        fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    }

    // The levels to write: the top at the smallest size it passes through that holds its
    // elements and the new ones, or at its final size, full, and then one more level for the
    // rest.
    std::vector<planned_level> plan;
    std::vector<uint64_t> takes;  // of the new k-mers, by level of `plan`
    {
        uint64_t const left = fresh.size();
        unsigned early = top_early;
        while (early > 0 && top.size() + left > room_of(top_at(early).g)) --early;
        planned_level l;
        l.table = top_at(early);
        l.room = room_of(l.table.g);
        plan.push_back(l);
        takes.push_back(std::min(left, l.room - std::min(l.room, top.size())));
        if (takes[0] < left) {
            // The rest: in the smallest size an ordinary pushed level passes through whose room
            // holds it (it grows from there as the inserts' would), else in a level sized for
            // it at --fill (never fuller than the stack's delta_grow: Theorem 2's bound).
            uint64_t const rest = left - takes[0];
            std::optional<qf::expandable_filter::level_table> shape;
            for (unsigned e = stack::level_growths + 1; !shape && e-- > 0;)
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
            takes.push_back(rest);
        }
    }
    // Each new hash's level (an index into plan): the lowest ranks go to the top.
    std::vector<uint8_t> level_of(fresh.size(), 0);
    if (plan.size() > 1) {
        uint64_t last_rank = 0;  // the highest rank the top takes
        if (takes[0] != 0) {
            std::vector<uint64_t> ranks(fresh.size());
            for (size_t i = 0; i < fresh.size(); ++i) ranks[i] = level_rank(fresh[i]);
            auto const nth = ranks.begin() + static_cast<ptrdiff_t>(takes[0] - 1);
            std::nth_element(ranks.begin(), nth, ranks.end());
            last_rank = *nth;
        }
        for (size_t i = 0; i < fresh.size(); ++i)
            level_of[i] = takes[0] == 0 || level_rank(fresh[i]) > last_rank;
    }
    // Each level's new fingerprints, sorted and distinct (two hashes may share a fingerprint); a
    // level's elements, its own plus these, are then known before the file's header is written.
    // Each level reads the hashes through the window map of its final size
    // (core/qf/stored/level_windows.hpp), as the filter and the queries do; a map other than the
    // identity reorders them, so each level's fingerprints are sorted after.
    std::vector<qf::level_window_map> maps;
    for (size_t j = 0; j < plan.size(); ++j) {
        auto const level = static_cast<unsigned>(top_index + j);
        maps.push_back(header.hash.level_windows().of(
            stack::final_slots(m0, level, plan[j].table.g.canonical_slots())));
    }
    std::vector<std::vector<uint64_t>> adds(plan.size());
    for (size_t j = 0; j < plan.size(); ++j) adds[j].reserve(takes[j]);
    for (size_t i = 0; i < fresh.size(); ++i) {
        size_t const j = level_of[i];
        adds[j].push_back(plan[j].table.g.fingerprint(maps[j].apply(fresh[i])));
    }
    fresh = {};
    level_of = {};
    for (size_t j = 0; j < plan.size(); ++j) {
        if (maps[j].moved != 0) tbb::parallel_sort(adds[j].begin(), adds[j].end());
        adds[j].erase(std::unique(adds[j].begin(), adds[j].end()), adds[j].end());
        plan[j].elements = (j == 0 ? top.size() : 0) + adds[j].size();
    }

    // The new index: the header and the sections as they were, but for the top level and the
    // level after it; each of those written while the file is, its fingerprints merged in
    // order, never held whole in memory. Ctrl-C is seen between chunks: the writer, destroyed
    // without commit(), removes its temporary file and the index stays as it was.
    io::index_header out = header;
    std::vector<std::vector<uint64_t>> params;
    for (size_t j = 0; j <= top_index; ++j) params.push_back(sections[j].params);
    params[0][5] = top_index + plan.size();
    for (auto const& l : plan) params.push_back(l.params());
    out.filter_params.clear();
    for (auto const& p : params)
        out.filter_params.insert(out.filter_params.end(), p.begin(), p.end());
    uint64_t elements = 0;
    for (size_t j = 0; j < top_index; ++j) elements += levels.level(j).size();
    for (auto const& l : plan) elements += l.elements;
    out.elements = elements;
    out.kmers_scanned = header.kmers_scanned + counts.kmers.load();
    out.qmer_version = QMER_VERSION;
    out.command = settings.origin.command_line;
    out.inputs.insert(out.inputs.end(), settings.origin.references.begin(),
                      settings.origin.references.end());
    progress.begin_phase(plan.size() > 1 ? "writing the top level and a new level"
                                         : "merging into the top level and writing the index",
                         0, "", false);
    // Level plan[j], from `stored` (the top's own fingerprints, or none) merged with its share.
    auto write_level = [&](size_t j, qf::rank_select_table const* stored) {
        return [&, j, stored](io::index_writer::word_sink const& emit) {
            planned_level const& l = plan[j];
            // The room, or what the top holds already where inserts that raced with a push
            // took it a little past its room (delta_grow + 1/32 at most, Theorem 2's bound).
            qf::rank_select_writer writer(l.shape(), std::max(l.room, l.elements));
            std::vector<uint64_t> chunk;
            chunk.reserve(size_t{1} << 16);
            auto flush = [&] {
                throw_if_interrupted();
                if (writer.append(chunk, emit) != chunk.size()) throw merge_did_not_fit{};
                chunk.clear();
            };
            auto put = [&](uint64_t fp) {
                chunk.push_back(fp);
                if (chunk.size() == chunk.capacity()) flush();
            };
            std::vector<uint64_t> const& mine = adds[j];
            size_t next = 0;
            if (stored)
                stored->for_each_fingerprint([&](uint64_t fp) {
                    for (; next < mine.size() && mine[next] < fp; ++next) put(mine[next]);
                    put(fp);
                });
            for (; next < mine.size(); ++next) put(mine[next]);
            flush();
            if (writer.finish(emit) != l.elements) throw merge_did_not_fit{};
        };
    };
    try {
        // Destroyed without commit() on a throw: the temporary file goes, the index stays.
        io::index_writer writer(settings.output, out);
        for (size_t j = 0; j < top_index + 1; ++j) writer.add_section(params[j], sections[j].words);
        for (size_t j = 0; j < plan.size(); ++j)
            writer.add_section(params[top_index + 1 + j], plan[j].shape().words(),
                               write_level(j, j == 0 ? &top : nullptr));
        throw_if_interrupted();
        writer.commit();
    } catch (merge_did_not_fit const&) {
        return std::nullopt;
    } catch (std::invalid_argument const&) {
        return std::nullopt;  // a run the layout cannot hold, or a damaged table: the other way
    }
    note_levels(settings.output, top_index + plan.size());
    return sorted_append{elements, static_cast<unsigned>(plan.size() - 1)};
}
}  // namespace qmer::app
