#!/usr/bin/env bash
# What answering from the shared mapping costs against the private copy a query makes by default
# (README, "The index file": a query maps the index when another query answers from it or a copy
# would not fit). For each reference size: a random reference (bench/scale/make_data.cpp), its
# default index, reads half from it and half random; then `qmer query` with the private copy and
# with --mmap, alternated, --reps times each, the page cache warm (the file read once before).
# Prints one CSV line per run and the medians' ratio per size.
#
# usage: bench/query/mapped.sh [--sizes "50000000 500000000"] [--reads N] [--reps N] [--threads N]
#                              [--qmer PATH] [--work DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
sizes="50000000 500000000" reads=1000000 reps=3 threads=2
qmer=$repo/build/release/qmer work=$repo/bench/query/work
while [[ $# -gt 0 ]]; do
    case "$1" in
        --sizes) sizes=$2; shift 2 ;;
        --reads) reads=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --qmer) qmer=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        *) echo "mapped.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
log() { echo "mapped.sh: $*" >&2; }
mkdir -p "$work/bin"
gen=$work/bin/make_data
[[ -x "$gen" && "$gen" -nt "$repo/bench/scale/make_data.cpp" ]] ||
    g++ -O2 -std=c++20 -o "$gen" "$repo/bench/scale/make_data.cpp"

{
echo "size,mode,rep,wall_seconds,peak_rss_kib"
for size in $sizes; do
    d=$work/$size
    mkdir -p "$d"
    if [[ ! -s $d/ref.qmer ]]; then
        log "making $size bp of reference, its index and $reads reads"
        "$gen" --size "$size" --seed 7 --ref "$d/ref.fa" 2> /dev/null
        "$gen" --size "$size" --seed 7 --reads $((reads / 2)) --present "$d/present.fq" 2> /dev/null
        "$gen" --reads $((reads / 2)) --absent "$d/absent.fq" --absent-seed 99 2> /dev/null
        cat "$d/present.fq" "$d/absent.fq" > "$d/reads.fq"
        rm -f "$d/present.fq" "$d/absent.fq"
        "$qmer" index -q -t "$threads" -o "$d/ref.qmer" "$d/ref.fa"
        rm -f "$d/ref.fa"
    fi
    cat "$d/ref.qmer" "$d/reads.fq" > /dev/null  # warm the page cache
    for rep in $(seq "$reps"); do
        for mode in private mapped; do
            flag=()
            [[ $mode == mapped ]] && flag=(--mmap)
            /usr/bin/time -f "%e %M" -o "$d/time.txt" \
                "$qmer" query -q -t "$threads" "${flag[@]}" -o /dev/null "$d/ref.qmer" "$d/reads.fq"
            read -r wall rss < "$d/time.txt"
            echo "$size,$mode,$rep,$wall,$rss"
        done
    done
done
} | tee "$work/runs.csv"
python3 - "$work/runs.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for size in dict.fromkeys(r["size"] for r in rows):
    m = {mode: statistics.median(float(r["wall_seconds"]) for r in rows
                                 if r["size"] == size and r["mode"] == mode)
         for mode in ("private", "mapped")}
    print(f"size {size}: private {m['private']:.2f} s, mapped {m['mapped']:.2f} s, "
          f"mapped / private {m['mapped'] / m['private']:.2f}x", file=sys.stderr)
PY
