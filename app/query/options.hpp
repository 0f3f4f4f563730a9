#pragma once
// What `qmer query` needs, filled by the command line (app/cli.cpp) and read by run_query().

#include <cstdint>
#include <string>
#include <vector>

namespace qmer::app {

struct query_options {
    std::string index;
    std::vector<std::string> reads;  // one file, or two for paired reads; "-" is stdin
    std::string output = "-";        // per-read TSV
    std::string summary;             // JSON summary, optional
    std::string matched;             // FASTQ of matched reads, optional
    std::string unmatched;           // FASTQ of unmatched reads, optional
    double min_containment = -1;     // < 0: the default verdict rule decides
    int64_t min_hits = -1;           // < 0: the default verdict rule decides
    unsigned threads = 0;            // 0: all cores
    bool interleaved = false;
    bool quick = false;  // stop a read's lookups once it is settled as a match
    // Answer from the index file mapped in place (shared page cache, first read at once) instead
    // of a private copy on huge pages (faster lookups); see io::index_memory.
    bool mmap = false;
    bool quiet = false;
};

void run_query(query_options const& options);

}  // namespace qmer::app
