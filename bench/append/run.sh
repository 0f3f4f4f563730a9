#!/usr/bin/env bash
# An index grown by --append (issue 16: an append must not fall back to inserting k-mer by k-mer;
# issue 15, item 4: an index grown 64x answers at 0.7x or better of a one-level index). See
# bench/append/README.md for what it measures and why.
#
# usage: bench/append/run.sh [--reps N] [--reads N] [--threads N] [--data DIR] [--qmer PATH]
#                            [--out DIR]
#   --reps N      alternated query runs per index (default 5)
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
while [[ $# -gt 0 ]]; do
    case "$1" in
        --reps) reps=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --data) data=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        --onto) onto=$2; shift ;;
        -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ -n "$out" ]] || out=$here/results/$(date +%F)
log() { echo "[append $(date +%T)] $*" >&2; }
for f in "$data/big.fa" "$data/reads_1000000/mix.fq" "$qmer" /usr/bin/time; do
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
head -n $((4 * nreads)) "$data/reads_1000000/mix.fq" > "$scratch/reads.fq"
"$qmer" index -q -t "$threads" -o "$scratch/sorted.qmer" "$scratch/seed.fa"
cp "$scratch/sorted.qmer" "$scratch/inserted.qmer"

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
# The sorted pass (it fits the default memory limit), then the inserts: the same append under a
# limit whose half the sorted pass does not fit (17 bytes a k-mer position, ~1.7 GB here).
build sorted "sorted append" --append -o "$scratch/sorted.qmer" "$data/big.fa"
build inserted "inserts (--max-memory 3G)" --append --max-memory 3G -o "$scratch/inserted.qmer" "$data/big.fa"
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
    for name in one sorted inserted; do
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
    for name in one sorted inserted $([[ -n "$onto" ]] && echo onto); do
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
