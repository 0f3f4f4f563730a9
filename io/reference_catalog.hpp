#pragma once
// The references of a many-reference index (`qmer index -r NAME=FILE ...`): their names, groups,
// sources and k-mer counts, and the class table (core/qf/stored/classes.hpp) whose ids the
// level's slots carry. Stored as the index's last section (format 10): parameter words
// {catalog_tag, references, classes, value bits}, then the words of a byte string:
//   per reference: name, group, source (each a u32 length and its bytes), k-mers, unique k-mers
//   (u64 each); then the class table: per class its member count (u32) and members (u32 each)
// little-endian, zero-padded to a whole word. A plain index has no such section.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/qf/stored/classes.hpp"

namespace qmer::io {

inline constexpr uint64_t catalog_tag = 0x474c5441434d5251ULL;  // "QRMCATLG" little endian

struct reference_info {
    std::string name;
    std::string group;          // "" = none
    std::string source;         // the file it was read from, as given
    uint64_t kmers = 0;         // distinct fingerprints whose class holds it
    uint64_t unique_kmers = 0;  // those whose class is it alone
};

struct reference_catalog {
    std::vector<reference_info> references;
    qf::class_table classes;
    unsigned value_bits = 0;  // a slot's class id bits

    std::vector<uint64_t> params() const;
    std::vector<uint64_t> words() const;
    // The catalog a section holds; throws std::invalid_argument when the words do not read as one.
    static reference_catalog read(std::span<uint64_t const> params,
                                  std::span<uint64_t const> words);
    static bool is_catalog(std::span<uint64_t const> params) noexcept {
        return params.size() == 4 && params[0] == catalog_tag;
    }
    // The references of group `group` (their ids), in reference order.
    std::vector<uint32_t> members_of_group(std::string const& group) const;
};

}  // namespace qmer::io
