#!/usr/bin/python3
"""Plots bench/qf/results/growing.csv (written by qf_growing_bench) into growing.png next to it.

Figure 3 of Maier, Sanders, Williger (SEA 2020) at this machine's scale: per segment of inserts, the insert time, successful and
unsuccessful query throughput, the measured false-positive rate, and the memory per key, for each
filter (colour) and thread count (line style).

Run with Debian's Python, which has matplotlib:  /usr/bin/python3 bench/qf/plot_growing.py [RESULTS_DIR]
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
path = os.path.join(results, "growing.csv")
with open(path, newline="") as f:
    lines = f.read().splitlines()
meta = [line[2:] for line in lines if line.startswith("#")]
rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))

filters = []
for r in rows:
    if r["filter"] not in filters:
        filters.append(r["filter"])
threads = sorted({int(r["threads"]) for r in rows})
styles = ["-", "--", ":", "-."]
colours = {name: f"C{i}" for i, name in enumerate(filters)}

PANELS = [
    ("insert_mops", "insert (Mops/s, per segment)", False),
    ("query_hit_mops", "successful query (Mops/s)", False),
    ("query_miss_mops", "unsuccessful query (Mops/s)", False),
    ("fpr_measured", "false-positive rate (measured)", True),
    ("bits_per_key_live", "bits per key (live tables)", True),
    ("bits_per_key_all", "bits per key (with retired tables)", True),
]

fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
for ax, (col, title, log) in zip(axes.flat, PANELS):
    for name in filters:
        for ti, t in enumerate(threads):
            pts = [(int(r["keys"]) / 1e6, float(r[col])) for r in rows
                   if r["filter"] == name and int(r["threads"]) == t]
            if log:
                pts = [(x, y) for x, y in pts if y > 0]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, styles[ti % len(styles)], color=colours[name], marker=".",
                    label=f"{name}, {t} thr")
    ax.set_title(title)
    ax.set_xlabel("keys inserted (millions)")
    if log:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
axes.flat[0].legend(fontsize=7)
fig.suptitle("\n".join(meta), fontsize=8)
fig.tight_layout(rect=(0, 0, 1, 0.94))
out = os.path.join(results, "growing.png")
fig.savefig(out, dpi=110)
print(f"wrote {out}")
