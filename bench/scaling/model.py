#!/usr/bin/env python3
"""The scaling model of bench/scaling/README.md, from model.sh's one-thread measurements.

Each command is a pipeline of stages. A stage that runs on one thread (the reader today, the
rank-select writer, the index file's write) does its work at its one-thread speed whatever the
thread count; the parallel stages share the rest among T threads. With S the serial seconds and P
the parallel seconds of a phase (both measured on one thread), a pipelined phase takes
max(S, (S + P) / T) at T threads (the serial stage overlaps the parallel one, and bounds it), and
a command the sum over its phases. Speed-up: the one-thread time over that. Not modelled: memory
bandwidth and the last level cache shared by more threads, turbo clocks, hyper-threads, NUMA;
each lowers the figures at 64 threads most, so the predictions are upper bounds.

usage: model.py model.csv [--chunk-share F]
  --chunk-share F  the share of today's reader time that stays serial once plain FASTQ/FASTA is
                   cut into chunks serially and parsed in parallel (issue 40, item 3); default:
                   the value in model.csv (row reader_split,chunk_share) or none.

Prints the tables (model.sh keeps them as model.md) and, unless --chunk-share asks what-if, writes
claims.tsv beside model.csv: the model's rows of doc/performance.md (bench/performance_page.py),
the machine from meta.txt in the same folder.
"""

import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

THREADS = (1, 2, 8, 16, 64)


def read_rows(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["stage"], []).append(r)
    return rows


def value(rows, stage, case):
    for r in rows.get(stage, []):
        if r["case"] == case:
            return float(r["seconds"])
    return None


def pipelined(phases, t):
    """Seconds at t threads of phases [(name, serial, parallel)]."""
    return sum(max(s, (s + p) / t) for _, s, p in phases)


def table(title, phases, note=""):
    """The Markdown of one command's prediction, and its speed-up at each of THREADS."""
    one = pipelined(phases, 1)
    out = [f"### {title}", ""]
    if note:
        out += [note, ""]
    out += ["| phase | serial s | parallel s |", "|---|---|---|"]
    out += [f"| {n} | {s:.3f} | {p:.3f} |" for n, s, p in phases]
    out += ["", "| threads | predicted s | speed-up | serial share |", "|---|---|---|---|"]
    for t in THREADS:
        sec = pipelined(phases, t)
        # The time spent where a serial stage, not the parallel work, sets the pace.
        serial = sum(s for _, s, p in phases if s > 0 and s >= (s + p) / t)
        out.append(f"| {t} | {sec:.3f} | {one / sec:.2f}x | {100 * serial / sec:.0f}% |")
    serial = sum(s for _, s, _ in phases)
    out += ["", f"Ceiling (infinite threads): {one / serial:.1f}x." if serial > 0 else "", ""]
    return out, {t: one / pipelined(phases, t) for t in THREADS}


def read_meta(path):
    """meta.txt's key=value pairs; a line of several space-separated pairs gives each."""
    meta = {}
    for line in path.read_text().splitlines():
        tokens = line.split()
        pairs = tokens if tokens and all("=" in t for t in tokens) else [line]
        for pair in pairs:
            if "=" in pair:
                k, v = pair.split("=", 1)
                meta[k] = v
    return meta


def times(x):
    """A predicted speed-up: whole numbers from 15x, where the model's upper bound is no finer."""
    return f"{x:.0f}x" if x >= 15 else f"{x:.1f}x"


