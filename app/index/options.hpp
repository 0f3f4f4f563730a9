#pragma once
// What `qmer index` needs, filled by the command line (app/cli.cpp) and read by run_index().

#include <cstdint>
#include <string>
#include <vector>

namespace qmer::app {

// --fill: how full the expandable filter's counted first level ends. The bounds' one home (the CLI
// and run_index check them). Queries answer from the rank-select layout, whose lookups cost the
// same at 95% fill as at 50% (bench/qf/LOOKUP_FILL.md), so the default is the smallest index;
// above 0.95 the concurrent table an --append refills would crawl (its clusters grow as
// 1 / (1 - fill)^2), and Theorem 2's bound needs a remainder bit more.
inline constexpr double min_fill = 0.25, max_fill = 0.95, default_fill = 0.95;

// --expected: at most what the expandable filter's first level can be planned for (2^36 canonical
// slots at its 0.9 growth fill, ~61.8 G distinct k-mers, ~20 human genomes); every other filter
// would need more than 100 GB there. The bound's one home: run_index refuses more with a usage
// error (exit 2), before any filter is planned or allocated.
inline constexpr uint64_t max_expected = (uint64_t{1} << 36) / 10 * 9;

struct index_options {
    std::vector<std::string> references;  // FASTA/FASTQ/GenBank/EMBL, compressed or not, or "-"
    std::string output;                   // the index file
    unsigned k = 31;
    unsigned threads = 0;    // 0: all cores
    double fpr = 0.001;      // false-positive bound per k-mer
    bool fpr_given = false;  // --fpr was on the command line (else a filter may raise it)
    std::string filter = "expandable";
    bool cascading = false;      // expandable filter: cascading inserts (bench/qf/GROWING.md)
    double fill = default_fill;  // expandable filter: how full a counted first level ends
    uint64_t expected = 0;       // expected distinct k-mers; 0 = unknown
    uint64_t seed = 0;           // XXH3 seed stored in the index
    bool append = false;         // add references to an existing expandable index
    // Hash every k-mer on its own (the plain scheme) even where the build could make the index
    // minimizer-local (core/kmer/sequence_hashing.hpp): for comparisons, and for indexes that
    // must answer like format 1-3 ones.
    bool plain_hash = false;
    bool quiet = false;
    std::string max_memory;    // "" = a share of the machine's (or cgroup's) memory
    std::string temp_dir;      // the sorted build's scratch file; "" = the index's folder
    std::string command_line;  // recorded in the index header (filled by the CLI set-up)
    // Filled by the build, not the command line: where each reference is read from when that is
    // not its own name (a scratch copy of stdin or a pipe, which cannot be read twice); messages
    // still name the reference. Empty: every reference is read from its name.
    std::vector<std::string> read_from;
};

void run_index(index_options const& options);

}  // namespace qmer::app
