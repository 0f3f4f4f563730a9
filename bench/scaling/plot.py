#!/usr/bin/python3
"""Turns bench/scaling/run.sh's results into summary.md and speedup.png.

usage: /usr/bin/python3 bench/scaling/plot.py [--claims-only] RESULTS_DIR

Reads speedup.csv, runs.csv, meta.txt and (unless run.sh had --skip-qf) qf_threads.csv. The
speed-up of a qmer or KMC case is wall(1 thread) / wall(T), each the best of the repetitions; that
of a quotient filter's inserts is rate(T) / rate(1) from qf_qf_bench's insert_mops. summary.md is
always written; speedup.png only when matplotlib is importable (Debian: python3-matplotlib); and
claims.tsv, the run's rows of doc/performance.md (bench/performance_page.py). --claims-only writes
claims.tsv alone, leaving a stored run's summary and plot as they are.
"""
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

args = [a for a in sys.argv[1:] if a != "--claims-only"]
claims_only = len(args) < len(sys.argv) - 1
out = Path(args[0]) if len(args) == 1 else None
if out is None or not out.is_dir():
    sys.exit("usage: plot.py [--claims-only] RESULTS_DIR")

CASE_LABELS = {
    "qmer-index": "qmer index",
    "kmc-count": "KMC (counting the same reference)",
    "qmer-query-plain": "qmer query, plain FASTQ",
    "qmer-query-bgzf": "qmer query, BGZF",
    "qmer-query-quick": "qmer query --quick, plain FASTQ",
}
QF_FILTERS = [("locally_locked", "QF inserts, locally locked"),
              ("externally_locked", "QF inserts, externally locked"),
              ("linear_probing", "QF inserts, linear probing")]


def read_csv(name):
    path = out / name
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


meta = {}
if (out / "meta.txt").exists():
    for line in open(out / "meta.txt"):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            meta[k] = v

speedup_rows = read_csv("speedup.csv")
runs = read_csv("runs.csv")
qf_rows = read_csv("qf_threads.csv")

# case -> [(threads, best_wall, speedup, efficiency)], in the order of speedup.csv
cases = {}
for r in speedup_rows:
    cases.setdefault(r["case"], []).append(
        (int(r["threads"]), num(r["best_wall_s"]), num(r["speedup_vs_1"]), num(r["efficiency"])))

# the CPU time and peak RSS of each case's best run
best_run = {}
for r in runs:
    key = (f'{r["tool"]}-{r["case"]}', int(r["threads"]))
    if key not in best_run or float(r["wall_s"]) < float(best_run[key]["wall_s"]):
        best_run[key] = r

# qf: filter -> {threads: insert Mops/s}
qf_insert = defaultdict(dict)
for r in qf_rows:
    v = num(r["insert_mops"])
    if v is not None:
        qf_insert[r["filter"]][int(r["threads"])] = v


def qf_speedups(name):
    rates = qf_insert.get(name, {})
    one = rates.get(1)
    return [(t, rates[t], rates[t] / one if one else None) for t in sorted(rates)]


def fmt(v, spec):
    return "NA" if v is None else format(v, spec)


