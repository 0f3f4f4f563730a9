#!/usr/bin/env bash
# Many references in one index (issue 56): the 16 strains of 4 species in Debian's
# ragout-examples as one many-reference index, against a plain index of the same genomes and
# against 16 `-x` indexes, on simulated reads of known origin. See bench/references/README.md.
#
# usage: bench/references/run.sh [--reads N] [--threads N] [--work DIR] [--qmer PATH] [--out DIR]
#                                [--no-install]
#   --reads N     simulated reads per strain (default 20,000: 320,000 in all), 150 bp, 0.5%
#                 substitutions, either strand, seeded
#   --threads N   threads (default 2)
#   --work DIR    data and scratch (default bench/references/work, git-ignored; data is reused)
#   --qmer PATH   the qmer binary (default build/release/qmer)
#   --out DIR     results folder (default bench/references/results/<date>)
#   --no-install  do not apt-get install missing packages
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
threads=2
nreads=20000
install=1
work=$here/work
qmer=$repo/build/release/qmer
out=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        --no-install) install=0 ;;
        -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ -n "$out" ]] || out=$(unused_results_dir "$here/results/$(date +%F)")
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
log() { echo "[references $(date +%T)] $*" >&2; }

ensure_packages run.sh "$install" ragout-examples time python3
[[ -x "$qmer" ]] || { echo "run.sh: no qmer at $qmer (build the release preset first)" >&2; exit 1; }

# ---------------------------------------------------------------- data: 16 strains, 4 species
ex=/usr/share/doc/ragout/examples
sheet=$work/strains.tsv
: > "$sheet.part"
for species in E.Coli H.Pylori S.Aureus V.Cholerae; do
    for f in "$ex/$species"/references/*.fasta.gz; do
        name=$(basename "$f" .fasta.gz)
        printf '%s\t%s\t%s\n' "$name" "$f" "$species" >> "$sheet.part"
    done
done
mv "$sheet.part" "$sheet"
[[ $(wc -l < "$sheet") -eq 16 ]] || { echo "run.sh: expected 16 strains in $ex" >&2; exit 1; }
reads=$work/reads_$nreads.fq
if [[ ! -s $reads ]]; then
    log "simulating $nreads reads per strain"
    python3 "$here/simulate.py" --sheet "$sheet" --reads "$nreads" --out "$reads.part"
    mv "$reads.part" "$reads"
fi
cat "$reads" > /dev/null  # warm the page cache

# ---------------------------------------------------------------- timed runs
perf=$out/performance.csv
echo "run,wall_s,cpu_s,peak_rss_kib,index_bytes,load" > "$perf"
timed() {  # timed RUN INDEX_BYTES CMD...
    local run=$1 bytes=$2
    shift 2
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$@" 2> "$work/$run.err" ||
        { cat "$work/$run.err" >&2; exit 1; }
    read -r wall user sys rss < "$work/time.txt"
    echo "$run,$wall,$(echo "$user + $sys" | bc),$rss,$bytes,$load" >> "$perf"
    log "$run: $wall s"
}
size_of() { stat -c %s "$@" | paste -sd+ | bc; }

cut -f2 "$sheet" > "$work/all.txt"
timed index_plain 0 "$qmer" index -q -t "$threads" -o "$work/plain.qmer" $(cat "$work/all.txt")
timed index_many 0 "$qmer" index -q -t "$threads" -o "$work/many.qmer" --references "$sheet"
xs=()
while IFS=$'\t' read -r name file group; do
    "$qmer" index -q -t "$threads" -o "$work/x_$name.qmer" "$file"
    xs+=(-x "$name=$work/x_$name.qmer")
done < "$sheet"
plain_bytes=$(size_of "$work/plain.qmer")
many_bytes=$(size_of "$work/many.qmer")
x_bytes=$(size_of "$work"/x_*.qmer)
for rep in 1 2; do
    timed "query_plain_$rep" "$plain_bytes" "$qmer" query -q -t "$threads" -o "$work/plain.tsv" \
        "$work/plain.qmer" "$reads"
    timed "query_many_$rep" "$many_bytes" "$qmer" query -q -t "$threads" -o "$work/many.tsv" \
        --summary "$out/many-summary.json" "$work/many.qmer" "$reads"
    timed "query_x16_$rep" "$x_bytes" "$qmer" query -q -t "$threads" -o "$work/x16.tsv" \
        "${xs[@]}" "$reads"
done
"$qmer" info --json "$work/many.qmer" > "$out/many-info.json"

# Seal (BBTools; Debian's bbmap) where it is installed: ambiguous=toss (a read tied between
# references goes nowhere) and ambiguous=all (to each of them), k = 31, every strain a reference.
seal=/usr/share/bbmap/seal.sh
seal_args=()
if [[ -x $seal ]]; then
    refs=$(cut -f2 "$sheet" | paste -sd,)
    for ambig in toss all; do
        rm -rf "$work/seal_$ambig"
        mkdir -p "$work/seal_$ambig"
        timed "seal_$ambig" 0 "$seal" -Xmx6g in="$reads" ref="$refs" k=31 threads="$threads" \
            ambiguous="$ambig" refnames=t pattern="$work/seal_$ambig/%.fq" \
            outu="$work/seal_$ambig/none.fq" overwrite=t
        # Seal's own processing time (its table is built at every run): a row of its own.
        processing=$(awk '/^Processing time:/ { print $3 }' "$work/seal_$ambig.err" | tail -1)
        echo "seal_${ambig}_processing,$processing,,,0,$(cut -d' ' -f1 /proc/loadavg)" >> "$perf"
    done
    seal_args=(--seal-toss "$work/seal_toss" --seal-all "$work/seal_all" --reads "$reads")
fi

# ---------------------------------------------------------------- accuracy
python3 "$here/score.py" --sheet "$sheet" --many "$work/many.tsv" --panel "$work/x16.tsv" \
    "${seal_args[@]}" > "$out/accuracy.md"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$repo" rev-parse --short HEAD)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "reads: $nreads per strain, 150 bp, 0.5% substitutions"
    echo "threads: $threads"
} > "$out/meta.txt"
cat "$out/accuracy.md"
column -s, -t "$perf"
