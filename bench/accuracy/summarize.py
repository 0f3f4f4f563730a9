#!/usr/bin/python3
"""Turns bench/accuracy/run.sh's results.csv, calls.csv, builds.csv, speed.csv,
deep_qmer_flagged.tsv and meta.txt into summary.md, claims.tsv (the run's rows for
doc/performance.md, bench/performance_page.py) and, when matplotlib is there, accuracy.png.

usage: python3 bench/accuracy/summarize.py RESULTS_DIR

Sensitivity is the host's reads (pairs) a tool calls over the host's reads; specificity the other
species' reads it does not call over theirs. The reference of a read set is the aligner users
trust for it: bowtie2 for short reads, minimap2 for long reads.
"""
import csv
import re
import statistics
import sys
from collections import defaultdict
from math import exp, lgamma, log, log1p
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

# How far above the reference's share of other species' reads called a qmer setting may go and
# still count as "as specific" when choosing the setting closest to the reference.
SPECIFICITY_SLACK = 0.005
NAMES = {"ecoli": "E. coli MG1655", "hpylori": "H. pylori G27", "saureus": "S. aureus COL",
         "vcholerae": "V. cholerae O395", "ssuis": "S. suis SC84", "human": "human chr22"}
# The deep experiment's goal (sensitivity and specificity), and what Deacon (Constantinides et al.,
# bioRxiv 2025) reports for a human host against bacterial reads.
DEEP_GOAL = 0.99999
DEACON_PAPER = (0.999989, 0.999995)
DEACON_RULE = "min-hits 2 min-containment 0.01"
CONFIDENCE = 0.95
# The speed experiment's goal: qmer --preset long's reads/s over minimap2's.
SPEED_GOAL = 5.0
SPEED_RUNS = {  # run -> (tool, setting), in table order
    "qmer_long": ("qmer", "--preset long (k 17; default rule and containment >= 0.02)"),
    "qmer_long_quick": ("qmer", "--preset long, --quick"),
    "minimap2": ("minimap2", "-x map-pb, its .mmi loaded, PAF"),
    "minimap2_sam": ("minimap2", "-a -x map-pb, its .mmi loaded, SAM"),
    "qmer_k31": ("qmer", "-k 31, default rule"),
    "bbduk": ("BBDuk", "k=31, its table built in the run"),
}
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


def rule_text(rule):
    """A qmer rule of results.csv ("default", "quick", or option names and values) as options."""
    if rule == "default":
        return "default rule"
    if rule == "quick":
        return "default rule, --quick"
    words = rule.split()
    return " ".join(f"--{name} {value}" for name, value in zip(words[::2], words[1::2]))


def setting(row):
    """A row's k and rule as a user would write them."""
    if row["tool"] != "qmer":
        k = f"k={row['k']}, " if row["k"] else ""
        return k + row["rule"]
    return f"-k {row['k']}, {rule_text(row['rule'])}"


def in_sweep(row):
    """The qmer rules the long-read choices compare: the default and the containment minimums
    (Deacon's rule has its own section)."""
    return row["rule"] == "default" or row["rule"].startswith("min-containment")


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
    """Tools in TOOL_ORDER, then k from the largest; qmer's rules: the default, the containment
    minimums in order, Deacon's, --quick."""
    rule = row["rule"]
    if rule.startswith("min-containment"):
        rank = float(rule.split()[-1])
    else:
        rank = {"default": 0.0, DEACON_RULE: 2.0, "quick": 3.0}.get(rule, 0.0)
    return (TOOL_ORDER.get(row["tool"], 9), -int(row["k"] or 0), rank)


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
    fitting = [r for r in rows if r["tool"] == "qmer" and scored(r) and in_sweep(r)
               and within_bound(r, reference)]
    if not fitting:
        return None
    return max(fitting, key=lambda r: (float(r["sensitivity"]), float(r["specificity"]),
                                       r["rule"] == "default", int(r["k"])))


def everywhere(rows, references, accuracies, count=5):
    """The qmer settings within the bound at every accuracy, the best first: by their lowest
    sensitivity over the accuracies, then their mean specificity."""
    by_setting = defaultdict(dict)
    for row in rows:
        if row["tool"] == "qmer" and row["read_type"] == "long" and scored(row) and in_sweep(row):
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
    styles[DEACON_RULE] = (0, (6, 2, 1, 2, 1, 2))
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


