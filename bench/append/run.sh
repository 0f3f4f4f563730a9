#!/usr/bin/env bash
# An index grown by --append (issue 16: an append must not fall back to inserting k-mer by k-mer;
# issue 15, item 4: an index grown 64x answers at 0.7x or better of a one-level index). See
# bench/append/README.md for what it measures and why.
#
# usage: bench/append/run.sh [--reps N] [--reads N] [--threads N] [--data DIR] [--qmer PATH]
#                            [--out DIR] [--onto INDEX] [--spilled [--ref FASTA] [--limit SIZE]]
#   --reps N      alternated query runs per index (default 5); with --spilled, alternated pairs
#   --reads N     mixed reads queried (default 300,000: the first N of the peers' mix.fq)
#   --threads N   threads of every qmer run (default 2)
#   --data DIR    the peers benchmark's data (default bench/peers/work/data: big.fa and
#                 reads_1000000/mix.fq, made by `bench/peers/run.sh --data-only`)
#   --qmer PATH   the qmer binary (default build/release/qmer)
#   --out DIR     results folder (default bench/append/results/<date>)
#   --onto INDEX  also append big.fa to a copy of INDEX (e.g. bench/scale/run.sh's 2.4 Gbp
#                 index, bench/scale/work/index/random-2400000000-s1.qmer: a host-sized append)
#                 and check the result against big.fa's exact k-mer set (needs its size free on
#                 the disk of --out's scratch folder)
#   --spilled     only this: a fresh build of --ref against the append of --ref onto the seed
#                 index through the scratch file (--max-memory --limit), alternated --reps times,
#                 the same threads and limit for both: wall, CPU and peak RSS, and their ratio
#   --ref FASTA   the reference of --spilled (default big.fa; e.g. a host genome)
#   --limit SIZE  the --max-memory of --spilled (default 1G: below what big.fa's hashes take in
#                 memory, ~3.2 GB, so the append goes through the scratch file)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
reps=5
nreads=300000
threads=2
data=$repo/bench/peers/work/data
qmer=$repo/build/release/qmer
out=
onto=
spilled=
ref=
limit=1G
while [[ $# -gt 0 ]]; do
    case "$1" in
        --reps) reps=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --data) data=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        --onto) onto=$2; shift ;;
        --spilled) spilled=1 ;;
        --ref) ref=$2; shift ;;
        --limit) limit=$2; shift ;;
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ -n "$out" ]] || out=$here/results/$(date +%F)
[[ -n "$ref" ]] || ref=$data/big.fa
log() { echo "[append $(date +%T)] $*" >&2; }
for f in "$data/big.fa" $([[ -z "$spilled" ]] && echo "$data/reads_1000000/mix.fq") "$qmer" /usr/bin/time; do
    [[ -e "$f" ]] || { echo "run.sh: missing $f (bench/peers/run.sh --data-only makes the data)" >&2; exit 1; }
done
exact=$repo/bench/peers/work/bin/exact_check
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git_head=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)

# The seed: big.fa's first 520 kB (~0.5 M k-mers); the append adds the whole of big.fa (97.6 Mbp,
# 33 M distinct k-mers: ~64x the seed), which the inserts push as 6 levels, the sorted pass as one sized level.
head -c 520000 "$data/big.fa" > "$scratch/seed.fa"

# --spilled: a fresh build of the reference against its append onto the seed index through the
# scratch file, pair after pair (which runs first alternates), the same threads and limit.
if [[ -n "$spilled" ]]; then
    [[ -e "$ref" ]] || { echo "run.sh: missing $ref" >&2; exit 1; }
    "$qmer" index -q -t "$threads" -o "$scratch/seed.qmer" "$scratch/seed.fa"
    mkdir -p "$scratch/tmp"
    scsv=$out/spilled.csv
    echo "rep,run,wall_s,user_s,sys_s,max_rss_kb,scratch" > "$scsv"
    timed() {  # timed REP RUN ARGS...: one qmer index run, a row of spilled.csv
        local rep=$1 run=$2
        shift 2
        log "$run $rep: qmer index $*"
        /usr/bin/time -f "%e %U %S %M" -o "$scratch/time" "$qmer" index -t "$threads" \
            --max-memory "$limit" --temp-dir "$scratch/tmp" "$@" 2> "$scratch/err"
        local via=no
        grep -q "went through a scratch file" "$scratch/err" && via=yes
        echo "$rep,$run,$(tr ' ' ',' < "$scratch/time"),$via" >> "$scsv"
    }
    fresh() { timed "$1" fresh -o "$scratch/fresh.qmer" "$ref"; }
    append() {
        cp "$scratch/seed.qmer" "$scratch/grown.qmer"
        timed "$1" append --append -o "$scratch/grown.qmer" "$ref"
        grep -q "went through a scratch file" "$scratch/err" ||
            log "warning: the append did not take the scratch file (raise the reference or lower --limit)"
    }
    for rep in $(seq "$reps"); do
        if (( rep % 2 )); then fresh "$rep"; append "$rep"; else append "$rep"; fresh "$rep"; fi
    done
    {
        echo "# Spilled append benchmark: $(date -u '+%F %T') UTC, qmer $git_head"
        echo
        echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end; $threads threads; --max-memory $limit; reference $(basename "$ref") ($(stat -c %s "$ref") bytes) onto a seed of its first 520 kB's k-mers, $reps alternated pairs."
        echo
        python3 - "$scsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(run, key):
    return statistics.median(float(r[key]) for r in rows if r["run"] == run)
print("| run | wall, median | CPU (user + sys), median | peak RSS, largest | scratch file |")
print("|---|---|---|---|---|")
for run in ("fresh", "append"):
    cpu = statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in rows if r["run"] == run)
    rss = max(int(r["max_rss_kb"]) for r in rows if r["run"] == run) / 1024
    via = ",".join(sorted({r["scratch"] for r in rows if r["run"] == run}))
    print(f"| {run} | {med(run, 'wall_s'):.2f} s | {cpu:.2f} s | {rss:.0f} MiB | {via} |")
