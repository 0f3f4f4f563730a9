#!/usr/bin/env python3
"""Compares two builds' qf_qf_bench --threads-only runs (experiment (a)), alternated on one machine.

Each run folder is named BUILD-FILL-ROUND (e.g. base-0.7-3, new-0.9-1) and holds threads.csv. For
each fill and build: the median insert rate of each filter at each thread count, and, taken run by
run (the filters of one run share the machine's state, so a slow spell cancels), the median of the
locally locked filter's rate over the externally locked filter's and each one's gain from its
lowest to its highest thread count. Issue 40's 2-core goal reads off the last columns: the locally
locked filter's gain at least the externally locked filter's, and its ratio at least 1.

usage: compare.py RESULTS_DIR   (prints a Markdown table, the folder's summary.md)
       compare.py RESULTS_DIR --claims CPU CORES DATE "BASE -> NEW" CHANGE
         also writes RESULTS_DIR/claims.tsv, the comparison's row of doc/performance.md
         (bench/performance_page.py): the builds must be named base (before) and new (after);
         CPU and CORES the machine's (lscpu's model name, nproc), DATE the runs' (YYYY-MM-DD),
         "BASE -> NEW" the two commits and CHANGE what new changed (e.g. "the per-thread count").
"""

import csv
import glob
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

LL, EL, LP = "locally_locked", "externally_locked", "linear_probing"


def claims_row(folder, facts, table, lo, hi, slots):
    """The page's row: per fill, the locally / externally locked ratio at hi threads and the
    locally locked filter's gain from lo to hi, before -> after, and the externally locked
    filter's gain after as the baseline."""
    cpu, cores, date, commits, change = facts
    parts, runs = [], set()
    step = "the 2nd thread" if (lo, hi) == (1, 2) else f"{lo} to {hi} threads"
    for fill in sorted({f for f, _ in table}):
        if (fill, "base") not in table or (fill, "new") not in table:
            sys.exit(f"compare.py: {folder}: fill {fill} lacks the base or the new build's runs")
        before, after = table[(fill, "base")], table[(fill, "new")]
        runs |= {before["runs"], after["runs"]}
        gains = f"{before['gain_ll']:.2f}x -> {after['gain_ll']:.2f}x, baseline {after['gain_el']:.2f}x"
        head = f"{100 * float(fill):.0f}%" + ("" if parts else " fill")
        parts.append(f"{head}: {before['ratio']:.2f}x -> {after['ratio']:.2f}x "
                     f"({'' if parts else f'gain from {step} '}{gains})")
    rounds = "-".join(str(n) for n in sorted(runs))
    slots_text = f"2^{slots.bit_length() - 1}" if slots & (slots - 1) == 0 else f"{slots:,}"
    return {"key": "qf.before_after", "section": "threads",
            "claim": f"locally locked / externally locked inserts at {hi} threads, {slots_text} "
                     f"slots, before -> after {change}",
            "figure": "; ".join(parts) + f"; medians of {rounds} alternated rounds",
            "machine": cpu, "cores": cores, "commit": commits, "date": date,
            "how": "`bench/qf/compare.py`", "link": repo_link(Path(folder) / "summary.md")}


def main():
    args = sys.argv[1:]
    facts = None
    if "--claims" in args:
        at = args.index("--claims")
        facts, args = args[at + 1:at + 6], args[:at] + args[at + 6:]
        if len(facts) != 5:
            args = []
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    folder = args[0]
    rates = {}  # (build, fill, filter, threads) -> {round: Mops/s}
    slots = set()
    for path in glob.glob(os.path.join(folder, "*", "threads.csv")):
        build, fill, rnd = os.path.basename(os.path.dirname(path)).rsplit("-", 2)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (build, fill, row["filter"], int(row["threads"]))
                rates.setdefault(key, {})[rnd] = float(row["insert_mops"])
                slots.add(int(row["slots"]))
    builds = sorted({k[0] for k in rates})
    fills = sorted({k[1] for k in rates})
    threads = sorted({k[3] for k in rates})
    lo, hi = threads[0], threads[-1]
    ll, el, lp = LL, EL, LP
    table = {}  # (fill, build) -> the medians the claims row quotes
    print(f"| fill | build | runs | {el} {lo} -> {hi} | {ll} {lo} -> {hi} | {lp} {lo} -> {hi} "
          f"| {ll} / {el} at {hi} | {ll} gain | {el} gain |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fill in fills:
        for b in builds:
            if (b, fill, ll, hi) not in rates:
                continue

            def med(f, t):
                return statistics.median(rates[(b, fill, f, t)].values())

            runs = sorted(rates[(b, fill, ll, hi)])
            ratio = statistics.median(
                rates[(b, fill, ll, hi)][r] / rates[(b, fill, el, hi)][r] for r in runs)
            gain_ll = statistics.median(
                rates[(b, fill, ll, hi)][r] / rates[(b, fill, ll, lo)][r] for r in runs)
            gain_el = statistics.median(
                rates[(b, fill, el, hi)][r] / rates[(b, fill, el, lo)][r] for r in runs)
            table[(fill, b)] = {"runs": len(runs), "ratio": ratio, "gain_ll": gain_ll,
                                "gain_el": gain_el}
            print(f"| {fill} | {b} | {len(runs)} | {med(el, lo):.1f} -> {med(el, hi):.1f} | "
                  f"{med(ll, lo):.1f} -> {med(ll, hi):.1f} | {med(lp, lo):.1f} -> {med(lp, hi):.1f} "
                  f"| {ratio:.2f} | {gain_ll:.2f}x | {gain_el:.2f}x |")
    if facts is not None:
        if len(slots) != 1:
            sys.exit(f"compare.py: {folder}: runs of {len(slots)} table sizes, not one")
        write_claims(Path(folder) / "claims.tsv", [claims_row(folder, facts, table, lo, hi, slots.pop())])


if __name__ == "__main__":
    main()
