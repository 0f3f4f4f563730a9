#!/usr/bin/python3
"""Turns bench/peers/run.sh's runs.csv, verdict.csv and meta.txt into summary.md and summary.png.

Either mix may be missing (run.sh --mix): the first (reference "big") has runs.csv rows of reference
big and a verdict.csv, the second (reference "panel", reads 1/3 human) rows of reference panel.

usage: /usr/bin/python3 bench/peers/summarize.py [--claims-only] RESULTS_DIR

Also writes claims.tsv, the run's rows of doc/performance.md (bench/performance_page.py);
--claims-only writes that alone, leaving a stored run's summary and plot as they are.

Every figure is a median over the repetitions of one run; every comparison is a ratio between
tools measured in that same run (interleaved), never against numbers from another day.
"""
import csv
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

args = [a for a in sys.argv[1:] if a != "--claims-only"]
if len(args) != 1:
    sys.exit(__doc__)
claims_only = len(args) < len(sys.argv) - 1
out = Path(args[0])
meta = dict(line.rstrip("\n").split("=", 1) for line in open(out / "meta.txt") if "=" in line)
rows = list(csv.DictReader(open(out / "runs.csv")))
verdict = list(csv.DictReader(open(out / "verdict.csv"))) if (out / "verdict.csv").exists() else []



def num(x):
    return None if x in ("", "NA") else float(x)


groups = defaultdict(list)
for r in rows:
    groups[(r["reference"], r["tool"], r["phase"], r["readset"], r["format"])].append(r)


def med(tool, phase, readset, fmt, field, ref="big"):
    rs = groups.get((ref, tool, phase, readset, fmt))
    if not rs:
        return None
    vals = [num(r[field]) for r in rs if num(r[field]) is not None]
    return statistics.median(vals) if vals else None

def fmt(x, digits=2):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def ratio(a, b, digits=2):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.{digits}f}x"


has_first = any(r["reference"] == "big" for r in rows)
has_second = any(r["reference"] == "panel" for r in rows)
readsets = []  # the first mix's read sets that ran
qmer_tools = sorted({r["tool"] for r in rows if r["tool"].startswith("qmer") and r["reference"] == "big"},
                    key=lambda t: (t != "qmer", t))
fpr = 0.001
distinct = int(meta.get("big_distinct_kmers") or 0)
md = []
md.append(f"# qmer vs BBDuk, KMC, Jellyfish - {meta['date']}\n")
loads = [float(r["load1"]) for r in rows]
md.append(
    f"Machine: {meta['cpu']}, {meta['cores']} cores; threads: {meta['threads']}; repetitions: {meta['reps']} "
    f"(interleaved, medians shown); 1-min load average during the runs (the tools' own threads count): median {statistics.median(loads):.1f} "
    f"(min {min(loads):.1f}, max {max(loads):.1f}; a load above the threads used means other work "
    f"shared the machine).\n"
)
if has_first:
    md.append(
        f"Reference \"big\": {meta['big_files']} genome files, {int(meta['big_bases']):,} bp, {distinct:,} distinct "
        f"canonical 31-mers (KMC). Reads: ART HS25 150 bp, {int(meta['reads_per_set']):,} per set: positives from "
        f"K. pneumoniae HS11286 (part of big), negatives from S. suis SC84.\n"
    )
md.append(
    f"Tools: {meta['qmer']}, default filter `{meta['qmer_default_filter']}`; BBDuk {meta['bbduk']}"
    + (f"; KMC {meta['kmc']}; {meta['jellyfish']}" if has_first else "") + ".\n"
)

