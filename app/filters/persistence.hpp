#pragma once
// Moving a filter between memory and the index file: the filter's arrays (core/filter/filter.hpp,
// filter_array) become the index file's sections and back. filter_sections<F> adapts each filter's
// own API (arrays()/from_arrays() where a filter has them, its restore or word constructor
// otherwise). Geometry a filter refuses, and quotient filter tables whose status bits do not
// describe a quiescent, consistent table (core/qf/table_check.hpp), are a damaged index, reported
// as index_error naming the file.

#include <bit>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bloom/blocked_bloom_filter.hpp"
#include "core/bloom/bloom_filter.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"
#include "core/error.hpp"
#include "core/filter/filter.hpp"
#include "core/qf/baseline/external_locks.hpp"
#include "core/qf/baseline/linear_probing.hpp"
#include "core/qf/concurrent/expandable.hpp"
#include "core/qf/concurrent/freeze_thaw.hpp"
#include "core/qf/concurrent/locally_locked.hpp"
#include "core/qf/stored/levels.hpp"
#include "core/qf/stored/minimizer_gate.hpp"
#include "core/qf/stored/table.hpp"
#include "core/qf/stored/writer.hpp"
#include "core/qf/table_check.hpp"
#include "io/index_file.hpp"
#include "io/reference_catalog.hpp"

