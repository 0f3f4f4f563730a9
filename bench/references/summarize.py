#!/usr/bin/env python3
"""summary.md and claims.tsv of a bench/references run: the 16 strains (run.sh's
performance.csv, accuracy.md, meta.txt) and, where given, the series (series.sh's series.csv).

usage: bench/references/summarize.py RUN_DIR [SERIES_DIR]
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402


def best(rows, prefix):
    """The fastest of the repeated runs named prefix_1, prefix_2, ..."""
    runs = [r for r in rows if r["run"].startswith(prefix)]
    return min(runs, key=lambda r: float(r["wall_s"]))


def meta(path):
    out = {}
    for line in Path(path).read_text().splitlines():
        key, _, value = line.partition(": ")
        out[key] = value
    return out


def main(argv):
    run = Path(argv[1])
    series = Path(argv[2]) if len(argv) > 2 else None
    m = meta(run / "meta.txt")
    rows = list(csv.DictReader(open(run / "performance.csv")))
    by = {r["run"]: r for r in rows}
    plain, many, x16 = best(rows, "query_plain"), best(rows, "query_many"), best(rows, "query_x16")
    ratio = lambda a, b: float(a["wall_s"]) / float(b["wall_s"])
    size = lambda r: int(r["index_bytes"])
    accuracy = (run / "accuracy.md").read_text()
    many_row = [l for l in accuracy.splitlines() if l.startswith("| many-reference")][0]
    cells = [c.strip() for c in many_row.strip("|").split("|")]
    lines = [f"# bench/references: {m['date']}", "", f"{m['machine']}; {m['reads']}; "
             f"threads {m['threads']}; commit {m['commit']}", "",
             "| run | wall s | CPU s | peak RSS MiB | index MiB |", "|---|---|---|---|---|"]
    for r in rows:
        rss = f"{int(r['peak_rss_kib']) / 1024:.0f}" if r["peak_rss_kib"] else "-"
        lines.append(f"| {r['run']} | {r['wall_s']} | {r['cpu_s'] or '-'} | {rss} | "
                     f"{size(r) / 2**20:.1f} |")
    lines += ["", accuracy.strip(), ""]
    date = m["date"][:10]
    link = repo_link(run / "summary.md")
    common = {"section": "references", "machine": m.get("cpu", "unknown"),
              "cores": m["machine"].split()[0],
              "commit": m["commit"], "date": date, "how": "`bench/references/run.sh`",
              "link": link}
    claims = [
        dict(common, key="references.query",
             claim="16 strains of 4 species (ragout-examples) as one many-reference index, "
                   "320,000 simulated 150 bp reads",
             figure=f"{float(many['wall_s']):.2f} s = **{ratio(many, plain):.2f}x a plain index** "
                    f"of the same genomes ({float(plain['wall_s']):.2f} s), "
                    f"**{ratio(x16, many):.1f}x faster than 16 `-x` indexes** "
                    f"({float(x16['wall_s']):.2f} s)" + seal_speed(by, many)),
        dict(common, key="references.size",
             claim="the same: index size and build",
             figure=f"{size(many) / 2**20:.1f} MiB = {size(many) / size(plain):.2f}x the plain "
                    f"index ({size(plain) / 2**20:.1f} MiB); build "
                    f"{float(by['index_many']['wall_s']):.2f} s = "
                    f"{ratio(by['index_many'], by['index_plain']):.2f}x a plain build, peak "
                    f"{int(by['index_many']['peak_rss_kib']) / 1024:.0f} MiB"),
        dict(common, key="references.accuracy",
             claim="the same: each read's own strain",
             figure=f"among the best {cells[2]}, alone {cells[3]}, another strain alone "
                    f"{cells[4]}, a tie {cells[5]} (16 `-x` indexes: {x16_alone(accuracy)} alone"
                    + seal_accuracy(accuracy) + ")"),
    ]
    if series:
        sm = meta(series / "meta.txt")
        srows = list(csv.DictReader(open(series / "series.csv")))
        lines += ["## Series", "", f"{sm['total']}; commit {sm['commit']}", "",
                  "| references | build s (plain) | bits/k-mer (plain) | classes | id bits | "
                  "escaped | query s (plain) |", "|---|---|---|---|---|---|---|"]
        figures = []
        for n in sorted({int(r["references"]) for r in srows}):
            rs = [r for r in srows if int(r["references"]) == n]
            get = lambda run: [r for r in rs if r["run"] == run][0]
            qm = min((r for r in rs if r["run"].startswith("query_many")),
                     key=lambda r: float(r["wall_s"]))
            qp = min((r for r in rs if r["run"].startswith("query_plain")),
                     key=lambda r: float(r["wall_s"]))
            im, ip = get("index_many"), get("index_plain")
            lines.append(f"| {n} | {im['wall_s']} ({ip['wall_s']}) | {im['bits_per_kmer']} "
                         f"({ip['bits_per_kmer']}) | {im['classes']} | {im['class_id_bits']} | "
                         f"{im['escaped']} | {qm['wall_s']} ({qp['wall_s']}) |")
            figures.append(f"{n}: query {float(qm['wall_s']) / float(qp['wall_s']):.2f}x, "
                           f"{float(im['bits_per_kmer']) / float(ip['bits_per_kmer']):.2f}x the "
                           f"bits, {im['classes']} classes")
        claims.append(dict(common, key="references.series", commit=sm["commit"],
                           date=sm["date"][:10], how="`bench/references/series.sh`",
                           claim="1 to 10,000 synthetic strains (10 a species, 1% apart) of "
                                 "20 Mbp in all, against a plain index of the same files",
                           figure="; ".join(figures)))
    (run / "summary.md").write_text("\n".join(lines) + "\n")
    write_claims(run / "claims.tsv", claims)


def seal_speed(by, many):
    """Seal's processing time (its own figure, without building its table) against qmer's."""
    if "seal_toss_processing" not in by:
        return ""
    seal = float(by["seal_toss_processing"]["wall_s"])
    return (f"; Seal (`ambiguous=toss`) {seal:.2f} s processing, "
            f"{float(by['seal_toss']['wall_s']):.2f} s in all: **{seal / float(many['wall_s']):.1f}x "
            f"qmer's time**")


def seal_accuracy(accuracy):
    rows = [l for l in accuracy.splitlines() if l.startswith("| Seal")]
    if not rows:
        return ""
    c = [x.strip() for x in rows[0].strip("|").split("|")]
    return f"; Seal: among the best {c[2]}, alone {c[3]}, another alone {c[4]}"


def x16_alone(accuracy):
    row = [l for l in accuracy.splitlines() if l.startswith("| 16 -x")][0]
    return [c.strip() for c in row.strip("|").split("|")][3]


if __name__ == "__main__":
    main(sys.argv)
