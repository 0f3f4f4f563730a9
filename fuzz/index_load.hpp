#pragma once
// What qmer query and qmer index --append do with an index file, for the index fuzz targets: open
// it (io::index_file: magic, version, byte order, checksum, header and section layout), find its
// filter kind (app::filter_kind_of_index) and rebuild the filter from the sections (the codec's
// load, app/filters/persistence.hpp), then ask it for a few hashes as a query would.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "app/filters/registry.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"
#include "io/index_file.hpp"

namespace qmer::fuzz {

enum class load_outcome { loaded, index_error, input_error };

struct loaded_index {
    load_outcome outcome = load_outcome::index_error;
    size_t elements = 0;      // the filter's size() when loaded
    size_t probes_found = 0;  // how many probes contains() answered true
    // How many probes the in-place query form answered true (app::rank_select_levels_of, the
    // default filter of format 3: what qmer query answers from); no_in_place when the index has
    // none.
    static constexpr size_t no_in_place = ~size_t{0};
    size_t in_place_found = no_in_place;
};

// Loads path as query does and, when probe is set, asks the filter for each of probes and - for
// the filters `qmer index --append` reopens - then inserts `appended` and asks for them again, as
// an append would. index_error and input_error are the refusals the loader may give; any other
// exception aborts (fail_with_current_exception).
//
// Loading checks the quotient filter tables' status bits (core/qf/table_check.hpp): a resealed
// file whose table holds a lock or runs that contradict each other is refused: contains() or
// insert() on such a table would wait forever for a lock nobody holds (fuzz/README.md).
inline loaded_index load_and_probe(std::string const& path, std::span<uint64_t const> probes,
                                   bool probe = true, std::span<uint64_t const> appended = {}) {
    loaded_index result;
    try {
        io::index_file const index(path);
        app::filter_kind const kind = app::filter_kind_of_index(index);
        // qmer query reads the default filter's levels in place without reading every word: a
        // crafted word may change an answer but must never hang or crash a lookup
        // (core/qf/stored/table.hpp bounds every scan).
        if (auto const levels = app::rank_select_levels_of(index); levels && probe) {
            result.in_place_found = 0;
            for (uint64_t h : probes) result.in_place_found += levels->contains(h) ? 1 : 0;
            for (uint64_t h : appended) (void)levels->contains(h);
        }
        // A many-reference index's catalog and class overflow (format 10), as a query reads
        // them: each probe's class id, through the overflow where its slot escapes.
        if (auto const catalog = app::reference_catalog_of(index); catalog && probe) {
            auto const overflow =
                app::filter_codec<app::filter_kind::expandable>::overflow_in_place(index);
            if (auto const levels = app::rank_select_levels_of(index); levels)
                for (uint64_t h : probes) {
                    auto const& table = levels->level(0);
                    uint64_t const id = table.find(h);
                    if (id == catalog->escape())
                        (void)overflow.find(table.geometry().fingerprint(h));
                }
        }
        // Its minimizer gate (format 9), as a query tests it before a lookup.
        if (auto const gate = app::minimizer_gate_of(index); gate && probe)
            for (uint64_t h : probes) (void)gate->passes(h);
        app::visit_filter_kind(kind, [&](auto tag) {
            using codec = app::filter_codec<decltype(tag)::value>;
            auto const filter = codec::load(index);
            if (probe)
                for (uint64_t h : probes) result.probes_found += filter->contains(h) ? 1 : 0;
            result.elements = filter->size();
            if (probe && app::filter_kind_can_append(kind)) {
                // `full` is an answer a crafted geometry may give (no remainder bit left to grow
                // by); a hash the filter took must be found.
                for (uint64_t h : appended)
                    if (filter->insert(h) != insert_result::full && !filter->contains(h))
                        fail("an appended hash is not found");
            }
            // What qmer info and the query summary read.
            (void)filter->capacity();
            (void)filter->memory_bytes();
            (void)filter->false_positive_rate();
        });
        result.outcome = load_outcome::loaded;
    } catch (index_error const&) {
        result.outcome = load_outcome::index_error;
    } catch (input_error const&) {
        result.outcome = load_outcome::input_error;
    } catch (...) {
        fail_with_current_exception("index load");
    }
    return result;
}

// The checksum of everything before the last 8 bytes, by the rule of the format version the
// bytes state (io::index_checksum; version 0 when too short to state one).
inline uint64_t checksum_of(std::vector<uint8_t> const& bytes) {
    uint32_t version = 0;
    if (bytes.size() >= 12) std::memcpy(&version, bytes.data() + 8, sizeof version);
    return io::index_checksum(version, bytes.data(), bytes.size() - 8);
}

// True when the last 8 bytes are that checksum (the index format's seal).
inline bool checksum_matches(std::vector<uint8_t> const& bytes) {
    if (bytes.size() < 8) return false;
    uint64_t stored;
    std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
    return checksum_of(bytes) == stored;
}

// Rewrites the last 8 bytes with the checksum of the rest, so that a changed file gets past the
// checksum and the header, section and filter checks behind it are what the fuzzer explores.
inline void reseal(std::vector<uint8_t>& bytes) {
    if (bytes.size() < 8) return;
    uint64_t const sum = checksum_of(bytes);
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
}

}  // namespace qmer::fuzz