namespace qmer::app {

template <typename F>
struct filter_sections {
    static std::vector<filter_array> arrays(F const& f) { return f.arrays(); }
    static std::unique_ptr<F> from_arrays(std::span<filter_array const> a) {
        return F::from_arrays(a);
    }
};

// Geometry from a damaged (or crafted) file must be refused before a table is allocated for it:
// the filters' constructors allocate and zero their table first and compare it with the saved
// words only afterwards, so a damaged slot count could ask for any amount of memory (found by
// fuzz/index_damage_fuzz). `slots` slots of `slot_bits` bits need at least
// slots / (64 / slot_bits) words; the saved words must hold them.
inline void check_slots_fit(uint64_t slots, uint64_t slot_bits, size_t words, char const* what) {
    if (slot_bits == 0 || slot_bits > 64)
        throw std::invalid_argument(std::string(what) + ": bad slot width");
    if (slots / (64 / slot_bits) > words)
        throw std::invalid_argument(std::string(what) + ": more slots than the saved words hold");
}

// The filters trust their tables: a saved lock state or runs that contradict their status bits
// make inserts and queries wait forever or index outside the table (found by fuzzing crafted
// files, fuzz/README.md). Checked once, on the saved words, before a filter adopts them.
inline void check_quotient_table(std::span<uint64_t const> words, uint64_t canonical_slots,
                                 unsigned remainder_bits, uint64_t total_slots,
                                 std::string const& what) {
    std::string const why = qf::check_table(words, {remainder_bits, canonical_slots, total_slots});
    if (!why.empty()) throw std::invalid_argument(what + ": " + why);
}

// The locally locked QF (with or without bounded growing): (q, r, total slots, size, growing,
// grow_at x 1e6) and the current table's groups.
template <>
struct filter_sections<qf::locally_locked_filter> {
    static std::vector<filter_array> arrays(qf::locally_locked_filter const& f) {
        auto const g = f.geometry();
        return {{{g.quotient_bits, g.remainder_bits, f.total_slots(), f.size(),
                  f.policy().enabled ? 1u : 0u, static_cast<uint64_t>(f.policy().grow_at * 1e6)},
                 atomic_words(f.groups())}};
    }
    static std::unique_ptr<qf::locally_locked_filter> from_arrays(
        std::span<filter_array const> arrays) {
        if (arrays.size() != 1 || arrays[0].params.size() != 6)
            throw std::invalid_argument(
                "locally locked filter: expected one array of 6 parameters");
        auto const& p = arrays[0].params;
        // The ranges qf::geometry::validate() accepts, checked before anything is allocated.
        if (p[0] < 1 || p[0] > qf::max_quotient_bits || p[1] < 1 || p[1] > qf::max_remainder_bits)
            throw std::invalid_argument("locally locked filter: bad geometry");
        check_slots_fit(p[2], p[1] + 3, arrays[0].words.size(), "locally locked filter");
        if (p[3] > p[2])
            throw std::invalid_argument("locally locked filter: more elements than slots");
        // A growing filter doubles whenever its fill reaches grow_at: a crafted fill near 0 would
        // double it at every insert, up to 2^40 slots. qmer writes 0.9; the range is the one the
        // expandable filter accepts for its levels.
        qf::growing_policy const policy{p[4] != 0, static_cast<double>(p[5]) / 1e6};
        if (p[4] > 1 || (policy.enabled && !(policy.grow_at >= 0.25 && policy.grow_at <= 0.98)))
            throw std::invalid_argument("locally locked filter: bad growing parameters");
        check_quotient_table(arrays[0].words, uint64_t{1} << p[0], static_cast<unsigned>(p[1]),
                             p[2], "locally locked filter");
        return std::make_unique<qf::locally_locked_filter>(static_cast<unsigned>(p[0]),
                                                           static_cast<unsigned>(p[1]), p[2],
                                                           arrays[0].words, p[3], policy);
    }
};

// The lock-free linear probing QF loads through its own from_arrays, which checks its 2^q slots of
// r + 3 bits against the saved words before it allocates the table.

// The expandable QF. Saved (index format 3): array 0 holds the stack's own parameters; array
// 1 + j holds level j in the rank-and-select layout (core/qf/stored/block_format.hpp), params {q,
// r, total slots, size, canonical slots, layout tag}, its blocks written straight from the
// concurrent table as they are made. Queries read those blocks in place
// (filter_codec<expandable>::open_in_place). Loaded to append to, each level is refilled into its
// concurrent table first; levels of formats 1 and 2 (the concurrent layout, 4 or 5 params) load
// straight into it. Each level's concurrent words are checked against its geometry and status bits
// before the filter adopts them.
template <>
struct filter_sections<qf::expandable_filter> {
    static std::vector<filter_array> arrays(qf::expandable_filter const& f) {
        auto a = f.arrays();
        for (size_t j = 1; j < a.size(); ++j) {
            a[j].params.push_back(qf::rank_select::layout_tag);
            a[j].words = {};  // written by save(), not from a view
        }
        return a;
    }
    static void save(qf::expandable_filter const& f, io::index_writer& w) {
        auto const a = arrays(f);
        w.add_section(a[0].params, a[0].words);
        for (size_t j = 1; j < a.size(); ++j) {
            auto const& level = f.level(static_cast<unsigned>(j - 1));
            w.add_section(
                a[j].params, qf::rank_select_shape_of(level).words(),
                [&](io::index_writer::word_sink const& put) { qf::write_rank_select(level, put); });
        }
    }
    static std::unique_ptr<qf::expandable_filter> from_arrays(std::span<filter_array const> a) {
        // A filter loaded to take inserts has no gate: the index it is saved to has none
        // (core/qf/stored/minimizer_gate.hpp).
        std::vector<filter_array> levels(a.begin(),
                                         a.begin() + static_cast<std::ptrdiff_t>(level_arrays(a)));
        std::vector<std::unique_ptr<qf::locally_locked_filter>> thawed;
        for (size_t j = 1; j < levels.size(); ++j) {
            if (!is_rank_select_level(levels[j].params)) continue;
            if (value_bits_of_level(levels[j].params) != 0)
                throw std::invalid_argument(
                    "a many-reference index's level carries class ids, which the concurrent "
                    "filter does not");
            auto const t = rank_select_level(levels[j], j - 1);
            thawed.push_back(qf::thaw_rank_select(t, {}));
            levels[j].params.resize(5);
            levels[j].words = atomic_words(thawed.back()->groups());
        }
        for (size_t j = 1; j < levels.size(); ++j) {
            auto const& p = levels[j].params;
            if ((p.size() != 4 && p.size() != 5) || p[1] > qf::max_remainder_bits)
                continue;  // from_arrays refuses
            std::string const what = "expandable filter level " + std::to_string(j - 1);
            check_slots_fit(p[2], p[1] + 3, levels[j].words.size(), what.c_str());
            if (p[0] < 1 || p[0] > qf::max_quotient_bits || p[1] < 1)
                continue;  // from_arrays refuses these
            uint64_t const canonical = p.size() == 5 ? p[4] : uint64_t{1} << p[0];
            if (canonical > (uint64_t{1} << p[0])) continue;  // and these
            check_quotient_table(levels[j].words, canonical, static_cast<unsigned>(p[1]), p[2],
                                 what);
        }
        return qf::expandable_filter::from_arrays(levels);
    }

