#!/usr/bin/env bash
# Super-k-mer locality at human scale: the same reference indexed with the minimizer-local hash
# scheme (qmer's default) and with --plain-hash, queried with the same reads, interleaved in one
# run so that the ratios compare like with like. Uses the data bench/scale/run.sh generates (run it
# once first with the same --size, --small, --reads and --seed); see bench/scale/README.md.
#
# usage: bench/scale/locality.sh [--size BP] [--small BP] [--reads N] [--threads N] [--reps N]
#                                [--seed S] [--work DIR] [--qmer PATH] [--out FILE]
# Writes a CSV (default bench/scale/results/<date>-locality.csv):
#   size_bp,scheme,case,rep,wall_s,cpu_s,max_rss_bytes,index_bytes,kmers,hits
# case: index (the build), absent / present (500 k reads each by default), one (a single read: the
# time to the first answer, index load included).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
size=2400000000
small=49000000
nreads=500000
threads=2
reps=2
seed=1
work=$here/work
qmer=$repo/build/release/qmer
out=$here/results/$(date +%F)-locality.csv
while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift ;;
        --small) small=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --seed) seed=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "locality.sh: unknown argument '$1' (--help lists the options)" >&2; exit 2 ;;
    esac
    shift
done
[[ -x "$qmer" ]] || { echo "locality.sh: no qmer binary at '$qmer'" >&2; exit 1; }
absent=$work/data/absent-r$nreads-s$((seed + 1000003))/absent.fq
mkdir -p "$(dirname "$out")" "$work/index" "$work/scratch"
tv=$work/scratch/locality-time.txt
log() { echo "[locality $(date +%T)] $*" >&2; }

# timed CMD...: /usr/bin/time -v around CMD (stdout to $work/scratch/locality.out); sets wall, cpu,
# rss.
timed() {
    local t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$tv" "$@" > "$work/scratch/locality.out" 2> "$work/scratch/locality.err" \
        || { cat "$work/scratch/locality.err" >&2; exit 1; }
    local t1=$EPOCHREALTIME
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 * 1024 }' "$tv")
}
# The k-mers and hits of the last query's TSV.
totals() { awk -F'\t' '!/^#/ && $1 != "read_id" { k += $2; h += $3 } END { printf "%d,%d", k, h }' "$work/scratch/locality.out"; }

echo "size_bp,scheme,case,rep,wall_s,cpu_s,max_rss_bytes,index_bytes,kmers,hits" > "$out"
for bp in "$small" "$size"; do
    ddir=$work/data/random-$bp-s$seed
    ref=$ddir/ref.fa
    present=$ddir/reads-r$nreads-e0/present.fq
    one=$ddir/reads-r$nreads-e0/one.fq
    for f in "$ref" "$present" "$one" "$absent"; do
        [[ -s "$f" ]] || { echo "locality.sh: no $f: run bench/scale/run.sh --size $size --small $small --reads $nreads --seed $seed first" >&2; exit 1; }
    done
    declare -A idx=([local]=$work/index/locality-local-$bp.qmer [plain]=$work/index/locality-plain-$bp.qmer)
    for scheme in local plain; do
        extra=()
        [[ $scheme == plain ]] && extra=(--plain-hash)
        rm -f "${idx[$scheme]}"
        cat "$ref" > /dev/null
        log "index $scheme, $bp bp"
        timed "$qmer" index -q -t "$threads" "${extra[@]}" -o "${idx[$scheme]}" "$ref"
        echo "$bp,$scheme,index,1,$wall,$cpu,$rss,$(stat -c %s "${idx[$scheme]}"),," >> "$out"
    done
    for rep in $(seq "$reps"); do
        for scheme in plain local; do
            cat "${idx[$scheme]}" > /dev/null  # a warm page cache, as for every query
            for case in one absent present; do
                reads=$one
                [[ $case == absent ]] && reads=$absent
                [[ $case == present ]] && reads=$present
                log "query $scheme $case, $bp bp, rep $rep"
                timed "$qmer" query -q -t "$threads" -o - "${idx[$scheme]}" "$reads"
                echo "$bp,$scheme,$case,$rep,$wall,$cpu,$rss,$(stat -c %s "${idx[$scheme]}"),$(totals)" >> "$out"
            done
        done
    done
done
log "results in $out"
column -t -s, "$out" >&2