if has_first:
    # ---- build
    md.append("## Index build (reference big)\n")
    md.append("| tool | wall (s) | CPU (s) | peak RSS (MiB) | index on disk (MiB) | bits per distinct k-mer | wall / KMC | RSS / KMC | RSS / Jellyfish |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    kmc_wall = med("kmc", "build", "-", "fasta", "wall_s")
    kmc_rss = med("kmc", "build", "-", "fasta", "rss_mib")
    jf_rss = med("jellyfish", "build", "-", "fasta", "rss_mib")
    for tool in qmer_tools + ["kmc", "jellyfish", "floor"]:
        w = med(tool, "build", "-", "fasta", "wall_s")
        if w is None:
            continue
        size = med(tool, "build", "-", "fasta", "index_bytes")
        rss = med(tool, "build", "-", "fasta", "rss_mib")
        name = "floor: read the reference only (kseq)" if tool == "floor" else tool
        bits = size * 8 / distinct if size and distinct else None
        md.append(
            f"| {name} | {fmt(w)} | {fmt(med(tool, 'build', '-', 'fasta', 'cpu_s'))} | {fmt(rss, 0)} | "
            f"{fmt(size / 2**20 if size else None, 1)} | {fmt(bits, 1)} | {ratio(w, kmc_wall)} | "
            f"{ratio(rss, kmc_rss)} | {ratio(rss, jf_rss)} |"
        )
    md.append("")

    # ---- query
    md.append("## Read screening against big\n")
    md.append(
        "reads/s = reads / wall time. BBDuk (whole) includes JVM start and its table build from the reference; "
        "BBDuk (processing) is its own \"Processing time\" line, the reads alone. x floor = wall / the "
        "decompress-and-parse floor on the same file. kmc_tools filter ran once on the first "
        f"{int(meta['kmc_filter_reads']):,} reads of each set (plain FASTQ).\n"
    )
    md.append("| reads | tool | input | wall (s) | CPU (s) | peak RSS (MiB) | reads/s | x floor | reads/s vs BBDuk (processing) | called |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    plot_data = defaultdict(dict)
    readsets = [r for r in ("pos", "neg", "mix") if med("floor", "query", r, "gz", "wall_s") is not None]
    for readset in readsets:
        bb_core = med("bbduk", "query", readset, "gz", "core_s")
        bb_reads = med("bbduk", "query", readset, "gz", "reads")
        bb_rate = bb_reads / bb_core if bb_core else None
        entries = []
        for f in ("gz", "bgzf", "plain"):
            entries.append(("floor", f))
        for tool in qmer_tools:
            for f in ("gz", "bgzf", "plain"):
                entries.append((tool, f))
        entries += [("bbduk", "gz"), ("bbduk-core", "gz"), ("kmc_tools", "plain")]
        for tool, f in entries:
            src = "bbduk" if tool == "bbduk-core" else tool
            w = med(src, "query", readset, f, "core_s" if tool == "bbduk-core" else "wall_s")
            if w is None:
                continue
            n = med(src, "query", readset, f, "reads")
            called = med(src, "query", readset, f, "called")
            rate = n / w if w else None
            fl = med("floor", "query", readset, f, "wall_s")
            name = {"floor": "floor: decompress + parse (kseq)", "bbduk": "BBDuk (whole)",
                    "bbduk-core": "BBDuk (processing)", "kmc_tools": "kmc_tools filter"}.get(tool, tool)
            cpu = None if tool == "bbduk-core" else med(src, "query", readset, f, "cpu_s")
            rss = None if tool == "bbduk-core" else med(src, "query", readset, f, "rss_mib")
            pct = f"{100 * called / n:.3f}%" if tool != "floor" and n else "-"
            md.append(
                f"| {readset} | {name} | {f} | {fmt(w)} | {fmt(cpu)} | {fmt(rss, 0)} | {fmt(rate, 0)} | "
                f"{ratio(w, fl) if tool not in ('floor', 'bbduk-core', 'kmc_tools') else '-'} | "
                f"{ratio(rate, bb_rate) if tool != 'floor' else '-'} | {pct} |"
            )
            plot_data[readset][f"{name} [{f}]"] = rate
    md.append("")

    # ---- accuracy
    md.append("## Calls (fraction of reads each tool calls)\n")
    md.append("| tool | input | positives called | negatives called |")
    md.append("|---|---|---|---|")
    acc = {}
    first_fmt = {t: next(f for f in ("gz", "bgzf", "plain") if ("big", t, "query", "pos", f) in groups) for t in qmer_tools}
    for tool, f in [(t, first_fmt[t]) for t in qmer_tools] + [("bbduk", "gz"), ("kmc_tools", "plain")]:
        vals = []
        for readset in ("pos", "neg"):
            n = med(tool, "query", readset, f, "reads")
            c = med(tool, "query", readset, f, "called")
            vals.append(c / n if n else None)
        acc[tool] = vals
        md.append(f"| {tool} | {f} | {fmt(100 * vals[0] if vals[0] is not None else None, 3)}% | "
                  f"{fmt(100 * vals[1] if vals[1] is not None else None, 4)}% |")
    md.append("")

    # ---- verdict
    md.append("## Verdict measurement (issue 7): qmer's default rule vs an exact k-mer set\n")
    md.append(
        "exact >= 1: reads sharing at least one 31-mer with the reference (BBDuk's rule; what qmer's rule "
        "becomes for an exact set, p = 0). exact >= t: the exact set under qmer's threshold t(kmers, fpr). "
        "Counted by bench/peers/exact_check.cpp (an exact hash set) read by read against qmer's TSV.\n"
    )
    md.append("| reference | reads | n | qmer called | exact >= 1 | exact >= t | qmer - exact>=1 (pp) | qmer calls not exact>=t | qmer calls with 0 exact hits | kmers differ | hits below exact |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for v in verdict:
        n = int(v["reads"])
        q, e1, et = (int(v[k]) for k in ("qmer_called", "exact_ge1", "exact_ge_t"))
        md.append(
            f"| {v['reference']} | {v['readset']} | {n:,} | {100 * q / n:.4f}% | {100 * e1 / n:.4f}% | {100 * et / n:.4f}% | "
            f"{100 * (q - e1) / n:+.4f} | {v['qmer_called_not_exact_t']} | {v['qmer_called_exact_zero']} | "
            f"{v['kmers_mismatch']} | {v['hits_below_exact']} |"
        )
    md.append("")

    # ---- goals
    md.append("## Issue 10 and 7 goals, measured in this run\n")
    goals = []
    for readset in ("pos", "neg"):
        bb_core = med("bbduk", "query", readset, "gz", "core_s")
        bb_rate = med("bbduk", "query", readset, "gz", "reads") / bb_core if bb_core else None
        for tool in ("qmer", "qmer-quick"):
            best = None
            for f in ("bgzf", "plain"):
                w = med(tool, "query", readset, f, "wall_s")
                if w:
                    rate = med(tool, "query", readset, f, "reads") / w
                    best = max(best or 0, rate)
            if best and bb_rate:
                goals.append(f"- Query {readset}: {tool} {best:,.0f} reads/s (best of bgzf, plain) = {best / bb_rate:.2f}x "
                             f"BBDuk's {bb_rate:,.0f} (table build excluded); goal 3x: {'met' if best >= 3 * bb_rate else 'missed'}.")
            w, fl = med(tool, "query", readset, "gz", "wall_s"), med("floor", "query", readset, "gz", "wall_s")
            if w and fl:
                goals.append(f"- gzip {readset}: {tool} wall {w:.2f} s = {w / fl:.2f}x the decompress-and-parse floor "
                             f"({fl:.2f} s); goal 1.15x: {'met' if w <= 1.15 * fl else 'missed'}.")
    qb = med("qmer", "build", "-", "fasta", "wall_s")
    if qb and kmc_wall:
        goals.append(f"- Build: qmer {qb:.2f} s = {qb / kmc_wall:.2f}x KMC's {kmc_wall:.2f} s; goal 0.5x: "
                     f"{'met' if qb <= 0.5 * kmc_wall else 'missed'}.")
    qr = med("qmer", "build", "-", "fasta", "rss_mib")
    if qr and kmc_rss and jf_rss:
        goals.append(f"- Build RSS: qmer {qr:.0f} MiB vs KMC {kmc_rss:.0f}, Jellyfish {jf_rss:.0f}; goal below both: "
                     f"{'met' if qr < min(kmc_rss, jf_rss) else 'missed'}.")
    qs = med("qmer", "build", "-", "fasta", "index_bytes")
    if qs and distinct:
        bits = qs * 8 / distinct
        goals.append(f"- Size: {bits:.1f} bits per distinct k-mer at fpr {fpr} (log2(1/fpr) = {math.log2(1 / fpr):.2f}, "
                     f"{bits / math.log2(1 / fpr):.2f}x it); goal <= 20: {'met' if bits <= 20 else 'missed'}.")
    if "qmer" in acc and "bbduk" in acc and None not in acc["qmer"] + acc["bbduk"]:
        p, n = acc["qmer"]
        goals.append(f"- Accuracy: qmer calls {100 * p:.3f}% of positives (goal >= 99%: {'met' if p >= 0.99 else 'missed'}) "
                     f"and {100 * n:.4f}% of negatives vs BBDuk's {100 * acc['bbduk'][1]:.4f}% "
                     f"(goal fewer: {'met' if n < acc['bbduk'][1] else 'missed'}).")
    for v in verdict:
        n = int(v["reads"])
        d = 100 * (int(v["qmer_called"]) - int(v["exact_ge1"])) / n
        if v["readset"] == "neg":
            goals.append(f"- Issue 7, {v['reference']}: negatives called {d:+.4f} pp vs the exact set (goal <= +0.01 pp: "
                         f"{'met' if d <= 0.01 else 'missed'}).")
        else:
            p = int(v["qmer_called"]) / n
            goals.append(f"- Issue 7, {v['reference']}: positives called {100 * p:.3f}% (goal >= 99%: "
                         f"{'met' if p >= 0.99 else 'missed'}).")
    # Issue 15 (query speed), on the mixed reads: ratios within this run.
    if "mix" in readsets:
        bb_core = med("bbduk", "query", "mix", "gz", "core_s")
        bb_rate = med("bbduk", "query", "mix", "gz", "reads") / bb_core if bb_core else None
        for tool, goal, floor_goal in (("qmer", 3, 2.5), ("qmer-quick", 5, 1.5)):
            best = None
            for f in ("bgzf", "plain"):
                w = med(tool, "query", "mix", f, "wall_s")
                if w:
                    best = max(best or 0, med(tool, "query", "mix", f, "reads") / w)
            if best and bb_rate:
                goals.append(f"- Issue 15, mixed reads: {tool} {best:,.0f} reads/s (best of bgzf, plain) = "
                             f"{best / bb_rate:.2f}x BBDuk's processing rate {bb_rate:,.0f}; goal {goal}x: "
                             f"{'met' if best >= goal * bb_rate else 'missed'}.")
            w, fl = med(tool, "query", "mix", "bgzf", "wall_s"), med("floor", "query", "mix", "bgzf", "wall_s")
            if w and fl:
                goals.append(f"- Issue 15, mixed reads, bgzf: {tool} wall {w:.2f} s = {w / fl:.2f}x the floor "
                             f"({fl:.2f} s); goal {floor_goal}x: {'met' if w <= floor_goal * fl else 'missed'}.")
    if qs and distinct:
        bits = qs * 8 / distinct
        goals.append(f"- Issue 15, size: {bits:.1f} bits per distinct k-mer; goal <= 16: "
                     f"{'met' if bits <= 16 else 'missed'}.")
    md += goals

# ---- the second mix: panel, reads 1/3 human
def mix_fmt(readset):
    """The mix is queried as BGZF, the present-only and absent-only sets as plain FASTQ."""
    return "bgzf" if readset == "mix" else "plain"


def mix_med(tool, readset, field):
    return med(tool, "query", readset, mix_fmt(readset), field, "panel")


mix_sets = [s for s in ("mix", "present", "absent") if mix_med("floor", s, "wall_s") is not None]


def mix_bbduk_ratio(tool, readset):
    """BBDuk's processing time over tool's wall on the same reads: qmer's speed in BBDuk's units."""
    w, bb = mix_med(tool, readset, "wall_s"), mix_med("bbduk", readset, "core_s")
    return bb / w if w and bb else None


if has_second:
    info = json.load(open(out / "info-panel.json"))
    genomes = meta["panel_genomes"].split()
    md.append("## Second mix: reads 1/3 human against a smaller panel\n")
    md.append(
        f"Reference \"panel\": {len(genomes)} complete bacterial genomes ({', '.join(genomes)}), "
        f"{int(meta['panel_bases']):,} bp, {info['kmers']:,} distinct canonical 31-mers (qmer info), a subset "
        f"of big. Reads: ART HS25 150 bp, {int(meta['mix_reads']):,} in all: {int(meta['mix_present']):,} "
        f"from panel (one coverage over its bases) and {int(meta['mix_absent']):,} from human chr22 "
        f"({int(meta['human_bases']):,} bp of maffilter-examples' alignment; absent from panel), shuffled "
        "together (**mix**, BGZF) and the same reads apart (**present**, **absent**, plain FASTQ). x floor = "
        "wall / the decompress-and-parse floor on the same file; vs BBDuk = BBDuk's processing time / wall "
        "(its reads/s ratio), both within this run.\n"
    )
    md.append("| reads | tool | input | wall (s) | CPU (s) | peak RSS (MiB) | reads/s | x floor | reads/s vs BBDuk (processing) | called |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    for readset in mix_sets:
        f = mix_fmt(readset)
        fl = mix_med("floor", readset, "wall_s")
        bb_core = mix_med("bbduk", readset, "core_s")
        for tool in ("floor", "qmer", "qmer-quick", "bbduk", "bbduk-core"):
            src = "bbduk" if tool == "bbduk-core" else tool
            w = mix_med(src, readset, "core_s" if tool == "bbduk-core" else "wall_s")
            if w is None:
                continue
            n = mix_med(src, readset, "reads")
            called = mix_med(src, readset, "called")
            name = {"floor": "floor: decompress + parse (kseq)", "bbduk": "BBDuk (whole)",
                    "bbduk-core": "BBDuk (processing)"}.get(tool, tool)
            cpu = None if tool == "bbduk-core" else mix_med(src, readset, "cpu_s")
            rss = None if tool == "bbduk-core" else mix_med(src, readset, "rss_mib")
            pct = f"{100 * called / n:.3f}%" if tool != "floor" and n else "-"
            md.append(
                f"| {readset} | {name} | {f} | {fmt(w)} | {fmt(cpu)} | {fmt(rss, 0)} | "
                f"{fmt(n / w if w else None, 0)} | "
                f"{ratio(w, fl) if tool not in ('floor', 'bbduk-core') else '-'} | "
                f"{ratio(bb_core, w) if tool != 'floor' else '-'} | {pct} |"
            )
    md.append("")
    for readset in mix_sets:
        what = {"mix": "Mix (BGZF)", "present": "Present only (plain)", "absent": "Absent only (plain)"}[readset]
        fl, bb = mix_med("floor", readset, "wall_s"), mix_med("bbduk", readset, "core_s")
        parts = []
        for tool, label in (("qmer", "qmer default"), ("qmer-quick", "`--quick`")):
            w = mix_med(tool, readset, "wall_s")
            if w and bb and fl is not None:
                parts.append(f"{label} {w:.2f} s = {bb / w:.2f}x BBDuk's processing time, {ratio(w, fl)} the floor")
        if parts:
            md.append(f"- {what}: " + "; ".join(parts) + f" (BBDuk {bb:.2f} s, floor {fl:.2f} s).")

md.append("\n![summary](summary.png)\n")


# ---- the run's claims for doc/performance.md
def best_rate(tool, readset):
    """reads/s of tool's faster uncompressed input (bgzf or plain), as the goals above take it."""
    rates = [med(tool, "query", readset, f, "reads") / w for f in ("bgzf", "plain")
             for w in [med(tool, "query", readset, f, "wall_s")] if w]
    return max(rates) if rates else None


def bbduk_rate(readset):
    return med("bbduk", "query", readset, "gz", "reads") / med("bbduk", "query", readset, "gz", "core_s")


def rate_of(tool, readset, f):
    return med(tool, "query", readset, f, "reads") / med(tool, "query", readset, f, "wall_s")


def mib(x):
    return f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def verdict_text(v):
    """What exact_check found on the big reference's reads."""
    pos = next(r for r in v if r["reference"] == "big" and r["readset"] == "pos")
    neg = next(r for r in v if r["reference"] == "big" and r["readset"] == "neg")
    kmers_bad = sum(int(r["kmers_mismatch"]) for r in v)
    hits_bad = sum(int(r["hits_below_exact"]) for r in v)
    called = int(pos["qmer_called"]) / int(pos["reads"])
    extra = 1e6 * int(neg["qmer_called_not_exact_t"]) / int(neg["reads"])
    return "; ".join([
        ("every read's `kmers` exact" if kmers_bad == 0 else f"`kmers` not exact in {kmers_bad} reads")
        + (" and `hits` never below" if hits_bad == 0 else f", `hits` below the exact count in {hits_bad}"),
        ("100%" if called == 1 else f"{100 * called:.3f}%") + " of reads from the reference called",
        f"unrelated reads {extra:.0f} per million more than an exact set under the same threshold"])


commit = re.search(r"git HEAD at start (\w+)", meta["qmer"]).group(1)
fact = {"section": "peers", "machine": meta["cpu"], "cores": meta["cores"], "commit": commit,
        "date": meta["date"][:10], "how": "`bench/peers/run.sh`", "link": repo_link(out / "summary.md")}
claims = []
if has_first:
    qb_rss = med("qmer", "build", "-", "fasta", "rss_mib")
    kmc_size = med("kmc", "build", "-", "fasta", "index_bytes")
    mix_bb = bbduk_rate("mix")
    claims += [
        {**fact, "key": "peers.build",
         "claim": f"index build, {int(meta['big_bases']) / 1e6:.1f} Mbp bacterial panel "
                  f"({distinct / 1e6:.1f} M distinct 31-mers)",
         "figure": f"qmer {qb:.2f} s, {qb_rss:.0f} MiB peak, {mib(qs / 2**20)} MiB index "
                   f"({qs * 8 / distinct:.1f} bits/k-mer); KMC {kmc_wall:.2f} s, {mib(kmc_rss)} MiB, "
                   f"{mib(kmc_size / 2**20)} MiB: **{qb / kmc_wall:.2f}x KMC's time**"},
        {**fact, "key": "peers.mixed_reads",
         "claim": f"mixed reads (2/3 from the panel), {int(meta['reads_per_set']) / 1e6:g} M ART 150 bp, "
                  "plain FASTQ",
         "figure": f"default {rate_of('qmer', 'mix', 'plain') / 1e3:.0f} k reads/s = "
                   f"**{rate_of('qmer', 'mix', 'plain') / mix_bb:.2f}x BBDuk**'s processing rate; `--quick` "
                   f"{rate_of('qmer-quick', 'mix', 'plain') / 1e3:.0f} k = "
                   f"**{rate_of('qmer-quick', 'mix', 'plain') / mix_bb:.2f}x**; gzip: "
                   f"{rate_of('qmer', 'mix', 'gz') / mix_bb:.2f}x and {rate_of('qmer-quick', 'mix', 'gz') / mix_bb:.2f}x"},
        {**fact, "key": "peers.pos_neg_reads", "claim": "reads from the panel / unrelated reads, plain or bgzf",
         "figure": f"default {best_rate('qmer', 'pos') / bbduk_rate('pos'):.2f}x / "
                   f"{best_rate('qmer', 'neg') / bbduk_rate('neg'):.2f}x BBDuk; `--quick` "
                   f"{best_rate('qmer-quick', 'pos') / bbduk_rate('pos'):.2f}x on reads from the panel"},
        {**fact, "key": "peers.accuracy", "claim": "accuracy against an exact 31-mer set",
         "figure": verdict_text(verdict), "how": "`bench/peers/exact_check.cpp`"},
    ]
if has_second and {"mix", "present", "absent"} <= set(mix_sets):
    w, wq = mix_med("qmer", "mix", "wall_s"), mix_med("qmer-quick", "mix", "wall_s")
    bb, fl = mix_med("bbduk", "mix", "core_s"), mix_med("floor", "mix", "wall_s")
    claims += [
        {**fact, "key": "peers.host_mix",
         "claim": f"reads 1/3 human (chr22), 2/3 from a {int(meta['panel_bases']) / 1e6:.1f} Mbp panel of "
                  f"{len(meta['panel_genomes'].split())} bacterial genomes, {int(meta['mix_reads']) / 1e6:.2f} M "
                  "ART 150 bp, BGZF",
         "figure": f"default {w:.2f} s = **{bb / w:.2f}x BBDuk**'s processing time ({bb:.2f} s), "
                   f"{ratio(w, fl)} the decompress-and-parse floor ({fl:.2f} s); `--quick` {wq:.2f} s = "
                   f"**{bb / wq:.2f}x**, {ratio(wq, fl)} the floor"},
        {**fact, "key": "peers.host_mix_sets",
         "claim": "the same reads apart: from the panel / human only, plain FASTQ",
         "figure": f"default {mix_bbduk_ratio('qmer', 'present'):.2f}x / "
                   f"{mix_bbduk_ratio('qmer', 'absent'):.2f}x BBDuk's processing time; `--quick` "
                   f"{mix_bbduk_ratio('qmer-quick', 'present'):.2f}x / "
                   f"{mix_bbduk_ratio('qmer-quick', 'absent'):.2f}x"},
    ]
write_claims(out / "claims.tsv", claims)
if claims_only:
    sys.exit(0)
(out / "summary.md").write_text("\n".join(md) + "\n")


# ---- plot
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

panels = len(readsets) + (1 if has_first else 0) + (1 if has_second else 0)
fig, axes = plt.subplots(1, panels, figsize=(5.7 * panels, 5.5), squeeze=False)
axes = list(axes[0])


def rate_bars(ax, items, title):
    items = [(k, v) for k, v in items if v]
    ax.barh([k for k, _ in items], [v / 1e3 for _, v in items],
            color=["#999" if "floor" in k else "#1f77b4" if "qmer" in k else "#d62728" for k, _ in items])
    ax.set_xscale("log")
    ax.set_xlabel("thousand reads/s (log)")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=8)


titles = {"pos": "positives", "neg": "negatives", "mix": "mixed (2/3 pos, 1/3 neg)"}
for ax, readset in zip(axes, readsets):
    rate_bars(ax, plot_data[readset].items(), f"query, {titles[readset]}")
if has_first:
    tools = [t for t in qmer_tools + ["kmc", "jellyfish"] if med(t, "build", "-", "fasta", "wall_s")]
    ax = axes[len(readsets)]
    x = range(len(tools))
    ax.bar([i - 0.2 for i in x], [med(t, "build", "-", "fasta", "wall_s") for t in tools], 0.4, label="wall (s)")
    ax2 = ax.twinx()
    ax2.bar([i + 0.2 for i in x], [med(t, "build", "-", "fasta", "rss_mib") for t in tools], 0.4, color="#ff7f0e", label="peak RSS (MiB)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(tools, rotation=20, fontsize=8)
    ax.set_ylabel("wall (s)")
    ax2.set_ylabel("peak RSS (MiB)")
    ax.set_title("index build, big")
    handles, labels = (a + b for a, b in zip(ax.get_legend_handles_labels(), ax2.get_legend_handles_labels()))
    ax.legend(handles, labels, loc="upper left", fontsize=8)
if has_second:
    names = {"floor": "floor", "qmer": "qmer", "qmer-quick": "qmer --quick", "bbduk": "BBDuk (processing)"}
    items = []
    for readset in mix_sets:
        for tool, name in names.items():
            w = mix_med(tool, readset, "core_s" if tool == "bbduk" else "wall_s")
            n = mix_med(tool, readset, "reads")
            items.append((f"{readset} [{mix_fmt(readset)}]: {name}", n / w if n and w else None))
    rate_bars(axes[-1], items, "second mix: panel, reads 1/3 human")
fig.suptitle(f"{meta['cpu']}, {meta['threads']} threads, {meta['date']}", fontsize=9)
fig.tight_layout()
fig.savefig(out / "summary.png", dpi=110)
