#!/usr/bin/env python3
"""Compares two builds' qf_qf_bench --threads-only runs (experiment (a)), alternated on one machine.

Each run folder is named BUILD-FILL-ROUND (e.g. base-0.7-3, new-0.9-1) and holds threads.csv. For
each fill and build: the median insert rate of each filter at each thread count, and, taken run by
run (the filters of one run share the machine's state, so a slow spell cancels), the median of the
locally locked filter's rate over the externally locked filter's and each one's gain from its
lowest to its highest thread count. Issue 40's 2-core goal reads off the last columns: the locally
locked filter's gain at least the externally locked filter's, and its ratio at least 1.

usage: compare.py RESULTS_DIR   (prints a Markdown table)
"""

import csv
import glob
import os
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rates = {}  # (build, fill, filter, threads) -> {round: Mops/s}
    for path in glob.glob(os.path.join(sys.argv[1], "*", "threads.csv")):
        build, fill, rnd = os.path.basename(os.path.dirname(path)).rsplit("-", 2)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (build, fill, row["filter"], int(row["threads"]))
                rates.setdefault(key, {})[rnd] = float(row["insert_mops"])
    builds = sorted({k[0] for k in rates})
    fills = sorted({k[1] for k in rates})
    threads = sorted({k[3] for k in rates})
    lo, hi = threads[0], threads[-1]
    ll, el, lp = "locally_locked", "externally_locked", "linear_probing"
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
            print(f"| {fill} | {b} | {len(runs)} | {med(el, lo):.1f} -> {med(el, hi):.1f} | "
                  f"{med(ll, lo):.1f} -> {med(ll, hi):.1f} | {med(lp, lo):.1f} -> {med(lp, hi):.1f} "
                  f"| {ratio:.2f} | {gain_ll:.2f}x | {gain_el:.2f}x |")


if __name__ == "__main__":
    main()
