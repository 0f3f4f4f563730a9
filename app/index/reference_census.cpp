#include "app/index/reference_census.hpp"

#include <algorithm>

#include "app/index/memory_plan.hpp"
#include "core/error.hpp"
#include "core/kmer/hash.hpp"
#include "core/sketch/group_sampled_count.hpp"
#include "core/sketch/hyperloglog.hpp"

namespace qmer::app {
namespace {

// The distinct-count pass's sink: every k-mer's hash goes into a HyperLogLog sketch (16 KiB,
// 0.81% standard error).
struct distinct_counter {
    sketch::hyperloglog sketch;
    insert_result insert(uint64_t h) noexcept {
        sketch.add(h);
        return insert_result::inserted;
    }
    size_t memory_bytes() const noexcept { return sketch.memory_bytes(); }
    size_t size() const noexcept { return 0; }
};

}  // namespace

reference_census count_references(reference_pass const& pass, uint64_t seed) {
    // The bases to read, guessed from the files' sizes; the later passes know them.
    pass.progress.begin_phase("counting k-mers",
                              static_cast<double>(estimate_kmers_from_sizes(pass.refs.paths)), "bp",
                              false, true);
    distinct_counter counter;
    build_counts counts;
    (void)insert_references(counter, plain_kmer_hashing(pass.refs.k, seed), pass, counts);
    return census_of(counter.sketch, counts);
}

uint64_t count_kmer_positions(reference_set const& refs, std::string_view filter) {
    for (auto const& p : refs.names)
        if (p == "-")
            throw usage_error("--filter " + std::string(filter) +
                              " cannot grow and reads stdin only once: give --expected N");
    reference_stream stream(refs, {});
    reference_chunk chunk;
    kmer_scanner const scanner(refs.k);
    uint64_t total = 0;
    while (stream.next(chunk)) {
        throw_if_interrupted();
        for (io::sequence_record const r : chunk.batch) total += scanner.count(r.sequence);
    }
    stream.check_every_reference_held_a_kmer();
    return total;
}

bool gathers_while_counting(reference_set const& refs, bool plain_hash) {
    return !plain_hash && locality_minimizer_length(refs.k) != 0 &&
           estimate_kmers_from_sizes(refs.paths) >= gather_while_counting_from;
}

unsigned gathering_bin_bits(unsigned guessed_fingerprint_bits) noexcept {
    return std::clamp(guessed_fingerprint_bits > 31 ? guessed_fingerprint_bits - 31 : 0, 10u, 12u);
}

reference_census count_and_gather(reference_pass const& pass, gathering const& how,
                                  build_counts& counts, std::unique_ptr<superkmer_bins>& gathered) {
    unsigned const k = pass.refs.k;
    unsigned const threads = pass.threads;
    uint64_t const max_memory = how.memory_limit;
    unsigned const m = locality_minimizer_length(k);
    uint64_t const guessed = estimate_kmers_from_sizes(pass.refs.paths);
    uint64_t const process = build_overhead_bytes(0, threads);
    size_t const buffers = static_cast<size_t>(std::min<uint64_t>(
        max_spill_buffer_bytes_per_thread,
        (max_memory > process ? max_memory - process : 0) / 8 / std::max(1u, threads)));
    uint64_t const held = process + uint64_t{threads} * buffers;
    uint64_t const cap = max_memory > held ? (max_memory - held) / 2 : 0;
    // The scratch file's room, from the guess: what memory will not hold of the super-k-mers.
    double const expected =
        superkmer_bins::expected_bytes_per_position(k, m) * static_cast<double>(guessed);
    double const in_memory = static_cast<double>(std::min(cap, how.table_bytes_for(guessed)));
    if (expected > in_memory)
        require_scratch_room(how.scratch_folder, static_cast<uint64_t>(expected - in_memory),
                             "its super-k-mers on random sequence, less what memory holds");
    sketch::group_sampled_count sketch;
    gathered = std::make_unique<superkmer_bins>(minimizer_scanner(k, m, how.seed),
                                                gathering_bin_bits(how.guessed_fingerprint_bits),
                                                cap, how.scratch_folder, buffers, &sketch);
    superkmer_bins& bins = *gathered;
    auto const allow = [&] {
        uint64_t const table = how.table_bytes_for(static_cast<uint64_t>(sketch.estimate()));
        bins.allow_in_memory(std::min(cap, records_in_memory(table, counts.longest_record, threads,
                                                             buffers, how.streamed_level)));
    };
    allow();
    pass.progress.begin_phase("reading k-mers", static_cast<double>(guessed), "bp", true, true);
    // After every batch (an estimate takes microseconds; a batch is 4 MiB of sequence or one longer
    // record): allowing only every 16th would leave a reference of 100 Mbp records (a human
    // genome's chromosomes) at the first allowance, 256 MiB, for its first 16 records, and send
    // most of it through the scratch file.
    read_reference_spans(
        pass, counts, [&](std::string_view seq) { return bins.add(seq); },
        [&] {
            allow();
            return false;
        });
    if (sketch.standard_error() <= most_sampled_count_error) return census_of(sketch, counts);
    // The k-mers sit under too few minimizers for the sample (a tandem repeat: perhaps none of
    // them was sampled): counted again, every one, from the bins (a margin of 3 such errors, or the
    // positions, would make the table larger than the k-mers need).
    pass.progress.begin_phase("counting every k-mer", 0, "", false);
    sketch::hyperloglog every;
    bins.count_every_kmer(every);
    return census_of(every, counts);
}

}  // namespace qmer::app
