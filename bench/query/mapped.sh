#!/usr/bin/env bash
# What answering from the shared mapping costs against the private copy a query makes by default
# (README, "The index file": a query maps the index when another query answers from it or a copy
# would not fit). For each reference size: a random reference (bench/scale/make_data.cpp), its
# default index, reads half from it and half random; then `qmer query` with the private copy and
# with --mmap, alternated, --reps times each, the page cache warm (the file read once before).
# Every size is queried with every read count of --reads. Writes runs.csv (one line per run, also
# printed), meta.txt, and through summarize.py summary.md and claims.tsv (the run's row of
# doc/performance.md) into --out.
#
# usage: bench/query/mapped.sh [--sizes "50000000 500000000"] [--reads "N ..."] [--reps N]
#                              [--threads N] [--qmer PATH] [--work DIR] [--out DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
sizes="50000000 500000000" read_counts=1000000 reps=3 threads=2
qmer=$repo/build/release/qmer work=$repo/bench/query/work
out=$repo/bench/query/results/$(date -u +%Y-%m-%dT%H%M%SZ)
while [[ $# -gt 0 ]]; do
    case "$1" in
        --sizes) sizes=$2; shift 2 ;;
        --reads) read_counts=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --qmer) qmer=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "mapped.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
log() { echo "mapped.sh: $*" >&2; }
mkdir -p "$work/bin" "$out"
gen=$work/bin/make_data
[[ -x "$gen" && "$gen" -nt "$repo/bench/scale/make_data.cpp" ]] ||
    g++ -O2 -std=c++20 -o "$gen" "$repo/bench/scale/make_data.cpp"

{
    echo "date=$(date -u '+%F %T %Z')"
    echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "nproc=$(nproc)"
    echo "commit=$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet -- core io app || echo +dirty)"
    echo "threads=$threads"
    echo "reps=$reps"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/meta.txt"

{
echo "size,reads,mode,rep,wall_seconds,peak_rss_kib,index_bytes"
for size in $sizes; do
    d=$work/$size
    mkdir -p "$d"
    if [[ ! -s $d/ref.qmer ]]; then
        log "making $size bp of reference and its index"
        "$gen" --size "$size" --seed 7 --ref "$d/ref.fa" 2> /dev/null
        "$qmer" index -q -t "$threads" -o "$d/ref.qmer" "$d/ref.fa"
        rm -f "$d/ref.fa"
    fi
    for reads in $read_counts; do
        # The reads are made per count: a file of another count must never stand in for them.
        fq=$d/reads-$reads.fq
        if [[ ! -s $fq ]]; then
            log "making $reads reads for $size bp"
            "$gen" --size "$size" --seed 7 --reads $((reads / 2)) --present "$d/present.fq" 2> /dev/null
            "$gen" --reads $((reads - reads / 2)) --absent "$d/absent.fq" --absent-seed 99 2> /dev/null
            cat "$d/present.fq" "$d/absent.fq" > "$fq"
            rm -f "$d/present.fq" "$d/absent.fq"
        fi
        cat "$d/ref.qmer" "$fq" > /dev/null  # warm the page cache
        for rep in $(seq "$reps"); do
            for mode in private mapped; do
                flag=()
                [[ $mode == mapped ]] && flag=(--mmap)
                /usr/bin/time -f "%e %M" -o "$d/time.txt" \
                    "$qmer" query -q -t "$threads" "${flag[@]}" -o /dev/null "$d/ref.qmer" "$fq"
                read -r wall rss < "$d/time.txt"
                echo "$size,$reads,$mode,$rep,$wall,$rss,$(stat -c %s "$d/ref.qmer")"
            done
        done
    done
done
} | tee "$out/runs.csv"
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"
python3 "$repo/bench/query/summarize.py" "$out"
cat "$out/summary.md" >&2
