#pragma once
// Read-type presets of `qmer index --preset`: what kind of reads an index is built for. A preset
// sets the index's k (unless -k is given) and the verdict rule its queries apply when they give
// neither --min-hits nor --min-containment; the rule is recorded in the index header
// (io::index_header::preset), so `qmer query` needs no option to apply it.

#include <array>
#include <string>
#include <string_view>

#include "app/index/options.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"

namespace qmer::app {

// Noisy long reads (Nanopore, PacBio CLR, ~80-90% accuracy) keep few error-free 31-mers: a k-mer
// survives an error rate e with probability (1 - e)^k; at e = 0.15 that is 0.65% for k = 31 and
// 6.3% for k = 17, 10x more. A smaller k costs chance matches: an unrelated genome of G bases
// holds a given k-mer with probability about 2G / 4^k, for k = 17 5.8e-4 at 5 Mbp and 0.36 at the
// 3.1 Gbp human genome. k = 17 with the minimum containment below is the one setting
// bench/accuracy found within minimap2's calls of other species (at most 0.5 point more) at every
// accuracy from 80 to 95% with the highest sensitivity (bench/accuracy/README.md).
inline constexpr unsigned long_read_k = 17;

// The long preset's minimum containment, on top of the default (binomial) rule. The default rule
// bounds the filter's false positives (--fpr) but not the k-mers an unrelated read shares with the
// references by chance or through conserved stretches (rRNA operons), which a smaller k makes
// common: k = 17 with the default rule alone called 0.7-3.8% of other species' reads where
// minimap2 maps 0.2-0.9% (bench/accuracy). A host read at 85% accuracy keeps about
// 0.85^17 = 6.3% of its 17-mers; 0.02 is under a third of that, leaving room for reads noisier
// than the mean. An unrelated read's chance containment, fpr + 2G / 4^17, is ~0.0016 against a
// bacterium, but about 0.36 against a human-sized index, where no minimum separates them: such
// hosts need a larger k and measurements of their own.
inline constexpr double long_read_min_containment = 0.02;

struct read_preset {
    std::string_view name;
    unsigned k;              // 0: the options' default k
    double min_containment;  // < 0: the default rule alone
};

inline constexpr std::array<read_preset, 2> read_presets{{
    {"short", 0, -1},  // the default: k = 31 and the default rule, nothing recorded
    {"long", long_read_k, long_read_min_containment},
}};

// The preset of that name; a usage_error naming --preset and the choices otherwise.
inline read_preset const& preset_named(std::string_view name) {
    for (auto const& preset : read_presets)
        if (preset.name == name) return preset;
    std::string choices;
    for (auto const& preset : read_presets)
        choices.append(choices.empty() ? "" : ", ").append(preset.name);
    throw usage_error("--preset " + std::string(name) + ": no such preset (choose from " + choices +
                      ")");
}

// Applies o.preset to the options: its k unless -k was given (o.k_given).
inline void apply_preset(index_options& o) {
    read_preset const& preset = preset_named(o.preset);
    if (preset.k != 0 && !o.k_given) o.k = preset.k;
}

// Records o.preset's rule in a new index's header. The default preset records nothing, so its
// index is byte for byte the one a qmer without presets writes.
inline void record_preset(io::index_header& header, index_options const& o) {
    read_preset const& preset = preset_named(o.preset);
    if (preset.min_containment < 0) return;
    header.preset = preset.name;
    header.preset_min_containment = preset.min_containment;
}

}  // namespace qmer::app
