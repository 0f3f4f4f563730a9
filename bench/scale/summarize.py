#!/usr/bin/python3
"""bench/scale: results.csv and results.md from a results folder's raw.csv and meta.txt.

usage: summarize.py RESULTS_DIR   (run.sh calls it; run it again to rebuild the tables)

Per size, kind and case: the fastest repetition (wall), its CPU time and load average; peak RSS is
the largest of all repetitions (the conservative figure for the RSS goal).
"""
import csv
import sys
from pathlib import Path

from summarize_common import bp, num

GOAL_FIRST_READ_S = 1.0
GOAL_RSS_OVER_INDEX = 1.1
GOAL_ABSENT_RATIO = 1.5
CASES = ["index", "one", "absent", "present"]


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    out = Path(sys.argv[1])
    meta = {}
    for line in (out / "meta.txt").read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v
    rows = list(csv.DictReader(open(out / "raw.csv")))
    groups = {}
    for r in rows:
        groups.setdefault((int(r["size_bp"]), r["kind"], r["case"]), []).append(r)

    best = {}
    for key, rs in groups.items():
        b = min(rs, key=lambda r: float(r["wall_s"]))
        size, kind, case = key
        kmers = num(b["kmers"])
        wall, cpu = float(b["wall_s"]), float(b["cpu_s"])
        rss = max(int(r["max_rss_bytes"]) for r in rs)
        index_bytes = int(b["index_bytes"])
        distinct = num(b["distinct_kmers"])
        reads = num(b["reads"])
        matched = num(b["matched"])
        best[key] = {
            "size_bp": size, "kind": kind, "case": case, "reps": len(rs),
            "reads": int(reads) if reads is not None and case != "index" else None,
            "kmers": int(kmers) if kmers else None,
            "matched_fraction": matched / reads if matched is not None and reads else None,
            "wall_s": wall, "cpu_s": cpu, "max_rss_bytes": rss, "index_bytes": index_bytes,
            "rss_over_index": rss / index_bytes if index_bytes else None,
            # one read: the process is all loading, a cost per k-mer would mislead
            "wall_ns_per_kmer": wall * 1e9 / kmers if kmers and case != "one" else None,
            "cpu_ns_per_kmer": cpu * 1e9 / kmers if kmers and case != "one" else None,
            "distinct_kmers": int(distinct) if distinct else None,
            "bits_per_kmer": index_bytes * 8 / distinct if distinct else None,
            "load1_before": float(b["load1_before"]),
            "qmer_wall_s": num(b["qmer_wall_s"]),
        }

    # Per k-mer without the process's fixed costs (start, loading and checking the index): the
    # case's time less that of the one-read query of the same index, over its k-mers. The
    # whole-process figure depends on how many reads share those costs (0.96 s of a 2.8 s query
    # of 500,000 reads at 2.4 Gbp); this one is the cost a k-mer adds.
    for (size, kind, case), r in best.items():
        one = best.get((size, kind, "one"))
        ok = case in ("absent", "present") and one and r["kmers"]
        r["lookup_wall_ns_per_kmer"] = (r["wall_s"] - one["wall_s"]) * 1e9 / r["kmers"] if ok else None
        r["lookup_cpu_ns_per_kmer"] = (r["cpu_s"] - one["cpu_s"]) * 1e9 / r["kmers"] if ok else None

    order = sorted(best, key=lambda k: (k[0], k[1] != "random", CASES.index(k[2]) if k[2] in CASES else 9))
    fields = ["size_bp", "kind", "case", "reps", "reads", "kmers", "matched_fraction", "wall_s", "cpu_s",
              "max_rss_bytes", "index_bytes", "rss_over_index", "wall_ns_per_kmer", "cpu_ns_per_kmer",
              "lookup_wall_ns_per_kmer", "lookup_cpu_ns_per_kmer", "distinct_kmers", "bits_per_kmer", "load1_before", "qmer_wall_s"]
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for k in order:
            r = dict(best[k])
            for name in ("matched_fraction", "rss_over_index", "wall_ns_per_kmer", "cpu_ns_per_kmer",
                         "lookup_wall_ns_per_kmer", "lookup_cpu_ns_per_kmer", "bits_per_kmer"):
                if r[name] is not None:
                    r[name] = f"{r[name]:.4g}"
            w.writerow({k2: ("" if v is None else v) for k2, v in r.items()})

    sizes = sorted({k[0] for k in best})
    kinds = sorted({k[1] for k in best}, key=lambda x: x != "random")
    small, large = sizes[0], sizes[-1]
    md = []
    md.append(f"# bench/scale: qmer query on a {bp(large)} index against {bp(small)}")
    md.append("")
    md.append(f"{meta.get('date', '?')}; qmer at git {meta.get('git_head', '?')} "
              f"({meta.get('git_dirty_files', '?').split(' ')[0]} modified tracked source files at the start; "
              f"binary sha256 {meta.get('qmer_sha256', '?')}, built {meta.get('qmer_mtime', '?')}); "
              f"{meta.get('host_nproc', '?')} cores, {meta.get('cpu', '?')}, "
              f"{int(meta.get('mem_total_kib', '0')) / 2**20:.1f} GiB RAM, kernel {meta.get('kernel', '?')}, "
              f"transparent huge pages `{meta.get('thp', '?')}`; "
              f"load average {meta.get('load_start', '?')} at the start, {meta.get('load_end', '?')} at the end.")
    md.append("")
    md.append(f"`-t {meta.get('threads', '?')}`, {int(meta.get('reads', '0')):,} reads of 150 bp per set "
              f"(present: error rate {meta.get('error', '?')}), "
              f"query options `{('-t ' + meta.get('threads', '?') + ' ' + meta.get('query_args', '')).strip()}`, fastest of {meta.get('reps', '?')} per query "
              f"(peak RSS: the largest of them); the index in the page cache. "
              f"Wall and CPU are the whole process (`/usr/bin/time -v`), index loading included.")
    md.append("")
    md.append("| size | kind | case | reads | k-mers | matched | wall s | CPU s | peak RSS MiB | RSS / index | wall ns/k-mer | CPU ns/k-mer | load before |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in order:
        r = best[k]
        case = {"index": "index build", "one": "one read", "absent": "absent reads", "present": "present reads"}.get(r["case"], r["case"])
        md.append("| " + " | ".join([
            bp(r["size_bp"]), r["kind"], case,
            fmt(r["reads"], ",") if r["reads"] is not None else "-",
            fmt(r["kmers"], ","),
            fmt(None if r["matched_fraction"] is None else 100 * r["matched_fraction"], ".2f") + ("%" if r["matched_fraction"] is not None else ""),
            f"{r['wall_s']:.3f}", f"{r['cpu_s']:.2f}", f"{r['max_rss_bytes'] / 2**20:,.1f}",
            fmt(r["rss_over_index"], ".3f"),
            fmt(r["wall_ns_per_kmer"], ".1f") if r["case"] != "one" else "-",
            fmt(r["cpu_ns_per_kmer"], ".1f") if r["case"] != "one" else "-",
            f"{r['load1_before']:.2f}",
        ]) + " |")
    md.append("")
    md.append("Index build rows: k-mers = k-mer positions scanned, ns/k-mer per position, RSS / index = build peak RSS over the index file.")
    md.append("")
    md.append("## Indexes")
    md.append("")
    md.append("| size | kind | distinct k-mers | index MiB | bits per distinct k-mer | build wall s | build CPU s | build peak RSS MiB |")
    md.append("|---|---|---|---|---|---|---|---|")
    for k in order:
        r = best[k]
        if r["case"] != "index":
            continue
        md.append(f"| {bp(r['size_bp'])} | {r['kind']} | {fmt(r['distinct_kmers'], ',')} | {r['index_bytes'] / 2**20:,.1f} | "
                  f"{fmt(r['bits_per_kmer'], '.2f')} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['max_rss_bytes'] / 2**20:,.1f} |")
    md.append("")
    md.append(f"## {bp(large)} against {bp(small)}: cost per k-mer")
    md.append("")
    md.append("Whole process: the case's time over its k-mers. Lookups: the same less the one-read query's time "
              "(the process's start, loading and checking the index), the cost a k-mer adds; the goal is judged on it.")
    md.append("")
    md.append("| kind | case | figure | wall ns/k-mer small | large | ratio | CPU ns/k-mer small | large | ratio |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    ratios = {}
    for kind in kinds:
        for case in ("absent", "present"):
            a, b = best.get((small, kind, case)), best.get((large, kind, case))
            for figure, wall_key, cpu_key in (("whole process", "wall_ns_per_kmer", "cpu_ns_per_kmer"),
                                              ("lookups", "lookup_wall_ns_per_kmer", "lookup_cpu_ns_per_kmer")):
                if not a or not b or not a[wall_key] or not b[wall_key] or a[wall_key] <= 0:
                    continue
                rw = b[wall_key] / a[wall_key]
                rc = b[cpu_key] / a[cpu_key] if a[cpu_key] and a[cpu_key] > 0 else None
                ratios[(kind, case, figure)] = (rw, rc)
                md.append(f"| {kind} | {case} | {figure} | {a[wall_key]:.1f} | {b[wall_key]:.1f} | **{rw:.2f}x** | "
                          f"{fmt(a[cpu_key], '.1f')} | {fmt(b[cpu_key], '.1f')} | **{fmt(rc, '.2f')}x** |")
    md.append("")
    md.append(f"## Goals, at {bp(large)}")
    md.append("")

    def verdict(ok):
        return "met" if ok else "**missed**"

    for kind in kinds:
        one = best.get((large, kind, "one"))
        if one:
            md.append(f"- {kind}: first read answered in {one['wall_s']:.3f} s wall, whole process "
                      f"(goal <= {GOAL_FIRST_READ_S:g} s: {verdict(one['wall_s'] <= GOAL_FIRST_READ_S)})")
        worst = [(best[(large, kind, c)]["rss_over_index"], c) for c in ("one", "absent", "present") if (large, kind, c) in best]
        if worst:
            parts = ", ".join(f"{c} {x:.3f}" for x, c in worst)
            md.append(f"- {kind}: query peak RSS / index file {parts} "
                      f"(goal <= {GOAL_RSS_OVER_INDEX:g}: {verdict(max(x for x, _ in worst) <= GOAL_RSS_OVER_INDEX)})")
        if (kind, "absent", "lookups") in ratios:
            rw, rc = ratios[(kind, "absent", "lookups")]
            whole = ratios.get((kind, "absent", "whole process"))
            md.append(f"- {kind}: absent reads' cost per k-mer, lookups only, {rw:.2f}x the {bp(small)} case in wall time, "
                      f"{fmt(rc, '.2f')}x in CPU time (goal <= {GOAL_ABSENT_RATIO:g}x: wall {verdict(rw <= GOAL_ABSENT_RATIO)}, "
                      f"CPU {verdict(rc is not None and rc <= GOAL_ABSENT_RATIO)})"
                      + (f"; whole process {whole[0]:.2f}x wall, {fmt(whole[1], '.2f')}x CPU" if whole else ""))
    md.append("")
    md.append("`raw.csv` holds every repetition; `results.csv` the rows above; `info-*.json` each index's `qmer info --json`; "
              "`meta.txt` the machine and parameters.")
    text = "\n".join(md) + "\n"
    (out / "results.md").write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
