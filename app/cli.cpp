#include "app/cli.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/exit_code.hpp"
#include "app/filters/description.hpp"
#include "app/filters/registry.hpp"
#include "app/index/options.hpp"
#include "app/index/preset.hpp"
#include "app/info/options.hpp"
#include "app/merge/options.hpp"
#include "app/query/options.hpp"
#include "core/error.hpp"

namespace qmer::app {
namespace {

// How the help and the usage errors show a subcommand: its synopsis (one line per form of the
// command) as the usage line, and its positionals as the synopsis names them. CLI11 would print
// the positionals' internal names ("index_and_reads(1x)"), which mean nothing to a user.
class qmer_formatter : public CLI::Formatter {
  public:
    void describe(CLI::App const* command, CLI::Option const* positionals, std::string shown,
                  std::vector<std::string> forms) {
        shown_[positionals] = std::move(shown);
        forms_[command] = std::move(forms);
    }
    // The forms of `command` joined by `separator`; empty for a command not described.
    std::string synopsis(CLI::App const* command, std::string_view separator) const {
        std::string out;
        if (auto const it = forms_.find(command); it != forms_.end())
            for (auto const& form : it->second) out.append(out.empty() ? "" : separator) += form;
        return out;
    }
    std::string shown(CLI::Option const* positionals) const {
        auto const it = shown_.find(positionals);
        return it == shown_.end() ? positionals->get_name(true, false) : it->second;
    }

    std::string make_usage(CLI::App const* command, std::string name) const override {
        std::string const forms = synopsis(command, "\n       ");
        if (forms.empty()) return CLI::Formatter::make_usage(command, std::move(name));
        return "Usage: " + forms + "\n";
    }
    std::string make_option_name(CLI::Option const* option, bool positional) const override {
        return positional ? shown(option) : CLI::Formatter::make_option_name(option, false);
    }

