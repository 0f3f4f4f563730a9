#pragma once
// Kind `cuckoo`: the lock-free cuckoo filter with two-phase queries (Wang et al., "Lock-free
// concurrent cuckoo filter", Journal of Software 2025 no. 7; partial-key cuckoo hashing of Fan et
// al., "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014): 12-bit fingerprints in buckets
// of 4, so its FPR is fixed by the fingerprint width (~0.2% at 95% load, 8 / 2^12): a smaller --fpr
// cannot be honoured.

#include <algorithm>
#include <memory>
#include <string>

#include "app/filters/codec.hpp"
#include "core/cuckoo/cuckoo_filter.hpp"

namespace qmer::app {

template <>
struct filter_codec<filter_kind::cuckoo> : codec_base<cuckoo_filter> {
    static constexpr std::string_view name = "cuckoo";
    static constexpr bool grows = false;
    static constexpr bool appends = false;

    // The smallest --fpr it can honour: 2 buckets of 4 fingerprints of 12 bits, 8 / 4096.
    static constexpr double best_fpr() {
        return 2.0 * filter_type::slots_per_bucket /
               static_cast<double>(uint64_t{1} << filter_type::fingerprint_bits);
    }

    static std::unique_ptr<filter_type> create(filter_plan const& plan) {
        uint64_t const expected = plan.expected;
        double const fpr = plan.fpr;
        double const floor = best_fpr();
        if (fpr < floor)
            throw usage_error(
                "--filter cuckoo stores 12-bit fingerprints: its false-positive rate "
                "is about " +
                std::to_string(floor) + ", above --fpr " + std::to_string(fpr) +
                " (use --fpr 0.002 or another filter)");
        return std::make_unique<filter_type>(
            static_cast<size_t>(static_cast<double>(std::max<uint64_t>(expected, 1)) / 0.9));
    }

    // One array (buckets, size).
    static filter_description describe(std::span<io::index_section_view const> sections) {
        if (sections.size() != 1 || sections[0].params.size() != 2) return {};
        auto const& p = sections[0].params;
        uint64_t const slots = p[0] * cuckoo_filter::slots_per_bucket;
        return {{{"buckets", std::to_string(p[0])},
                 {"slots", std::to_string(slots)},
                 {"fingerprint_bits", std::to_string(cuckoo_filter::fingerprint_bits)},
                 {"kmers", std::to_string(p[1])},
                 {"fill", number(slots ? static_cast<double>(p[1]) / slots : 0, "%.4f")}},
                {}};
    }
};

}  // namespace qmer::app
