// Fuzz target: a VALID index, damaged in a few bytes the fuzzer chooses, must be refused.
//
// At start-up the target builds one small valid index per filter kind of the registry (the same
// codec, index_writer and header fields as qmer index), inserting 200 known hashes, and keeps the
// file bytes. The fuzz input is an edit script: which index, whether to reseal or XOR, and up to 16
// (offset, byte) edits (fuzz/index_damage.hpp, shared with the regression tests that replay
// findings).
// Oracle:
//   - bytes unchanged (no edit, or edits that rewrote the same values): the index loads, holds as
//     many elements as it was built with, and contains() is true for all 200 inserted hashes;
//   - bytes changed, not resealed: the loader must throw index_error - unless the stored checksum
//     happens to match the damaged bytes (a collision of the 64-bit checksum, impossible in
//     practice), when it may load;
//   - bytes changed and resealed (a crafted file): index_error or a filter that loads; never a
//     crash, a foreign exception, a huge allocation or a hang.
// Every filter that loads is queried for the 200 hashes and, if it is one that `qmer index
// --append` reopens, 50 new hashes are inserted and must then be found. Crafted files are queried
// and appended to as well: loading checks the quotient filters' tables (core/qf/table_check.hpp),
// since without that check a crafted table would make contains()/insert() wait forever for a lock
// no thread holds (fuzz/README.md).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "index_damage.hpp"
#include "index_load.hpp"

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
    using qmer::fuzz::fail;
    using qmer::fuzz::load_outcome;
    static std::vector<qmer::fuzz::valid_index> const indexes = qmer::fuzz::build_valid_indexes();
    static qmer::fuzz::memory_file file;
    auto const damaged = qmer::fuzz::apply_edit_script(indexes, data, size);
    if (damaged.original == nullptr) return 0;
    auto const& original = *damaged.original;
    auto const& bytes = damaged.bytes;
    bool const reseal = damaged.resealed;
    bool const changed = bytes != original.bytes;
    size_t const inserted_count = qmer::fuzz::damage_inserted_count;

    auto const result = qmer::fuzz::load_and_probe(file.set(bytes.data(), bytes.size()),
                                                   qmer::fuzz::damage_inserted_hashes(), true,
                                                   qmer::fuzz::damage_appended_hashes());
    if (!changed) {
        if (result.outcome != load_outcome::loaded) fail("an undamaged index was refused");
        if (result.elements != original.elements)
            fail("an undamaged index loaded with " + std::to_string(result.elements) +
                 " elements instead of " + std::to_string(original.elements));
        if (result.probes_found != inserted_count)
            fail("an undamaged index lost " + std::to_string(inserted_count - result.probes_found) +
                 " of its inserted hashes");
        if (result.in_place_found != qmer::fuzz::loaded_index::no_in_place &&
            result.in_place_found != inserted_count)
            fail("an undamaged index queried in place lost " +
                 std::to_string(inserted_count - result.in_place_found) + " of its hashes");
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
