#!/usr/bin/env python3
"""Seeded synthetic references for bench/references/series.sh: N references of one total size,
as strains of synthetic species (10 strains a species where N >= 10; each strain its species'
random sequence with 1% of bases changed), a sheet NAME<TAB>FILE<TAB>GROUP, and reads of known
origin (150 bp, 0.5% substitutions, either strand, from references in proportion to their size),
named NAME.N."""
import argparse
import os
import random

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def mutate(seq, rate, rng):
    s = bytearray(seq, "ascii")
    at = int(rng.expovariate(rate))
    while at < len(s):
        s[at] = ord(rng.choice([b for b in "ACGT" if b != chr(s[at])]))
        at += 1 + int(rng.expovariate(rate))
    return s.decode()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--references", type=int, required=True)
    p.add_argument("--total", type=int, default=20_000_000)
    p.add_argument("--reads", type=int, default=200_000)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    n = a.references
    strains = min(10, n)
    species = n // strains
    length = a.total // n
    os.makedirs(os.path.join(a.out, "refs"), exist_ok=True)
    rng = random.Random(n)
    refs = []
    with open(os.path.join(a.out, "refs.tsv"), "w") as sheet:
        for sp in range(species):
            base = "".join(rng.choice("ACGT") for _ in range(length))
            for st in range(strains):
                name = f"sp{sp}_st{st}"
                seq = mutate(base, 0.01, rng) if strains > 1 else base
                path = os.path.join("refs", name + ".fa")
                with open(os.path.join(a.out, path), "w") as f:
                    f.write(f">{name}\n{seq}\n")
                sheet.write(f"{name}\t{path}\tsp{sp}\n")
                refs.append((name, seq))
    with open(os.path.join(a.out, "reads.fq"), "w") as out:
        for i in range(a.reads):
            name, seq = refs[rng.randrange(len(refs))]
            at = rng.randrange(len(seq) - 150)
            r = seq[at:at + 150]
            if rng.random() < 0.5:
                r = r.translate(COMPLEMENT)[::-1]
            r = mutate(r, 0.005, rng)
            out.write(f"@{name}.{i}\n{r}\n+\n{'I' * 150}\n")


if __name__ == "__main__":
    main()
