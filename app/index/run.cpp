// qmer index: references -> canonical k-mers -> hashes -> filter -> index file (ARCHITECTURE.md,
// "Data flow"). The options are checked here; then the index is built, or appended to, through its
// kind's codec (app/filters/kinds/): its own `build` and `append` where it has them (the default
// kind: app/index/expandable_build.cpp), else by inserts (app/index/insert_build.hpp). The
// references are read by app/index/reference_reading.hpp's pipeline.

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/common/interrupt.hpp"
#include "app/common/memory_limit.hpp"
#include "app/common/progress.hpp"
#include "app/common/threads.hpp"
#include "app/filters/registry.hpp"
#include "app/index/index_build.hpp"
#include "app/index/insert_build.hpp"
#include "app/index/many_reference_build.hpp"
#include "app/index/options.hpp"
#include "app/index/reference_sheet.hpp"
#include "core/error.hpp"
#include "io/index_file.hpp"
#include "io/output_file.hpp"
#include "io/same_file.hpp"
#include "io/spill_file.hpp"

namespace qmer::app {
namespace {

// An index is appended to with the k, seed, filter and hash scheme it was built with.
void check_can_append(io::index_header const& header, index_options const& o) {
    if (header.filter != o.filter)
        throw usage_error("'" + o.output + "' holds a " + header.filter + " index; --filter " +
                          o.filter + " cannot append to it");
    // A long-preset index has the preset's k: say so, as an append without --preset asks for k
    // = 31.
    if (header.k != o.k)
        throw usage_error("'" + o.output + "' was built with k = " + std::to_string(header.k) +
                          (header.preset.empty() ? "" : " (--preset " + header.preset + ")") +
                          "; append with -k " + std::to_string(header.k));
    // Another seed would hash the new k-mers where no query of this index looks for them.
    if (header.hash_seed != o.seed)
        throw usage_error("'" + o.output + "' was built with --seed " +
                          std::to_string(header.hash_seed) + "; append with --seed " +
                          std::to_string(header.hash_seed));
    if (o.plain_hash && header.hash.scheme != hash_scheme::plain)
        throw usage_error("'" + o.output +
                          "' is minimizer-local: its new k-mers must be hashed the same way, "
                          "drop --plain-hash");
}

// Appends to the index: through the kind's own append where it has one and it can; else the
// filter is reopened (the index file closed again before the reading) and the new k-mers
// inserted.
template <typename Codec>
void append_to_index(index_build& b) {
    io::index_header header;
    std::unique_ptr<typename Codec::filter_type> filter;
    {
        io::index_file existing(b.options.output);
        check_can_append(existing.header(), b.options);
        if (reference_catalog_of(existing))
            throw usage_error("'" + b.options.output +
                              "' is a many-reference index: --append cannot add unnamed "
                              "references to it; build it again with every reference named");
        if constexpr (requires { Codec::append(b, existing); })
            if (Codec::append(b, existing)) return;
        header = existing.header();
        filter = Codec::open(existing);
    }
    uint64_t const previous_kmers = header.kmers_scanned;
    insert_and_write<Codec>(b, header, std::move(filter), previous_kmers);
}

template <filter_kind Kind>
void build_index(index_options const& given, unsigned threads, build_memory memory) {
    using codec = filter_codec<Kind>;
    index_options o = given;            // o.read_from may name scratch copies of stdin or pipes
    io::check_output_folder(o.output);  // fail before the work, not after it
    if (!o.temp_dir.empty()) io::spill_file probe(o.temp_dir);  // likewise
    progress_meter progress(o.append ? "qmer index --append" : "qmer index", o.quiet, o.timings);
    index_build b{o, threads, memory, progress, temp_folder(o.temp_dir, o.output), {}};
    if (o.append)
        append_to_index<codec>(b);
    else if constexpr (requires { codec::build(b); })
        codec::build(b);
    else
        build_by_inserts<codec>(b);
}

// A many-reference index (-r NAME=FILE, --references SHEET): its references named, checked and
// read in place of REFERENCE..., built by app/index/many_reference_build.cpp. The options it
// cannot honour are refused, not ignored.
void build_many_reference_index(index_options o, unsigned threads, build_memory memory) {
    if (!o.references.empty())
        throw usage_error(
            "give the references either as REFERENCE... or with -r NAME=FILE / --references, "
            "not both (a many-reference index names every reference)");
    if (o.filter != "expandable")
        throw usage_error("a many-reference index is of the default filter, not --filter " +
                          o.filter);
    if (o.append)
        throw usage_error(
            "--append cannot add named references yet: build the many-reference index again with "
            "every reference");
    if (o.expected != 0 || o.cascading)
        throw usage_error(
            "--expected and --cascading do not apply to a many-reference index (it is made for "
            "its references' k-mers)");
    auto const refs = collect_references(o.reference_sheet, o.named_references);
    for (auto const& r : refs) o.references.push_back(r.path);
    std::vector<io::named_file> inputs;
    for (auto const& r : refs) inputs.push_back({r.path, "reference " + r.name});
    if (!o.reference_sheet.empty()) inputs.push_back({o.reference_sheet, "--references"});
    io::refuse_same_files(inputs, {{o.output, "-o"}});
    io::refuse_repeated_inputs({inputs.begin(), inputs.begin() + std::ssize(refs)});
    io::check_output_folder(o.output);
    if (!o.temp_dir.empty()) io::spill_file probe(o.temp_dir);
    progress_meter progress("qmer index", o.quiet, o.timings);
    index_build b{o, threads, memory, progress, temp_folder(o.temp_dir, o.output), {}};
    build_many_references(b, refs);
}

}  // namespace

void run_index(index_options const& given) {
    index_options o = given;
    check_index_parameters(o.k, o.fpr, o.fill, o.expected);  // core/bounds.hpp
    if (!o.named_references.empty() || !o.reference_sheet.empty()) {
        build_memory const memory{memory_limit(o.max_memory), !o.max_memory.empty()};
        interrupt_guard const guard;
        unsigned const threads = resolve_threads(o.threads);
        thread_limit const limit(threads);
        build_many_reference_index(o, threads, memory);
        return;
    }
    filter_kind const kind = parse_filter_kind(o.filter);
    // A filter whose false-positive rate is fixed (cuckoo) gets its best one when the user named
    // none; a --fpr it cannot honour stays an error (its codec says so).
    if (double const best = filter_kind_best_fpr(kind); !o.append && !o.fpr_given && o.fpr < best) {
        std::fprintf(stderr,
                     "qmer: note: --filter %s offers a false-positive rate of %g at best, above "
                     "the default --fpr %g: using --fpr %g\n",
                     o.filter.c_str(), best, o.fpr, best);
        o.fpr = best;
    }
    // Parsed once; a bad --max-memory fails before any work.
    build_memory const memory{memory_limit(o.max_memory), !o.max_memory.empty()};
    // A reference that is the index would be replaced by it. With --append the index is read and
    // then replaced by design (the new one is renamed onto it), so it is the output, not an input.
    std::vector<io::named_file> references;
    for (auto const& r : o.references) references.push_back({r, "reference"});
    io::refuse_same_files(references, {{o.output, o.append ? "-o, --append" : "-o"}});
    io::refuse_repeated_inputs(references);
    if (o.append && !filter_kind_can_append(kind))
        throw usage_error("--append needs an index whose filter grows (" + filter_kind_list(true) +
                          "), not " + o.filter);
    interrupt_guard const guard;
    unsigned const threads = resolve_threads(o.threads);
    thread_limit const limit(threads);
    visit_filter_kind(
        kind, [&](auto kind_constant) { build_index<kind_constant.value>(o, threads, memory); });
}

}  // namespace qmer::app
