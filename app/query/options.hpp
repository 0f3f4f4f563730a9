#pragma once
// What `qmer query` needs, filled by the command line (app/cli.cpp) and read by run_query().

#include <cstdint>
#include <string>
#include <vector>

namespace qmer::app {

struct query_options {
    // The one-index form `qmer query INDEX READS [READS2]`: today's output (read_id kmers hits
    // containment match). Empty when the indexes are given with -x.
    std::string index;
    // The panel form: every -x value as given, "FILE" or "NAME=FILE" (app/query/panel.hpp), in
    // order. Even one -x writes the panel output (hits_NAME and category columns), which is what
    // `qmer merge` joins.
    std::vector<std::string> panel;
    std::vector<std::string> reads;  // one file, or two for paired reads; "-" is stdin
    std::string output = "-";        // per-read TSV
    std::string summary;             // JSON summary, optional
    std::string matched;             // FASTQ of matched reads (by any index), optional
    std::string unmatched;           // FASTQ of unmatched reads (by no index), optional
    // Panel form: one FASTQ per category, named after this path (category_path()), optional.
    std::string split_by_category;
    // Either given (>= 0) replaces the verdict rule: the default one, or the one an index's
    // preset recorded (verdict_rule::for_index). Both < 0: that rule decides.
    double min_containment = -1;
    int64_t min_hits = -1;
    unsigned threads = 0;  // 0: all cores
    bool interleaved = false;
    bool quick = false;  // stop a read's lookups once it is settled as a match
    // A many-reference index (app/query/assignment.hpp): hits within `clearzone` of the best
    // tie with it; a tie within one group is called that group.
    uint64_t clearzone = 0;
    bool ties_to_group = false;
    // Answer from the index file mapped in place (shared page cache, first read at once) instead
    // of a private copy on huge pages (faster lookups); see io::index_memory.
    bool mmap = false;
    bool quiet = false;
};

void run_query(query_options const& options);

}  // namespace qmer::app
