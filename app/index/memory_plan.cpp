#include "app/index/memory_plan.hpp"

#include <algorithm>

#include "app/common/progress.hpp"
#include "app/index/sorted_build.hpp"
#include "app/index/superkmer_bins.hpp"
#include "core/error.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {
namespace {

// How a message names the limit: the default one is a share of the machine's memory.
std::string limit_text(build_memory const& memory) {
    return human_bytes(static_cast<double>(memory.limit)) +
           (memory.given ? "" : " (80% of this machine's memory)");
}

}  // namespace

void memory_exceeded(uint64_t need, build_memory const& memory) {
    throw capacity_error("the index needs " + human_bytes(static_cast<double>(need)) +
                         ", more than the memory limit of " + limit_text(memory) +
                         ": raise --max-memory, use a larger --fpr, or a machine with more memory");
}

void require_least_memory(uint64_t least, uint64_t table_bytes, build_memory const& memory) {
    if (least <= memory.limit) return;
    throw capacity_error("building the index needs at least " +
                         human_bytes(static_cast<double>(least)) + " (its table " +
                         human_bytes(static_cast<double>(table_bytes)) +
                         ", the rest for reading the references), more than the memory limit of " +
                         limit_text(memory) +
                         ": raise --max-memory, use a larger --fpr, or a machine with more memory");
}

void require_scratch_room(std::string const& folder, uint64_t need, char const* why) {
    uint64_t const room = io::free_bytes_in(folder);
    if (need <= room) return;
    throw output_error("'" + folder + "': the build's scratch file would take " +
                       human_bytes(static_cast<double>(need)) + " (" + why +
                       "), and the folder has " + human_bytes(static_cast<double>(room)) +
                       " free: give --temp-dir a folder with more room, or raise --max-memory "
                       "(the k-mers are then held in memory)");
}

uint64_t build_overhead_bytes(uint64_t longest_record, unsigned threads) {
    return process_bytes + uint64_t{2} * threads * io::record_batch::default_byte_budget +
           longest_record * 5 / 2;
}

uint64_t build_held_bytes(uint64_t table_bytes, bool table_after_reading,
                          reference_census const& census, unsigned threads) {
    uint64_t const overhead = build_overhead_bytes(census.longest_record, threads);
    if (!table_after_reading) return table_bytes + overhead;
    return std::max(overhead, table_bytes + process_bytes);
}

uint64_t least_build_memory(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                            reference_census const& census, unsigned threads) {
    uint64_t const scratch =
        spilled_fingerprint_buckets::supports(g)
            ? spilled_fingerprint_buckets::memory_bytes(g, census.kmer_positions, threads, 0)
            : 0;
    return build_held_bytes(table_bytes, table_after_reading, census, threads) + scratch;
}

sorted_build_plan plan_sorted_build(qf::geometry g, uint64_t table_bytes, bool table_after_reading,
                                    uint64_t max_memory, reference_census const& census,
                                    unsigned threads) {
    if (!fingerprint_buckets::supports(g)) return {};
    // Buckets in memory are held while the references are read and while the table is filled.
    uint64_t const used = table_bytes + build_overhead_bytes(census.longest_record, threads);
    uint64_t const left = max_memory > used ? max_memory - used : 0;
    double const in_memory =
        static_cast<double>(bucket_bytes_per_position) * static_cast<double>(census.kmer_positions);
    uint64_t const roomy = std::max<uint64_t>(table_bytes, uint64_t{256} << 20);
    if (in_memory <= static_cast<double>(std::min(left / 2, roomy))) return {1, false, 0};
    uint64_t const held = build_held_bytes(table_bytes, table_after_reading, census, threads);
    uint64_t const spill_left = max_memory > held ? max_memory - held : 0;
    // A quarter of what is left for the buffers, else the least they take (4 KiB per bin and
    // thread: the limit least_build_memory() accepts).
    size_t const roomy_buffers = static_cast<size_t>(std::min<uint64_t>(
        max_spill_buffer_bytes_per_thread, spill_left / 4 / std::max(1u, threads)));
    for (size_t const buffers : {roomy_buffers, size_t{0}})
        if (spilled_fingerprint_buckets::supports(g) &&
            spilled_fingerprint_buckets::memory_bytes(g, census.kmer_positions, threads, buffers) <=
                spill_left)
            return {1, true, buffers};
    unsigned const passes =
        plan_passes(census.kmer_positions, std::min<uint64_t>(left / 2, uint64_t{4} << 30));
    if (in_memory / passes > static_cast<double>(left)) return {};
    return {passes, false, 0};
}

uint64_t records_in_memory(uint64_t table_bytes, uint64_t longest_record, unsigned threads,
                           size_t buffer_bytes_per_thread, bool streamed_level) {
    uint64_t const reading =
        build_overhead_bytes(longest_record, threads) + uint64_t{threads} * buffer_bytes_per_thread;
    uint64_t const room = streamed_level ? static_cast<uint64_t>(streamed_records_per_table_byte *
                                                                 static_cast<double>(table_bytes))
                                         : table_bytes;
    return std::max<uint64_t>(room > reading ? room - reading : 0, uint64_t{256} << 20);
}

superkmer_plan plan_superkmer_build(unsigned bin_bits, unsigned window_bits, uint64_t table_bytes,
                                    uint64_t max_memory, reference_census const& census, unsigned k,
                                    unsigned minimizer_length, unsigned threads,
                                    bool streamed_level) {
    superkmer_plan plan;
    uint64_t const held = build_held_bytes(table_bytes, true, census, threads);
    plan.least = held + superkmer_bins::working_bytes(bin_bits, window_bits, census.kmer_positions,
                                                      threads, 0);
    uint64_t const spare = max_memory > plan.least ? max_memory - plan.least : 0;
    plan.buffer_bytes_per_thread = static_cast<size_t>(
        std::min<uint64_t>(max_spill_buffer_bytes_per_thread, spare / 4 / std::max(1u, threads)));
    uint64_t const working = superkmer_bins::working_bytes(
        bin_bits, window_bits, census.kmer_positions, threads, plan.buffer_bytes_per_thread);
    uint64_t const left = max_memory > held + working ? max_memory - held - working : 0;
    plan.memory_budget =
        std::min(left / 2, records_in_memory(table_bytes, census.longest_record, threads,
                                             plan.buffer_bytes_per_thread, streamed_level));
    plan.expected_record_bytes = superkmer_bins::expected_bytes_per_position(k, minimizer_length) *
                                 static_cast<double>(census.kmer_positions);
    return plan;
}

}  // namespace qmer::app
