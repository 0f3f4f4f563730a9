#!/usr/bin/env python3
"""bench/query: summary.md and claims.tsv from a mapped.sh results folder (runs.csv, meta.txt).

usage: summarize.py RESULTS_DIR   (mapped.sh calls it; run it again to rebuild them)

Per reference size and read count: the median wall time of the query with the private copy and
with the shared mapping (--mmap), alternated, and their ratio. claims.tsv is the run's row of
doc/performance.md (bench/performance_page.py).
"""
import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402


def count(n, units):
    """n with the largest of units [(suffix, factor)] it reaches, e.g. 600 k, 4 M, 50 Mbp."""
    for suffix, factor in units:
        if n >= factor:
            return f"{n / factor:g} {suffix}"
    return str(n)


def bp(n):
    return count(n, [("Gbp", 1e9), ("Mbp", 1e6), ("kbp", 1e3)])


def summarize(out):
    meta = dict(line.split("=", 1) for line in (out / "meta.txt").read_text().splitlines()
                if "=" in line)
    rows = list(csv.DictReader(open(out / "runs.csv", newline="")))
    cases = list(dict.fromkeys((int(r["size"]), int(r["reads"])) for r in rows))
    md = [f"# The shared mapping against the private copy - {meta['date']}", "",
          f"{meta['cpu']}, {meta['nproc']} cores; qmer {meta['commit']}; {meta['threads']} threads; "
          f"the page cache warm; private and mapped alternated, {meta['reps']} times each. Load "
          f"average {meta['load_start']} at the start, {meta['load_end']} at the end.", "",
          "| reference | index | reads | runs | private copy, median wall | shared mapping "
          "(--mmap), median wall | mapped / private | peak RSS private / mapped |",
          "|---|---|---|---|---|---|---|---|"]
    figures, runs = [], set()
    for size, reads in cases:
        of = {mode: [r for r in rows if (int(r["size"]), int(r["reads"]), r["mode"]) == (size, reads, mode)]
              for mode in ("private", "mapped")}
        wall = {m: statistics.median(float(r["wall_seconds"]) for r in rs) for m, rs in of.items()}
        rss = {m: max(int(r["peak_rss_kib"]) for r in rs) / 1024 for m, rs in of.items()}
        index_mib = int(of["private"][0]["index_bytes"]) / 2**20
        ratio = wall["mapped"] / wall["private"]
        runs.add(len(of["mapped"]))
        md.append(f"| {bp(size)} | {index_mib:.0f} MiB | {count(reads, [('M', 1e6), ('k', 1e3)])} | "
                  f"{len(of['mapped'])} | {wall['private']:.2f} s | {wall['mapped']:.2f} s | "
                  f"{ratio:.2f}x | {rss['private']:.0f} / {rss['mapped']:.0f} MiB |")
        figures.append(f"{bp(size)} index ({index_mib:.0f} MiB), "
                       f"{count(reads, [('M', 1e6), ('k', 1e3)])} reads: {wall['mapped']:.2f} against "
                       f"{wall['private']:.2f} s ({ratio:.2f}x)")
    (out / "summary.md").write_text("\n".join(md) + "\n")
    rounds = "-".join(str(n) for n in sorted(runs))
    write_claims(out / "claims.tsv", [{
        "key": "query.mapped", "section": "shared",
        "claim": "a query answering from the shared mapping (what a query does when another holds "
                 "the index, or a copy would not fit) against the private copy, wall time, page "
                 "cache warm",
        "figure": "; ".join(figures) + f"; medians of {rounds} alternated runs, "
                                       f"{meta['threads']} threads",
        "machine": meta["cpu"], "cores": meta["nproc"], "commit": meta["commit"],
        "date": meta["date"][:10], "how": "`bench/query/mapped.sh`",
        "link": repo_link(out / "summary.md")}])


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    summarize(Path(sys.argv[1]))