  private:
    std::map<CLI::App const*, std::vector<std::string>> forms_;
    std::map<CLI::Option const*, std::string> shown_;
};

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

void setup_index(CLI::App& app, index_options& o, qmer_formatter& format) {
    auto* references =
        app.add_option("references", o.references,
                       "Reference sequences: FASTA/FASTQ/GenBank/EMBL, plain or compressed "
                       "(gzip, bgzf, zstd, xz, bzip2); '-' is stdin");
    format.describe(&app, references, "REFERENCE",
                    {"qmer index [OPTIONS] -o INDEX REFERENCE...",
                     "qmer index [OPTIONS] -o INDEX -r NAME=FILE [-r NAME=FILE]...",
                     "qmer index [OPTIONS] -o INDEX --references SHEET"});
    app.add_option("-r,--reference", o.named_references,
                   "A named reference of a many-reference index (queries say which reference "
                   "each read comes from); repeat it")
        ->type_name("NAME=FILE")
        // One value per -r, as -x: files after it stay references (and are refused beside -r).
        ->allow_extra_args(false)
        ->take_all();
    app.add_option("--references", o.reference_sheet,
                   "A many-reference index's references, one a line: NAME<TAB>FILE[<TAB>GROUP] "
                   "('#' comments; FILE relative to the sheet)")
        ->type_name("SHEET");
    app.add_option("-o,--output", o.output, "Index file to write")->required();
    app.add_option("-k,--kmer", o.k,
                   "k-mer length (--preset long: " + std::to_string(long_read_k) + ")")
        ->check(CLI::Range(min_k, max_k))
        ->capture_default_str();
    // The presets in CLI11's "{a,b}" value column, which the bash completion offers; the name
    // itself is checked by preset_named (a usage error naming --preset).
    std::string presets;
    for (auto const& preset : read_presets)
        presets.append(presets.empty() ? "{" : ",").append(preset.name);
    app.add_option("--preset", o.preset,
                   "Reads the index is for: short (Illumina) or long (noisy long reads: k = " +
                       std::to_string(long_read_k) + ", and queries also need containment >= " +
                       number(long_read_min_containment, "%g") +
                       "); recorded in the index, so queries apply it")
        ->type_name(presets + "}")
        ->capture_default_str();
    app.add_option("-t,--threads", o.threads, "Worker threads (default: all cores)")
        ->check(at_least_one_thread);
    app.add_option("--fpr", o.fpr, "False-positive bound per k-mer, in (0, 0.5]")
        ->check(CLI::Range(min_fpr, max_fpr))
        ->capture_default_str();
    // The kinds in the value column, in CLI11's "{a,b}" form for a fixed set: the bash completion
    // reads any option's values from there. The kind itself is checked by parse_filter_kind.
    std::string kinds;
    for (auto const name : filter_kind_names) kinds.append(kinds.empty() ? "{" : ",").append(name);
    app.add_option("--filter", o.filter, "Filter (see man qmer)")
        ->type_name(kinds + "}")
        ->capture_default_str();
    app.add_option("--expected", o.expected, "Expected distinct k-mers (0: unknown)")
        ->capture_default_str();
    app.add_option("--seed", o.seed, "Seed of the k-mer hash")->capture_default_str();
    app.add_flag(
        "--cascading", o.cascading,
        "Expandable filter: cascading inserts into lower levels (slower here; see man qmer)");
    app.add_option("--fill", o.fill,
                   "Expandable filter built from files: how full its first level ends (higher is "
                   "smaller; queries cost the same at any fill)")
        ->check(CLI::Range(min_fill, max_fill))
        ->capture_default_str();
    app.add_flag("--append", o.append, "Add the references to an existing expandable index");
    app.add_flag("--allow-empty", o.allow_empty,
                 "Write an index of no k-mers when the references hold none (else an error)");
    app.add_flag("--plain-hash", o.plain_hash,
                 "Hash each k-mer on its own, without minimizer locality (see man qmer)");
    // SIZE and DIR, not TEXT: the bash completion offers files for TEXT.
    app.add_option("--max-memory", o.max_memory,
                   "Stop if the index would need more memory than this (e.g. 16G; default: 80% "
                   "of the machine's or the cgroup's memory)")
        ->type_name("SIZE");
    app.add_option("--temp-dir", o.temp_dir,
                   "Folder for the scratch file of a build larger than its memory share (default: "
                   "the index's folder; removed however qmer ends)")
        ->type_name("DIR");
    app.add_flag("--timings", o.timings,
                 "After the closing line, each phase's wall and CPU time (CPU / wall: the cores "
                 "it kept busy)");
    app.add_flag("-q,--quiet", o.quiet, "No progress or statistics on stderr");
    app.footer(
        "Examples:\n"
        "  qmer index -o lambda.qmer data/lambda_virus.fa.gz\n"
        "  qmer index -k 25 --fpr 0.0001 -t 8 -o hosts.qmer human.fa.gz mouse.fa.gz\n"
        "  qmer index --preset long -o ecoli.qmer ecoli.fa.gz\n"
        "  qmer index --append -o hosts.qmer rat.fa.gz\n"
        "  qmer index -o strains.qmer -r usa300=usa300.fa.gz -r mrsa252=mrsa252.fa.gz\n"
        "  qmer index -o panel.qmer --references panel.tsv");
}

void setup_query(CLI::App& app, query_options& o, qmer_formatter& format) {
    // INDEX READS [READS2], or -x INDEX ... READS [READS2]: which positional is the index is
    // settled after parsing (index_from_positionals).
    auto* files =
        app.add_option("index_and_reads", o.reads,
                       "INDEX (an index built by 'qmer index'; omitted when -x gives "
                       "them), then the reads (FASTA/FASTQ/SAM/BAM/CRAM, plain or compressed, "
                       "'-'): two files for paired reads")
            ->required()
            ->expected(1, 3);
    format.describe(&app, files, "[INDEX] READS [READS2]",
                    {"qmer query [OPTIONS] INDEX READS [READS2]",
                     "qmer query [OPTIONS] -x [NAME=]INDEX [-x [NAME=]INDEX]... READS [READS2]"});
    app.add_option("-x,--index", o.panel,
                   "An index of a screening panel, FILE or NAME=FILE (NAME defaults to FILE "
                   "without .qmer); repeat it: every read is looked up in every index, in one "
                   "pass, and gets a category (see man qmer)")
        // One value per -x: the reads after the last -x stay positionals.
        ->allow_extra_args(false)
        ->take_all();
    app.add_option("--split-by-category", o.split_by_category,
                   "With -x or a many-reference index: write each category's reads to its own "
                   "FASTQ, PATH with .NAME before its suffix (out.fq.gz -> out.A.fq.gz, "
                   "out.multiple.fq.gz or out.ambiguous.fq.gz, out.none.fq.gz)");
    app.add_option("-o,--output", o.output, "Per-read TSV (default: stdout)");
    app.add_option("--summary", o.summary, "Write a JSON summary here");
    app.add_option("--matched", o.matched,
                   "Write matched reads here (FASTQ/FASTA; .gz/.bgz: BGZF, .zst: zstd)");
    app.add_option("--unmatched", o.unmatched,
                   "Write unmatched reads here (FASTQ/FASTA; .gz/.bgz: BGZF, .zst: zstd)");
    app.add_option("--min-containment", o.min_containment,
                   "Call a read when hits/kmers reaches this fraction")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--min-hits", o.min_hits, "Call a read when it has at least this many hits")
        ->check(CLI::NonNegativeNumber);
    app.add_option("-t,--threads", o.threads, "Worker threads (default: all cores)")
        ->check(at_least_one_thread);
    app.add_option("--clearzone", o.clearzone,
                   "Many-reference index: a reference within this many hits of the best ties "
                   "with it (never fewer than the filter's false positives could add)")
        ->capture_default_str();
    app.add_flag("--ties-to-group", o.ties_to_group,
                 "Many-reference index: a read whose best references tie within one group is "
                 "called that group");
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

void setup_merge(CLI::App& app, merge_options& o, qmer_formatter& format) {
    auto* tables = app.add_option("tables", o.tables,
                                  "Per-read tables of 'qmer query -x' runs of the same reads "
                                  "against different indexes (plain or gzip), in the order their "
                                  "columns go")
                       ->required();
    format.describe(&app, tables, "TABLE", {"qmer merge [OPTIONS] TABLE..."});
    app.add_option("-o,--output", o.output, "The joint per-read TSV (default: stdout)");
    app.add_option("--summary", o.summary, "Write the joint JSON summary here");
    app.add_flag("-q,--quiet", o.quiet, "No progress or statistics on stderr");
    app.footer(
        "Examples:\n"
        "  qmer query -x human.qmer -o s.human.tsv.gz s.fq.gz   # on one node\n"
        "  qmer query -x mouse.qmer -o s.mouse.tsv.gz s.fq.gz   # on another\n"
        "  qmer merge -o s.tsv --summary s.json s.human.tsv.gz s.mouse.tsv.gz");
}

void setup_info(CLI::App& app, info_options& o, qmer_formatter& format) {
    auto* index = app.add_option("index", o.index, "Index built by 'qmer index'")->required();
    format.describe(&app, index, "INDEX", {"qmer info [OPTIONS] INDEX"});
    app.add_flag("--json", o.json, "Print JSON instead of text");
    app.footer("Examples:\n  qmer info lambda.qmer\n  qmer info --json lambda.qmer");
}

// The subcommand the command line named: CLI11 marks it parsed even when its own arguments then
// fail to parse. Null when none was named.
CLI::App const* named_subcommand(CLI::App& app) {
    for (CLI::App const* command : app.get_subcommands({}))
        if (command->parsed()) return command;
    return nullptr;
}

// The one line for a command line CLI11 refused. A missing positional is named as the synopsis
// names it, with the synopsis; the pointer to --help names the subcommand when there is one.
std::string usage_message(CLI::ParseError const& e, CLI::App const* command,
                          qmer_formatter const& format) {
    if (!command) return std::string(e.what()) + " (run 'qmer --help')";
    std::string const help = " (run 'qmer " + command->get_name() + " --help')";
    if (dynamic_cast<CLI::RequiredError const*>(&e)) {
        for (CLI::Option const* option : command->get_options()) {
            if (!option->get_positional() || !option->get_required() || option->count() > 0)
                continue;
            return "missing " + format.shown(option) +
                   "; usage: " + format.synopsis(command, " or ") + help;
        }
    }
    return std::string(e.what()) + help;
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
    // Before the subcommands are added: each takes its parent's formatter.
    auto const format = std::make_shared<qmer_formatter>();
    app.formatter(format);

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
    setup_index(*index_cmd, index, *format);
    setup_query(*query_cmd, query, *format);
    setup_merge(*merge_cmd, merge, *format);
    setup_info(*info_cmd, info, *format);

    try {
        app.parse(argc, argv);
    } catch (CLI::CallForHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForAllHelp const& e) {
        return app.exit(e);
    } catch (CLI::CallForVersion const& e) {
        return app.exit(e);
    } catch (CLI::ParseError const& e) {
        CLI::App const* command = named_subcommand(app);
        // A subcommand alone asks how to use it: its help, on stderr, as nothing was run.
        if (command && argc == 2) {
            std::fputs(command->help().c_str(), stderr);
            return exit_code::usage;
        }
        // One line, like every other qmer error, with a pointer to --help.
        throw usage_error(usage_message(e, command, *format));
    }

    if (*index_cmd) {
        // REFERENCE... or -r / --references: one of them (CLI11 cannot require either of two).
        if (index.references.empty() && index.named_references.empty() &&
            index.reference_sheet.empty())
            throw usage_error("missing REFERENCE; usage: " + format->synopsis(index_cmd, " or ") +
                              " (run 'qmer index --help')");
        index.fpr_given = index_cmd->count("--fpr") > 0;
        index.k_given = index_cmd->count("--kmer") > 0;
        apply_preset(index);
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
