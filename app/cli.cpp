#include "app/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

#include "app/exit_code.hpp"
#include "app/filters/registry.hpp"
#include "app/index/options.hpp"
#include "app/info/options.hpp"
#include "app/merge/options.hpp"
#include "app/query/options.hpp"
#include "core/error.hpp"

namespace qmer::app {
namespace {

// --threads: a count of at least 1, said in words. CLI11's PositiveNumber reported 0 as "not in
// range 0.000000 to" a 300-digit number. Text that is no number is left to the conversion's own
// message.
CLI::Validator const at_least_one_thread(
    [](std::string& value) -> std::string {
        char* end = nullptr;
        long long const n = std::strtoll(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0') return "";
        return n >= 1 ? "" : "must be at least 1 (the worker threads), not " + value;
    },
    "POSITIVE");

void setup_index(CLI::App& app, index_options& o) {
    app.add_option(
           "references", o.references,
           "Reference sequences: FASTA/FASTQ/GenBank/EMBL, plain, gzip or bgzf; '-' is stdin")
        ->required();
    app.add_option("-o,--output", o.output, "Index file to write")->required();
    app.add_option("-k,--kmer", o.k, "k-mer length")
        ->check(CLI::Range(min_k, max_k))
        ->capture_default_str();
    app.add_option("-t,--threads", o.threads, "Worker threads (default: all cores)")
        ->check(at_least_one_thread);
    app.add_option("--fpr", o.fpr, "False-positive bound per k-mer, in (0, 0.5]")
        ->check(CLI::Range(min_fpr, max_fpr))
        ->capture_default_str();
    app.add_option("--filter", o.filter, filter_kind_help())->capture_default_str();
    app.add_option("--expected", o.expected, "Expected distinct k-mers (0: unknown)")
        ->capture_default_str();
    app.add_option("--seed", o.seed, "Seed of the k-mer hash")->capture_default_str();
    app.add_flag(
        "--cascading", o.cascading,
        "Expandable filter: cascading inserts into lower levels (slower here, see README)");
    app.add_option("--fill", o.fill,
                   "Expandable filter built from files: how full its first level ends (higher is "
                   "smaller; queries cost the same at any fill)")
        ->check(CLI::Range(min_fill, max_fill))
        ->capture_default_str();
    app.add_flag("--append", o.append, "Add the references to an existing expandable index");
    app.add_flag("--plain-hash", o.plain_hash,
                 "Hash each k-mer on its own, without minimizer locality (see README, Super-k-mer "
                 "locality)");
    app.add_option("--max-memory", o.max_memory,
                   "Stop if the index would need more memory than this (e.g. 16G; default: 80% "
                   "of the machine's or the cgroup's memory)");
    app.add_option("--temp-dir", o.temp_dir,
                   "Folder for the scratch file of a build larger than its memory share (default: "
                   "the index's folder; removed however qmer ends)");
    app.add_flag("--timings", o.timings,
                 "After the closing line, each phase's wall and CPU time (CPU / wall: the cores "
                 "it kept busy)");
    app.add_flag("-q,--quiet", o.quiet, "No progress or statistics on stderr");
    app.footer(
        "Examples:\n"
        "  qmer index -o lambda.qmer data/lambda_virus.fa.gz\n"
        "  qmer index -k 25 --fpr 0.0001 -t 8 -o hosts.qmer human.fa.gz mouse.fa.gz\n"
        "  qmer index --append -o hosts.qmer rat.fa.gz");
}

void setup_query(CLI::App& app, query_options& o) {
    // INDEX READS [READS2], or -x INDEX ... READS [READS2]: which positional is the index is
    // settled after parsing (index_from_positionals).
    app.add_option("index_and_reads", o.reads,
                   "INDEX (an index built by 'qmer index'; omitted when -x gives them), then the "
                   "reads (FASTA/FASTQ/SAM/BAM/CRAM, plain/gzip/bgzf, '-'): two files for paired "
                   "reads")
        ->required()
        ->expected(1, 3);
    app.add_option("-x,--index", o.panel,
                   "An index of a screening panel, FILE or NAME=FILE (NAME defaults to FILE "
                   "without .qmer); repeat it: every read is looked up in every index, in one "
                   "pass, and gets a category (see README, Screening panels)")
        // One value per -x: the reads after the last -x stay positionals.
        ->allow_extra_args(false)
        ->take_all();
    app.add_option("--split-by-category", o.split_by_category,
                   "With -x: write each category's reads to its own FASTQ, PATH with .NAME before "
                   "its suffix (out.fq.gz -> out.A.fq.gz, out.multiple.fq.gz, out.none.fq.gz)");
    app.add_option("-o,--output", o.output, "Per-read TSV (default: stdout)");
    app.add_option("--summary", o.summary, "Write a JSON summary here");
    app.add_option("--matched", o.matched, "Write matched reads here (FASTQ; .gz compresses)");
    app.add_option("--unmatched", o.unmatched,
                   "Write unmatched reads here (FASTQ; .gz compresses)");
    app.add_option("--min-containment", o.min_containment,
                   "Call a read when hits/kmers reaches this fraction")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--min-hits", o.min_hits, "Call a read when it has at least this many hits")
        ->check(CLI::NonNegativeNumber);
    app.add_option("-t,--threads", o.threads, "Worker threads (default: all cores)")
        ->check(at_least_one_thread);
    app.add_flag("--quick", o.quick,
                 "Stop looking up a read's k-mers once it has the hits to match (much faster on "
                 "matching reads; their kmers/hits columns then count only the k-mers looked up)");
    app.add_flag("--interleaved", o.interleaved, "READS holds pairs, mate after mate");
    app.add_flag("--mmap", o.mmap,
                 "Answer from the index file mapped in place: the first read is answered at once "
                 "and queries on one machine share the index in the page cache; lookups cost more "
                 "than from the default private copy on huge pages");
    app.add_flag("-q,--quiet", o.quiet, "No progress or statistics on stderr");
    app.footer(
        "Examples:\n"
        "  qmer query lambda.qmer reads.fq.gz > verdicts.tsv\n"
        "  qmer query -t 8 --summary s.json --unmatched clean.fq.gz hosts.qmer sample.fq.gz\n"
        "  qmer query --quick -o /dev/null --matched hits.fq.gz pathogen.qmer sample.fq.gz\n"
        "  qmer query hosts.qmer sample_R1.fq.gz sample_R2.fq.gz -o pairs.tsv\n"
        "  qmer query -x human=GRCh38.qmer -x phix.qmer --split-by-category out.fq.gz "
        "sample.fq.gz");
}

// Without -x, the first positional is the index.
void index_from_positionals(query_options& o) {
    if (!o.panel.empty()) return;
    if (o.reads.size() < 2)
        throw usage_error("query needs an index and reads: INDEX READS [READS2]");
    o.index = o.reads.front();
    o.reads.erase(o.reads.begin());
}

void setup_merge(CLI::App& app, merge_options& o) {
    app.add_option("tables", o.tables,
                   "Per-read tables of 'qmer query -x' runs of the same reads against different "
                   "indexes (plain or gzip), in the order their columns go")
        ->required();
    app.add_option("-o,--output", o.output, "The joint per-read TSV (default: stdout)");
    app.add_option("--summary", o.summary, "Write the joint JSON summary here");
    app.add_flag("-q,--quiet", o.quiet, "No progress or statistics on stderr");
    app.footer(
        "Examples:\n"
        "  qmer query -x human.qmer -o s.human.tsv.gz s.fq.gz   # on one node\n"
        "  qmer query -x mouse.qmer -o s.mouse.tsv.gz s.fq.gz   # on another\n"
        "  qmer merge -o s.tsv --summary s.json s.human.tsv.gz s.mouse.tsv.gz");
}

void setup_info(CLI::App& app, info_options& o) {
    app.add_option("index", o.index, "Index built by 'qmer index'")->required();
    app.add_flag("--json", o.json, "Print JSON instead of text");
    app.footer("Examples:\n  qmer info lambda.qmer\n  qmer info --json lambda.qmer");
}

}  // namespace

int run_cli(int argc, char** argv) {
    CLI::App app{
        "qmer: screen sequencing reads against the k-mers of reference genomes, indexed in "
        "a concurrent expandable quotient filter",
        "qmer"};
    app.set_version_flag("-V,--version", std::string("qmer ") + QMER_VERSION);
    app.require_subcommand(1);
    app.fallthrough(false);

    index_options index;
    query_options query;
    info_options info;
    merge_options merge;
    auto* index_cmd = app.add_subcommand("index", "Build an index of the reference k-mers");
    auto* query_cmd = app.add_subcommand(
        "query", "Screen reads against an index, or a panel of indexes (-x) in one pass");
    auto* merge_cmd = app.add_subcommand(
        "merge", "Join per-read tables of single-index queries into the panel's joint table");
    auto* info_cmd = app.add_subcommand("info", "Describe an index");
    setup_index(*index_cmd, index);
    setup_query(*query_cmd, query);
    setup_merge(*merge_cmd, merge);
    setup_info(*info_cmd, info);

    try {
        app.parse(argc, argv);
    } catch (CLI::CallForHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForAllHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForVersion const& e) {
        return app.exit(e);
    } catch (CLI::ParseError const& e) {
        // One line, like every other qmer error, with a pointer to --help.
        throw usage_error(std::string(e.what()) + " (see 'qmer --help')");
    }

    if (*index_cmd) {
        index.fpr_given = index_cmd->count("--fpr") > 0;
        for (int i = 0; i < argc; ++i) {
            if (i) index.command_line += ' ';
            index.command_line += argv[i];
        }
        run_index(index);
    } else if (*query_cmd) {
        index_from_positionals(query);
        run_query(query);
    } else if (*merge_cmd) {
        run_merge(merge);
    } else if (*info_cmd) {
        run_info(info);
    }
    return exit_code::ok;
}

}  // namespace qmer::app
