#!/usr/bin/env python3
"""Per-genome category accuracy of qmer, Seal and Kraken 2 on bench/panel's reads (run.sh), and the
summary table of a results folder (--table PERFORMANCE_CSV ACCURACY_CSV).

A read is named GENOME_N after the genome ART simulated it from (none_N: from a species outside
the panel). Its category is the one genome a tool gives it, `multiple` when the tool gives it to
several (qmer's category; Seal's ambiguous=all files; Kraken 2's root, the lowest common ancestor
of several genomes), or `none`."""

import argparse
import collections
import csv
import os
import sys


def origin(read_id):
    return read_id.rsplit("_", 1)[0]


def score_qmer(path):
    calls = {}
    with open(path) as handle:
        header = None
        for line in handle:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if header is None:
                header = fields
                continue
            calls[fields[0]] = fields[-1]
    return calls


def score_seal(folder, genomes):
    names = collections.defaultdict(set)
    for entry in os.listdir(folder):
        if not entry.endswith(".fq") or entry == "none.fq":
            continue
        genome = entry[:-3]
        for suffix in (".fa", ".fasta"):
            genome = genome[: -len(suffix)] if genome.endswith(suffix) else genome
        if genome not in genomes:
            sys.exit(f"score.py: Seal wrote {entry}, which names no panel genome")
        with open(os.path.join(folder, entry)) as handle:
            for i, line in enumerate(handle):
                if i % 4 == 0:
                    names[line[1:].split()[0]].add(genome)
    return {read: (next(iter(s)) if len(s) == 1 else "multiple") for read, s in names.items()}


def score_kraken(path, taxids, genomes):
    genome_of = {str(t): g for t, g in zip(taxids, genomes)}
    calls = {}
    with open(path) as handle:
        for line in handle:
            status, read, taxid = line.split("\t")[:3]
            if status == "U":
                continue
            calls[read] = genome_of.get(taxid, "multiple")
    return calls


def accuracy(tool, calls, all_reads, genomes):
    rows = []
    for genome in genomes + ["none"]:
        counts = collections.Counter()
        for read in all_reads[genome]:
            call = calls.get(read, "none")
            counts["own" if call == genome else call if call in ("multiple", "none") else "other"] += 1
        n = len(all_reads[genome])
        rows.append([tool, genome, n, counts["own"], counts["multiple"], counts["none"],
                     counts["other"], f"{counts['own'] / n:.6f}" if n else ""])
    return rows


def table(perf_path, accuracy_path):
    perf = list(csv.DictReader(open(perf_path)))
    acc = list(csv.DictReader(open(accuracy_path)))
    genomes = [r["genome"] for r in acc if r["tool"] == acc[0]["tool"]]
    tools = list(dict.fromkeys(r["tool"] for r in acc))
    print("| own category (of each genome's reads) | " + " | ".join(tools) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for g in genomes:
        cells = []
        for t in tools:
            r = next(r for r in acc if r["tool"] == t and r["genome"] == g)
            cells.append(f"{100 * float(r['own_fraction']):.2f}% ({r['multiple']} multiple, "
                         f"{r['none'] if g != 'none' else r['other']} "
                         f"{'none' if g != 'none' else 'called'})")
        print(f"| {g} | " + " | ".join(cells) + " |")
    print()
    print("| tool | phase | what | wall s | CPU s | peak RSS MiB | index bytes | reads/s | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in perf:
        print(f"| {r['tool']} | {r['phase']} | {r['what']} | {r['wall_s']} | {r['cpu_s']} | "
              f"{r['rss_mib']} | {r['index_bytes']} | {r['reads_per_s']} | {r['load1']} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--genomes", nargs="+")
    p.add_argument("--qmer")
    p.add_argument("--qmer-quick")
    p.add_argument("--seal")
    p.add_argument("--kraken")
    p.add_argument("--kraken-taxids", nargs="+")
    p.add_argument("--table", nargs=2)
    a = p.parse_args()
    if a.table:
        table(*a.table)
        return
    qmer = score_qmer(a.qmer)
    all_reads = collections.defaultdict(list)
    for read in qmer:
        all_reads[origin(read)].append(read)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["tool", "genome", "reads", "own", "multiple", "none", "other", "own_fraction"])
    for tool, calls in [("qmer", qmer), ("qmer --quick", score_qmer(a.qmer_quick)),
                        ("seal", score_seal(a.seal, a.genomes)),
                        ("kraken2", score_kraken(a.kraken, a.kraken_taxids, a.genomes))]:
        out.writerows(accuracy(tool, calls, all_reads, a.genomes))


if __name__ == "__main__":
    main()
