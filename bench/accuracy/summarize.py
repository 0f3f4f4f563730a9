#!/usr/bin/python3
"""Turns bench/accuracy/run.sh's results.csv, calls.csv, builds.csv and meta.txt into summary.md,
claims.tsv (the run's rows for doc/performance.md, bench/performance_page.py) and, when matplotlib
is there, accuracy.png.

usage: python3 bench/accuracy/summarize.py RESULTS_DIR

Sensitivity is the host's reads (pairs) a tool calls over the host's reads; specificity the other
species' reads it does not call over theirs. The reference of a read set is the aligner users
trust for it: bowtie2 for short reads, minimap2 for long reads.
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

# How far above the reference's share of other species' reads called a qmer setting may go and
# still count as "as specific" when choosing the setting closest to the reference.
SPECIFICITY_SLACK = 0.005
NAMES = {"ecoli": "E. coli MG1655", "hpylori": "H. pylori G27", "saureus": "S. aureus COL",
         "vcholerae": "V. cholerae O395", "ssuis": "S. suis SC84"}
TOOL_ORDER = {"qmer": 0, "bowtie2": 1, "minimap2": 2, "bbduk": 3, "kraken2": 4}
TOOL_NAMES = {"qmer": "qmer", "bowtie2": "bowtie2", "minimap2": "minimap2", "bbduk": "BBDuk",
              "kraken2": "Kraken 2"}


def read_meta(folder):
    meta = defaultdict(list)
    for line in (folder / "meta.txt").read_text().splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            meta[key].append(value)
    return {key: values[0] if len(values) == 1 else values for key, values in meta.items()}


def pct(x, digits=2):
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def points(x):
    value = round(100 * x, 2)
    return f"{value + 0.0:+.2f}"  # + 0.0 turns a rounded -0.0 into 0.0


def setting(row):
    """A row's k and rule as a user would write them."""
    if row["tool"] != "qmer":
        k = f"k={row['k']}, " if row["k"] else ""
        return k + row["rule"]
    rule = "default rule" if row["rule"] == "default" else f"--{row['rule']}"
    return f"-k {row['k']}, {rule}"


def scored(row):
    return row["status"] == "ok"


def as_float(row, key):
    return float(row[key]) if row[key] else None


def reference_of(rows, readset):
    tool = "bowtie2" if readset == "short" else "minimap2"
    for row in rows:
        if row["readset"] == readset and row["tool"] == tool and scored(row):
            return row
    return None


def sort_key(row):
    containment = float(row["rule"].split()[-1]) if row["rule"].startswith("min-containment") else 0.0
    return (TOOL_ORDER.get(row["tool"], 9), -int(row["k"] or 0), containment)


def table(rows, reference):
    ref_name = TOOL_NAMES[reference["tool"]] if reference else "-"
    md = ["| tool | k / rule | sensitivity | specificity | reads/s | peak RSS (MiB) | "
          "minimap2 / bowtie2 reference |", "|---|---|---|---|---|---|---|"]
    for row in sorted(rows, key=sort_key):
        if not scored(row):
            md.append(f"| {TOOL_NAMES[row['tool']]} | {setting(row)} | {row['status']} | | | | |")
            continue
        sens, spec = as_float(row, "sensitivity"), as_float(row, "specificity")
        if reference is None:
            versus = "-"
        elif row is reference:
            versus = "reference"
        else:
            versus = (f"{points(sens - float(reference['sensitivity']))} / "
                      f"{points(spec - float(reference['specificity']))} pt vs {ref_name}")
        md.append(f"| {TOOL_NAMES[row['tool']]} | {setting(row)} | {pct(sens)} | {pct(spec)} | "
                  f"{float(row['reads_per_s']):,.0f} | {float(row['peak_rss_mib']):,.0f} | {versus} |")
    return md