def as_list(value):
    return value if isinstance(value, list) else [value]


def main_section(meta, rows, calls, accuracies):
    """The main experiment's tables (E. coli host); also the per-accuracy choices the claims cite."""
    others = [o.split()[0] for o in as_list(meta["other"])]
    host = meta["host"].split()[0]
    readsets = ["short"] + [f"long{a}" for a in accuracies]
    of_set = {s: [r for r in rows if r["readset"] == s] for s in readsets}
    sample = next(r for r in rows if r["readset"] == "short" and scored(r))
    long_sample = next((r for r in rows if r["read_type"] == "long" and scored(r)), None)
    md = [
        f"## The main experiment: {NAMES.get(host, host)} host, other species "
        + ", ".join(NAMES.get(g, g) for g in others),
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
        "### Short reads (ART HS25, 150 bp pairs)",
        "",
    ]
    md += table(of_set["short"], reference_of(rows, "short")) + [""]

    md += ["### Long reads (pbsim CLR)", "",
           "At a glance: host reads called / other species' reads called (100% - specificity), "
           "per mean read accuracy.", ""] + matrix(rows, accuracies) + [""]
    choices = {}
    for a in accuracies:
        s = f"long{a}"
        reference = reference_of(rows, s)
        md += [f"#### {a}% accuracy", ""] + table(of_set[s], reference) + [""]
        if reference is not None:
            choices[a] = (reference, closest(of_set[s], reference),
                          closest([r for r in of_set[s] if r["rule"] == "default"], reference))

    md += ["### The qmer setting closest to minimap2", "",
           "Per accuracy, among qmer's indexes, with the default rule or a containment minimum, "
           "that call at most "
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

    md += ["### Other species' reads called, by species", "",
           "Called / simulated, per species (qmer with its default rule only; calls.csv has every "
           "setting). Shared rRNA operons and other conserved genes are what alignment maps too.",
           ""] + per_genome_table(calls, readsets, others) + [""]

    return md, choices


# ------------------------------------------------------------------ exact binomial intervals
def _beta_fraction(a, b, x):
    """The continued fraction of the regularized incomplete beta function, evaluated by the
    modified Lentz method; converges fast for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300

    def guard(v):
        return tiny if abs(v) < tiny else v

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, 1_000_000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def beta_cdf(x, a, b):
    """P(X <= x) for X ~ Beta(a, b): the regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def beta_quantile(q, a, b):
    """The x with I_x(a, b) = q, by bisection (I is increasing in x)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if beta_cdf(mid, a, b) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(x, n, confidence=CONFIDENCE):
    """The exact (Clopper-Pearson) interval of a binomial proportion, x successes of n."""
    tail = (1 - confidence) / 2
    lower = 0.0 if x == 0 else beta_quantile(tail, x, n - x + 1)
    upper = 1.0 if x == n else beta_quantile(1 - tail, x + 1, n - x)
    return lower, upper


# ------------------------------------------------------------------ the deep experiment
def of(x, n):
    return f"{x:,} of {n:,}"


def interval(x, n):
    lower, upper = clopper_pearson(x, n)
    return f"[{lower:.6f}, {upper:.6f}]"


def goal_cell(row):
    """Whether a row meets the deep goal: on its point estimates, and on its intervals' lower
    bounds (what the counts can vouch for at 95%)."""
    hr, hc = int(row["host_reads"]), int(row["host_called"])
    orr, oc = int(row["other_reads"]), int(row["other_called"])
    sens, spec = hc / hr, 1 - oc / orr
    if sens < DEEP_GOAL or spec < DEEP_GOAL:
        short = [name for name, v in (("sensitivity", sens), ("specificity", spec)) if v < DEEP_GOAL]
        return "not met (" + ", ".join(short) + ")"
    sure = clopper_pearson(hc, hr)[0] >= DEEP_GOAL and clopper_pearson(orr - oc, orr)[0] >= DEEP_GOAL
    return "met" + (", interval too" if sure else "; the interval reaches below")


def deep_table(rows, timed=True):
    md = ["| tool | k / rule | host pairs missed | sensitivity | 95% interval | bacterial pairs called "
          "| specificity | 95% interval | goal |" + (" pairs/s | peak RSS (MiB) |" if timed else ""),
          "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if timed else "")]
    for row in sorted(rows, key=sort_key):
        if not scored(row):
            md.append(f"| {TOOL_NAMES[row['tool']]} | {setting(row)} | {row['status']} | | | | | | |"
                      + (" | |" if timed else ""))
            continue
        hr, hc = int(row["host_reads"]), int(row["host_called"])
        orr, oc = int(row["other_reads"]), int(row["other_called"])
        cells = [TOOL_NAMES[row["tool"]], setting(row), of(hr - hc, hr), f"{hc / hr:.6f}",
                 interval(hc, hr), of(oc, orr), f"{1 - oc / orr:.6f}", interval(orr - oc, orr),
                 goal_cell(row)]
        if timed:
            rate = f"{float(row['reads_per_s']):,.0f}" if row["reads_per_s"] else "-"
            rss = f"{float(row['peak_rss_mib']):,.0f}" if row["peak_rss_mib"] else "-"
            cells += [rate, rss]
        md.append("| " + " | ".join(cells) + " |")
    return md


def deep_species_table(calls, readset, label, genomes, host):
    """Per tool and setting: the host's pairs missed, and each bacterium's pairs called."""
    by_row = defaultdict(dict)
    for c in calls:
        if c["readset"] == readset:
            by_row[(c["tool"], c["k"], c["rule"])][c["genome"]] = c
    md = ["| pairs | tool | k / rule | " + NAMES.get(host, host) + " missed | "
          + " | ".join(NAMES.get(g, g) + " called" for g in genomes) + " |",
          "|---|---|---|---|" + "---|" * len(genomes)]
    for key in sorted(by_row, key=lambda k: sort_key({"tool": k[0], "k": k[1], "rule": k[2]})):
        row = {"tool": key[0], "k": key[1], "rule": key[2]}
        h = by_row[key].get(host)
        cells = ["-" if h is None else f"{int(h['reads']) - int(h['called']):,} / {int(h['reads']):,}"]
        for g in genomes:
            c = by_row[key].get(g)
            cells.append("-" if c is None else f"{int(c['called']):,} / {int(c['reads']):,}")
        md.append(f"| {label} | {TOOL_NAMES[key[0]]} | {setting(row)} | " + " | ".join(cells) + " |")
    return md


def flagged_section(folder, limit=40):
    """qmer's surprising verdicts of the deep experiment, from deep_qmer_flagged.tsv."""
    path = folder / "deep_qmer_flagged.tsv"
    if not path.exists():
        return []
    flagged = list(csv.DictReader(open(path), delimiter="\t"))
    md = ["### qmer's surprising verdicts", "",
          "Every bacterial pair qmer called and every host pair it missed, with the default rule and "
          "Deacon's, is a line of `deep_qmer_flagged.tsv`: the pair's k-mers and hits, the tools "
          "that agree (called the same bacterial pair, or missed the same host pair; bowtie2 only "
          "within its subsample), each mate's trinucleotide entropy in bits (random sequence ~5.9, "
          "a microsatellite or poly-A run much less) and both mates.", ""]
    if not flagged:
        return md + ["None: qmer called no bacterial pair and missed no host pair.", ""]
    counts = defaultdict(list)
    for f in flagged:
        counts[(f["rule"], f["verdict"])].append(f)
    md += ["| k / rule | verdict | pairs | the other tools agree on | lowest mate entropy, median (bits) |",
           "|---|---|---|---|---|"]
    for (rule, verdict), group in sorted(counts.items()):
        agreed = sum(1 for f in group if f["others_agreeing"] != "-")
        low = statistics.median(min(float(f["entropy_mate1"]), float(f["entropy_mate2"]))
                                for f in group)
        md.append(f"| -k 31, {rule_text(rule)} | {verdict.replace('_', ' ')} | {len(group):,} | "
                  f"{agreed:,} | {low:.2f} |")
    md += ["", f"The first {min(limit, len(flagged))} of {len(flagged):,}:", "",
           "| k / rule | verdict | pair | hits / k-mers | mate entropies (bits) | also by |",
           "|---|---|---|---|---|---|"]
    for f in flagged[:limit]:
        md.append(f"| {rule_text(f['rule'])} | {f['verdict'].replace('_', ' ')} | {f['pair']} | "
                  f"{f['hits']} / {f['kmers']} | {f['entropy_mate1']}, {f['entropy_mate2']} | "
                  f"{f['others_agreeing']} |")
    return md + [""]


def deep_section(folder, meta, rows, calls):
    host = meta["deep_host"].split()[0]
    genomes = as_list(meta["deep_other"])
    deep = [r for r in rows if r["readset"] == "deep"]
    sub = [r for r in rows if r["readset"] == "deep_sub"]
    bowtie2 = [r for r in sub if r["tool"] == "bowtie2"]
    sample = next(r for r in deep if scored(r))
    sub_sample = next((r for r in sub if scored(r)), None)
    differences = meta.get("deep_quick_differences", "")
    source = re.fullmatch(r"\S+ \((.*), (\d+) bp\)", meta["deep_host"])
    described = (f"{NAMES.get(host, host)}, {int(source[2]):,} bp ({source[1]})" if source
                 else meta["deep_host"])
    md = [f"## Short pairs at depth: {NAMES.get(host, host)} host, five bacteria", "",
          f"Host: {described}; others: " + ", ".join(NAMES.get(g, g) for g in genomes)
          + f" (E. coli is not the host here). {int(sample['host_reads']):,} ART HS25 150 bp pairs "
          f"of the host and {int(sample['other_reads']):,} spread over the bacteria (the main "
          "experiment's model and seeds); a pair counts once. Goal: sensitivity and specificity "
          f">= {DEEP_GOAL} (Deacon, Constantinides et al., bioRxiv 2025, reports "
          f"{DEACON_PAPER[0]} and {DEACON_PAPER[1]} for a human host against bacterial reads). "
          "Intervals: exact binomial (Clopper-Pearson), 95%. \"goal\" says whether both point "
          "estimates reach it, and whether both intervals' lower bounds do too.",
          "",
          "qmer uses one index of the host (k = 31, `--fpr 0.001`); minimap2 (`-a --sam-hit-only -x "
          "sr`) its index built once; BBDuk builds its table in the run; bowtie2 "
          "(`--very-sensitive`) aligns an even subsample only"
          + (f", {int(sub_sample['host_reads']):,} pairs of the host and "
             f"{int(sub_sample['other_reads']):,} of the bacteria" if sub_sample else "")
          + ", at its rows' own counts.", ""]
    md += deep_table(deep + bowtie2) + [""]
    if differences != "":
        same = int(differences) == 0
        md += [f"`--quick` against the default rule: "
               + (f"the same verdict for all {int(sample['host_reads']) + int(sample['other_reads']):,} "
                  "pairs." if same else f"**{int(differences):,} pairs' verdicts differ.**"), ""]
    if sub:
        md += ["### On bowtie2's subsample", "",
               "Every tool's calls among the pairs bowtie2 aligned (the same runs, their calls "
               "restricted to the subsample):", ""] + deep_table(sub, timed=False) + [""]
    md += ["### By species", "", "Host pairs missed, and each bacterium's pairs called, over its "
           "pairs (bowtie2: the subsample's).", ""]
    md += deep_species_table(calls, "deep", "all", genomes, host)
    md += deep_species_table(calls, "deep_sub", "subsample", genomes, host)[2:]
    return md + [""] + flagged_section(folder)


# ------------------------------------------------------------------ Deacon's rule
def deacon_section(rows, accuracies):
    """Deacon's rule beside qmer's default rule, per read set and k."""
    readsets = [("short", "short pairs (E. coli host)")] + \
        [(f"long{a}", f"long reads {a}%") for a in accuracies] + [("deep", "pairs at depth (human host)")]
    by = {(r["readset"], r["k"], r["rule"]): r for r in rows if r["tool"] == "qmer" and scored(r)}
    md = ["## Deacon's rule", "",
          "qmer `--min-hits 2 --min-containment 0.01` (Deacon's rule: 2 hits and 1% of the k-mers; "
          "a pair's mates counted together) against qmer's default rule (the binomial threshold), "
          "per read set and k. Cells: host reads called / other species' reads called; the last "
          "column, Deacon's minus the default's, in percentage points.", "",
          "| read set | k | default rule | Deacon's rule | difference (pt) |", "|---|---|---|---|---|"]
    any_row = False
    for readset, label in readsets:
        ks = sorted({k for (s, k, _) in by if s == readset}, key=lambda k: -int(k))
        for k in ks:
            default, deacon = by.get((readset, k, "default")), by.get((readset, k, DEACON_RULE))
            if default is None or deacon is None:
                continue
            any_row = True

            def cell(r):
                return f"{pct(float(r['sensitivity']), 3)} / {pct(1 - float(r['specificity']), 3)}"
            d_sens = float(deacon["sensitivity"]) - float(default["sensitivity"])
            d_other = float(default["specificity"]) - float(deacon["specificity"])
            md.append(f"| {label} | {k} | {cell(default)} | {cell(deacon)} | "
                      f"{points(d_sens)} / {points(d_other)} |")
    return md + [""] if any_row else []


# ------------------------------------------------------------------ the speed experiment
def speed_rows(folder):
    path = folder / "speed.csv"
    return list(csv.DictReader(open(path))) if path.exists() else []


def speed_medians(runs):
    """run -> (median wall, reads, bases, median CPU, largest RSS, loads, first rep's row)."""
    by_run = defaultdict(list)
    for r in runs:
        by_run[r["run"]].append(r)
    out = {}
    for run, reps in by_run.items():
        reps.sort(key=lambda r: int(r["rep"]))
        out[run] = {"wall": statistics.median(float(r["wall_s"]) for r in reps),
                    "cpu": statistics.median(float(r["cpu_s"]) for r in reps),
                    "rss": max(float(r["peak_rss_mib"]) for r in reps),
                    "reads": int(reps[0]["reads"]), "bases": int(reps[0]["bases"]),
                    "loads": [r["load1"] for r in reps], "first": reps[0],
                    "same_calls": len({(r["host_called"], r["other_called"]) for r in reps}) == 1}
    return out


def rate(m):
    return m["reads"] / m["wall"] if m["wall"] > 0 else float("nan")


def speed_section(meta, runs):
    med = speed_medians(runs)
    mm = med.get("minimap2")
    md = ["## Speed on long reads: qmer --preset long against minimap2", "",
          f"{int(meta['speed_reads']):,} pbsim CLR reads at {meta['speed_accuracy']}% "
          f"(realized {meta.get('speed_pbsim_accuracy') or '?'}), mean {meta['speed_mean_length']} "
          f"bp, {int(meta['speed_bases']) / 1e6:,.0f} Mbp, half of them the host's (E. coli), half "
          f"over the four other genera; {meta['threads']} threads each. Each index is built once "
          "(qmer `index --preset long`, `minimap2 -x map-pb -d`); then each round runs the tools "
          f"in turn, qmer first, {meta['speed_reps']} rounds; the median wall time of a tool's "
          "rounds makes its reads/s (start-up and index loading included). minimap2 writes PAF "
          "without base-level alignment, its fastest way to say whether a read maps (the reference "
          "of the ratio), and SAM with `-a` as pipelines that keep the unmapped reads run it. BBDuk builds "
          "its table in each run, as it always does. Load: the 1-minute load average before each "
          "round's run of the tool.", "",
          "| tool | setting | median wall (s) | reads/s | Mbp/s | CPU (s) | peak RSS (MiB) | "
          "load before each run | reads/s over minimap2's | host reads called / other reads "
          "called (round 1) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for run, (tool, label) in SPEED_RUNS.items():
        m = med.get(run)
        if m is None:
            continue
        first = m["first"]
        sens = int(first["host_called"]) / int(first["host_reads"])
        other = int(first["other_called"]) / int(first["other_reads"])
        ratio = "-" if mm is None else ("1 (reference)" if run == "minimap2" else f"{rate(m) / rate(mm):.1f}x")
        md.append(f"| {tool} | {label} | {m['wall']:.2f} | {rate(m):,.0f} | "
                  f"{m['bases'] / m['wall'] / 1e6:,.1f} | {m['cpu']:.2f} | {m['rss']:,.0f} | "
                  f"{', '.join(m['loads'])} | {ratio} | {pct(sens)} / {pct(other)}"
                  + ("" if m["same_calls"] else " (rounds differ)") + " |")
    md.append("")
    if mm is not None and "qmer_long" in med:
        ratio = rate(med["qmer_long"]) / rate(mm)
        md += [f"qmer `--preset long` answers {ratio:.1f}x minimap2's reads/s (goal >= "
               f"{SPEED_GOAL:.0f}x: {'met' if ratio >= SPEED_GOAL else 'not met'})"
               + (f"; with `--quick` {rate(med['qmer_long_quick']) / rate(mm):.1f}x"
                  if "qmer_long_quick" in med else "") + ".", ""]
    differences = meta.get("speed_quick_differences", "")
    if differences != "":
        md += ["`--quick` against the index's rule: " + (
            "the same verdict for every read." if int(differences) == 0
            else f"**{int(differences):,} reads' verdicts differ.**"), ""]
    return md


# ------------------------------------------------------------------ the summary
def summarize(folder):
    meta = read_meta(folder)
    rows = list(csv.DictReader(open(folder / "results.csv")))
    calls = list(csv.DictReader(open(folder / "calls.csv")))
    builds = list(csv.DictReader(open(folder / "builds.csv")))
    runs = speed_rows(folder)
    accuracies = [int(a) for a in meta["accuracies"].split()]
    has_main = any(r["readset"] == "short" for r in rows)
    has_deep = any(r["readset"] == "deep" for r in rows)

    md = [f"# Host depletion accuracy: qmer, bowtie2, minimap2, BBDuk, Kraken 2 ({meta['date'][:10]})", ""]
    if meta.get("smoke"):
        md += ["**A smoke run (`--smoke`): too few reads for the figures to mean anything.**", ""]
    md += [
        f"Machine: {meta['cpu']}, {meta['nproc']} cores; every tool with {meta['threads']} threads; "
        f"qmer commit {meta['commit']}; load average before {meta['load_before']}, after "
        f"{meta['load_after']}. Experiments: {meta.get('parts', 'main')}. Reads are labelled by the "
        "genome that generated them (their names), never by a tool's output.",
        ""]
    choices = {}
    if has_main:
        main_md, choices = main_section(meta, rows, calls, accuracies)
        md += main_md
    if has_deep:
        md += deep_section(folder, meta, rows, calls)
    md += deacon_section(rows, accuracies if has_main else [])
    if runs:
        md += speed_section(meta, runs)

    md += ["## Index builds", "", "| tool | k | of | wall (s) | CPU (s) | peak RSS (MiB) | index (MiB) |",
           "|---|---|---|---|---|---|---|"]
    for b in builds:
        md.append(f"| {TOOL_NAMES[b['tool']]} | {b['k'] or '-'} | {b['what']} | {b['wall_s']} | "
                  f"{b['cpu_s'] or '-'} | {float(b['peak_rss_mib']):,.0f} | "
                  f"{int(b['index_bytes']) / 2**20:,.1f} |")
    md += ["", "The main experiment's minimap2 indexes the host in each run (included in its wall "
           "time); BBDuk builds its k-mer table in each run.", ""]
    md += ["Versions (Debian packages): " + ", ".join(
        f"{p} {meta[f'version_{p}']}" for p in ("bowtie2", "minimap2", "bbmap", "kraken2", "pbsim",
                                                 "art-nextgen-simulation-tools", "samtools",
                                                 "maffilter-examples")
        if f"version_{p}" in meta) + f"; {meta['qmer'].split(' (')[0]}.", ""]
    if has_main and plot(folder, rows, accuracies):
        md += ["![sensitivity and other species' calls against read accuracy](accuracy.png)", ""]
    (folder / "summary.md").write_text("\n".join(md))
    write_claims(folder / "claims.tsv", claims(folder, meta, rows, runs, choices, accuracies))


def row_finder(rows):
    def row_of(readset, tool, k=None, rule=None):
        for r in rows:
            if (r["readset"], r["tool"]) == (readset, tool) and scored(r) and \
                    (k is None or r["k"] == k) and (rule is None or r["rule"] == rule):
                return r
        return None
    return row_of


def claims(folder, meta, rows, runs, choices, accuracies):
    fact = {"section": "accuracy", "machine": meta["cpu"], "cores": meta["nproc"],
            "commit": meta["commit"], "date": meta["date"][:10], "how": "`bench/accuracy/run.sh`",
            "link": repo_link(folder / "summary.md")}
    out = []
    if any(r["readset"] == "short" for r in rows):
        out += main_claims(fact, rows, choices, accuracies)
    if any(r["readset"] == "deep" for r in rows):
        out += deep_claims(fact, meta, rows)
    out += deacon_claims(fact, rows, accuracies)
    if runs:
        out += speed_claims(fact, meta, runs)
    return out


def main_claims(fact, rows, choices, accuracies):
    row_of = row_finder(rows)

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



def deep_claims(fact, meta, rows):
    row_of = row_finder(rows)

    def counts(r):
        if r is None:
            return "not run"
        hr, hc = int(r["host_reads"]), int(r["host_called"])
        orr, oc = int(r["other_reads"]), int(r["other_called"])
        return (f"{of(hr - hc, hr)} missed ({hc / hr:.6f}), {of(oc, orr)} called "
                f"({1 - oc / orr:.6f})")
    parts = [f"qmer -k 31 {counts(row_of('deep', 'qmer', '31', 'default'))}",
             f"Deacon's rule {counts(row_of('deep', 'qmer', '31', DEACON_RULE))}",
             f"minimap2 `-x sr` {counts(row_of('deep', 'minimap2'))}",
             f"BBDuk {counts(row_of('deep', 'bbduk'))}",
             f"Kraken 2 {counts(row_of('deep', 'kraken2'))}",
             f"bowtie2 (subsample) {counts(row_of('deep_sub', 'bowtie2'))}"]
    host = meta["deep_host"].split()[0]
    return [{**fact, "key": "accuracy.deep",
             "claim": f"short pairs at depth (ART 150 bp), {NAMES.get(host, host)} host (21.6 Mbp) "
                      "against five bacteria: host pairs missed (sensitivity), bacterial pairs "
                      f"called (specificity); goal >= {DEEP_GOAL} for both",
             "figure": "; ".join(parts)}]


def deacon_claims(fact, rows, accuracies):
    row_of = row_finder(rows)
    cells = []
    for readset, label in [("short", "short pairs")] + [(f"long{a}", f"{a}%") for a in accuracies] \
            + [("deep", "pairs at depth")]:
        default = row_of(readset, "qmer", "31", "default")
        deacon = row_of(readset, "qmer", "31", DEACON_RULE)
        if default is None or deacon is None:
            continue
        if readset == "deep":  # fractions near 1: the counts say more
            cells.append(f"{label}: host pairs missed {int(default['host_reads']) - int(default['host_called']):,} "
                         f"-> {int(deacon['host_reads']) - int(deacon['host_called']):,}, bacterial "
                         f"pairs called {int(default['other_called']):,} -> {int(deacon['other_called']):,} "
                         f"(of {int(default['host_reads']):,} and {int(default['other_reads']):,})")
            continue
        cells.append(f"{label} {pct(float(default['sensitivity']))} / "
                     f"{pct(1 - float(default['specificity']))} -> "
                     f"{pct(float(deacon['sensitivity']))} / {pct(1 - float(deacon['specificity']))}")
    if not cells:
        return []
    return [{**fact, "key": "accuracy.deacon_rule",
             "claim": "Deacon's rule (`--min-hits 2 --min-containment 0.01`) against qmer's default "
                      "rule at k = 31: host reads called / other species' reads called, default -> "
                      "Deacon's",
             "figure": "; ".join(cells)}]


def speed_claims(fact, meta, runs):
    med = speed_medians(runs)
    if "qmer_long" not in med or "minimap2" not in med:
        return []
    q, mm = med["qmer_long"], med["minimap2"]
    figure = (f"qmer `--preset long` {rate(q):,.0f} reads/s ({q['bases'] / q['wall'] / 1e6:,.1f} "
              f"Mbp/s), minimap2 {rate(mm):,.0f} reads/s: {rate(q) / rate(mm):.1f}x")
    if "qmer_long_quick" in med:
        figure += f"; with `--quick` {rate(med['qmer_long_quick']) / rate(mm):.1f}x"
    return [{**fact, "key": "accuracy.long_speed",
             "claim": f"noisy long reads (pbsim CLR {meta['speed_accuracy']}%, "
                      f"{int(meta['speed_reads']):,} reads, {meta['threads']} threads): qmer's reads/s "
                      "against minimap2 `-x map-pb` from its prebuilt index, median of "
                      f"{meta['speed_reps']} alternating runs; goal >= {SPEED_GOAL:.0f}x",
             "figure": figure}]


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    summarize(Path(sys.argv[1]))
