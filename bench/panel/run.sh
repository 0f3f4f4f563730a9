#!/usr/bin/env bash
# Screening panels (issue 17, item 6): qmer's panel query against BBTools' Seal and Kraken 2 on the
# same simulated reads, in one run: per-genome category accuracy, reads/s, peak memory and index
# size. See bench/panel/README.md.
#
# usage: bench/panel/run.sh [--reads N] [--threads N] [--work DIR] [--qmer PATH] [--out DIR]
#                           [--no-install]
#   --reads N     ART reads per panel genome (default 250,000; the negatives as many again)
#   --threads N   threads for every tool (default 2)
#   --work DIR    data and scratch (default bench/panel/work, git-ignored; data is reused)
#   --qmer PATH   the qmer binary (default build/release/qmer)
#   --out DIR     results folder (default bench/panel/results/<date>)
#   --no-install  do not apt-get install missing packages
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
threads=2
nreads=250000
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
log() { echo "[panel $(date +%T)] $*" >&2; }

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(bbmap kraken2 art-nextgen-simulation-tools time ragout-examples abacas-examples)
ensure_packages run.sh "$install" "${packages[@]}"
seal=/usr/share/bbmap/seal.sh  # Debian's bbmap puts seal.sh beside the jar, not on PATH
[[ -x "$qmer" ]] || { echo "run.sh: no qmer at $qmer (build the release preset first)" >&2; exit 1; }

# ---------------------------------------------------------------- 2. data
# Four species of Debian's example-data packages, one genome each; negatives from a fifth.
ex=/usr/share/doc
declare -A sources=(
    [ecoli]=$ex/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz
    [hpylori]=$ex/ragout/examples/H.Pylori/references/G27.fasta.gz
    [saureus]=$ex/ragout/examples/S.Aureus/references/COL.fasta.gz
    [vcholerae]=$ex/ragout/examples/V.Cholerae/references/O395.fasta.gz
    [ssuis]=$ex/abacas-examples/SS_SC84.dna.gz
)
genomes=(ecoli hpylori saureus vcholerae)
declare -A seeds=([ecoli]=1 [hpylori]=2 [saureus]=3 [vcholerae]=4 [ssuis]=5)
data=$work/data
mkdir -p "$data"
reads=$data/reads_$nreads.fq
if [[ ! -s "$reads" ]]; then
    for g in "${genomes[@]}" ssuis; do
        zcat "${sources[$g]}" > "$data/$g.fa"
        len=$(grep -v '^>' "$data/$g.fa" | tr -d '\n' | wc -c)
        fold=$(awk -v n="$nreads" -v l="$len" 'BEGIN { printf "%.4f", n * 150 / l }')
        log "art_illumina $g: ~$nreads reads of 150 bp (fold $fold, seed ${seeds[$g]})"
        art_illumina -q -ss HS25 -i "$data/$g.fa" -l 150 -f "$fold" -rs "${seeds[$g]}" -na \
            -o "$data/art_$g" > /dev/null
        # Reads named after their genome: GENOME_N (the negatives: none_N).
        name=$([[ $g == ssuis ]] && echo none || echo "$g")
        awk -v g="$name" 'NR % 4 == 1 { print "@" g "_" (NR + 3) / 4; next } { print }' \
            "$data/art_$g.fq" > "$data/art_$g.named.fq"
    done
    cat "$data"/art_{ecoli,hpylori,saureus,vcholerae,ssuis}.named.fq > "$reads.tmp"
    mv "$reads.tmp" "$reads"
    rm -f "$data"/art_*
fi
nreads_total=$(( $(wc -l < "$reads") / 4 ))