def matrix(rows, accuracies):
    """Long reads at a glance: a row per tool and setting, a column per accuracy, each cell the
    host reads called / the other species' reads called."""
    cells = defaultdict(dict)
    for row in rows:
        if row["read_type"] == "long" and scored(row):
            key = (sort_key(row), TOOL_NAMES[row["tool"]], setting(row))
            cells[key][int(row["accuracy"])] = (f"{pct(float(row['sensitivity']), 1)} / "
                                                f"{pct(1 - float(row['specificity']))}")
    md = ["| tool | k / rule | " + " | ".join(f"{a}%" for a in accuracies) + " |",
          "|---|---|" + "---|" * len(accuracies)]
    for key in sorted(cells):
        md.append(f"| {key[1]} | {key[2]} | "
                  + " | ".join(cells[key].get(a, "-") for a in accuracies) + " |")
    return md


def within_bound(row, reference):
    return float(row["specificity"]) >= float(reference["specificity"]) - SPECIFICITY_SLACK - 1e-12


def closest(rows, reference):
    """The qmer row with the highest sensitivity among those that call at most SPECIFICITY_SLACK
    more of the other species' reads than the reference does; ties go to the higher specificity,
    then the default rule, then the larger k. None when no setting is that specific."""
    fitting = [r for r in rows if r["tool"] == "qmer" and scored(r) and within_bound(r, reference)]
    if not fitting:
        return None
    return max(fitting, key=lambda r: (float(r["sensitivity"]), float(r["specificity"]),
                                       r["rule"] == "default", int(r["k"])))


def everywhere(rows, references, accuracies, count=5):
    """The qmer settings within the bound at every accuracy, the best first: by their lowest
    sensitivity over the accuracies, then their mean specificity."""
    by_setting = defaultdict(dict)
    for row in rows:
        if row["tool"] == "qmer" and row["read_type"] == "long" and scored(row):
            by_setting[(row["k"], row["rule"])][int(row["accuracy"])] = row
    ranked = []
    for of_acc in by_setting.values():
        if all(a in of_acc and a in references and within_bound(of_acc[a], references[a])
               for a in accuracies):
            ranked.append(([of_acc[a] for a in accuracies],
                           min(float(of_acc[a]["sensitivity"]) for a in accuracies),
                           sum(float(of_acc[a]["specificity"]) for a in accuracies)))
    ranked.sort(key=lambda item: (item[1], item[2]), reverse=True)
    return [item[0] for item in ranked[:count]]


def per_genome_table(calls, readsets, others):
    md = ["| read set | tool | k / rule | " + " | ".join(NAMES.get(g, g) for g in others) + " |",
          "|---|---|---|" + "---|" * len(others)]
    by_row = defaultdict(dict)
    for c in calls:
        by_row[(c["readset"], c["tool"], c["k"], c["rule"])][c["genome"]] = c
    for readset in readsets:
        keys = [key for key in by_row if key[0] == readset]
        keys.sort(key=lambda key: sort_key({"tool": key[1], "k": key[2], "rule": key[3]}))
        for key in keys:
            if key[1] == "qmer" and key[3] != "default":
                continue
            cells = []
            for g in others:
                c = by_row[key].get(g)
                cells.append("-" if c is None else f"{int(c['called'])} / {int(c['reads'])}")
            row = {"tool": key[1], "k": key[2], "rule": key[3]}
            md.append(f"| {readset} | {TOOL_NAMES[key[1]]} | {setting(row)} | " + " | ".join(cells) + " |")
    return md