# ---------------------------------------------------------------- claims.tsv
def run_claims():
    """The rows of doc/performance.md this run makes, each at the highest thread count against
    one thread; a row whose figures the run lacks (--skip-kmc, --skip-qf, no 1 thread) is left
    out, and the page then refuses to replace the current run's claims with these."""
    ts = sorted({t for rows in cases.values() for t, *_ in rows})
    if not ts or ts[0] != 1 or len(ts) < 2:
        return []
    top = ts[-1]
    speedup = {case: {t: s for t, _, s, _ in rows} for case, rows in cases.items()}
    wall = {case: {t: w for t, w, _, _ in rows} for case, rows in cases.items()}

    def x(case):
        return f"{speedup[case][top]:.2f}x"

    size = f'{int(meta["size_bp"]) / 1e6:g} Mbp'
    fact = {"section": "threads", "machine": meta["cpu"], "cores": meta["nproc"],
            "commit": meta["git_commit"][:7], "date": meta["date"][:10],
            "how": "`bench/scaling/run.sh`", "link": repo_link(out / "summary.md")}
    step = "a second thread" if top == 2 else f"1 to {top} threads"
    claims = []
    query = ("qmer-index", "qmer-query-plain", "qmer-query-bgzf", "qmer-query-quick")
    if all(top in speedup.get(c, {}) for c in query):
        same_index = meta.get("index_identical_across_threads", "").startswith("yes")
        same_tsv = meta.get("query_tsv_identical_across_threads", "").startswith("yes")
        threads = " and ".join(str(t) for t in ts)
        checks = (f"indexes and TSV identical at -t {threads}" if same_index and same_tsv else
                  f"indexes identical across threads: {'yes' if same_index else '**no**'}, "
                  f"TSV: {'yes' if same_tsv else '**no**'}")
        kmc = f" (KMC {x('kmc-count')})" if top in speedup.get("kmc-count", {}) else ""
        claims.append({**fact, "key": "scaling.second_thread",
                       "claim": f"speed-up from {step}, {size} reference, "
                                f"{int(meta['reads'].split()[0]) / 1e6:g} M reads",
                       "figure": f"`qmer index` {x('qmer-index')}{kmc}; `qmer query` plain "
                                 f"{x('qmer-query-plain')}, BGZF {x('qmer-query-bgzf')}, `--quick` "
                                 f"{x('qmer-query-quick')}; {checks}"})
    if top in wall.get("qmer-index", {}) and top in wall.get("kmc-count", {}):
        q, k = wall["qmer-index"][top], wall["kmc-count"][top]
        claims.append({**fact, "key": "scaling.index_vs_kmc",
                       "claim": f"`qmer index` against KMC, {size}, {top} threads",
                       "figure": f"{q:.2f} s against {k:.2f} s ({q / k:.2f}x)"})
    ll, el = qf_insert.get("locally_locked", {}), qf_insert.get("externally_locked", {})
    if top in ll and 1 in ll and top in el and 1 in el:
        claims.append({**fact, "key": "scaling.qf_inserts",
                       "claim": f"locally locked inserts, 2^{meta['qf_slots_log2']} slots, "
                                f"{100 * float(meta['qf_fill']):.0f}% fill, 1 -> {top} threads",
                       "figure": f"{ll[1]:.1f} -> {ll[top]:.1f} Mops/s ({ll[top] / ll[1]:.2f}x); "
                                 f"externally locked {el[1]:.1f} -> {el[top]:.1f} "
                                 f"({el[top] / el[1]:.2f}x); {ll[top] / el[top]:.2f}x the "
                                 f"externally locked filter at {top}",
                       "how": "`qf_qf_bench --threads-only` via `bench/scaling/run.sh`"})
    return claims


write_claims(out / "claims.tsv", run_claims())
if claims_only:
    sys.exit(0)

# ---------------------------------------------------------------- the plot
plot_note = None
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
except ImportError:
    plot_note = "matplotlib is not installed (Debian: python3-matplotlib): speedup.png skipped"
    print(f"plot.py: note: {plot_note}", file=sys.stderr)

series = []  # (label, style, [(threads, speedup)])
for case, rows in cases.items():
    pts = [(t, s) for t, _, s, _ in rows if s is not None and s > 0]
    style = "--" if case.startswith("kmc") else "-"
    series.append((CASE_LABELS.get(case, case), style, pts))
for name, label in QF_FILTERS:
    pts = [(t, s) for t, _, s in qf_speedups(name) if s is not None and s > 0]
    if pts:
        series.append((label, ":", pts))

if plot_note is None:
    all_t = sorted({t for _, _, pts in series for t, _ in pts})
    if not all_t:
        plot_note = "no speed-up to plot (is 1 among the thread counts?): speedup.png skipped"
        print(f"plot.py: note: {plot_note}", file=sys.stderr)
if plot_note is None:
    fig, ax = plt.subplots(figsize=(8, 6))
    lo, hi = min(all_t), max(all_t)
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, alpha=0.7, label="ideal (y = x)")
    markers = "os^vDP*Xh<>"
    for i, (label, style, pts) in enumerate(series):
        ax.plot([t for t, _ in pts], [s for _, s in pts], style, marker=markers[i % len(markers)],
                label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ys = [s for _, _, pts in series for _, s in pts] + [lo, hi]
    ylo, yhi = min(ys), max(ys)
    ax.set_xlim(lo / 1.15, hi * 1.15)
    ax.set_ylim(ylo / 1.25, yhi * 1.25)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(FixedLocator(all_t))
    yticks = [2.0 ** e for e in range(math.floor(math.log2(ylo / 1.25)), math.ceil(math.log2(yhi * 1.25)) + 1)]
    ax.yaxis.set_major_locator(FixedLocator(yticks))
    ax.set_xlabel("threads")
    ax.set_ylabel("speed-up against 1 thread")
    title = "Speed-up against threads"
    facts = [meta.get("cpu", ""), f'{meta["nproc"]} cores' if "nproc" in meta else "",
             f'commit {meta["git_commit"][:10]}' if "git_commit" in meta else ""]
    ax.set_title(title + "\n" + ", ".join(f for f in facts if f), fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "speedup.png", dpi=120)
    plt.close(fig)

# ---------------------------------------------------------------- summary.md
lines = ["# Speed-up against threads", ""]
facts = [
    ("date", meta.get("date")), ("CPU", meta.get("cpu")), ("cores (nproc)", meta.get("nproc")),
    ("memory", f'{int(meta["mem_total_kib"]) / 1048576:.1f} GiB' if "mem_total_kib" in meta else None),
    ("load average, start / end", f'{meta.get("load_start", "?")} / {meta.get("load_end", "?")}'),
    ("git commit", meta.get("git_commit")),
    ("tracked files modified at the start", meta.get("git_dirty")),
    ("qmer", meta.get("qmer_version")), ("KMC", meta.get("kmc_version")),
    ("reference", f'{meta["size_bp"]} bp, random (bench/scale/make_data)' if "size_bp" in meta else None),
    ("reads", meta.get("reads")), ("repetitions", f'{meta.get("reps", "?")} (the best wall is reported)'),
    ("thread counts", meta.get("threads")),
    ("qf_qf_bench", f'2^{meta.get("qf_slots_log2", "?")} slots, fill {meta.get("qf_fill", "?")}'
     if meta.get("qf_bench") != "skipped" else "skipped"),
    ("index byte-identical across threads", meta.get("index_identical_across_threads")),
    ("query TSV identical across threads", meta.get("query_tsv_identical_across_threads")),
]
lines += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts if v]
lines.append("")

