// Fuzz target: a VALID index, damaged in a few bytes the fuzzer chooses, must be refused.
//
// At start-up the target builds one small valid index per filter kind of the registry (the same
// codec, index_writer and header fields as qmer index), inserting 200 known hashes, and keeps the
// file bytes. The fuzz input is an edit script:
//   byte 0      which filter kind's index (modulo the number of kinds)
//   byte 1      bit 0: reseal (rewrite the checksum after editing); bit 1: XOR the edit values
//               into the bytes instead of overwriting them
//   then        up to 16 edits of 5 bytes: a little-endian 32-bit offset (modulo the file size) and
//               a byte value
// Oracle:
//   - bytes unchanged (no edit, or edits that rewrote the same values): the index loads, holds as
//     many elements as it was built with, and contains() is true for all 200 inserted hashes;
//   - bytes changed, not resealed: the loader must throw index_error - unless the stored checksum
//     happens to match the damaged bytes (an XXH3-64 collision, impossible in practice), when it
//     may load;
//   - bytes changed and resealed (a crafted file): index_error or a filter that loads; never a
//     crash, a foreign exception, a huge allocation or a hang. The loaded filter is not queried
//     (fuzz/index_load.hpp says why) unless QMER_FUZZ_PROBE_CRAFTED is defined: then it is, and
//     the target is index_crafted_query_fuzz, which documents what a crafted table does to
//     contains() and is not part of the CI run (fuzz/README.md).

#include <stdlib.h>
#include <unistd.h>

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

namespace {

using qmer::fuzz::fail;
using qmer::fuzz::load_outcome;

constexpr size_t inserted_count = 200;

struct valid_index {
    std::vector<uint8_t> bytes;
    size_t elements = 0;
};

// splitmix64: well-spread 64-bit hashes, as XXH3 of k-mers would be.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::vector<uint64_t> const& inserted_hashes() {
    static std::vector<uint64_t> const hashes = [] {
        std::vector<uint64_t> h;
        for (uint64_t i = 0; i < inserted_count; ++i) h.push_back(mix(i));
        return h;
    }();
    return hashes;
}

// A codec's create() takes (expected, fpr), or a filter_plan aggregate that starts with them.
template <typename Codec>
auto create(uint64_t expected, double fpr) {
    if constexpr (requires { Codec::create(expected, fpr); })
        return Codec::create(expected, fpr);
    else
        return Codec::create({expected, fpr});
}

std::vector<valid_index> build_valid_indexes() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "qmer-fuzz-index-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) fail("mkdtemp failed");
    std::filesystem::path const dir = pattern;

    std::vector<valid_index> out;
    for (size_t i = 0; i < std::size(qmer::app::filter_kind_names); ++i) {
        auto const kind = static_cast<qmer::app::filter_kind>(i);
        std::string const path = (dir / "index.qmer").string();
        size_t elements = 0;
        qmer::app::visit_filter_kind(kind, [&](auto tag) {
            using codec = qmer::app::filter_codec<decltype(tag)::value>;
            auto filter = create<codec>(2 * inserted_count, 0.01);
            for (uint64_t h : inserted_hashes())
                if (filter->insert(h) == qmer::insert_result::full)
                    fail("a filter sized for 400 elements is full at 200");
            qmer::io::index_header header;
            header.k = 21;
            header.hash_seed = 42;
            header.filter = std::string(qmer::app::filter_kind_name(kind));
            header.fpr = 0.01;
            header.expected = 2 * inserted_count;
            header.elements = filter->size();
            header.kmers_scanned = inserted_count;
            header.filter_params = codec::params(*filter);
            header.qmer_version = "fuzz";
            header.command = "index_damage_fuzz";
            header.inputs = {"generated"};
            qmer::io::index_writer writer(path, header);
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
    static std::vector<valid_index> const indexes = build_valid_indexes();
    static qmer::fuzz::memory_file file;
    if (size < 2) return 0;

    valid_index const& original = indexes[data[0] % indexes.size()];
    bool const reseal = (data[1] & 1) != 0;
    bool const use_xor = (data[1] & 2) != 0;
    std::vector<uint8_t> bytes = original.bytes;
    size_t edits = 0;
    for (size_t at = 2; at + 5 <= size && edits < 16; at += 5, ++edits) {
        uint32_t offset;
        std::memcpy(&offset, data + at, 4);
        uint8_t const value = data[at + 4];
        uint8_t& b = bytes[offset % bytes.size()];
        b = use_xor ? static_cast<uint8_t>(b ^ value) : value;
    }
    if (reseal) qmer::fuzz::reseal(bytes);
    bool const changed = bytes != original.bytes;

#ifdef QMER_FUZZ_PROBE_CRAFTED
    bool const probe = true;
#else
    bool const probe = !reseal;
#endif
    auto const result =
        qmer::fuzz::load_and_probe(file.set(bytes.data(), bytes.size()), inserted_hashes(), probe);
    if (!changed) {
        if (result.outcome != load_outcome::loaded) fail("an undamaged index was refused");
        if (result.elements != original.elements)
            fail("an undamaged index loaded with " + std::to_string(result.elements) +
                 " elements instead of " + std::to_string(original.elements));
        if (probe && result.probes_found != inserted_count)
            fail("an undamaged index lost " + std::to_string(inserted_count - result.probes_found) +
                 " of its inserted hashes");
    } else if (!reseal) {
        if (result.outcome == load_outcome::input_error)
            fail("a damaged index was reported as an unreadable input, not a damaged index");
        if (result.outcome == load_outcome::loaded && !qmer::fuzz::checksum_matches(bytes))
            fail("a damaged index whose checksum does not match was loaded");
    } else if (result.outcome == load_outcome::input_error) {
        fail("a crafted index was reported as an unreadable input, not a damaged index");
    }
    return 0;
}