def plot(folder, rows, accuracies):
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = defaultdict(dict)
    for row in rows:
        if row["read_type"] == "long" and scored(row):
            series[(sort_key(row), row["tool"], row["k"], row["rule"])][int(row["accuracy"])] = row
    # One colour per tool and k, one line style per rule: a qmer index's rules read as a family.
    colours = {}
    palette = plt.get_cmap("tab10").colors
    rules = sorted({key[3] for key in series if key[3].startswith("min-containment")})
    styles = dict(zip(rules, ["--", ":", "-.", (0, (1, 4))] * 4))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    for (_, tool, k, rule), points_of in sorted(series.items()):
        colour = colours.setdefault((tool, k), palette[len(colours) % len(palette)])
        xs = sorted(points_of)
        label = f"{TOOL_NAMES[tool]} {setting(points_of[xs[0]])}"
        style = styles.get(rule, "-")
        width = 2.5 if tool != "qmer" else 1.5
        sens = [100 * float(points_of[x]["sensitivity"]) for x in xs]
        called = [100 * (1 - float(points_of[x]["specificity"])) for x in xs]
        left.plot(xs, sens, linestyle=style, marker="o", linewidth=width, color=colour, label=label)
        right.plot(xs, called, linestyle=style, marker="o", linewidth=width, color=colour)
    left.set_xlabel("read accuracy (pbsim CLR mean, %)")
    left.set_ylabel("host reads called (sensitivity, %)")
    right.set_xlabel("read accuracy (pbsim CLR mean, %)")
    right.set_ylabel("other species' reads called (100 - specificity, %)")
    right.set_yscale("symlog", linthresh=0.1)
    for ax in (left, right):
        ax.set_xticks(accuracies)
        ax.grid(alpha=0.3)
    fig.legend(*left.get_legend_handles_labels(), loc="center right", fontsize=7)
    fig.suptitle("Host depletion of noisy long reads: E. coli host, four other genera")
    fig.tight_layout(rect=(0, 0, 0.8, 0.95))
    fig.savefig(folder / "accuracy.png", dpi=110)
    return True


