#pragma once
// Kind `expandable`, the default: the fully expandable QF (Maier, Sanders, Williger, "Concurrent
// Expandable AMQs on the Basis of Quotient Filters", SEA 2020, section 4) over locally locked
// levels. It needs no size up front (--expected only sets the first level), keeps its FPR under
// --fpr however much is inserted (Theorem 2), and can be reopened to append references.
//
// What an index of it stores is not the concurrent table but each level in the rank-and-select
// layout (core/qf/stored/block_format.hpp; app/filters/persistence.hpp,
// filter_sections<expandable_filter>): a query reads those levels in place from the file
// (open_in_place), and `qmer index` writes its first level straight in that layout from sorted
// fingerprints (build: the counted build, app/index/counted_build.hpp), and appends by merging the
// new k-mers' fingerprints into the top level (append: app/index/merge_append.hpp). The concurrent
// table is made only to insert k-mer by k-mer: where the sorted build does not fit the memory
// limit, to append to an index of the older layout or with cascading inserts, or when the
// references cannot be counted first.

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "app/filters/codec.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/stored/levels.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

struct index_build;  // app/index/index_build.hpp

template <>
struct filter_codec<filter_kind::expandable> : codec_base<qf::expandable_filter> {
    static constexpr std::string_view name = "expandable";
    static constexpr bool grows = true;
    static constexpr bool appends = true;

    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        return std::make_unique<filter_type>(options(plan));
    }

    // Built by the counted build, appended by the merge append where it can (else reopened and
    // inserted into, as every kind is): app/index/expandable_build.cpp.
    static void build(index_build& b);
    // True if the references were appended (the index written); false: nothing was written.
    static bool append(index_build& b, io::index_file const& existing);

    // Reopened to append to: its levels read hashes as the index's hash scheme says.
    static std::unique_ptr<filter_type> open(io::index_file const& index) {
        auto f = load(index);
        f->set_level_windows(index.header().hash.level_windows());
        return f;
    }

    // A first level it did not count starts at 1/8 of --expected: the least memory it takes up
    // front (`least`: that of a filter sized for all of them).
    static double least_bytes_at_start(filter_plan const& plan, double least) {
        return plan.expected_measured ? least : least / 8;
    }

    // The query-only form of an index in the rank-select layout (format 3): its levels read in
    // place from the mapped file (no copy, no table walk; qmer query). The stack's parameters and
    // every level's shape are checked; the words are not read here (a damaged word can only give
    // a wrong answer, never a hang or a crash, and the caller compares the file's checksum). Empty
    // for older levels. Throws index_error naming the file.
    static std::optional<qf::rank_select_levels> open_in_place(io::index_file const& index) {
        auto const& sections = index.sections();
        if (sections.size() < 2) return std::nullopt;
        using state = filter_sections<qf::expandable_filter>;
        if (!state::is_rank_select_level(sections[1].params)) return std::nullopt;
        try {
            size_t const arrays = state::level_arrays(sections);
            auto const& stack = sections[0].params;
            if (stack.size() != 9 || stack[0] != qf::expandable_filter::persistence_tag ||
                stack[5] != arrays - 1)
                throw std::invalid_argument("expandable filter: the first array is not its header");
            std::vector<qf::rank_select_table> levels;
            for (size_t j = 1; j < arrays; ++j)
                levels.push_back(
                    state::rank_select_level({sections[j].params, sections[j].words}, j - 1));
            // Each level's window map, from its final size (a sized level's is its own).
            auto const& hash = index.header().hash;
            uint64_t const m0 = stack[8];
            std::vector<qf::level_window_map> maps;
            for (size_t j = 0; j < levels.size(); ++j)
                maps.push_back(hash.level_windows().of(qf::expandable_filter::final_slots(
                    m0, static_cast<unsigned>(j), levels[j].capacity())));
            return qf::rank_select_levels(std::move(levels), is_minimizer_local(hash.scheme),
                                          std::move(maps));
        } catch (std::invalid_argument const& e) {
            throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
        }
    }

    // The index's minimizer gate (core/qf/stored/minimizer_gate.hpp), read in place: none where
    // the index has none. A gate whose windows are not the hash scheme's is refused as damage
    // (it would turn away stored k-mers). Throws index_error naming the file.
    static std::optional<qf::minimizer_gate> gate_in_place(io::index_file const& index) {
        auto const& sections = index.sections();
        using state = filter_sections<qf::expandable_filter>;
        try {
            size_t const levels = state::level_arrays(sections);
            if (levels == sections.size() || !qf::minimizer_gate::is_gate(sections[levels].params))
                return std::nullopt;
            auto const& hash = index.header().hash;
            auto const& gate = sections[levels];
            if (!is_minimizer_local(hash.scheme) || gate.params[1] != hash.window_bits)
                throw std::invalid_argument("minimizer gate: its windows are not the index's");
            return qf::minimizer_gate(gate.words, hash.window_bits);
        } catch (std::invalid_argument const& e) {
            throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
        }
    }

    // A many-reference index's catalog (io/reference_catalog.hpp: names, groups, the class
    // table), its last section; none for a plain index. Throws index_error naming the file when
    // it is damaged or does not fit the level's class ids.
    static std::optional<io::reference_catalog> catalog_in_place(io::index_file const& index) {
        auto const& sections = index.sections();
        if (sections.size() < 3 || !io::reference_catalog::is_catalog(sections.back().params))
            return std::nullopt;
        using state = filter_sections<qf::expandable_filter>;
        try {
            auto catalog =
                io::reference_catalog::read(sections.back().params, sections.back().words);
            if (state::level_arrays(sections) != 2 ||
                state::value_bits_of_level(sections[1].params) != catalog.value_bits)
                throw std::invalid_argument("the level's class ids are not the catalog's");
            auto const& before = sections[sections.size() - 2];
            bool const overflow = io::class_overflow::is_overflow(before.params);
            if (overflow != catalog.has_overflow() ||
                (overflow && (before.params[1] != catalog.escaped ||
                              before.params[2] != qf::class_id_bits(catalog.classes.size()))))
                throw std::invalid_argument("the class overflow is not the catalog's");
            return catalog;
        } catch (std::invalid_argument const& e) {
            throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
        }
    }

    // A many-reference index's class overflow (io/reference_catalog.hpp): the ids its slots
    // escape, read in place; empty where it has none. Call after catalog_in_place checked it.
    static io::class_overflow overflow_in_place(io::index_file const& index) {
        auto const& sections = index.sections();
        if (sections.size() < 4) return {};
        auto const& s = sections[sections.size() - 2];
        if (!io::class_overflow::is_overflow(s.params)) return {};
        try {
            return io::class_overflow(s.words, static_cast<unsigned>(s.params[2]));
        } catch (std::invalid_argument const& e) {
            throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
        }
    }

    // The filter's options for a plan (also what qmer index's sorted build plans a counted first
    // level from, before or instead of making the filter).
    static qf::expandable_options options(filter_plan const& plan) {
        qf::expandable_options o;
        o.expected_elements = plan.expected;
        o.max_false_positive_rate = plan.fpr;
        o.cascading = plan.cascading;
        o.first_level_at_final_size = plan.expected_measured;
        o.first_level_fill = plan.first_level_fill;
        // A first level fuller than the levels' delta_grow raises delta_grow to its fill, so
        // Theorem 2's bound (which takes delta_grow as the most a level holds) covers it.
        o.grow_at = std::max(o.grow_at, plan.first_level_fill);
        return o;
    }

    // The stack (tag, expected, p, delta_grow, cascading, levels, Q0, R0[, m0]), then per level
    // (q, r, total, size[, canonical[, layout tag]]).
    static filter_description describe(std::span<io::index_section_view const> sections) {
        if (sections.empty() || sections[0].params.size() < 8) return {};
        auto const& p = sections[0].params;
        filter_description d;
        d.first = {{"levels", std::to_string(p[5])},
                   {"fpr_bound", number(std::bit_cast<double>(p[2]))},
                   {"grows_at_fill", number(std::bit_cast<double>(p[3]))},
                   {"cascading", p[4] ? "true" : "false"},
                   {"first_level_remainder_bits", std::to_string(p[7])}};
        for (size_t j = 1; j < sections.size(); ++j) {
            auto const& l = sections[j].params;
            if (l.size() == 3 && l[0] == qf::gate_tag) {
                d.first.push_back({"minimizer_gate_bits_per_window", std::to_string(l[2])});
                continue;
            }
            if (l.size() < 4 || l[0] >= 64) continue;
            uint64_t const canonical = l.size() >= 5 ? l[4] : uint64_t{1} << l[0];
            d.second.push_back(quotient_table(canonical, l[2], l[1], l[3]));
            d.second.back().push_back(
                {"layout", l.size() >= 6 ? "\"rank-select\"" : "\"concurrent\""});
            if (l.size() == 7) d.second.back().push_back({"class_id_bits", std::to_string(l[6])});
        }
        return d;
    }
};

}  // namespace qmer::app