# ---------------------------------------------------------------- 3. measuring
perf=$out/performance.csv
echo "tool,phase,what,wall_s,cpu_s,rss_mib,index_bytes,reads,reads_per_s,load1" > "$perf"
tv=$work/time.txt
scratch=$work/scratch
rm -rf "$scratch"
mkdir -p "$scratch"
run_timed() {  # LOG CMD...: sets wall, cpu, rss, load
    local logf=$1; shift
    load=$(cut -d' ' -f1 /proc/loadavg)
    if ! /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1; then
        echo "run.sh: failed: $* (log: $logf)" >&2; tail -5 "$logf" >&2; exit 1
    fi
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + a[i]; print s }' "$tv")
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tv")
}
row() {  # tool phase what index_bytes reads
    local rate=""
    [[ -z "$5" ]] || rate=$(awk -v n="$5" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
    echo "$1,$2,$3,$wall,$cpu,$rss,$4,$5,$rate,$load" >> "$perf"
}
size_of() { du -cb "$@" | tail -1 | cut -f1; }

# qmer: one index per genome, then each alone and the whole panel, on the same reads.
panel_args=()
for g in "${genomes[@]}"; do
    run_timed "$scratch/qmer-index-$g.log" "$qmer" index -t "$threads" -o "$scratch/$g.qmer" "$data/$g.fa"
    row qmer index "$g" "$(size_of "$scratch/$g.qmer")" ""
    panel_args+=(-x "$g=$scratch/$g.qmer")
done
# The panel's reads are read from the page cache by every run: one untimed pass warms it.
cat "$reads" > /dev/null
for g in "${genomes[@]}"; do
    run_timed "$scratch/qmer-one-$g.log" "$qmer" query -t "$threads" -x "$g=$scratch/$g.qmer" \
        -o /dev/null "$reads"
    row qmer query "one index: $g" "$(size_of "$scratch/$g.qmer")" "$nreads_total"
done
index_total=$(size_of "$scratch"/*.qmer)
run_timed "$scratch/qmer-panel.log" "$qmer" query -t "$threads" "${panel_args[@]}" \
    -o "$scratch/qmer.tsv" --summary "$out/qmer-summary.json" "$reads"
row qmer query "panel of ${#genomes[@]}" "$index_total" "$nreads_total"
run_timed "$scratch/qmer-quick.log" "$qmer" query --quick -t "$threads" "${panel_args[@]}" \
    -o "$scratch/qmer-quick.tsv" "$reads"
row "qmer --quick" query "panel of ${#genomes[@]}" "$index_total" "$nreads_total"

# Seal: every reference at once, k = 31 (as qmer), each read to the reference(s) with the most
# k-mer hits; ambiguous=all writes a read tied between references to each of their files, which
# is qmer's `multiple`. Its k-mer table is built at every run (no index file); -Xmx4g.
refs=$(printf "$data/%s.fa," "${genomes[@]}")
mkdir -p "$scratch/seal"
run_timed "$scratch/seal.log" "$seal" -Xmx4g in="$reads" ref="${refs%,}" k=31 threads="$threads" \
    ambiguous=all refnames=t pattern="$scratch/seal/%.fq" outu="$scratch/seal/none.fq" \
    stats="$scratch/seal/stats.txt" overwrite=t
row seal "build+query" "panel of ${#genomes[@]}" "" "$nreads_total"
# Seal's own "Processing time" (the reads alone: no JVM start, no table build), the rate it reports.
wall=$(awk '/^Processing time:/ { print $3 }' "$scratch/seal.log")
cpu=""
rss=""
row seal "processing only" "panel of ${#genomes[@]}" "" "$nreads_total"
seal_version=$(sed -n 's/.*Version \([0-9.]*\).*/\1/p' "$scratch/seal.log" | head -1)

# Kraken 2: a custom database of the four genomes under a taxonomy of its own (root 1, one species
# per genome: no NCBI download), default k = 35, minimizer 31. A read whose k-mers point to several
# genomes is called at their lowest common ancestor, the root: qmer's `multiple`.
db=$scratch/kraken_db
mkdir -p "$db/taxonomy"
{
    printf '1\t|\t1\t|\tno rank\t|\t-\t|\n'
    for i in "${!genomes[@]}"; do printf '%d\t|\t1\t|\tspecies\t|\t-\t|\n' $((10 + i)); done
} > "$db/taxonomy/nodes.dmp"
{
    printf '1\t|\troot\t|\t-\t|\tscientific name\t|\n'
    for i in "${!genomes[@]}"; do
        printf '%d\t|\t%s\t|\t-\t|\tscientific name\t|\n' $((10 + i)) "${genomes[$i]}"
    done
} > "$db/taxonomy/names.dmp"
for i in "${!genomes[@]}"; do
    g=${genomes[$i]}
    # Plain sequence names: kraken2-build reads "gi|..." names one way into its map and another way
    # while building, and leaves such sequences out of the database.
    awk -v t=$((10 + i)) -v g="$g" '/^>/ { print ">" g "_" ++n "|kraken:taxid|" t; next } { print }' \
        "$data/$g.fa" > "$scratch/kraken_$g.fa"
    kraken2-build --no-masking --add-to-library "$scratch/kraken_$g.fa" --db "$db" > /dev/null 2>&1
done
run_timed "$scratch/kraken-build.log" kraken2-build --build --db "$db" --threads "$threads"
row kraken2 index "panel of ${#genomes[@]}" "$(size_of "$db"/*.k2d)" ""
run_timed "$scratch/kraken.log" kraken2 --db "$db" --threads "$threads" \
    --output "$scratch/kraken.out" "$reads"
row kraken2 query "panel of ${#genomes[@]}" "$(size_of "$db"/*.k2d)" "$nreads_total"

# ---------------------------------------------------------------- 4. accuracy and the record
python3 "$here/score.py" --genomes "${genomes[@]}" --qmer "$scratch/qmer.tsv" \
    --qmer-quick "$scratch/qmer-quick.tsv" --seal "$scratch/seal" --kraken "$scratch/kraken.out" \
    --kraken-taxids $(for i in "${!genomes[@]}"; do echo -n "$((10 + i)) "; done) \
    > "$out/accuracy.csv"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu: $(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1), $(nproc) cores"
    echo "threads: $threads"
    echo "reads: $nreads_total ($nreads per genome, ART HS25 150 bp, seeds 1-5)"
    echo "qmer: $("$qmer" --version)"
    echo "seal: BBTools $seal_version (Debian bbmap), -Xmx4g"
    echo "kraken2: $(kraken2 --version | head -1)"
    echo "uptime at end: $(uptime)"
} > "$out/meta.txt"
python3 "$here/score.py" --table "$out/performance.csv" "$out/accuracy.csv" > "$out/summary.md"
log "results in $out"
cat "$out/summary.md"
