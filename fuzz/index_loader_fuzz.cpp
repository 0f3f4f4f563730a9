// Fuzz target: loading arbitrary bytes as a qmer index (io/index_file + app/filters).
//
// Each input is loaded twice: as it is, and "resealed" (its last 8 bytes replaced by the checksum
// of the rest, io::index_checksum). Arbitrary bytes almost never carry a valid checksum, so without
// the second load the fuzzer would never get past the checksum test to the header parser, the
// section walk and the filters' from_arrays geometry checks. Resealing stands for a file crafted on
// purpose, or damaged before it was sealed.
//
// Allowed outcomes, both loads: the index loads, answers contains() for a few hashes and, if
// `qmer index --append` may reopen it, takes them as inserts and finds them; or the loader throws
// index_error or input_error. Any other
// exception, a sanitizer report, an allocation above libFuzzer's -malloc_limit_mb (a size field
// believed without checking) or a hang is a bug. Without resealing, an input whose checksum does
// not match must be refused.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "index_load.hpp"

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
    static qmer::fuzz::memory_file file;
    static constexpr uint64_t probes[] = {0, 1, 0x9e3779b97f4a7c15ULL, ~uint64_t{0},
                                          0x0123456789abcdefULL};

    std::vector<uint8_t> bytes(data, data + size);
    auto const as_is =
        qmer::fuzz::load_and_probe(file.set(bytes.data(), bytes.size()), probes, true, probes);
    if (as_is.outcome == qmer::fuzz::load_outcome::loaded && !qmer::fuzz::checksum_matches(bytes))
        qmer::fuzz::fail("an index whose checksum does not match was loaded");

    // Resealed: loading must still end in a filter that works, or index_error (the tables are
    // checked on loading: core/qf/table_check.hpp).
    qmer::fuzz::reseal(bytes);
    (void)qmer::fuzz::load_and_probe(file.set(bytes.data(), bytes.size()), probes, true, probes);
    return 0;
}