    // The arrays of the stack and its levels: all but a trailing minimizer gate (format 9), which
    // must be the last and match the levels' windows (checked where it is read).
    // A many-reference index (format 10) ends with its class overflow, where it has one, and its
    // reference catalog (io/reference_catalog.hpp), after the levels and any gate.
    template <typename Arrays>
    static size_t level_arrays(Arrays const& a) {
        size_t n = a.size();
        if (n >= 3 && io::reference_catalog::is_catalog(a[n - 1].params)) --n;
        if (n >= 3 && io::class_overflow::is_overflow(a[n - 1].params)) --n;
        if (n >= 3 && qf::minimizer_gate::is_gate(a[n - 1].params)) --n;
        return n;
    }
    // {q, r, total, size, canonical, tag}, and a 7th word where the slots carry value bits (a
    // many-reference index's class ids: rank_select_table's value_bits).
    static bool is_rank_select_level(std::span<uint64_t const> p) {
        return (p.size() == 6 || p.size() == 7) && p[5] == qf::rank_select::layout_tag;
    }
    static unsigned value_bits_of_level(std::span<uint64_t const> p) {
        return p.size() == 7 ? static_cast<unsigned>(std::min<uint64_t>(p[6], 64)) : 0;
    }
    // Level `level`'s rank-select view: its shape from params {q, r, total, size, canonical,
    // tag}, which must agree with each other and with the words. Throws std::invalid_argument.
    static qf::rank_select_table rank_select_level(filter_array const& a, size_t level) {
        auto const& p = a.params;
        std::string const what = "expandable filter level " + std::to_string(level);
        if (!is_rank_select_level(p))
            throw std::invalid_argument(what + ": not a rank-select level");
        unsigned const c = value_bits_of_level(p);
        if (p[0] < 1 || p[0] > qf::max_quotient_bits || p[1] < 1 ||
            p[1] + c > qf::max_remainder_bits || p[0] + p[1] > qf::max_fingerprint_bits ||
            p[4] < 1 || qf::geometry::with_slots(p[4], 1).quotient_bits != p[0] ||
            (p.size() == 7 && (c < 1 || c > qf::rank_select_table::max_value_bits)))
            throw std::invalid_argument(what + ": bad geometry");
        return qf::rank_select_table({p[4], p[2], static_cast<unsigned>(p[1]) + c}, a.words, p[3],
                                     c);
    }
};

// An expandable index whose one level qmer index's sorted build wrote straight in the
// rank-select layout (qf::rank_select_writer), never holding the concurrent table: its arrays
// are those filter_sections<qf::expandable_filter>::arrays() and save() give for a filter holding
// the same level (the same parameters, the same words), so it loads and appends alike.
struct written_first_level {
    qf::expandable_filter::first_level_plan plan;
    std::vector<uint64_t> words;  // the level's blocks (rank_select::shape::words() of them)
    uint64_t elements = 0;
    // Its minimizer gate (core/qf/stored/minimizer_gate.hpp), a section after the level, where
    // gate_window_bits != 0 (its words, gate_words(gate_window_bits) of them, once filled).
    unsigned gate_window_bits = 0;
    std::vector<uint64_t> gate;
    // A many-reference index's class id bits beside each remainder (0: a plain index); the
    // words are then those of a table of remainder_bits + value_bits bits a slot.
    unsigned value_bits = 0;

