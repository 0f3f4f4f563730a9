#!/usr/bin/python3
"""bench/scale: summary.md and build.png from a build benchmark's results folder (build.sh).

usage: summarize_build.py RESULTS_DIR          (build.sh calls it; run it again to rebuild them)
       summarize_build.py --claims-only RESULTS_DIR   (claims.tsv alone, below)
       summarize_build.py --same-index A B     (prints 1 when two qmer indexes hold the same
                                                filter, 0 when not; build.sh's check)

Per reference kind and tool (qmer without a limit, KMC, Jellyfish): the medians over the rounds of
wall, CPU (user + sys), peak RSS and output size; the issue's ratios; and qmer at each --max-memory
limit: the largest peak RSS over the rounds against the limit, and whether every round's index
equals round 1's unlimited one. Beside summary.md, claims.tsv: the run's row of
doc/performance.md (bench/performance_page.py).
"""
import csv
import mmap
import statistics
import struct
import sys
from pathlib import Path

from summarize_common import bp, num

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from performance_page import repo_link, write_claims  # noqa: E402

GOAL_WALL_VS_KMC = 0.5  # qmer wall / KMC wall, at most
GOAL_RSS_VS_KMC = 1.0  # qmer peak RSS / KMC peak RSS, below
GOAL_RSS_VS_INDEX = 1.5  # qmer peak RSS / its index file, at most
TOOLS = ["qmer", "kmc", "jellyfish"]
LABEL = {"qmer": "qmer", "kmc": "KMC", "jellyfish": "Jellyfish"}

# ------------------------------------------------------------------ same filter (io/index_file.hpp)
SECTION_TAG = 0x5443455352454D51  # "QMERSECT"
END_TAG = 0x444E4552454D51  # "QMEREND"
PREFIX = 8 + 4 + 4 + 8  # magic, format version, byte-order mark, header length
TRAILER = 3 * 8  # end tag, section count, checksum


def sections(path):
    """The file's sections as (params, words offset, word count), and its mapping."""
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if m[:8] != b"QMERIDX\0":
        raise SystemExit(f"{path}: not a qmer index")
    (header_bytes,) = struct.unpack_from("<Q", m, 16)
    end = len(m) - TRAILER
    tag, count = struct.unpack_from("<QQ", m, end)
    if tag != END_TAG:
        raise SystemExit(f"{path}: no end tag where expected")
    word = lambda at: struct.unpack_from("<Q", m, at)[0]  # noqa: E731
    offset = (PREFIX + header_bytes + 7) // 8 * 8
    out = []
    for _ in range(count):
        if word(offset) != SECTION_TAG:
            raise SystemExit(f"{path}: bad section marker at {offset}")
        n_params = word(offset + 8)
        offset += 16
        params = [word(offset + 8 * i) for i in range(n_params)]
        offset += 8 * n_params
        n_words = word(offset)
        offset += 8
        offset = (offset + 63) // 64 * 64  # the words are 64-byte aligned in the file
        out.append((params, offset, n_words))
        offset += 8 * n_words
    if offset != end:
        raise SystemExit(f"{path}: {end - offset} unexpected bytes after the last section")
    return out, m


def same_index(a, b):
    """Every section's parameter words and filter words equal (the header, which holds the command
    line, the padding it shifts, and the checksum are not compared)."""
    sa, ma = sections(a)
    sb, mb = sections(b)
    if len(sa) != len(sb):
        return False
    chunk = 64 << 20
    for (pa, oa, na), (pb, ob, nb) in zip(sa, sb):
        if pa != pb or na != nb:
            return False
        for at in range(0, 8 * na, chunk):
            n = min(chunk, 8 * na - at)
            if ma[oa + at:oa + at + n] != mb[ob + at:ob + at + n]:
                return False
    return True


# ------------------------------------------------------------------ tables
def gib(b):
    if b is None:
        return "-"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB"


def sec(s):
    return "-" if s is None else f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


def median(rows, f):
    xs = [f(r) for r in rows]
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def met(ok):
    return "-" if ok is None else ("**met**" if ok else "**missed**")


def read_run(out):
    rows = list(csv.DictReader(open(out / "build.csv")))
    meta = {}
    for line in open(out / "meta.txt"):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            meta[k] = v
    return rows, meta


