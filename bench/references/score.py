#!/usr/bin/env python3
"""Per-read accuracy of bench/references: for a many-reference query's TSV (columns category,
best) and a 16-index panel's (category: one index, multiple or none), the share of reads whose own
reference is among the best (its group counts where `best` names one), assigned to their own
reference alone, to another alone (wrong), ambiguous, and not called. Reads are named NAME.N."""
import argparse
import os


def groups_of(sheet):
    members = {}
    for line in open(sheet):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3:
            members.setdefault(f[2], set()).add(f[0])
    return members


def score(path, groups, many):
    n = own_in_best = alone = wrong = tied = none = 0
    header = None
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        if header is None:
            header = {name: i for i, name in enumerate(f)}
            continue
        origin = f[0].rsplit(".", 1)[0]
        category = f[header["category"]]
        n += 1
        if many:
            best = set()
            for b in f[header["best"]].split(","):
                best |= groups.get(b, {b})
            own_in_best += origin in best
        else:
            own_in_best += category == origin  # a panel names no tied set
        if category == origin:
            alone += 1
        elif category in ("ambiguous", "multiple"):
            tied += 1
        elif category == "none":
            none += 1
        elif category in groups:
            tied += 1
        else:
            wrong += 1
    pct = lambda x: f"{100.0 * x / n:.3f}%"
    return [n, pct(own_in_best), pct(alone), pct(wrong), pct(tied), pct(none)]


def seal_calls(folder):
    """Per read, the strains whose Seal output file (pattern=%.fq, refnames=t) holds it."""
    calls = {}
    for entry in os.listdir(folder):
        if not entry.endswith(".fq") or entry == "none.fq":
            continue
        strain = entry[:-3]
        for suffix in (".gz", ".fasta", ".fa"):
            strain = strain[: -len(suffix)] if strain.endswith(suffix) else strain
        with open(os.path.join(folder, entry)) as handle:
            for i, line in enumerate(handle):
                if i % 4 == 0:
                    calls.setdefault(line[1:].split()[0], set()).add(strain)
    return calls


def score_seal(toss, every, reads):
    """The same columns for Seal: ambiguous=all gives each read's best set (own among it),
    ambiguous=toss its one reference (alone) or none (a tie, or no hit)."""
    alone_calls, best_calls = seal_calls(toss), seal_calls(every)
    own_in_best = alone = wrong = tied = none = 0
    for read in reads:
        origin = read.rsplit(".", 1)[0]
        best = best_calls.get(read, set())
        own_in_best += origin in best
        one = alone_calls.get(read, set())
        if one == {origin}:
            alone += 1
        elif one:
            wrong += 1
        elif best:
            tied += 1
        else:
            none += 1
    n = len(reads)
    pct = lambda x: f"{100.0 * x / n:.3f}%"
    return [n, pct(own_in_best), pct(alone), pct(wrong), pct(tied), pct(none)]


def read_names(path):
    with open(path) as handle:
        return [line[1:].split()[0] for i, line in enumerate(handle) if i % 4 == 0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sheet", required=True)
    p.add_argument("--many", required=True)
    p.add_argument("--panel")
    p.add_argument("--seal-toss", help="Seal's output folder with ambiguous=toss")
    p.add_argument("--seal-all", help="Seal's output folder with ambiguous=all")
    p.add_argument("--reads", help="the reads (their names), for Seal")
    a = p.parse_args()
    groups = groups_of(a.sheet)
    print("| run | reads | own reference among best | own reference alone | another alone (wrong) | tie | none |")
    print("|---|---|---|---|---|---|---|")
    runs = [("many-reference index", a.many, True)]
    if a.panel:
        runs.append(("16 -x indexes", a.panel, False))
    for label, path, many in runs:
        print("| " + label + " | " + " | ".join(str(x) for x in score(path, groups, many)) + " |")
    if a.seal_toss and a.seal_all:
        row = score_seal(a.seal_toss, a.seal_all, read_names(a.reads))
        print("| Seal (toss / all) | " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main()