ratios = [float(a["wall_s"]) / float(f["wall_s"]) for a, f in
          zip([r for r in rows if r["run"] == "append"], [r for r in rows if r["run"] == "fresh"])]
print()
print(f"append / fresh build, wall: median {statistics.median(ratios):.2f}x "
      f"(pairs: {', '.join(f'{x:.2f}' for x in ratios)}; goal <= 1.5x)")
PY
    } > "$out/spilled.md"
    cat "$out/spilled.md"
    exit 0
fi

head -n $((4 * nreads)) "$data/reads_1000000/mix.fq" > "$scratch/reads.fq"
"$qmer" index -q -t "$threads" -o "$scratch/sorted.qmer" "$scratch/seed.fa"
cp "$scratch/sorted.qmer" "$scratch/spilled.qmer"

csv=$out/builds.csv
echo "index,how,wall_s,user_s,sys_s,max_rss_kb,levels,kmers,bytes" > "$csv"
# build NAME HOW ARGS...: one timed qmer index run, a row of builds.csv.
build() {
    local name=$1 how=$2
    shift 2
    log "$name: qmer index $*"
    /usr/bin/time -f "%e %U %S %M" -o "$scratch/time" "$qmer" index -q -t "$threads" "$@"
    local info levels kmers
    info=$("$qmer" info --json "$scratch/$name.qmer")
    levels=$(grep -o '"levels": [0-9]*' <<< "$info" | head -1 | grep -o '[0-9]*$')
    kmers=$(grep -o '"kmers": [0-9]*' <<< "$info" | head -1 | grep -o '[0-9]*$')
    echo "$name,$how,$(tr ' ' ',' < "$scratch/time"),$levels,$kmers,$(stat -c %s "$scratch/$name.qmer")" >> "$csv"
}
# The sorted pass with the new k-mers' hashes in memory (they fit the default memory limit), then
# the same append under a limit they do not fit in memory (32 bytes a k-mer position, ~3.2 GB
# here): through a scratch file. The same index either way.
build sorted "sorted append" --append -o "$scratch/sorted.qmer" "$data/big.fa"
mkdir -p "$scratch/tmp"
build spilled "sorted append through a scratch file (--max-memory 1G)" --append --max-memory 1G \
    --temp-dir "$scratch/tmp" -o "$scratch/spilled.qmer" "$data/big.fa"
build one "one qmer index run" -o "$scratch/one.qmer" "$scratch/seed.fa" "$data/big.fa"
if [[ -n "$onto" ]]; then
    cp "$onto" "$scratch/onto.qmer"
    build onto "sorted append onto $(basename "$onto") ($(stat -c %s "$onto") bytes)" \
        --append -o "$scratch/onto.qmer" "$data/big.fa"
fi

# Queries, alternated: each index in turn, reps times; wall time of the whole command.
qcsv=$out/queries.csv
echo "index,rep,wall_s" > "$qcsv"
for rep in $(seq "$reps"); do
    for name in one sorted spilled; do
        start=$(date +%s.%N)
        "$qmer" query -t "$threads" -o "$scratch/$name.tsv" "$scratch/$name.qmer" "$scratch/reads.fq" 2> /dev/null
        end=$(date +%s.%N)
        echo "$name,$rep,$(echo "$end - $start" | bc)" >> "$qcsv"
    done
done
log "queries done"

# No false negative: each read's kmers and hits against an exact k-mer set (the seed is part of
# big.fa, so big.fa's k-mers are the exact set; for --onto, a subset of the index's k-mers, so
# `hits` must still never fall below it, and the FPR column counts the other index's k-mers too).
ecsv=$out/exact.csv
echo "index,kmers_mismatch,hits_below_exact,kmer_fpr" > "$ecsv"
if [[ -x "$exact" ]]; then
    for name in one sorted spilled $([[ -n "$onto" ]] && echo onto); do
        [[ -e "$scratch/$name.tsv" ]] || "$qmer" query -t "$threads" -o "$scratch/$name.tsv" "$scratch/$name.qmer" "$scratch/reads.fq" 2> /dev/null
        "$exact" -k 31 -p 0.001 -r "$data/big.fa" "$scratch/reads.fq" "$scratch/$name.tsv" > "$scratch/exact.txt"
        get() { sed -n "s/^$1=//p" "$scratch/exact.txt"; }
        echo "$name,$(get kmers_mismatch),$(get hits_below_exact),$(get qmer_kmer_fpr)" >> "$ecsv"
    done
else
    log "no $exact (bench/peers/run.sh --data-only builds it): exact-set check skipped"
fi

{
    echo "# Append benchmark: $(date -u '+%F %T') UTC, qmer $git_head"
    echo
    echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; $threads threads; $nreads mixed reads, $reps alternated runs per index."
    echo
    python3 "$here/summarize.py" "$csv" "$qcsv" "$ecsv"
} > "$out/results.md"
cat "$out/results.md"
