#pragma once
// The inputs of the index_damage fuzz target, as a header: the regression
// tests in tests/regressions/ turn a saved finding (an edit script, fuzz/findings/*.bin) back into
// the index file the target loaded, so they replay it through the real `qmer` binary.
//
// A valid index per filter kind of the registry, built as `qmer index` builds one (same codec,
// index_writer and header fields) with 200 known hashes inserted, and an edit script:
//   byte 0      which filter kind's index (modulo the number of kinds)
//   byte 1      bit 0: reseal (rewrite the checksum after editing); bit 1: XOR the edit values
//               into the bytes instead of overwriting them
//   then        up to 16 edits of 5 bytes: a little-endian 32-bit offset (modulo the file size) and
//               a byte value

#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/filters/registry.hpp"
#include "fuzz_support.hpp"
#include "index_load.hpp"
#include "io/index_file.hpp"

namespace qmer::fuzz {

inline constexpr size_t damage_inserted_count = 200;

struct valid_index {
    std::vector<uint8_t> bytes;
    size_t elements = 0;
};

// splitmix64: well-spread 64-bit hashes, as XXH3 of k-mers would be.
inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

inline std::vector<uint64_t> const& damage_inserted_hashes() {
    static std::vector<uint64_t> const hashes = [] {
        std::vector<uint64_t> h;
        for (uint64_t i = 0; i < damage_inserted_count; ++i) h.push_back(splitmix64(i));
        return h;
    }();
    return hashes;
}

// Hashes an append adds (none of them among the inserted ones).
inline std::vector<uint64_t> const& damage_appended_hashes() {
    static std::vector<uint64_t> const hashes = [] {
        std::vector<uint64_t> h;
        for (uint64_t i = 0; i < 50; ++i) h.push_back(splitmix64(1000000 + i));
        return h;
    }();
    return hashes;
}

namespace detail {
// A codec's create() takes (expected, fpr), or a filter_plan aggregate that starts with them.
template <typename Codec>
auto create(uint64_t expected, double fpr) {
    if constexpr (requires { Codec::create(expected, fpr); })
        return Codec::create(expected, fpr);
    else
        return Codec::create({expected, fpr});
}
}  // namespace detail

// One valid index per filter kind, in the order of app::filter_kind_names. The files go through a
// temporary folder (index_writer writes paths) that is removed again.
inline std::vector<valid_index> build_valid_indexes() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "qmer-fuzz-index-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) fail("mkdtemp failed");
    std::filesystem::path const dir = pattern;

    std::vector<valid_index> out;
    for (size_t i = 0; i < std::size(app::filter_kind_names); ++i) {
        auto const kind = static_cast<app::filter_kind>(i);
        std::string const path = (dir / "index.qmer").string();
        size_t elements = 0;
        app::visit_filter_kind(kind, [&](auto tag) {
            using codec = app::filter_codec<decltype(tag)::value>;
            auto filter = detail::create<codec>(2 * damage_inserted_count, 0.01);
            for (uint64_t h : damage_inserted_hashes())
                if (filter->insert(h) == insert_result::full)
                    fail("a filter sized for 400 elements is full at 200");
            io::index_header header;
            header.k = 21;
            header.hash_seed = 42;
            header.filter = std::string(app::filter_kind_name(kind));
            header.fpr = 0.01;
            header.expected = 2 * damage_inserted_count;
            header.elements = filter->size();
            header.kmers_scanned = damage_inserted_count;
            header.filter_params = codec::params(*filter);
            header.qmer_version = "fuzz";
            header.command = "index_damage_fuzz";
            header.inputs = {"generated"};
            io::index_writer writer(path, header);
            codec::save(*filter, writer);
            writer.commit();
            elements = filter->size();
        });
        std::ifstream in(path, std::ios::binary);
        valid_index v;
        v.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        v.elements = elements;
        if (v.bytes.size() < 64) fail("the valid index was not written");
        out.push_back(std::move(v));
        std::filesystem::remove(path);
    }
    std::filesystem::remove(dir);
    return out;
}

struct damaged_index {
    valid_index const* original = nullptr;  // nullptr: the script is too short to name one
    std::vector<uint8_t> bytes;             // the original with the edits applied
    bool resealed = false;
};

// Applies the edit script data[0, size) to one of `indexes`.
inline damaged_index apply_edit_script(std::vector<valid_index> const& indexes, uint8_t const* data,
                                       size_t size) {
    damaged_index out;
    if (size < 2 || indexes.empty()) return out;
    out.original = &indexes[data[0] % indexes.size()];
    out.resealed = (data[1] & 1) != 0;
    bool const use_xor = (data[1] & 2) != 0;
    out.bytes = out.original->bytes;
    size_t edits = 0;
    for (size_t at = 2; at + 5 <= size && edits < 16; at += 5, ++edits) {
        uint32_t offset;
        std::memcpy(&offset, data + at, 4);
        uint8_t const value = data[at + 4];
        uint8_t& b = out.bytes[offset % out.bytes.size()];
        b = use_xor ? static_cast<uint8_t>(b ^ value) : value;
    }
    if (out.resealed) reseal(out.bytes);
    return out;
}

}  // namespace qmer::fuzz