def unlimited(rows, kind, tool):
    """The runs of tool on kind without a memory limit that succeeded."""
    return [r for r in rows if r["kind"] == kind and r["tool"] == tool and r["limit_x"] == "NA"
            and r["exit"] == "0"]


def write_run_claims(out):
    """claims.tsv: the random reference's build against KMC, the one row of doc/performance.md
    this benchmark makes (the repetitive reference is in summary.md only); none when the run has
    no successful qmer and KMC build of it."""
    rows, meta = read_run(out)
    q, k = unlimited(rows, "random", "qmer"), unlimited(rows, "random", "kmc")
    claims = []
    if q and k:
        wall_q, wall_k = median(q, lambda r: num(r["wall_s"])), median(k, lambda r: num(r["wall_s"]))
        rss_q, index_q = median(q, lambda r: num(r["max_rss_bytes"])), median(q, lambda r: num(r["output_bytes"]))
        claims.append({
            "key": "scale.build_random", "section": "peers",
            "claim": f"{bp(q[0]['size_bp'])} random reference, {meta['threads']} threads",
            "figure": f"qmer {sec(wall_q)}, {gib(rss_q)} peak ({rss_q / index_q:.2f}x its {gib(index_q)} "
                      f"index); KMC {sec(wall_k)}: **{wall_q / wall_k:.2f}x KMC's time**",
            "machine": meta["cpu"], "cores": meta["host_nproc"], "commit": meta["git_head"],
            "date": meta["date"][:10], "how": "`bench/scale/build.sh`", "link": repo_link(out / "summary.md")})
    write_claims(out / "claims.tsv", claims)


