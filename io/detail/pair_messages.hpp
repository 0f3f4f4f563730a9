#pragma once
// The messages of paired input's own errors, shared by paired_reader and chunked_paired_reader so
// that both say the same thing in the same words.

#include <cstdint>
#include <string>
#include <string_view>

namespace qmer::io::detail {

// One of two mate files ended at pair `pair` (1-based) while the other has a record there.
inline std::string files_out_of_step(std::string const& shorter, std::string const& longer,
                                     uint64_t pair) {
    return shorter + ": ends after " + std::to_string(pair - 1) + " records, but its mate file " +
           longer + " has a record " + std::to_string(pair) + ": the paired files are out of step";
}

// The mates of pair `pair` have different names; `where` names the files (and pair or records).
inline std::string mate_names_differ(std::string const& where, std::string_view name1,
                                     std::string_view name2) {
    return where + ": mate names differ ('" + std::string(name1) + "' and '" + std::string(name2) +
           "'): the mates are out of step";
}
inline std::string pair_in_files(std::string const& path1, std::string const& path2,
                                 uint64_t pair) {
    return path1 + " and " + path2 + ": pair " + std::to_string(pair);
}
inline std::string pair_in_interleaved(std::string const& path, uint64_t pair) {
    return path + ": records " + std::to_string(2 * pair - 1) + " and " + std::to_string(2 * pair);
}

// An interleaved file ended after mate 1 of pair `pair`, whose name is `lone`.
inline std::string odd_interleaved(std::string const& path, uint64_t pair, std::string_view lone) {
    return path + ": record " + std::to_string(2 * pair - 1) +
           ": interleaved input has an odd number of records (the last, '" + std::string(lone) +
           "', has no mate)";
}

}  // namespace qmer::io::detail