if cases:
    lines += ["## Speed-up at a glance", ""]
    ts = sorted({t for rows in cases.values() for t, *_ in rows})
    lines.append("| case | " + " | ".join(f"{t} T" for t in ts) + " |")
    lines.append("|---|" + "---:|" * len(ts))
    for case, rows in cases.items():
        by_t = {t: s for t, _, s, _ in rows}
        lines.append(f"| {CASE_LABELS.get(case, case)} | "
                     + " | ".join(fmt(by_t.get(t), ".2f") + "x" if by_t.get(t) is not None else "NA"
                                  for t in ts) + " |")
    for name, label in QF_FILTERS:
        by_t = {t: s for t, _, s in qf_speedups(name)}
        if by_t:
            lines.append(f"| {label} | " + " | ".join(
                fmt(by_t.get(t), ".2f") + "x" if by_t.get(t) is not None else "NA" for t in ts) + " |")
    lines.append("")

for case, rows in cases.items():
    lines += [f"## {CASE_LABELS.get(case, case)}", "",
              "| threads | best wall (s) | speed-up | efficiency | CPU of that run (s) | peak RSS (MiB) |",
              "|---:|---:|---:|---:|---:|---:|"]
    for t, wall, s, e in rows:
        r = best_run.get((case, t), {})
        rss = num(r.get("peak_rss_kb"))
        lines.append(f'| {t} | {fmt(wall, ".3f")} | {fmt(s, ".2f")} | {fmt(e, ".2f")} | '
                     f'{r.get("cpu_s", "NA")} | {fmt(rss / 1024 if rss is not None else None, ".0f")} |')
    lines.append("")

if qf_insert:
    lines += ["## Quotient filter inserts (qf_qf_bench --threads-only, the paper's experiment (a))", "",
              f'Inserts in Mops/s by T threads into 2^{meta.get("qf_slots_log2", "Q")} slots up to '
              f'{meta.get("qf_fill", "the")} fill; speed-up = rate(T) / rate(1).', ""]
    head = "| threads |"
    rule = "|---:|"
    for _, label in QF_FILTERS:
        short = label.replace("QF inserts, ", "")
        head += f" {short} (Mops/s) | speed-up |"
        rule += "---:|---:|"
    head += " locally / externally locked |"
    rule += "---:|"
    lines += [head, rule]
    ts = sorted({t for name, _ in QF_FILTERS for t in qf_insert.get(name, {})})
    for t in ts:
        cells = [str(t)]
        for name, _ in QF_FILTERS:
            rate = qf_insert.get(name, {}).get(t)
            one = qf_insert.get(name, {}).get(1)
            cells += [fmt(rate, ".2f"), fmt(rate / one if rate and one else None, ".2f")]
        ll = qf_insert.get("locally_locked", {}).get(t)
        el = qf_insert.get("externally_locked", {}).get(t)
        cells.append(fmt(ll / el if ll and el else None, ".2f"))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")

if plot_note is None:
    lines += ["![speed-up against threads](speedup.png)", ""]
else:
    lines += [f"(No plot: {plot_note}.)", ""]

(out / "summary.md").write_text("\n".join(lines))
print(f"plot.py: wrote {out / 'summary.md'}" + ("" if plot_note else f" and {out / 'speedup.png'}"),
      file=sys.stderr)
