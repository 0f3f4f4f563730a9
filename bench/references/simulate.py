#!/usr/bin/env python3
"""Simulated reads of known origin for bench/references: from each reference of a sheet
(NAME<TAB>FILE[<TAB>GROUP]), --reads reads of 150 bp at uniform positions, either strand, each
base changed with probability 0.005; named NAME.N so the truth travels with the read. Seeded: the
same sheet and count give the same reads."""
import argparse
import gzip
import random

COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


def sequence(path):
    opener = gzip.open if path.endswith(".gz") else open
    records, lines = [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(">"):
                if lines:
                    records.append("".join(lines))
                lines = []
            else:
                lines.append(line.strip().upper())
    records.append("".join(lines))
    return "N".join(records)  # records joined by an N: no read spans two


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sheet", required=True)
    p.add_argument("--reads", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--length", type=int, default=150)
    p.add_argument("--error", type=float, default=0.005)
    a = p.parse_args()
    with open(a.out, "w") as out:
        for i, line in enumerate(open(a.sheet)):
            if not line.strip() or line.startswith("#"):
                continue
            name, path = line.rstrip("\n").split("\t")[:2]
            seq = sequence(path)
            rng = random.Random(1000 + i)
            written = 0
            while written < a.reads:
                at = rng.randrange(len(seq) - a.length)
                r = seq[at:at + a.length]
                if "N" in r:
                    continue
                if rng.random() < 0.5:
                    r = r.translate(COMPLEMENT)[::-1]
                r = list(r)
                for j in range(len(r)):
                    if rng.random() < a.error:
                        r[j] = rng.choice([b for b in "ACGT" if b != r[j]])
                out.write(f"@{name}.{written}\n{''.join(r)}\n+\n{'I' * a.length}\n")
                written += 1


if __name__ == "__main__":
    main()
