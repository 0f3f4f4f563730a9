#pragma once
// The references of a many-reference index (`qmer index -r NAME=FILE ...`): their names, groups,
// sources and k-mer counts, and the class table (core/qf/stored/classes.hpp) whose ids the
// level's slots carry. Stored as the index's last section (format 10): parameter words
// {catalog_tag, references, classes, value bits, escaped fingerprints}, then the words of a byte
// string:
//   per reference: name, group, source (each a u32 length and its bytes), k-mers, unique k-mers
//   (u64 each); then the class table: per class its member count (u32) and members (u32 each)
// little-endian, zero-padded to a whole word. A plain index has no such section.
//
// Class ids go beside each fingerprint in value_bits bits (core/qf/stored/classes.hpp numbers
// them by frequency). Where the classes are more than those bits name, the last value,
// escape(), stands for "look it up in the overflow": a section before the catalog, {overflow_tag,
// entries, id bits}, whose words are fp << id bits | id for each escaped fingerprint, in order.
// The width is chosen for the least bits in all (slots and overflow entries, escaped_cost).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/qf/stored/classes.hpp"

namespace qmer::io {

inline constexpr uint64_t catalog_tag = 0x474c5441434d5251ULL;   // "QRMCATLG" little endian
inline constexpr uint64_t overflow_tag = 0x574f4c4652564f51ULL;  // "QOVRFLOW" little endian

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
    uint64_t escaped = 0;     // fingerprints whose class id is in the overflow section

    // The slot value that sends a lookup to the overflow, where there is one.
    uint64_t escape() const noexcept { return (uint64_t{1} << value_bits) - 1; }
    bool has_overflow() const noexcept { return escaped != 0; }

    std::vector<uint64_t> params() const;
    std::vector<uint64_t> words() const;
    // The catalog a section holds; throws std::invalid_argument when the words do not read as one.
    static reference_catalog read(std::span<uint64_t const> params,
                                  std::span<uint64_t const> words);
    static bool is_catalog(std::span<uint64_t const> params) noexcept {
        return params.size() == 5 && params[0] == catalog_tag;
    }
    // The references of group `group` (their ids), in reference order.
    std::vector<uint32_t> members_of_group(std::string const& group) const;
};

// The escaped fingerprints' class ids (see top): a sorted view of the overflow section's words.
class class_overflow {
  public:
    class_overflow() = default;
    // Throws std::invalid_argument when the words are not in order or the shift is impossible.
    class_overflow(std::span<uint64_t const> words, unsigned id_bits);
    static std::vector<uint64_t> params(uint64_t entries, unsigned id_bits) {
        return {overflow_tag, entries, id_bits};
    }
    static bool is_overflow(std::span<uint64_t const> params) noexcept {
        return params.size() == 3 && params[0] == overflow_tag;
    }
    // The class id of fingerprint fp, or UINT64_MAX when it has none here (a damaged index).
    uint64_t find(uint64_t fp) const noexcept;
    size_t size() const noexcept { return words_.size(); }

  private:
    std::span<uint64_t const> words_;
    unsigned id_bits_ = 0;
};

// The class id bits that give the fewest bits in all for `counts` (fingerprints per class id, in
// id order, most frequent first): n fingerprints at b bits each (their slots' share of a block,
// slot_bits(b)), plus 64 bits for each one whose id is at or past the escape 2^b - 1. Where b bits
// name every class there is no escape.
unsigned class_id_bits_for(std::span<uint64_t const> counts, unsigned remainder_bits);

}  // namespace qmer::io