def summarize(folder):
    meta = read_meta(folder)
    rows = list(csv.DictReader(open(folder / "results.csv")))
    calls = list(csv.DictReader(open(folder / "calls.csv")))
    builds = list(csv.DictReader(open(folder / "builds.csv")))
    others = [o.split()[0] for o in (meta["other"] if isinstance(meta["other"], list) else [meta["other"]])]
    host = meta["host"].split()[0]
    accuracies = [int(a) for a in meta["accuracies"].split()]
    readsets = ["short"] + [f"long{a}" for a in accuracies]
    of_set = {s: [r for r in rows if r["readset"] == s] for s in readsets}
    sample = next(r for r in rows if r["readset"] == "short" and scored(r))
    long_sample = next((r for r in rows if r["readset"] != "short" and scored(r)), None)

    md = [f"# Host depletion accuracy: qmer, bowtie2, minimap2, BBDuk, Kraken 2 ({meta['date'][:10]})", ""]
    if meta.get("smoke"):
        md += ["**A smoke run (`--smoke`): too few reads for the figures to mean anything.**", ""]
    md += [
        f"Machine: {meta['cpu']}, {meta['nproc']} cores; every tool with {meta['threads']} threads; "
        f"qmer commit {meta['commit']}; load average before {meta['load_before']}, after "
        f"{meta['load_after']}. Host: {NAMES.get(host, host)}; other species: "
        + ", ".join(NAMES.get(g, g) for g in others) + ". Reads are labelled by the genome that "
        "generated them (their names), never by a tool's output.",
        "",
        f"Short reads: {int(sample['host_reads']):,} ART HS25 150 bp pairs (fragments 300 +- 30 bp) "
        f"of the host and {int(sample['other_reads']):,} of the others; a pair counts once. Long "
        "reads: pbsim 1.0.3 CLR model, "
        + (f"{int(long_sample['host_reads']):,} reads of the host and {int(long_sample['other_reads']):,} "
           f"of the others per accuracy, mean length {meta['long_mean_length']} bp (1-10 kb)"
           if long_sample else "none")
        + "; realized mean accuracy (pbsim's report for the host's reads): "
        + ", ".join(f"{a}% -> {meta.get(f'pbsim_accuracy_{a}') or '?'}" for a in accuracies) + ".",
        "",
        "sensitivity = host reads called / host reads; specificity = other reads not called / other "
        "reads; reads/s = reads (pairs) / wall time of the run, start-up and loading included (BBDuk "
        "starts a JVM and builds its table, minimap2 indexes the host, in every run), with other "
        "work on the machine as the load averages say; "
        "peak RSS from `/usr/bin/time -v`. The last column is the row's sensitivity and "
        "specificity minus the reference's (bowtie2 for short reads, minimap2 for long reads), "
        "in percentage points.",
        "",
        "## Short reads (ART HS25, 150 bp pairs)",
        "",
    ]
    md += table(of_set["short"], reference_of(rows, "short")) + [""]

    md += ["## Long reads (pbsim CLR)", "",
           "At a glance: host reads called / other species' reads called (100% - specificity), "
           "per mean read accuracy.", ""] + matrix(rows, accuracies) + [""]
    choices = {}
    for a in accuracies:
        s = f"long{a}"
        reference = reference_of(rows, s)
        md += [f"### {a}% accuracy", ""] + table(of_set[s], reference) + [""]
        if reference is not None:
            choices[a] = (reference, closest(of_set[s], reference),
                          closest([r for r in of_set[s] if r["rule"] == "default"], reference))

    md += ["## The qmer setting closest to minimap2", "",
           "Per accuracy, among qmer's indexes and rules that call at most "
           f"{100 * SPECIFICITY_SLACK:.1f} point more of the other species' reads than minimap2 maps, "
           "the one with the highest sensitivity (ties: the higher specificity, then the default "
           "rule, then the larger k); and the best with the default rule alone.", "",
           "| accuracy | minimap2 sensitivity / other reads mapped | closest qmer setting | its "
           "sensitivity / other reads called | best with the default rule | its sensitivity / other "
           "reads called |", "|---|---|---|---|---|---|"]
    for a, (reference, best, best_default) in choices.items():
        def cells(row):
            if row is None:
                return "none within the bound | -"
            return (f"{setting(row)} | {pct(float(row['sensitivity']))} / "
                    f"{pct(1 - float(row['specificity']))}")
        md.append(f"| {a}% | {pct(float(reference['sensitivity']))} / "
                  f"{pct(1 - float(reference['specificity']))} | {cells(best)} | {cells(best_default)} |")
    md.append("")
    references = {a: choice[0] for a, choice in choices.items()}
    steady = everywhere(rows, references, accuracies)
    md += ["One setting for every accuracy: the qmer settings within the same bound at "
           + ", ".join(f"{a}%" for a in accuracies) + ", by their lowest sensitivity (cells: host "
           "reads called / other species' reads called).", ""]
    if steady:
        md += ["| k / rule | " + " | ".join(f"{a}%" for a in accuracies) + " |",
               "|---|" + "---|" * len(accuracies)]
        for settings in steady:
            md.append(f"| {setting(settings[0])} | " + " | ".join(
                f"{pct(float(r['sensitivity']), 1)} / {pct(1 - float(r['specificity']))}"
                for r in settings) + " |")
    else:
        md.append("None.")
    md.append("")

    md += ["## Other species' reads called, by species", "",
           "Called / simulated, per species (qmer with its default rule only; calls.csv has every "
           "setting). Shared rRNA operons and other conserved genes are what alignment maps too.",
           ""] + per_genome_table(calls, readsets, others) + [""]

    md += ["## Index builds (the host)", "", "| tool | k | wall (s) | CPU (s) | peak RSS (MiB) | index (MiB) |",
           "|---|---|---|---|---|---|"]
    for b in builds:
        md.append(f"| {TOOL_NAMES[b['tool']]} | {b['k'] or '-'} | {b['wall_s']} | {b['cpu_s'] or '-'} | "
                  f"{float(b['peak_rss_mib']):,.0f} | {int(b['index_bytes']) / 2**20:,.1f} |")
    md += ["", "minimap2 indexes the host in each run (included in its wall time); BBDuk builds its "
           "k-mer table in each run.", ""]
    md += ["Versions (Debian packages): " + ", ".join(
        f"{p} {meta[f'version_{p}']}" for p in ("bowtie2", "minimap2", "bbmap", "kraken2", "pbsim",
                                                 "art-nextgen-simulation-tools", "samtools")
        if f"version_{p}" in meta) + f"; {meta['qmer'].split(' (')[0]}.", ""]
    if plot(folder, rows, accuracies):
        md += ["![sensitivity and other species' calls against read accuracy](accuracy.png)", ""]
    (folder / "summary.md").write_text("\n".join(md))
    write_claims(folder / "claims.tsv", claims(folder, meta, rows, choices, accuracies))