    qf::rank_select::shape shape() const noexcept {
        return {plan.g.canonical_slots(), plan.total_slots, plan.g.remainder_bits + value_bits};
    }
    std::vector<filter_array> arrays() const {
        auto const& g = plan.g;
        std::vector<filter_array> out{{plan.stack_params, {}},
                                      {{g.quotient_bits, g.remainder_bits, plan.total_slots,
                                        elements, g.canonical_slots(), qf::rank_select::layout_tag},
                                       words}};
        if (value_bits != 0) out[1].params.push_back(value_bits);
        if (gate_window_bits != 0)
            out.push_back({qf::minimizer_gate::params(gate_window_bits), gate});
        return out;
    }
    void save(io::index_writer& w) const {
        for (auto const& a : arrays()) w.add_section(a.params, a.words);
    }
};

// The externally locked QF: (q, r, size) and its groups. Up to format 4 its slots held the status
// bits in the other order (occupied in bit 0, shifted in bit 2); such files are converted to the
// one order (core/qf/three_bit_layout.hpp) as they load, and answer as before.
template <>
struct filter_sections<qf::external_locks_filter> {
    static constexpr uint32_t one_status_order_since = 5;

    static std::vector<filter_array> arrays(qf::external_locks_filter const& f) {
        return {
            {{f.quotient_bits(), f.remainder_bits(), f.size()}, atomic_words(f.slots().groups())}};
    }
    static std::unique_ptr<qf::external_locks_filter> from_arrays(
        std::span<filter_array const> a, uint32_t format_version = io::index_format_version) {
        if (a.size() != 1 || a[0].params.size() != 3 || a[0].params[0] < 1 ||
            a[0].params[0] > qf::max_quotient_bits || a[0].params[1] < 1 ||
            a[0].params[1] > qf::max_remainder_bits)
            throw std::invalid_argument(
                "externally locked filter: expected one array (q, r, size)");
        check_slots_fit(uint64_t{1} << a[0].params[0], a[0].params[1] + 3, a[0].words.size(),
                        "externally locked filter");
        std::span<uint64_t const> words = a[0].words;
        std::vector<uint64_t> converted;
        if (format_version < one_status_order_since) {
            converted = swap_occupied_and_shifted(words, static_cast<unsigned>(a[0].params[1]) + 3);
            words = converted;
        }
        check_quotient_table(
            words, uint64_t{1} << a[0].params[0], static_cast<unsigned>(a[0].params[1]),
            (uint64_t{1} << a[0].params[0]) + qf::external_locks_filter::overflow_slots,
            "externally locked filter");
        auto f = std::make_unique<qf::external_locks_filter>(static_cast<unsigned>(a[0].params[0]),
                                                             static_cast<unsigned>(a[0].params[1]));
        f->restore(words, a[0].params[2]);
        return f;
    }

  private:
    // Bits 0 and 2 of every slot exchanged: the format-4 order (1 occupied, 2 continuation,
    // 4 shifted) to the one of core/qf/three_bit_layout.hpp (4, 2, 1), a group at a time.
    static std::vector<uint64_t> swap_occupied_and_shifted(std::span<uint64_t const> words,
                                                           unsigned slot_bits) {
        uint64_t lane0 = 0;
        for (unsigned k = 0; k < 64 / slot_bits; ++k) lane0 |= uint64_t{1} << (k * slot_bits);
        std::vector<uint64_t> out(words.begin(), words.end());
        for (uint64_t& w : out) w = (w & ~(lane0 * 5)) | ((w & lane0) << 2) | ((w >> 2) & lane0);
        return out;
    }
};

// Bloom filters: (bits or blocks, probes, expected n, target fpr x 1e12, size) and the bit words.
template <typename Bloom>
struct bloom_state {
    static constexpr uint64_t fpr_scale = 1000000000000ULL;
    static std::vector<filter_array> arrays(Bloom const& f) {
        auto const& g = f.shape();
        return {{{first_dimension(g), g.probes, g.expected_n,
                  static_cast<uint64_t>(g.target_fpr * fpr_scale), f.size()},
                 atomic_words(f.bits().words())}};
    }
    static std::unique_ptr<Bloom> from_arrays(std::span<filter_array const> a) {
        if (a.size() != 1 || a[0].params.size() != 5 || a[0].params[1] == 0 || a[0].params[1] > 64)
            throw std::invalid_argument("Bloom filter: expected one array of 5 parameters");
        auto const& p = a[0].params;
        // The saved words must be exactly the bits (or blocks of 8 words) the geometry names,
        // checked before the set is allocated: a block count checked as one word each would let a
        // crafted file allocate 8x its words.
        if (p[0] == 0 || p[0] > a[0].words.size() * 64 || words_for(p[0]) != a[0].words.size())
            throw std::invalid_argument("Bloom filter: the words do not match its size");
        typename Bloom::geometry g{};
        set_first_dimension(g, p[0]);
        g.probes = static_cast<uint32_t>(p[1]);
        g.expected_n = p[2];
        g.target_fpr = static_cast<double>(p[3]) / fpr_scale;
        auto f = std::make_unique<Bloom>(g);
        f->restore(a[0].words, p[4]);
        return f;
    }

