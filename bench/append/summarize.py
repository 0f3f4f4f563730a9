#!/usr/bin/env python3
"""Tables of bench/append/run.sh: the builds, the queries' medians and their ratios to the
one-level index, and the exact-set check. usage: summarize.py builds.csv queries.csv exact.csv"""

import csv
import statistics
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    builds, queries, exact = (rows(p) for p in sys.argv[1:4])
    print("| index | how | wall | CPU (user + sys) | peak RSS | levels | k-mers | bits per k-mer |")
    print("|---|---|---|---|---|---|---|---|")
    for b in builds:
        cpu = float(b["user_s"]) + float(b["sys_s"])
        bits = 8 * int(b["bytes"]) / max(1, int(b["kmers"]))
        print(f"| {b['index']} | {b['how']} | {float(b['wall_s']):.1f} s | {cpu:.1f} s | "
              f"{int(b['max_rss_kb']) / 1024:.0f} MiB | {b['levels']} | {b['kmers']} | {bits:.2f} |")
    by_index = {}
    for q in queries:
        by_index.setdefault(q["index"], []).append(float(q["wall_s"]))
    one = statistics.median(by_index["one"])  # the --onto index is not queried for speed
    print()
    print("| index | query wall, median (min) | speed against the one-level index |")
    print("|---|---|---|")
    for name, walls in by_index.items():
        med = statistics.median(walls)
        print(f"| {name} | {med:.3f} s ({min(walls):.3f} s) | {one / med:.2f}x |")
    if exact:
        print()
        print("| index | reads whose kmers differ from the exact count | reads with hits below "
              "the exact set's | k-mer FPR |")
        print("|---|---|---|---|")
        for e in exact:
            print(f"| {e['index']} | {e['kmers_mismatch']} | {e['hits_below_exact']} | "
                  f"{e['kmer_fpr']} |")


if __name__ == "__main__":
    main()
