#!/usr/bin/python3
"""Plots bench/filters/results/{bitset,bloom_cuckoo}.csv as PNG next to them.

Run with Debian's python (it has matplotlib): /usr/bin/python3 bench/filters/plot.py [RESULTS_DIR]
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot_bitset(results):
    data = rows(os.path.join(results, "bitset.csv"))
    sizes = sorted({int(r["fill_or_n"]) for r in data})
    names = list(dict.fromkeys(r["filter"] for r in data))
    threads = sorted({int(r["threads"]) for r in data})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4), sharey=True)
    for ax, size in zip(axes, sizes):
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            ys = [next(float(r["mops"]) for r in data if r["filter"] == name
                       and int(r["threads"]) == t and int(r["fill_or_n"]) == size) for t in threads]
            ax.bar([x + i * width for x in range(len(threads))], ys, width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(threads))])
        ax.set_xticklabels([f"{t} threads" for t in threads])
        ax.set_title(f"{size:,} bits, 50% get / 50% set")
        ax.set_ylabel("Mops/s (all threads)")
    axes[0].legend()
    fig.suptitle("Concurrent bit sets (a blog post's four-way comparison), 2-vCPU Xeon")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "bitset.png"), dpi=110)


def plot_filters(results):
    data = rows(os.path.join(results, "bloom_cuckoo.csv"))
    names = list(dict.fromkeys(r["filter"] for r in data))
    ops = ["insert", "query_hit", "query_miss"]
    threads = sorted({int(r["threads"]) for r in data})
    fig, axes = plt.subplots(1, len(threads) + 1, figsize=(5 * (len(threads) + 1), 4))
    for ax, t in zip(axes, threads):
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            ys = [next(float(r["mops"]) for r in data if r["filter"] == name
                       and int(r["threads"]) == t and r["op"] == op) for op in ops]
            ax.bar([x + i * width for x in range(len(ops))], ys, width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(ops))])
        ax.set_xticklabels(ops)
        ax.set_title(f"{t} thread(s), n = {int(data[0]['fill_or_n']):,}")
        ax.set_ylabel("Mops/s")
    axes[0].legend(fontsize=8)
    ax = axes[-1]
    one = [r for r in data if int(r["threads"]) == 1 and r["op"] == "insert"]
    ax.bar([r["filter"] for r in one], [float(r["bits_per_element"]) for r in one])
    for x, r in enumerate(one):
        ax.text(x, float(r["bits_per_element"]), f"FPR {100 * float(r['fpr']):.3f}%",
                ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("bits per element (1 thread)")
    ax.tick_params(axis="x", labelrotation=20)
    fig.suptitle("Bloom and cuckoo filters vs a blog post's pending-map Bloom filter, same target FPR")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "bloom_cuckoo.png"), dpi=110)


if __name__ == "__main__":
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    plot_bitset(results)
    plot_filters(results)