  private:
    // A plain filter's first dimension counts bits; a blocked one's counts blocks of
    // block_words words.
    static uint64_t words_for(uint64_t first_dimension) {
        if constexpr (std::is_same_v<Bloom, blocked_bloom_filter>)
            return first_dimension * blocked_bloom_filter::block_words;
        else
            return (first_dimension + 63) / 64;
    }
    static uint64_t first_dimension(bloom_filter::geometry const& g) { return g.bits; }
    static uint64_t first_dimension(blocked_bloom_filter::geometry const& g) { return g.blocks; }
    static void set_first_dimension(bloom_filter::geometry& g, uint64_t v) { g.bits = v; }
    static void set_first_dimension(blocked_bloom_filter::geometry& g, uint64_t v) { g.blocks = v; }
};
template <>
struct filter_sections<bloom_filter> : bloom_state<bloom_filter> {};
template <>
struct filter_sections<blocked_bloom_filter> : bloom_state<blocked_bloom_filter> {};

// The cuckoo filter: (buckets, size) and the bucket words.
template <>
struct filter_sections<cuckoo_filter> {
    static std::vector<filter_array> arrays(cuckoo_filter const& f) {
        auto const& b = f.buckets();
        return {{{f.bucket_count(), f.size()},
                 atomic_words(std::span<std::atomic<uint64_t> const>(b.data(), b.size()))}};
    }
    static std::unique_ptr<cuckoo_filter> from_arrays(std::span<filter_array const> a) {
        if (a.size() != 1 || a[0].params.size() != 2 || a[0].params[0] == 0)
            throw std::invalid_argument("cuckoo filter: expected one array (buckets, size)");
        // One word per bucket; checked before the table is allocated, and the power of two here
        // so that a damaged count is an index_error, not the constructor's usage_error.
        if (a[0].params[0] != a[0].words.size() || a[0].params[0] < 2 ||
            !std::has_single_bit(a[0].params[0]))
            throw std::invalid_argument("cuckoo filter: bucket count does not match the words");
        auto f = std::make_unique<cuckoo_filter>(a[0].params[0], 0);
        f->restore(a[0].words, a[0].params[1]);
        return f;
    }
};

template <typename F>
void save_filter(F const& filter, io::index_writer& writer) {
    if constexpr (requires { filter_sections<F>::save(filter, writer); }) {
        filter_sections<F>::save(filter, writer);  // streams arrays it makes while writing
    } else {
        for (auto const& array : filter_sections<F>::arrays(filter))
            writer.add_section(array.params, array.words);
    }
}

template <typename F>
std::unique_ptr<F> load_filter(io::index_file const& index) {
    std::vector<filter_array> arrays;
    arrays.reserve(index.sections().size());
    for (auto const& s : index.sections()) arrays.push_back({s.params, s.words});
    try {
        // Filters whose saved words changed between format versions convert the older ones.
        if constexpr (requires { filter_sections<F>::from_arrays(arrays, uint32_t{}); })
            return filter_sections<F>::from_arrays(arrays, index.header().format_version);
        else
            return filter_sections<F>::from_arrays(arrays);
    } catch (std::invalid_argument const& e) {
        throw index_error("'" + index.path() + "': damaged index (" + e.what() + ")");
    }
}

}  // namespace qmer::app