def write_model_claims(csv_path, predicted, capacities):
    """claims.tsv beside model.csv: the predicted speed-ups at 8, 16 and 64 threads (each query
    with the reader qmer has now, chunked where the model has the chunked reader's share) and the
    one-thread capacities they come from."""
    folder = Path(csv_path).resolve().parent
    meta = read_meta(folder / "meta.txt")
    date = meta.get("date", "")[:10] or re.search(r"\d{4}-\d{2}-\d{2}", folder.name).group(0)
    fact = {"section": "threads", "machine": meta["cpu"], "cores": meta["nproc"],
            "commit": meta["commit"], "date": date, "link": repo_link(folder / "model.md")}
    size = f"{int(meta['size']) / 1e6:g} Mbp"
    parts = []
    for label, key in (("query plain", "default"), ("BGZF", "default_bgzf"),
                       ("`--quick`", "quick"), ("gzip", "default_gzip"), (f"`qmer index` {size}", "index")):
        if key in predicted:
            parts.append(f"{label} " + " / ".join(times(predicted[key][t]) for t in (8, 16, 64)))
    claims = [{**fact, "key": "model.predicted",
               "claim": "predicted speed-up at 8 / 16 / 64 threads (model from one-thread capacities)",
               "figure": "; ".join(parts), "how": "`bench/scaling/model.sh`"}]
    c = capacities
    if any(v is None for v in c.values()):  # a run without reader_bench or perf: no such row
        write_claims(folder / "claims.tsv", claims)
        return
    claims.append({
        **fact, "key": "model.capacities", "claim": "one-thread capacities",
        "figure": f"serial reader {c['serial_reader'] / 1e9:.1f} GB/s of FASTQ; chunk cutting "
                  f"{c['chunk_cut'] / 1e9:.1f} GB/s; chunk parsing {c['chunk_parse'] / 1e9:.1f} GB/s per "
                  f"thread; gzip inflate+parse {c['gzip'] / 1e9:.2f} GB/s; `qmer index` {size} "
                  f"{c['index']:.2f} s, of which the fill's serial stage {c['writer']:.2f} s and the "
                  f"index's last write {c['index_write']:.2f} s",
        "how": "`bench/io/reader_bench`, `bench/peers/kseq_floor.cpp`, `qmer index --timings` via `model.sh`"})
    write_claims(folder / "claims.tsv", claims)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rows = read_rows(sys.argv[1])
    predicted = {}  # case -> {threads: speed-up}, with the reader qmer has now
    chunk_share = None
    what_if = "--chunk-share" in sys.argv
    if what_if:
        chunk_share = float(sys.argv[sys.argv.index("--chunk-share") + 1])
    elif value(rows, "reader_split", "chunk_share") is not None:
        chunk_share = value(rows, "reader_split", "chunk_share")

    out = ["## Model: one-thread capacities and predicted speed-up", ""]
    floor_plain = value(rows, "floor", "reads_plain")
    floor_gzip = value(rows, "floor", "reads_gzip")
    floor_bgzf = value(rows, "floor", "reads_bgzf")
    floor_ref = value(rows, "floor", "reference")
    bytes_plain = None
    for r in rows.get("floor", []):
        if r["case"] == "reads_plain":
            bytes_plain = float(r["detail"].split()[0])
    if floor_plain and bytes_plain:
        out += ["Reader (decompress + parse, one thread, `kseq_floor`): "
                f"plain {bytes_plain / floor_plain / 1e6:.0f} MB/s, "
                f"gzip {bytes_plain / floor_gzip / 1e6:.0f} MB/s, "
                f"BGZF {bytes_plain / floor_bgzf / 1e6:.0f} MB/s (of FASTQ text).", ""]

    # qmer's readers (bytes of FASTQ text per second): today's serial reader, the chunked reader's
    # serial cutting and its parsing per thread. The serial stage of a plain query: the reads'
    # bytes at the serial reader's rate (today) or at the cutting rate (chunked).
    rate = {r["case"]: float(r["seconds"]) for r in rows.get("reader", [])}
    serial_reader = rate.get("sequence_reader/plain")
    kseq_plain = floor_plain
    if serial_reader and bytes_plain:
        floor_plain = bytes_plain / serial_reader
        out += [f"qmer's serial reader (bench/io/reader_bench): {serial_reader / 1e6:.0f} MB/s; "
                f"the chunked reader cuts at {rate.get('chunk_cut', 0) / 1e6:.0f} MB/s and parses "
                f"at {rate.get('chunk_parse', 0) / 1e6:.0f} MB/s per thread.", ""]
        if "chunk_cut" in rate and chunk_share is None:
            chunk_share = serial_reader / rate["chunk_cut"]

    # Loading the index (a query of one read): t1 = s + p, t2 = s + p / 2.
    load1, load2 = value(rows, "load", "t1"), value(rows, "load", "t2")
    load = []
    if load1 is not None and load2 is not None:
        p = max(0.0, min(load1, 2 * (load1 - load2)))
        load = [("loading the index", load1 - p, p)]
        out += [f"Loading the index (a query of one read): {load1:.3f} s on one thread, "
                f"{load2:.3f} s on two: {load1 - p:.3f} s serial, {p:.3f} s parallel.", ""]
    # Queries: the reader is the serial stage; the lookups (the rest) are parallel. BGZF's blocks
    # are inflated by htslib's threads (parallel), its parsing is serial; plain gzip is serial.
    for case, label, serial in (
        ("default", "qmer query, plain FASTQ", floor_plain),
        ("quick", "qmer query --quick, plain FASTQ", floor_plain),
        ("default_bgzf", "qmer query, BGZF", floor_plain),
        ("default_gzip", "qmer query, gzip", floor_gzip),
    ):
        total = value(rows, "query", case)
        if total is None or serial is None:
            continue
        extra = []
        if case == "default_bgzf" and floor_bgzf:
            extra = [("inflating BGZF blocks (htslib threads)", 0.0, max(0.0, floor_bgzf - kseq_plain))]
        rest = total - serial - sum(p for _, _, p in extra) - sum(s + p for _, s, p in load)
        phases = load + [("reading (serial)", serial, 0.0)] + extra + [("lookups", 0.0, max(0.0, rest))]
        lines, predicted[case] = table(f"{label}: today", phases,
                                       f"One thread: {total:.2f} s, of which the reader {serial:.2f} s "
                                       f"({100 * serial / total:.0f}%).")
        out += lines
        if chunk_share is not None and case != "default_gzip":
            s = serial * chunk_share
            phases = load + [("cutting chunks (serial)", s, 0.0),
                             ("parsing chunks", 0.0, serial - s)] + extra + [("lookups", 0.0, max(0.0, rest))]
            lines, predicted[case] = table(f"{label}: chunks parsed in parallel", phases,
                                           f"The serial stage keeps {100 * chunk_share:.0f}% of the reader's time.")
            out += lines

    # Index: phases from --timings; the reading of the reference is serial within 'reading
    # k-mers', the writer within 'filling the table', the index file's write is serial.
    phases_raw = [(r["case"], float(r["seconds"])) for r in rows.get("index_phase", [])]
    total_index = value(rows, "index", "total")
    writer_share = value(rows, "writer", "share")
    # The fill's serial stage as the build reports it (model.sh, --timings at two threads); older
    # results have only the perf share of a one-thread build, which counts the whole writer.
    writer_serial = value(rows, "writer", "serial")
    writer_s = writer_serial if writer_serial is not None else (
        writer_share * total_index if writer_share is not None and total_index else None)
    if phases_raw and total_index:
        phases = []
        for name, sec in phases_raw:
            if name.startswith("reading k-mers") and floor_ref:
                phases.append((name, floor_ref, max(0.0, sec - floor_ref)))
            elif name.startswith("filling the table") and writer_s is not None:
                w = min(sec, writer_s)
                phases.append((name, w, sec - w))
            elif name.startswith("writing") or name.startswith("setting up"):
                phases.append((name, sec, 0.0))
            else:
                phases.append((name, 0.0, sec))
        how = (f"the fill's in-order stage, {writer_serial:.3f} s as --timings reports it at two "
               "threads" if writer_serial is not None else
               f"the writer, {100 * (writer_share or 0):.1f}% of the build's perf samples")
        note = (f"One thread: {total_index:.2f} s wall. Serial: the reference's reading "
                f"({floor_ref or 0:.3f} s, kseq_floor), {how}, the index "
                "file's write and the set-up.")
        lines, predicted["index"] = table("qmer index", phases, note)
        out += lines

    qf = {r["case"]: float(r["seconds"]) for r in rows.get("qf", [])}
    if "locally_locked" in qf and "externally_locked" in qf:
        ll, el = qf["locally_locked"], qf["externally_locked"]
        out += ["### Quotient filter inserts (experiment (a), one thread)", "",
                f"locally locked {ll:.1f} Mops/s, externally locked {el:.1f} Mops/s, linear "
                f"probing {qf.get('linear_probing', 0):.1f} Mops/s on one thread. With no write "
                "to shared memory per insert (the element count publishes once per "
                "2^-14 of the table per thread), nothing serialises the locally locked "
                "filter's inserts but two inserts into the same supercluster (rare at 2^24 "
                "slots): the model predicts linear scaling until memory bandwidth, "
                f"{16 * ll:.0f} Mops/s at 16 threads "
                f"({16 * ll * 2 * 64 / 1e3:.1f} GB/s of random lines at ~2 lines an insert), "
                f"{64 * ll:.0f} at 64.", ""]
    print("\n".join(out))
    if not what_if:
        capacities = {"serial_reader": serial_reader, "chunk_cut": rate.get("chunk_cut"),
                      "chunk_parse": rate.get("chunk_parse"),
                      "gzip": bytes_plain / floor_gzip if bytes_plain and floor_gzip else None,
                      "index": total_index,
                      "writer": writer_s,
                      "index_write": dict(phases_raw).get("writing the index")}
        write_model_claims(sys.argv[1], predicted, capacities)


if __name__ == "__main__":
    main()
