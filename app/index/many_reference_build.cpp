// The many-reference build (app/index/many_reference_build.hpp has the phases and why).

#include "app/index/many_reference_build.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "app/common/interrupt.hpp"
#include "app/filters/kinds/expandable.hpp"
#include "app/filters/persistence.hpp"
#include "app/index/build_report.hpp"
#include "app/index/insert_build.hpp"
#include "core/error.hpp"
#include "core/kmer/sequence_hashing.hpp"
#include "core/qf/stored/classes.hpp"
#include "core/qf/stored/writer.hpp"
#include "io/index_file.hpp"
#include "io/reference_catalog.hpp"

namespace qmer::app {
namespace {

using codec = filter_codec<filter_kind::expandable>;
using hash_list = std::vector<uint64_t>;

// A reference's hashes, from the lists its reading threads made, sorted and distinct: one pass
// scatters them by their top bits into buckets of a few thousand (uniform hashes fill them
// evenly) straight from those lists, which are freed, and the buckets are then sorted, each while
// it is in cache, by the threads (one host-sized reference among small ones must not sort on one
// thread while the others wait). Joining the lists first and sorting the whole wrote every hash
// into fresh memory once more, which on a virtual machine costs more than the sort
// (ARCHITECTURE.md, "How the default index is built").
hash_list sorted_distinct(std::vector<hash_list*> const& parts) {
    size_t total = 0;
    for (hash_list const* p : parts) total += p->size();
    unsigned const bits =
        std::min(16u, static_cast<unsigned>(std::bit_width(total >> 11)));  // ~2,048 a bucket
    size_t const buckets = size_t{1} << bits;
    auto const bucket = [bits](uint64_t h) { return bits == 0 ? 0 : h >> (64 - bits); };
    std::vector<size_t> start(buckets + 1, 0);
    for (hash_list const* p : parts)
        for (uint64_t const h : *p) ++start[bucket(h) + 1];
    for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    hash_list out(total);
    std::vector<size_t> at(start.begin(), start.end() - 1);
    for (hash_list* p : parts) {
        for (uint64_t const h : *p) out[at[bucket(h)]++] = h;
        hash_list().swap(*p);
    }
    // Each bucket sorted and made distinct in place (its distinct count in `ends`), then the
    // buckets closed up in order: a copy of what is kept, the one serial pass.
    std::vector<size_t> ends(buckets);
    tbb::parallel_for(size_t{0}, buckets, [&](size_t b) {
        auto const from = out.begin() + static_cast<std::ptrdiff_t>(start[b]);
        auto const to = out.begin() + static_cast<std::ptrdiff_t>(start[b + 1]);
        std::sort(from, to);
        ends[b] = static_cast<size_t>(std::unique(from, to) - out.begin());
    });
    size_t kept = 0;
    for (size_t b = 0; b < buckets; ++b) {
        auto const from = out.begin() + static_cast<std::ptrdiff_t>(start[b]);
        kept =
            static_cast<size_t>(std::copy(from, out.begin() + static_cast<std::ptrdiff_t>(ends[b]),
                                          out.begin() + static_cast<std::ptrdiff_t>(kept)) -
                                out.begin());
    }
    out.resize(kept);
    out.shrink_to_fit();
    return out;
}

// Phase 1: each reference's distinct hashes, sorted. Each thread appends to its own list per
// reference (no shared write per k-mer); the lists are joined, sorted and made distinct per
// reference once the reading is done. The reading stops, and the build is refused, once the
// hashes held pass the memory limit.
std::vector<hash_list> read_hashes(index_build& b, reference_set const& refs,
                                   build_counts& counts) {
    size_t const n = refs.paths.size();
    plain_kmer_hashing const hashing(refs.k, b.options.seed);
    tbb::enumerable_thread_specific<std::vector<hash_list>> local(
        [n] { return std::vector<hash_list>(n); });
    uint64_t const budget = b.memory.limit / 2 / sizeof(uint64_t);  // half: the merge's copy
    b.progress.begin_phase("reading the references", 0, "", true);
    read_reference_spans(
        b.pass(refs), counts,
        [&](size_t file, std::string_view seq) -> uint64_t {
            hash_list& out = local.local()[file];
            size_t const before = out.size();
            hashing.for_each(seq, [&](uint64_t h) { out.push_back(h); });
            return out.size() - before;
        },
        [&] { return counts.kmers.load(std::memory_order_relaxed) > budget; });
    if (counts.kmers.load() > budget)
        memory_exceeded(counts.kmers.load() * 2 * sizeof(uint64_t), b.memory);
    b.progress.begin_phase("sorting each reference's k-mers", 0, "", false);
    std::vector<hash_list> lists(n);
    tbb::parallel_for(size_t{0}, n, [&](size_t i) {
        throw_if_interrupted();
        std::vector<hash_list*> parts;
        for (auto& per_thread : local) parts.push_back(&per_thread[i]);
        lists[i] = sorted_distinct(parts);
    });
    return lists;
}

// One range of the hash after the merge: its distinct hashes in order, each with its class (an
// id of the interner of the thread that merged it, until remapped to the build's).
struct merged_range {
    hash_list hashes;
    std::vector<uint32_t> classes;
    size_t interner = 0;
};

// The (hash, reference) pairs of hashes in [lo, hi) (to the end where `last`), sorted by hash and
// by reference within a hash: each list's part is sorted already, so the parts are merged
// pairwise, level by level (log2 of the references passes over the range's pairs, in cache),
// each merge stable so that equal hashes keep their references' order.
std::vector<std::pair<uint64_t, uint32_t>> range_pairs(std::vector<hash_list> const& lists,
                                                       uint64_t lo, uint64_t hi, bool last) {
    using pair = std::pair<uint64_t, uint32_t>;
    std::vector<pair> pairs, merged;
    std::vector<size_t> starts{0};
    for (size_t i = 0; i < lists.size(); ++i) {
        auto const from = std::lower_bound(lists[i].begin(), lists[i].end(), lo);
        auto const to = last ? lists[i].end() : std::lower_bound(from, lists[i].end(), hi);
        for (auto it = from; it != to; ++it) pairs.emplace_back(*it, static_cast<uint32_t>(i));
        if (to != from) starts.push_back(pairs.size());
    }
    auto const by_hash = [](pair const& a, pair const& b) { return a.first < b.first; };
    while (starts.size() > 2) {
        merged.resize(pairs.size());
        std::vector<size_t> next{0};
        for (size_t s = 0; s + 1 < starts.size(); s += 2) {
            size_t const a = starts[s], b = starts[s + 1];
            size_t const c = s + 2 < starts.size() ? starts[s + 2] : b;
            std::merge(pairs.begin() + static_cast<std::ptrdiff_t>(a),
                       pairs.begin() + static_cast<std::ptrdiff_t>(b),
                       pairs.begin() + static_cast<std::ptrdiff_t>(b),
                       pairs.begin() + static_cast<std::ptrdiff_t>(c),
                       merged.begin() + static_cast<std::ptrdiff_t>(a), by_hash);
            next.push_back(c);
        }
        pairs.swap(merged);
        starts.swap(next);
    }
    return pairs;
}

// Phase 2: the lists merged a range of the hash at a time: a range's (hash, reference) pairs
// from every list, merged, each run of one hash a sorted set of references (the pairs keep
// reference order within a hash), interned by the thread's own interner; then every thread's
// classes interned into `global` and the ranges' ids remapped to its ids.
std::vector<merged_range> merge_lists(std::vector<hash_list> const& lists,
                                      qf::class_interner& global) {
    uint64_t total = 0;
    for (auto const& l : lists) total += l.size();
    // About 64 Ki pairs a range: sorted in cache; at least 16 ranges, at most 2^16.
    auto const bits =
        static_cast<unsigned>(std::clamp<uint64_t>(std::bit_width(total >> 16), 4, 16));
    size_t const ranges = size_t{1} << bits;
    std::vector<merged_range> out(ranges);
    std::vector<qf::class_interner> interners(
        static_cast<size_t>(tbb::this_task_arena::max_concurrency()));
    tbb::parallel_for(size_t{0}, ranges, [&](size_t r) {
        throw_if_interrupted();
        uint64_t const lo = uint64_t{r} << (64 - bits);
        bool const last = r + 1 == ranges;
        uint64_t const hi = last ? 0 : uint64_t{r + 1} << (64 - bits);
        std::vector<std::pair<uint64_t, uint32_t>> pairs = range_pairs(lists, lo, hi, last);
        auto const slot = static_cast<size_t>(tbb::this_task_arena::current_thread_index());
        qf::class_interner& mine = interners[slot];
        merged_range& m = out[r];
        m.interner = slot;
        std::vector<uint32_t> set;
        m.hashes.reserve(pairs.size());
        m.classes.reserve(pairs.size());
        for (size_t i = 0; i < pairs.size();) {
            size_t j = i;
            set.clear();
            for (; j < pairs.size() && pairs[j].first == pairs[i].first; ++j)
                set.push_back(pairs[j].second);
            m.hashes.push_back(pairs[i].first);
            m.classes.push_back(mine.intern(set, 0));
            i = j;
        }
    });
    // Each thread's classes as the build's (few: classes, not k-mers).
    std::vector<std::vector<uint32_t>> to_global(interners.size());
    for (size_t t = 0; t < interners.size(); ++t)
        for (uint32_t id = 0; id < interners[t].size(); ++id)
            to_global[t].push_back(global.intern(interners[t].members(id), 0));
    tbb::parallel_for(size_t{0}, ranges, [&](size_t r) {
        for (uint32_t& c : out[r].classes) c = to_global[out[r].interner][c];
    });
    return out;
}

// Phase 3: the ranges' hashes turned in place into the level's fingerprints, in order; hashes
// that share a fingerprint become one entry with the union of their classes (a lookup finds one
// slot per fingerprint, which must answer for every reference of either k-mer). Counts each
// class's fingerprints in `global`. Returns the distinct fingerprints.
uint64_t to_fingerprints(std::vector<merged_range>& ranges, qf::geometry const& g,
                         qf::class_interner& global) {
    uint64_t distinct = 0;
    merged_range* previous = nullptr;  // the range holding the last fingerprint written
    for (merged_range& m : ranges) {
        size_t kept = 0;
        for (size_t i = 0; i < m.hashes.size(); ++i) {
            uint64_t const fp = g.fingerprint(m.hashes[i]);
            uint32_t const c = m.classes[i];
            if (previous != nullptr) {
                merged_range& p = kept == 0 ? *previous : m;
                size_t const at = kept == 0 ? p.hashes.size() - 1 : kept - 1;
                if (p.hashes[at] == fp) {
                    uint32_t const before = p.classes[at];
                    global.forget(before);
                    p.classes[at] = global.union_of(before, c);
                    continue;
                }
            }
            m.hashes[kept] = fp;
            m.classes[kept] = c;
            ++kept;
            global.add(c);
            ++distinct;
            previous = &m;
        }
        m.hashes.resize(kept);
        m.classes.resize(kept);
    }
    return distinct;
}

// The references' catalog: names, groups and sources, each one's k-mers and those of it alone,
// and the width of the ids beside the fingerprints (io::class_id_bits_for: on strain panels a few
// classes hold nearly every fingerprint, so a narrow id with an overflow for the rest costs fewer
// bits than every id in its slot; bench/references has the figures).
io::reference_catalog catalog_of(std::vector<named_reference> const& refs,
                                 qf::class_interner const& global,
                                 std::vector<uint32_t> const& renumbered, qf::class_table table,
                                 unsigned remainder_bits) {
    io::reference_catalog c;
    for (auto const& r : refs) c.references.push_back({r.name, r.group, r.path, 0, 0});
    std::vector<uint64_t> counts(table.size());
    for (uint32_t old = 0; old < global.size(); ++old) {
        if (renumbered[old] == UINT32_MAX) continue;
        counts[renumbered[old]] = global.count(old);
        auto const members = global.members(old);
        for (uint32_t const m : members) c.references[m].kmers += global.count(old);
        if (members.size() == 1) c.references[members[0]].unique_kmers += global.count(old);
    }
    c.classes = std::move(table);
    c.value_bits = io::class_id_bits_for(counts, remainder_bits);
    if (c.value_bits < qf::class_id_bits(counts.size()))
        for (uint64_t id = c.escape(); id < counts.size(); ++id) c.escaped += counts[id];
    return c;
}

// A many-reference index never grows (--append refuses it) and hashes plainly, so its
// false-positive rate is its fill over 2^r: the fewest remainder bits that keep that under fpr,
// without the bit the expandable filter's later levels need (Maier, Sanders, Williger, SEA 2020,
// Theorem 2). At fill 0.95 and --fpr 0.001 that is 10 bits, against the growing level's 11.
void remainder_bits_for_fill(written_first_level& level, uint64_t elements, double fpr) {
    uint64_t const m = level.plan.g.canonical_slots();
    double const fill = static_cast<double>(elements) / static_cast<double>(m);
    unsigned r = 1;
    while (r < level.plan.g.remainder_bits && fill / std::ldexp(1.0, static_cast<int>(r)) > fpr)
        ++r;
    level.plan.g = qf::geometry::with_slots(m, r);
    level.plan.stack_params[7] = r;  // the stack's R0: its first level's remainder bits
}

// Phase 4: the level's words from fingerprint << id bits | id, in order; an id past the slot's
// bits goes as the escape, and fingerprint << all ids' bits | id into `overflow`.
std::vector<uint64_t> write_level(std::vector<merged_range> const& ranges,
                                  written_first_level const& level,
                                  std::vector<uint32_t> const& renumbered,
                                  io::reference_catalog const& catalog,
                                  std::vector<uint64_t>& overflow) {
    qf::rank_select_writer writer(level.shape(), level.plan.room);
    std::vector<uint64_t> words;
    words.reserve(level.shape().words());
    auto emit = [&](std::span<uint64_t const> blocks) {
        words.insert(words.end(), blocks.begin(), blocks.end());
    };
    unsigned const c = level.value_bits, all = qf::class_id_bits(catalog.classes.size());
    uint64_t const escape = catalog.has_overflow() ? catalog.escape() : ~uint64_t{0};
    std::vector<uint64_t> batch;
    for (merged_range const& m : ranges) {
        throw_if_interrupted();
        batch.resize(m.hashes.size());
        for (size_t i = 0; i < batch.size(); ++i) {
            uint64_t const id = renumbered[m.classes[i]];
            if (id >= escape) overflow.push_back(m.hashes[i] << all | id);
            batch[i] = m.hashes[i] << c | std::min(id, escape);
        }
        if (writer.append(batch, emit) != batch.size())
            throw capacity_error(
                "the many-reference index's level has no room for its k-mers (a distinct count "
                "the level was not sized for): please report this");
    }
    writer.finish(emit);
    return words;
}

}  // namespace

void build_many_references(index_build& b, std::vector<named_reference> const& refs) {
    index_options const& o = b.options;
    reference_set const set = reference_set::of(o);
    build_counts counts;
    std::vector<hash_list> lists = read_hashes(b, set, counts);

    b.progress.begin_phase("merging the references", 0, "", false);
    qf::class_interner global;
    std::vector<merged_range> ranges = merge_lists(lists, global);
    std::vector<hash_list>().swap(lists);
    uint64_t hashes = 0;
    for (auto const& m : ranges) hashes += m.hashes.size();

    filter_plan const plan = plan_of(o, std::max<uint64_t>(hashes, 1), true);
    require_memory_for_plan<codec>(plan, b.memory);
    written_first_level level{
        planned(o.filter, plan,
                [&] { return qf::expandable_filter::plan_first_level(codec::options(plan)); }),
        {},
        0,
        0,
        {}};
    remainder_bits_for_fill(level, hashes, o.fpr);
    uint64_t const distinct = to_fingerprints(ranges, level.plan.g, global);
    auto [renumbered, table] = global.by_frequency(refs.size());
    io::reference_catalog catalog =
        catalog_of(refs, global, renumbered, std::move(table), level.plan.g.remainder_bits);
    level.value_bits = catalog.value_bits;
    // fp << id bits must fit a word (in the slots and in the overflow), and the slot's remainder
    // and id the layout's remainder field.
    if (level.plan.g.fingerprint_bits() + qf::class_id_bits(catalog.classes.size()) > 64 ||
        level.plan.g.remainder_bits + level.value_bits > qf::max_remainder_bits ||
        level.value_bits > qf::rank_select_table::max_value_bits)
        throw usage_error("the references make " + std::to_string(catalog.classes.size()) +
                          " classes, more than a many-reference index holds (2^" +
                          std::to_string(qf::rank_select_table::max_value_bits) + ")");
    b.progress.begin_phase("writing the index", 0, "", false);
    level.elements = distinct;
    std::vector<uint64_t> overflow;
    level.words = write_level(ranges, level, renumbered, catalog, overflow);
    std::vector<merged_range>().swap(ranges);

    io::index_header header = new_header(o);
    header.hash = {};  // the plain scheme: each k-mer's own hash
    auto const arrays = level.arrays();
    finish_header(header, b.origin(), header_params(arrays), distinct, counts.kmers.load());
    io::index_writer writer(o.output, header);
    level.save(writer);
    if (catalog.has_overflow())
        writer.add_section(
            io::class_overflow::params(overflow.size(), qf::class_id_bits(catalog.classes.size())),
            overflow);
    writer.add_section(catalog.params(), catalog.words());
    throw_if_interrupted();
    writer.commit();
    char how[160];
    std::snprintf(how, sizeof how, "; %zu references in %zu classes (%u-bit ids, %.3f%% escaped)",
                  refs.size(), catalog.classes.size(), catalog.value_bits,
                  distinct
                      ? 100.0 * static_cast<double>(catalog.escaped) / static_cast<double>(distinct)
                      : 0.0);
    report_built(o.output, b.scratch_folder, b.progress, counts, distinct,
                 static_cast<double>(level.words.size() * sizeof(uint64_t)), how);
}

}  // namespace qmer::app
