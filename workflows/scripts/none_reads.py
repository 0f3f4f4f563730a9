#!/usr/bin/env python3
"""The reads no index matched, for the split panel (workflows/Snakefile, rule merge).

    none_reads.py TABLE SOURCE_DIR OUT_DIR

TABLE is the joint per-read table `qmer merge` wrote (gzip or plain); SOURCE_DIR holds one index's
unmatched reads as `qmer query --unmatched` wrote them (reads.fq.gz, or reads_1 and reads_2 for
pairs; FASTQ or FASTA). Every read of category none is among them, so each file is copied to
OUT_DIR, same name, keeping the reads whose table row says none.

Both are in the sample's order (the reads a subsequence of the table's rows), so the two are
walked in step and memory stays constant whatever the sample's size.
"""

import gzip
import os
import sys


class InputError(Exception):
    pass


def open_text(path, mode="rt"):
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, mode) if gzipped else open(path, mode)


def table_rows(path):
    """(read_id, category) of each row of a qmer per-read table."""
    with open_text(path) as table:
        category = None
        for line in table:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if category is None:
                if fields[0] != "read_id" or fields[-1] != "category":
                    raise InputError(f"{path}: not a qmer panel table (its header is {line!r})")
                category = len(fields) - 1
                continue
            yield fields[0], fields[category]


def records(path):
    """(name, lines) of each record of a FASTQ (4 lines) or FASTA (2 lines) file as qmer writes
    them, sequence on one line. The name drops a /1 or /2 mate suffix, as the table's read_id."""
    with open_text(path, "rb") as reads:
        while True:
            header = reads.readline()
            if not header:
                return
            size = 4 if header.startswith(b"@") else 2 if header.startswith(b">") else 0
            if size == 0:
                raise InputError(f"{path}: a record starts with {header[:40]!r}, not @ or >")
            lines = [header] + [reads.readline() for _ in range(size - 1)]
            if not lines[-1]:
                raise InputError(f"{path}: the last record ({header.strip()!r}) is truncated")
            name = header[1:].split(maxsplit=1)[0].decode()
            if name.endswith(("/1", "/2")):
                name = name[:-2]
            yield name, lines


def keep_none(table, source, target):
    """Copies the reads of `source` whose table row is category none to `target` (gzip);
    returns how many."""
    rows = table_rows(table)
    row = None
    kept = 0
    with gzip.open(target, "wb", compresslevel=6) as out:
        for name, lines in records(source):
            # Mates of an interleaved file share their row: the row is only advanced past
            # rows that are not this read's.
            while row is None or row[0] != name:
                row = next(rows, None)
                if row is None:
                    raise InputError(f"{source}: read '{name}' is not in {table} (or not in order)")
            if row[1] == "none":
                out.writelines(lines)
                kept += 1
    return kept


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: none_reads.py TABLE SOURCE_DIR OUT_DIR\n")
        return 2
    table, source_dir, out_dir = argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    try:
        # Hidden files are not reads (Snakemake marks a finished folder with one).
        names = sorted(n for n in os.listdir(source_dir) if not n.startswith("."))
        if not names:
            raise InputError(f"{source_dir}: no reads file")
        for name in names:
            kept = keep_none(table, os.path.join(source_dir, name), os.path.join(out_dir, name))
            sys.stderr.write(f"none_reads: {kept} reads of category none in {out_dir}/{name}\n")
    except (InputError, OSError, EOFError) as error:
        sys.stderr.write(f"none_reads: error: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
