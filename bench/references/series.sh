#!/usr/bin/env bash
# A series of many-reference indexes of one total size (issue 56, 5b): 1, 10, 100, 1,000 and
# 10,000 seeded synthetic strains of synthetic species (bench/references/series.py), each as one
# many-reference index and as a plain index of the same files; build time, bits per k-mer, class
# count and query time of simulated reads against both. See bench/references/README.md.
#
# usage: bench/references/series.sh [--counts "1 10 100 1000 10000"] [--total BASES]
#                                   [--reads N] [--threads N] [--work DIR] [--qmer PATH] [--out DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
counts="1 10 100 1000 10000"
total=20000000
nreads=200000
threads=2
work=$here/work/series
qmer=$repo/build/release/qmer
out=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --counts) counts=$2; shift ;;
        --total) total=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "series.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ -n "$out" ]] || out=$(unused_results_dir "$here/results/series-$(date +%F)")
mkdir -p "$work" "$out"
log() { echo "[series $(date +%T)] $*" >&2; }

csv=$out/series.csv
echo "references,run,wall_s,cpu_s,peak_rss_kib,index_bytes,bits_per_kmer,classes,class_id_bits,escaped,load" > "$csv"
timed() {  # timed N RUN INDEX CMD...: one row (the index's size and classes where it exists)
    local n=$1 run=$2 index=$3
    shift 3
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$@" 2> "$work/err.txt" ||
        { cat "$work/err.txt" >&2; exit 1; }
    read -r wall user sys rss < "$work/time.txt"
    local bytes bits classes idbits escaped
    bytes=$(stat -c %s "$index")
    read -r bits classes idbits escaped < <("$qmer" info --json "$index" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["bits_per_kmer"], j.get("classes", 0), j.get("class_id_bits", 0), j.get("escaped_fingerprints", 0))')
    echo "$n,$run,$wall,$(echo "$user + $sys" | bc),$rss,$bytes,$bits,$classes,$idbits,$escaped,$load" >> "$csv"
    log "$n references, $run: $wall s"
}

for n in $counts; do
    d=$work/n$n
    if [[ ! -s $d/reads.fq ]]; then
        log "making $n references of $total bases in all"
        rm -rf "$d"
        python3 "$here/series.py" --references "$n" --total "$total" --reads "$nreads" --out "$d"
    fi
    cat "$d/reads.fq" > /dev/null
    # The plain index's input: every reference in one FASTA (untimed; 10,000 files would not fit
    # one command line).
    [[ -s $d/all.fa ]] || (cd "$d" && cut -f2 refs.tsv | xargs cat > all.fa)
    timed "$n" index_plain "$d/plain.qmer" \
        "$qmer" index -q -t "$threads" -o "$d/plain.qmer" "$d/all.fa"
    timed "$n" index_many "$d/many.qmer" \
        "$qmer" index -q -t "$threads" -o "$d/many.qmer" --references "$d/refs.tsv"
    for rep in 1 2; do
        timed "$n" "query_plain_$rep" "$d/plain.qmer" \
            "$qmer" query -q -t "$threads" -o /dev/null "$d/plain.qmer" "$d/reads.fq"
        timed "$n" "query_many_$rep" "$d/many.qmer" \
            "$qmer" query -q -t "$threads" -o "$d/many.tsv" "$d/many.qmer" "$d/reads.fq"
    done
    python3 "$here/score.py" --sheet "$d/refs.tsv" --many "$d/many.tsv" > "$out/accuracy_n$n.md"
done
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$repo" rev-parse --short HEAD)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "total: $total bases; reads: $nreads, 150 bp, 0.5% substitutions; threads: $threads"
} > "$out/meta.txt"
column -s, -t "$csv"