def claims(folder, meta, rows, choices, accuracies):
    fact = {"section": "accuracy", "machine": meta["cpu"], "cores": meta["nproc"],
            "commit": meta["commit"], "date": meta["date"][:10], "how": "`bench/accuracy/run.sh`",
            "link": repo_link(folder / "summary.md")}

    def row_of(readset, tool, k=None, rule=None):
        for r in rows:
            if (r["readset"], r["tool"]) == (readset, tool) and scored(r) and \
                    (k is None or r["k"] == k) and (rule is None or r["rule"] == rule):
                return r
        return None

    def both(r):
        return "-" if r is None else f"{pct(float(r['sensitivity']))} / {pct(float(r['specificity']))}"

    short = [f"{TOOL_NAMES[t]} {both(row_of('short', t, *kr))}" for t, kr in
             (("qmer", ("31", "default")), ("bowtie2", ()), ("minimap2", ()), ("bbduk", ()),
              ("kraken2", ()))]
    out = [{**fact, "key": "accuracy.short",
            "claim": "host depletion, ART 150 bp pairs, E. coli host against four other genera: "
                     "sensitivity / specificity",
            "figure": "; ".join(short)}]
    default = [f"{a}%: {pct(float(r['sensitivity']), 1)}" for a in accuracies
               if (r := row_of(f"long{a}", "qmer", "31", "default"))]
    mapped = [f"{a}%: {pct(float(r['sensitivity']), 1)}" for a in accuracies
              if (r := row_of(f"long{a}", "minimap2"))]
    out.append({**fact, "key": "accuracy.long_default",
                "claim": "noisy long reads (pbsim CLR), host reads called at qmer's default k = 31 "
                         "and rule",
                "figure": ", ".join(default) + "; minimap2 `-x map-pb` " + ", ".join(mapped)})
    best = []
    for a, (reference, row, _) in choices.items():
        text = "none" if row is None else (
            f"`{setting(row)}` {pct(float(row['sensitivity']), 1)} (other species "
            f"{pct(1 - float(row['specificity']), 2)})")
        best.append(f"{a}%: {text} against minimap2's {pct(float(reference['sensitivity']), 1)} "
                    f"({pct(1 - float(reference['specificity']), 2)})")
    out.append({**fact, "key": "accuracy.long_closest",
                "claim": "noisy long reads: the qmer k and rule closest to minimap2's sensitivity "
                         f"calling at most {100 * SPECIFICITY_SLACK:.1f} point more other-species "
                         "reads",
                "figure": "; ".join(best)})
    steady = everywhere(rows, {a: choice[0] for a, choice in choices.items()}, accuracies, 1)
    figure = "none" if not steady else f"`{setting(steady[0][0])}`: " + ", ".join(
        f"{a}% {pct(float(r['sensitivity']), 1)} ({pct(1 - float(r['specificity']))})"
        for a, r in zip(accuracies, steady[0]))
    out.append({**fact, "key": "accuracy.long_one_setting",
                "claim": "noisy long reads: the one qmer k and rule within that bound at every "
                         "accuracy whose worst sensitivity is highest: host reads called (other "
                         "species' reads called)",
                "figure": figure})
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    summarize(Path(sys.argv[1]))
