#pragma once
// Every bound on a parameter of qmer, one named constant each, and the one check of an index
// build's parameters. The CLI (app/cli.cpp) shows these in its help and range checks, run_index()
// calls check_index_parameters() before anything is read or allocated, and the filters check
// their own geometry against the same constants.

#include <charconv>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace qmer {

// k-mer length: 2k bits must fit in 64.
inline constexpr unsigned min_k = 1;
inline constexpr unsigned max_k = 32;

// The false-positive bound per k-mer (--fpr). Above 1/2 a filter says little; below 1e-12 no
// filter here has the fingerprint bits for a useful number of k-mers.
inline constexpr double min_fpr = 1e-12;
inline constexpr double max_fpr = 0.5;

// How full the expandable filter's counted first level ends (--fill). Queries answer from the
// rank-select layout, whose lookups cost the same at 95% fill as at 50% (bench/qf/LOOKUP_FILL.md),
// so the default is the smallest index; above 0.95 the concurrent table an --append refills would
// crawl (its clusters grow as 1 / (1 - fill)^2), and Theorem 2's bound needs a remainder bit more.
inline constexpr double min_fill = 0.25, max_fill = 0.95, default_fill = 0.95;

// A level's growth fill (delta_grow of Maier, Sanders, Williger, SEA 2020).
inline constexpr double min_grow_at = 0.25, max_grow_at = 0.98;

// The expandable filter plans its first level for at most 2^36 canonical slots.
inline constexpr unsigned max_planned_quotient_bits = 36;
// --expected: at most what the expandable filter's first level can be planned for (2^36 canonical
// slots at its 0.9 growth fill, ~61.8 G distinct k-mers, ~20 human genomes); every other filter
// would need more than 100 GB there.
inline constexpr uint64_t max_expected = (uint64_t{1} << max_planned_quotient_bits) / 10 * 9;

namespace qf {
// Quotient filter geometry. 2^40 canonical slots is far beyond any machine here.
inline constexpr unsigned max_quotient_bits = 40;
// q + r: fingerprints below 2^63, so M = m 2^r fits a signed 64-bit count.
inline constexpr unsigned max_fingerprint_bits = 63;
// r with its 3 status bits in one 64-bit slot, as every slot layout stores them.
inline constexpr unsigned status_bit_count = 3;
inline constexpr unsigned max_remainder_bits = 64 - status_bit_count;  // 61
}  // namespace qf

// The shortest text that reads back as v (1e-12, 0.5), for messages.
inline std::string bound_text(double v) {
    char buf[32];
    auto const end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    return std::string(buf, end);
}

// Throws usage_error naming the option unless every parameter of an index build lies within its
// bounds above. Called before any input is read or memory allocated.
inline void check_index_parameters(unsigned k, double fpr, double fill, uint64_t expected) {
    if (k < min_k || k > max_k)
        throw usage_error("-k must be between " + std::to_string(min_k) + " and " +
                          std::to_string(max_k) + ", not " + std::to_string(k));
    if (!(fpr >= min_fpr && fpr <= max_fpr))
        throw usage_error("--fpr must be in [" + bound_text(min_fpr) + ", " + bound_text(max_fpr) +
                          "], not " + bound_text(fpr));
    if (!(fill >= min_fill && fill <= max_fill))
        throw usage_error("--fill must be in [" + std::to_string(min_fill) + ", " +
                          std::to_string(max_fill) + "], not " + std::to_string(fill));
    if (expected > max_expected)
        throw usage_error("--expected " + std::to_string(expected) +
                          " is more than qmer indexes (" + std::to_string(max_expected) +
                          " distinct k-mers)");
}

}  // namespace qmer
