#!/usr/bin/python3
"""Plots bench/qf/results/{threads,fill}.csv (written by qf_qf_bench) into PNGs next to them.

Run with Debian's Python, which has matplotlib:  /usr/bin/python3 bench/qf/plot.py [RESULTS_DIR]
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
OPS = [("insert_mops", "insert"), ("query_hit_mops", "successful query"),
       ("query_miss_mops", "unsuccessful query")]


def read(name):
    with open(os.path.join(results, name), newline="") as f:
        return list(csv.DictReader(f))


def filters_in(rows):
    seen = []
    for r in rows:
        if r["filter"] not in seen:
            seen.append(r["filter"])
    return seen


def plot_threads():
    rows = read("threads.csv")
    names = filters_in(rows)
    threads = sorted({int(r["threads"]) for r in rows})
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=False)
    width = 0.8 / len(names)
    for ax, (col, title) in zip(axes, OPS):
        for i, name in enumerate(names):
            xs, ys = [], []
            for j, t in enumerate(threads):
                match = [r for r in rows if r["filter"] == name and int(r["threads"]) == t]
                if match:
                    xs.append(j + (i - (len(names) - 1) / 2) * width)
                    ys.append(float(match[0][col]))
            ax.bar(xs, ys, width, label=name)
        ax.set_xticks(range(len(threads)))
        ax.set_xticklabels([str(t) for t in threads])
        ax.set_xlabel("threads (2 cores: 8 and 16 are oversubscribed)")
        ax.set_ylabel("Mops/s")
        ax.set_title(f"{title}, 70% fill")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    slots = int(rows[0]["slots"])
    fig.suptitle(f"Quotient filters, 2^{slots.bit_length() - 1} slots, r = 13")
    fig.tight_layout()
    out = os.path.join(results, "threads.png")
    fig.savefig(out, dpi=110)
    print("wrote", out)


def plot_fill():
    rows = read("fill.csv")
    names = filters_in(rows)
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.5))
    for ax, (col, title) in zip(axes, OPS):
        for name in names:
            pts = [(float(r["fill"]) * 100, float(r[col])) for r in rows if r["filter"] == name]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        ax.set_xlabel("fill (%)")
        ax.set_ylabel("Mops/s (1 thread)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    ax = axes[3]
    for name in names:
        pts = [(float(r["fill"]) * 100, float(r["fpr_measured"]), float(r["fpr_expected"]))
               for r in rows if r["filter"] == name]
        line, = ax.plot([p[0] for p in pts], [max(p[1], 1e-7) for p in pts], marker="o", label=name)
        ax.plot([p[0] for p in pts], [p[2] for p in pts], linestyle=":", color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel("fill (%)")
    ax.set_ylabel("false-positive rate (dots: analysis)")
    ax.set_title("measured FPR, 1.5*10^6 absent keys per step")
    ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = os.path.join(results, "fill.png")
    fig.savefig(out, dpi=110)
    print("wrote", out)


plot_threads()
plot_fill()