def summarize(out):
    rows, meta = read_run(out)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    size = int(rows[0]["size_bp"]) if rows else int(meta.get("size", 0))
    wall = lambda r: num(r["wall_s"])  # noqa: E731
    cpu = lambda r: num(r["user_s"]) + num(r["sys_s"])  # noqa: E731
    rss = lambda r: num(r["max_rss_bytes"])  # noqa: E731
    outb = lambda r: num(r["output_bytes"])  # noqa: E731
    ok = lambda r: r["exit"] == "0"  # noqa: E731

    md = []
    md.append(f"# Build benchmark: {bp(size)}, {meta.get('threads', '?')} threads\n")
    md.append(
        f"{meta.get('date', '?')}; qmer {meta.get('git_head', '?')} "
        f"({meta.get('git_dirty_files', '?').split(' ')[0]} modified source files), "
        f"KMC {meta.get('kmc_version', '?')}, {meta.get('jellyfish_version', '?')}; "
        f"{meta.get('host_nproc', '?')} cores, {meta.get('cpu', '?')}, "
        f"{int(meta.get('mem_total_kib', 0)) / 2**20:.1f} GiB. "
        f"{meta.get('reps', '?')} round(s), medians shown; the reference read warm (in the page "
        f"cache: cat to /dev/null before every run, nothing dropped). Load average "
        f"{meta.get('load_start', '?')} at the start, {meta.get('load_end', '?')} at the end.\n"
    )
    if meta.get("qmer_args"):
        md.append(f"qmer index options: `{meta['qmer_args']}`.\n")
    md.append(
        "| reference | tool | runs | wall | CPU (user + sys) | peak RSS | output | load before |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    per = {}  # (kind, tool) -> medians
    for kind in kinds:
        for tool in TOOLS:
            rs = [r for r in rows if r["kind"] == kind and r["tool"] == tool and r["limit_x"] == "NA"]
            good = [r for r in rs if ok(r)]
            m = {
                "wall": median(good, wall),
                "cpu": median(good, cpu),
                "user": median(good, lambda r: num(r["user_s"])),
                "sys": median(good, lambda r: num(r["sys_s"])),
                "rss": median(good, rss),
                "out": median(good, outb),
                "load": median(rs, lambda r: num(r["load1_before"])),
            }
            per[(kind, tool)] = m
            failed = len(rs) - len(good)
            runs = f"{len(good)}" + (f" (+{failed} failed: exit {', '.join(sorted({r['exit'] for r in rs if not ok(r)}))})" if failed else "")
            cpu_s = "-" if m["cpu"] is None else f"{sec(m['cpu'])} ({m['user']:.1f} + {m['sys']:.1f})"
            js = meta.get(f"jellyfish_s_{kind}", "").split(" ")[0]
            note = f" (-s {int(js):,})" if tool == "jellyfish" and js else ""
            md.append(
                f"| {kind} | {LABEL[tool]}{note} | {runs} | {sec(m['wall'])} | {cpu_s} | {gib(m['rss'])} "
                f"| {gib(m['out'])} | {'-' if m['load'] is None else format(m['load'], '.2f')} |"
            )

    # qmer at its memory limits
    lrows = [r for r in rows if r["tool"] == "qmer" and r["limit_x"] != "NA"]
    limit_ok = {}  # kind -> all limits honoured with the same index (None: no limit run)
    if lrows:
        md.append("\n## qmer at --max-memory limits (multiples of the unlimited index file)\n")
        md.append(
            "| reference | limit | runs | wall | CPU | peak RSS (largest) | peak / limit | under limit | same index | spilled |\n"
            "|---|---|---|---|---|---|---|---|---|---|"
        )
        for kind in kinds:
            ks = [r for r in lrows if r["kind"] == kind]
            for x in dict.fromkeys(r["limit_x"] for r in ks):
                rs = [r for r in ks if r["limit_x"] == x]
                good = [r for r in rs if ok(r)]
                limit = num(rs[0]["limit_bytes"])
                peak = max((rss(r) for r in good), default=None)  # a refusal's own peak says nothing
                under = all(r["under_limit"] == "yes" for r in good)
                same = all(r["same_index"] == "1" for r in good)
                runs = f"{len(good)}" + (f" (+{len(rs) - len(good)} refused or failed)" if len(rs) > len(good) else "")
                spilled = ", ".join(sorted({r["spilled"] for r in good})) or "-"
                yn = lambda b: ("yes" if b else "**no**") if good else "**refused**"  # noqa: E731
                md.append(
                    f"| {kind} | {x}x = {gib(limit)} | {runs} | {sec(median(good, wall))} | {sec(median(good, cpu))} "
                    f"| {gib(peak)} | {fmt_ratio(ratio(peak, limit))} | {yn(under)} | {yn(same)} | {spilled} |"
                )
                # honoured: every round built the index (a refusal of a limit from 1.2x up is a
                # miss too), under the limit, the same as the unlimited one
                limit_ok[kind] = limit_ok.get(kind, True) and len(good) == len(rs) and under and same
    unl = [r for r in rows if r["tool"] == "qmer" and r["limit_x"] == "NA" and r["same_index"] != "NA"]
    if unl:
        same = all(r["same_index"] == "1" for r in unl)
        md.append(f"\nqmer without a limit, rounds 2 on: the same index as round 1: {'yes' if same else '**no**'}.")

    # why runs failed: the last line of each failed run's log
    failed = [r for r in rows if not ok(r)]
    if failed:
        md.append("\n## Failed or refused runs\n")
        for r in failed:
            lim = "" if r["limit_x"] == "NA" else f"-limit{r['limit_x']}"
            logf = out / "logs" / f"{r['kind']}-{r['tool']}{lim}-r{r['rep']}.log"
            last = logf.read_text(errors="replace").strip().splitlines()[-1:] if logf.exists() else []
            limit_text = "" if r["limit_x"] == "NA" else f" --max-memory {r['limit_x']}x"
            md.append(f"- {r['kind']}, {LABEL[r['tool']]}{limit_text}, round {r['rep']}: exit {r['exit']}: "
                      f"`{last[0] if last else '(no log)'}`")

    # goals
    md.append("\n## The issue's goals (issue 16)\n")
    md.append("| reference | qmer wall / KMC wall (<= 0.5) | qmer peak RSS / KMC peak RSS (< 1) "
              "| qmer peak RSS / qmer index (<= 1.5) | every limit honoured, same index |\n|---|---|---|---|---|")
    for kind in kinds:
        q, k = per[(kind, "qmer")], per[(kind, "kmc")]
        rw, rr, ri = ratio(q["wall"], k["wall"]), ratio(q["rss"], k["rss"]), ratio(q["rss"], q["out"])
        lk = limit_ok.get(kind)
        md.append(
            f"| {kind} | {fmt_ratio(rw)} {met(None if rw is None else rw <= GOAL_WALL_VS_KMC)} "
            f"| {fmt_ratio(rr)} {met(None if rr is None else rr < GOAL_RSS_VS_KMC)} "
            f"| {fmt_ratio(ri)} {met(None if ri is None else ri <= GOAL_RSS_VS_INDEX)} "
            f"| {met(lk)} |"
        )
    if size < 1e9:
        md.append(f"\nAt {bp(size)} the goals are indicative only: they are set for 2.4 Gbp, and a "
                  "small run's peak RSS is dominated by fixed costs (libraries, buffers, threads).")
    text = "\n".join(md) + "\n"
    (out / "summary.md").write_text(text)
    print(text)
    write_run_claims(out)
    plot(out, rows, kinds, per, size, meta)


def plot(out, rows, kinds, per, size, meta):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = sorted({r["limit_x"] for r in rows if r["tool"] == "qmer" and r["limit_x"] != "NA"}, key=float)
    bars = [("qmer", None), *[("qmer", x) for x in xs], ("kmc", None), ("jellyfish", None)]
    colors = {"qmer": "#1f77b4", "kmc": "#d62728", "jellyfish": "#2ca02c"}

    def value(kind, tool, x, what):
        if x is None:
            return per[(kind, tool)][what]
        rs = [r for r in rows if r["kind"] == kind and r["tool"] == tool and r["limit_x"] == x and r["exit"] == "0"]
        f = {"wall": lambda r: float(r["wall_s"]), "rss": lambda r: float(r["max_rss_bytes"])}[what]
        return statistics.median(f(r) for r in rs) if rs else None

    big = max((float(r["max_rss_bytes"]) for r in rows), default=0) >= 2**30
    rss_scale, rss_unit = (2**30, "GiB") if big else (2**20, "MiB")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / len(bars)
    for ax, what, scale, ylabel in ((axes[0], "wall", 1, "wall time (s)"), (axes[1], "rss", rss_scale, f"peak RSS ({rss_unit})")):
        for i, (tool, x) in enumerate(bars):
            label = LABEL[tool] if x is None else f"qmer --max-memory {x}x index"
            ys = [value(k, tool, x, what) for k in kinds]
            pos = [j + (i - (len(bars) - 1) / 2) * width for j in range(len(kinds))]
            hs = [0 if y is None else y / scale for y in ys]
            b = ax.bar(pos, hs, width, label=label, color=colors[tool], alpha=1.0 if x is None else 0.35 + 0.15 * xs.index(x),
                       hatch=None if x is None else "//", edgecolor="white" if x is None else colors[tool])
            for rect, y, k in zip(b, ys, kinds):
                if y is None:
                    ax.annotate("failed" if x is None else "refused", (rect.get_x() + rect.get_width() / 2, 0),
                                ha="center", va="bottom", fontsize=7, rotation=90)
                if what == "rss" and x is not None:  # the limit itself, a black tick over its bar
                    lim = next((float(r["limit_bytes"]) for r in rows
                                if r["kind"] == k and r["tool"] == "qmer" and r["limit_x"] == x), None)
                    if lim is not None:
                        ax.hlines(lim / scale, rect.get_x(), rect.get_x() + rect.get_width(), colors="black", linewidth=2)
        if what == "rss":
            for j, k in enumerate(kinds):
                idx = per[(k, "qmer")]["out"]
                if idx is not None:
                    lo = j - 0.4
                    ax.hlines(idx / scale, lo, lo + (1 + len(xs)) * width, colors="black", linestyles="dashed", linewidth=1)
            ax.set_title("dashed: qmer's index file; black ticks: the --max-memory limits", fontsize=8)
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels([f"{k} {bp(size)}" for k in kinds])
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Building an index of canonical 31-mers, {meta.get('threads', '?')} threads "
                 f"(qmer {meta.get('git_head', '?')}, median of {meta.get('reps', '?')})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "build.png", dpi=120)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--same-index":
        print(1 if same_index(sys.argv[2], sys.argv[3]) else 0)
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        summarize(Path(sys.argv[1]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--claims-only":
        write_run_claims(Path(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
