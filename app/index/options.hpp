#pragma once
// What `qmer index` needs, filled by the command line (app/cli.cpp) and read by run_index().

#include <cstdint>
#include <string>
#include <vector>

#include "core/bounds.hpp"  // the bounds of k, --fpr, --fill, --expected

namespace qmer::app {

struct index_options {
    std::vector<std::string> references;  // FASTA/FASTQ/GenBank/EMBL, compressed or not, or "-"
    // A many-reference index (app/index/many_reference_build.hpp): -r NAME=FILE values and a
    // sheet of NAME<TAB>FILE[<TAB>GROUP] lines (app/index/reference_sheet.hpp), in place of
    // `references`.
    std::vector<std::string> named_references;
    std::string reference_sheet;
    std::string output;  // the index file
    unsigned k = 31;     // min_k .. max_k
    // The read-type preset (app/index/preset.hpp): "short" (the default) or "long". It sets k
    // unless -k was given (k_given), and the rule recorded for queries.
    std::string preset = "short";
    bool k_given = false;
    unsigned threads = 0;    // 0: all cores
    double fpr = 0.001;      // false-positive bound per k-mer
    bool fpr_given = false;  // --fpr was on the command line (else a filter may raise it)
    std::string filter = "expandable";
    bool cascading = false;      // expandable filter: cascading inserts (bench/qf/GROWING.md)
    double fill = default_fill;  // expandable filter: how full a counted first level ends
    uint64_t expected = 0;       // expected distinct k-mers; 0 = unknown
    uint64_t seed = 0;           // XXH3 seed stored in the index
    bool append = false;         // add references to an existing expandable index
    // Write an index of no k-mers rather than refuse references that hold none (an empty file,
    // only N, records shorter than k): a failed download must not silently deplete nothing.
    bool allow_empty = false;
    // Hash every k-mer on its own (the plain scheme) even where the build could make the index
    // minimizer-local (core/kmer/sequence_hashing.hpp): for comparisons, and for indexes that
    // must answer like format 1-3 ones.
    bool plain_hash = false;
    bool quiet = false;
    bool timings = false;      // each phase's wall and CPU time on stderr (progress_meter)
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
