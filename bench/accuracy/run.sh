#!/usr/bin/env bash
# Host depletion accuracy: which reads of a host genome each tool calls (sensitivity) and which
# reads of unrelated species it leaves alone (specificity), for simulated Illumina pairs and noisy
# long reads, against alignment (bowtie2, minimap2) and k-mer peers (BBDuk, Kraken 2); short pairs
# at depth against a human host; qmer --preset long's speed against minimap2. See
# bench/accuracy/README.md.
#
# usage: bench/accuracy/run.sh [--smoke] [--parts LIST] [--short-pairs N] [--long-reads N]
#                              [--accuracies LIST] [--kmers LIST] [--containments LIST]
#                              [--deep-pairs N] [--deep-align-pairs N] [--speed-reads N] [--reps N]
#                              [-t N] [--work DIR] [--out DIR] [--qmer PATH] [--no-install]
#                              [--no-kraken]
#   --smoke            a check of every step in a few minutes: 1,000 pairs, 100 long reads, 2,000
#                      deep pairs (500 aligned), 400 speed reads
#   --parts LIST       experiments to run (default "main deep speed"): main = E. coli host, short
#                      and long reads; deep = human chr22 host, short pairs at depth; speed =
#                      long reads, qmer --preset long against minimap2
#   --short-pairs N    ART pairs of the host; as many again spread over the others
#                      (default 200000)
#   --long-reads N     pbsim reads of the host per accuracy; as many over the others
#                      (default 20000)
#   --accuracies LIST  pbsim mean accuracies in percent (default "80 85 90 95")
#   --kmers LIST       k of the qmer host indexes (default "31 21 19 17"; 31 is qmer's default)
#   --containments LIST  --min-containment values tried on long reads (default "0.005 0.01 0.02 0.05")
#   --deep-pairs N     deep: ART pairs of the human host; as many over the five bacteria
#                      (default 1000000)
#   --deep-align-pairs N  deep: the pairs of the host, and as many of the bacteria, that bowtie2
#                      aligns (an even subsample; default 100000)
#   --speed-reads N    speed: pbsim reads at 85%, half of the host, half over the others
#                      (default 200000)
#   --reps N           speed: runs of each tool, alternating (default 3)
#   -t, --threads N    threads for every tool (default 2)
#   --work DIR         genomes, reads, indexes, tool outputs (default bench/accuracy/work, ignored
#                      by git; the reads are reused when the sizes match)
#   --out DIR          results folder (default bench/accuracy/results/<UTC time>[-smoke])
#   --qmer PATH        the qmer binary (default build/release/qmer; built with the release preset
#                      when missing)
#   --no-install       do not apt-get install missing packages (name them and stop)
#   --no-kraken        leave Kraken 2 out (its row says so)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

short_pairs=200000
long_reads=20000
accuracies="80 85 90 95"
kmers="31 21 19 17"
containments="0.005 0.01 0.02 0.05"
parts="main deep speed"
deep_pairs=1000000
deep_align_pairs=100000
speed_reads=200000
reps=3
threads=2
work=$here/work
out=
qmer=$repo/build/release/qmer
install=1
kraken=1
smoke=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1; short_pairs=1000; long_reads=100; deep_pairs=2000; deep_align_pairs=500
                 speed_reads=400 ;;
        --parts) parts=$2; shift ;;
        --deep-pairs) deep_pairs=$2; shift ;;
        --deep-align-pairs) deep_align_pairs=$2; shift ;;
        --speed-reads) speed_reads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --short-pairs) short_pairs=$2; shift ;;
        --long-reads) long_reads=$2; shift ;;
        --accuracies) accuracies=$2; shift ;;
        --kmers) kmers=$2; shift ;;
        --containments) containments=$2; shift ;;
        -t|--threads) threads=$2; shift ;;
        --work) work=$2; shift ;;
        --out) out=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --no-install) install=0 ;;
        --no-kraken) kraken=0 ;;
        -h|--help) sed -n '2,39p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for n in "$short_pairs" "$long_reads" "$threads" "$deep_pairs" "$deep_align_pairs" "$speed_reads" "$reps"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: '$n' is not a positive count" >&2; exit 2; }
done
for part in $parts; do
    [[ $part == main || $part == deep || $part == speed ]] ||
        { echo "run.sh: unknown part '$part' (main, deep, speed)" >&2; exit 2; }
done
[[ -n "$parts" ]] || { echo "run.sh: --parts names no experiment" >&2; exit 2; }
# The subsample is the even thinning of the deep reads: it cannot be larger.
[[ $deep_align_pairs -le $deep_pairs ]] || deep_align_pairs=$deep_pairs
has_part() { [[ " $parts " == *" $1 "* ]]; }
[[ ! -e "$qmer" ]] || qmer=$(realpath "$qmer")
stamp=$(date -u +%Y-%m-%dT%H%MZ)
suffix=
[[ $smoke -eq 0 ]] || suffix=-smoke
[[ -n "$out" ]] || out=$here/results/$stamp$suffix
mkdir -p "$work" "$out/logs"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
log() { echo "[accuracy $(date -u +%T)] $*" >&2; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(pbsim art-nextgen-simulation-tools bowtie2 minimap2 bbmap samtools time
          ragout-examples abacas-examples)
[[ $kraken -eq 0 ]] || packages+=(kraken2)
# human_chr22_fasta (bench/lib.sh) reads its alignment.
! has_part deep || packages+=(maffilter-examples)
ensure_packages run.sh "$install" "${packages[@]}"
# The plot is optional: summarize.py skips it without matplotlib.
if [[ $install -eq 1 ]]; then ensure_packages run.sh 1 python3-matplotlib || true; fi

if [[ ! -x "$qmer" ]]; then
    log "building qmer (release preset)"
    (cd "$repo" && cmake --preset release > /dev/null &&
        cmake --build --preset release --target qmer -j"$threads")
    qmer=$repo/build/release/qmer
fi

# A file of an installed package, found by its name wherever the package puts it.
package_file() {  # PACKAGE NAME
    local f
    f=$(dpkg -L "$1" | grep -E "/$2\$" | head -1)
    [[ -n "$f" && -f "$f" ]] || { echo "run.sh: package $1 has no file $2" >&2; exit 1; }
    echo "$f"
}

# ---------------------------------------------------------------- 2. genomes
# The host and four species of other genera (Helicobacter, Staphylococcus, Vibrio,
# Streptococcus): reads of theirs that a tool calls are false calls.
host=ecoli
others=(hpylori saureus vcholerae ssuis)
declare -A genome_file=(
    [ecoli]=$(package_file ragout-examples MG1655-K12.fasta.gz)
    [hpylori]=$(package_file ragout-examples G27.fasta.gz)
    [saureus]=$(package_file ragout-examples COL.fasta.gz)
    [vcholerae]=$(package_file ragout-examples O395.fasta.gz)
    [ssuis]=$(package_file abacas-examples SS_SC84.dna.gz)
)
declare -A seed_of=([ecoli]=1 [hpylori]=2 [saureus]=3 [vcholerae]=4 [ssuis]=5 [human]=6)
data=$work/data
mkdir -p "$data"
for g in "$host" "${others[@]}"; do
    [[ -s "$data/$g.fa" ]] || { zcat "${genome_file[$g]}" > "$data/$g.fa.tmp" && mv "$data/$g.fa.tmp" "$data/$g.fa"; }
done
bases_of() { grep -v '^>' "$1" | tr -d '\n\r' | wc -c; }

# The deep experiment: a host of another kingdom (21.6 Mbp of human chr22, the one eukaryote of
# Debian's example data large enough) against all five bacteria, E. coli among them.
deep_host=human
deep_others=("$host" "${others[@]}")
if has_part deep; then
    genome_file[human]="human_chr22_fasta of bench/lib.sh, from maffilter-examples"
    [[ -s "$data/human.fa" ]] || human_chr22_fasta "$data/human.fa"
fi

# Reads per genome: N of the host, N spread evenly over the others (HOST and OTHER... default to
# the main experiment's).
count_for() {  # GENOME N [HOST OTHER...]
    local g=$1 n=$2 h=${3:-$host}
    local -a o=("${@:4}")
    [[ ${#o[@]} -gt 0 ]] || o=("${others[@]}")
    if [[ $g == "$h" ]]; then echo "$n"; else echo $(( (n + ${#o[@]} - 1) / ${#o[@]} )); fi
}

# thin_rename GENOME N IN OUT: keeps N records of the FASTQ IN spread evenly over it (all when it
# has fewer) and names them GENOME_1, GENOME_2, ...: the name carries the truth through every tool.
# Mates thinned with the same N get the same names.
thin_rename() {
    local g=$1 n=$2 in=$3 outf=$4 total
    total=$(( $(wc -l < "$in") / 4 ))
    awk -v n="$n" -v m="$total" -v g="$g" '
        NR % 4 == 1 { i = (NR - 1) / 4; keep = (m <= n) || int((i + 1) * n / m) > int(i * n / m)
                      if (keep) print "@" g "_" ++kept; next }
        keep { print }' "$in" > "$outf"
}

# thin_keep N IN OUT: the same even thinning, names kept (a subsample of renamed reads).
thin_keep() {
    local n=$1 in=$2 outf=$3 total
    total=$(( $(wc -l < "$in") / 4 ))
    awk -v n="$n" -v m="$total" '
        NR % 4 == 1 { i = (NR - 1) / 4; keep = (m <= n) || int((i + 1) * n / m) > int(i * n / m) }
        keep { print }' "$in" > "$outf"
}

# Short reads: ART Illumina HS25, 150 bp pairs, fragments 300 +- 30 bp. -f is a fold coverage, so
# ~20% more pairs than wanted are simulated and thinned to the count. ART draws each record's pairs
# from the record's length, rounded: a genome of many short records (the human host's alignment
# blocks) at a low fold comes out short, so the fold doubles until there are enough.
simulate_short() {  # GENOME N DIR
    local g=$1 n=$2 dir=$3 fold got
    [[ -s "$dir/$g.done" ]] && return 0
    fold=$(awk -v n="$n" -v l="$(bases_of "$data/$g.fa")" 'BEGIN { printf "%.5f", 1.2 * n * 300 / l }')
    while :; do
        art_illumina -q -ss HS25 -p -l 150 -m 300 -s 30 -i "$data/$g.fa" -f "$fold" \
            -rs "${seed_of[$g]}" -na -o "$dir/art_$g" > "$dir/art_$g.log" 2>&1
        got=$(( $(wc -l < "$dir/art_${g}1.fq") / 4 ))
        [[ $got -lt $n ]] || break
        fold=$(awk -v f="$fold" 'BEGIN { printf "%.5f", 2 * f }')
    done
    thin_rename "$g" "$n" "$dir/art_${g}1.fq" "$dir/$g.r1.fq"
    thin_rename "$g" "$n" "$dir/art_${g}2.fq" "$dir/$g.r2.fq"
    rm -f "$dir/art_${g}1.fq" "$dir/art_${g}2.fq"
    echo "$n" > "$dir/$g.done"
}
# short_set DIR N HOST OTHER...: N pairs of HOST and N over the others in DIR/r1.fq, DIR/r2.fq
# (genome after genome), unless an earlier run made them.
short_set() {
    local dir=$1 n=$2 h=$3 g p
    local -a o=("${@:4}") pids=()
    mkdir -p "$dir"
    [[ ! -s "$dir/r1.fq" ]] || return 0
    log "ART: $n pairs of $h, as many over ${o[*]}"
    for g in "$h" "${o[@]}"; do simulate_short "$g" "$(count_for "$g" "$n" "$h" "${o[@]}")" "$dir" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done
    for m in 1 2; do
        for g in "$h" "${o[@]}"; do cat "$dir/$g.r$m.fq"; done > "$dir/r$m.fq.tmp"
        mv "$dir/r$m.fq.tmp" "$dir/r$m.fq"
    done
}
short_dir=$data/short_$short_pairs
if has_part main; then short_set "$short_dir" "$short_pairs" "$host" "${others[@]}"; fi
deep_dir=$data/deep_$deep_pairs
deep_sub_dir=$deep_dir/sub_$deep_align_pairs
if has_part deep; then
    short_set "$deep_dir" "$deep_pairs" "$deep_host" "${deep_others[@]}"
    # bowtie2's share: the same even thinning of each genome's pairs, names kept.
    if [[ ! -s "$deep_sub_dir/r1.fq" ]]; then
        mkdir -p "$deep_sub_dir"
        for m in 1 2; do
            for g in "$deep_host" "${deep_others[@]}"; do
                thin_keep "$(count_for "$g" "$deep_align_pairs" "$deep_host" "${deep_others[@]}")" \
                    "$deep_dir/$g.r$m.fq" "$deep_sub_dir/$g.r$m.fq"
                cat "$deep_sub_dir/$g.r$m.fq"
                rm -f "$deep_sub_dir/$g.r$m.fq"
            done > "$deep_sub_dir/r$m.fq.tmp"
            mv "$deep_sub_dir/r$m.fq.tmp" "$deep_sub_dir/r$m.fq"
        done
    fi
fi

# Long reads: pbsim 1.0.3's CLR model (its quality model file, as the package installs it), mean
# accuracy A (sd 0.02, within A-5 and A+5 points); length model mean 1200, sd 600, within 1-10 kb,
# which pbsim turns into reads of ~1.6 kb mean (its lengths are not a plain truncated normal);
# substitutions, insertions and deletions 10:60:30 (pbsim's CLR default). pbsim writes one FASTQ
# per reference record (sd_0001.fastq, ...); the depth asks for ~40% more reads than wanted,
# doubled until there are enough, then thinned to the count.
model=$(package_file pbsim model_qc_clr)
read_length=1600
simulate_long() {  # GENOME ACCURACY N DIR
    local g=$1 acc=$2 n=$3 set_dir=$4 dir depth got
    dir=$set_dir/pbsim_${g}_$acc
    [[ -s "$set_dir/$g.$acc.done" ]] && return 0
    depth=$(awk -v n="$n" -v l="$(bases_of "$data/$g.fa")" -v m=$read_length 'BEGIN { printf "%.4f", 1.4 * n * m / l }')
    while :; do
        rm -rf "$dir" && mkdir -p "$dir"
        (cd "$dir" && pbsim --data-type CLR --model_qc "$model" --depth "$depth" \
            --length-mean 1200 --length-sd 600 --length-min 1000 --length-max 10000 \
            --accuracy-mean "0.$acc" --accuracy-sd 0.02 \
            --accuracy-min "$(awk -v a="$acc" 'BEGIN { print (a - 5) / 100 }')" \
            --accuracy-max "$(awk -v a="$acc" 'BEGIN { print (a + 5) / 100 }')" \
            --seed $((1000 * ${seed_of[$g]} + acc)) "$data/$g.fa" > pbsim.log 2>&1)
        cat "$dir"/sd_*.fastq > "$dir/all.fq"
        got=$(( $(wc -l < "$dir/all.fq") / 4 ))
        [[ $got -lt $n ]] || break
        depth=$(awk -v d="$depth" 'BEGIN { printf "%.4f", 2 * d }')
    done
    thin_rename "$g" "$n" "$dir/all.fq" "$set_dir/$g.$acc.fq"
    cp "$dir/pbsim.log" "$set_dir/$g.$acc.pbsim.log"
    rm -rf "$dir"
    echo "$n" > "$set_dir/$g.$acc.done"
}
# long_set DIR ACCURACY N: N reads of the host and N over the others in DIR/ACCURACY.fq, unless an
# earlier run made them.
long_set() {
    local dir=$1 acc=$2 n=$3 g p
    local -a pids=()
    mkdir -p "$dir"
    [[ ! -s "$dir/$acc.fq" ]] || return 0
    log "pbsim CLR ${acc}%: $n reads of $host, as many over ${others[*]}"
    for g in "$host" "${others[@]}"; do simulate_long "$g" "$acc" "$(count_for "$g" "$n")" "$dir" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done
    for g in "$host" "${others[@]}"; do cat "$dir/$g.$acc.fq"; done > "$dir/$acc.fq.tmp"
    mv "$dir/$acc.fq.tmp" "$dir/$acc.fq"
}
for acc in $accuracies; do
    [[ "$acc" =~ ^[5-9][0-9]$ ]] || { echo "run.sh: accuracy '$acc' is not a percentage 50-99" >&2; exit 2; }
done
long_dir=$data/long_$long_reads
if has_part main; then
    for acc in $accuracies; do long_set "$long_dir" "$acc" "$long_reads"; done
fi
# The speed experiment: one read set at 85%, half of it the host's.
speed_acc=85
speed_dir=$data/speed_$speed_reads
if has_part speed; then long_set "$speed_dir" "$speed_acc" "$(( (speed_reads + 1) / 2 ))"; fi
# The simulators' reports, also for reads made by an earlier run.
if has_part main; then
    for acc in $accuracies; do
        for g in "$host" "${others[@]}"; do cp "$long_dir/$g.$acc.pbsim.log" "$out/logs/pbsim_${g}_$acc.log"; done
    done
    cp "$short_dir"/art_*.log "$out/logs/"
fi
if has_part deep; then
    for g in "$deep_host" "${deep_others[@]}"; do cp "$deep_dir/art_$g.log" "$out/logs/deep_art_$g.log"; done
fi
if has_part speed; then
    for g in "$host" "${others[@]}"; do
        cp "$speed_dir/$g.$speed_acc.pbsim.log" "$out/logs/speed_pbsim_${g}_$speed_acc.log"
    done
fi

# ---------------------------------------------------------------- 3. measuring
scratch=$work/scratch
rm -rf "$scratch"
mkdir -p "$scratch"
tv=$scratch/time.txt
csv=$out/results.csv
calls=$out/calls.csv
builds=$out/builds.csv
echo "tool,k,rule,read_type,accuracy,readset,host_reads,host_called,other_reads,other_called,sensitivity,specificity,wall_s,cpu_s,reads_per_s,peak_rss_mib,load1,status" > "$csv"
echo "tool,k,rule,readset,genome,reads,called" > "$calls"
echo "tool,k,what,wall_s,cpu_s,peak_rss_mib,index_bytes,load1" > "$builds"
idx=$work/index
rm -rf "$idx"
mkdir -p "$idx"

# timed LOG CMD...: runs CMD under /usr/bin/time -v, its stdout and stderr into LOG; sets wall,
# cpu (user + sys), rss (MiB, the largest process of the command's tree) and load (1-minute load
# average when it started). A failing command stops the run; try_timed returns 1 instead.
try_timed() {
    local logf=$1
    shift
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1 || return 1
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
                                                   for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s }' "$tv")
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tv")
}
timed() {
    try_timed "$@" && return 0
    echo "run.sh: failed: ${*:2} (log: $1)" >&2
    tail -5 "$1" >&2
    exit 1
}

# Called names (one a line, repeats allowed) -> "GENOME count" lines: a name counts once, its
# genome is the name without its last _N (and without a /1 or /2 some tools add).
by_genome() {
    awk '{ n = $1; sub(/\/[12]$/, "", n); if (!(n in seen)) { seen[n] = 1; g = n; sub(/_[0-9]+$/, "", g); c[g]++ } }
         END { for (g in c) print g, c[g] }'
}
declare -A truth
truth_of() {  # READSET FASTQ: the reads (pairs) of each genome in the set
    local g c
    while read -r g c; do truth[$1.$g]=$c; done < <(awk 'NR % 4 == 1 { print substr($1, 2) }' "$2" | by_genome)
}

# The host and the other genomes of a read set: the main experiment's unless set here.
declare -A set_host set_others
host_of() { echo "${set_host[$1]:-$host}"; }
others_of() { echo "${set_others[$1]:-${others[*]}}"; }

# score TOOL K RULE READTYPE ACCURACY READSET CALLED_NAMES_FILE: one row of results.csv and the
# set's rows of calls.csv, from the names a tool called and the timing of its run (wall, cpu,
# rss, load; empty when the row re-scores another run's calls).
score() {
    local tool=$1 k=$2 rule=$3 rtype=$4 acc=$5 set=$6 names=$7 g c h
    local -a o
    h=$(host_of "$set")
    read -r -a o <<< "$(others_of "$set")"
    declare -A got=()
    while read -r g c; do got[$g]=$c; done < <(by_genome < "$names")
    local hr=${truth[$set.$h]} hc=${got[$h]:-0} orr=0 oc=0
    echo "$tool,$k,$rule,$set,$h,$hr,$hc" >> "$calls"
    for g in "${o[@]}"; do
        orr=$((orr + ${truth[$set.$g]})); oc=$((oc + ${got[$g]:-0}))
        echo "$tool,$k,$rule,$set,$g,${truth[$set.$g]},${got[$g]:-0}" >> "$calls"
    done
    awk -v row="$tool,$k,$rule,$rtype,$acc,$set" -v hr="$hr" -v hc="$hc" -v orr="$orr" -v oc="$oc" \
        -v w="$wall" -v c="$cpu" -v r="$rss" -v l="$load" 'BEGIN {
            rate = (w > 0) ? sprintf("%.0f", (hr + orr) / w) : ""
            printf "%s,%d,%d,%d,%d,%.6f,%.6f,%s,%s,%s,%s,%s,ok\n", row, hr, hc, orr, oc, hc / hr,
                   1 - oc / orr, w, c, rate, r, l }' >> "$csv"
}
not_run() {  # TOOL K RULE READTYPE ACCURACY READSET REASON
    echo "$1,$2,$3,$4,$5,$6,,,,,,,,,,,,$7" >> "$csv"
}
sam_called() { samtools view -F 0x904 "$1" | cut -f1; }
qmer_called() { awk -F'\t' '!/^#/ && $1 != "read_id" && $NF == 1 { print $1 }' "$1"; }

# Deacon's rule (Constantinides et al., bioRxiv 2025): at least 2 hits and 1% of the k-mers.
deacon_rule="min-hits 2 min-containment 0.01"
# rule_options RULE: sets ropt to the qmer query options of a rule as results.csv names it:
# "default" (none), "quick" (the default rule with --quick), else option names and values
# ("min-hits 2 min-containment 0.01").
rule_options() {
    local -a w
    local i
    ropt=()
    case $1 in
        default) ;;
        quick) ropt=(--quick) ;;
        *) read -r -a w <<< "$1"
           for ((i = 0; i < ${#w[@]}; i += 2)); do ropt+=("--${w[i]}" "${w[i + 1]}"); done ;;
    esac
}

# kraken_db DB FASTA NAME LOGTAG: a Kraken 2 database of FASTA alone under a taxonomy of two nodes
# (root 1, NAME 10): the taxonomy needs no NCBI download when the database is one genome. Defaults
# k = 35, l = 31. Sets the timing of the build; returns 1 when kraken2-build fails.
kraken_db() {
    local db=$1 fa=$2 name=$3 tag=$4
    mkdir -p "$db/taxonomy"
    printf '1\t|\t1\t|\tno rank\t|\t-\t|\n10\t|\t1\t|\tspecies\t|\t-\t|\n' > "$db/taxonomy/nodes.dmp"
    printf '1\t|\troot\t|\t-\t|\tscientific name\t|\n10\t|\t%s\t|\t-\t|\tscientific name\t|\n' "$name" > "$db/taxonomy/names.dmp"
    awk '/^>/ { print ">host_" ++n "|kraken:taxid|10"; next } { print }' "$fa" > "$db.fa"
    kraken2-build --no-masking --add-to-library "$db.fa" --db "$db" > "$out/logs/${tag}_library.log" 2>&1 &&
        try_timed "$out/logs/${tag}_build.log" kraken2-build --build --threads "$threads" --db "$db"
}

# Read sets: short (pairs), long<ACC> (single).
sets=(short)
for acc in $accuracies; do sets+=("long$acc"); done
reads_of() {  # READSET -> the reads files
    if [[ $1 == short ]]; then echo "$short_dir/r1.fq $short_dir/r2.fq"; else echo "$long_dir/${1#long}.fq"; fi
}
type_of() { [[ $1 == short ]] && echo short || echo long; }
acc_of() { [[ $1 == short ]] && echo "" || echo "${1#long}"; }
# ---- the main experiment: E. coli host, four other genera, short pairs and long reads
main_experiment() {
    for set in "${sets[@]}"; do
        read -r -a files <<< "$(reads_of "$set")"
        truth_of "$set" "${files[0]}"
        cat "${files[@]}" > /dev/null  # every tool reads them from the page cache
    done

    # ---- indexes
    for k in $kmers; do
        kopt=()
        [[ $k == 31 ]] || kopt=(-k "$k")
        log "qmer index k=$k"
        timed "$out/logs/qmer_index_k$k.log" "$qmer" index -q -t "$threads" "${kopt[@]}" -o "$idx/k$k.qmer" "$data/$host.fa"
        echo "qmer,$k,index of $host,$wall,$cpu,$rss,$(stat -c %s "$idx/k$k.qmer"),$load" >> "$builds"
    done
    log "bowtie2-build"
    timed "$out/logs/bowtie2_build.log" bowtie2-build --threads "$threads" "$data/$host.fa" "$idx/bt2"
    echo "bowtie2,,index of $host,$wall,$cpu,$rss,$(du -cb "$idx"/bt2.* | tail -1 | cut -f1),$load" >> "$builds"

    kraken_reason=
    kdb=$idx/kraken
    if [[ $kraken -eq 0 ]]; then
        kraken_reason="not run: --no-kraken"
    else
        log "kraken2-build"
        if kraken_db "$kdb" "$data/$host.fa" "$host" kraken2; then
            echo "kraken2,35,index of $host,$wall,$cpu,$rss,$(du -cb "$kdb"/*.k2d | tail -1 | cut -f1),$load" >> "$builds"
        else
            kraken_reason="not run: kraken2-build failed (logs/kraken2_build.log)"
        fi
    fi

    # ---- every tool on every read set
    for set in "${sets[@]}"; do
        read -r -a files <<< "$(reads_of "$set")"
        rtype=$(type_of "$set")
        acc=$(acc_of "$set")
        log "read set $set"
        paired=$([[ $rtype == short ]] && echo 1 || echo 0)

        # qmer: each k with its default rule and Deacon's; long reads also with each containment
        # threshold.
        for k in $kmers; do
            rules=(default)
            [[ $rtype == short ]] || for x in $containments; do rules+=("min-containment $x"); done
            rules+=("$deacon_rule")
            for rule in "${rules[@]}"; do
                rule_options "$rule"
                tag=qmer_k${k}_${rule// /_}_$set
                timed "$out/logs/$tag.log" "$qmer" query -q -t "$threads" "${ropt[@]}" -o "$scratch/$tag.tsv" \
                    --summary "$scratch/$tag.json" "$idx/k$k.qmer" "${files[@]}"
                qmer_called "$scratch/$tag.tsv" > "$scratch/called.txt"
                score qmer "$k" "$rule" "$rtype" "$acc" "$set" "$scratch/called.txt"
                rm -f "$scratch/$tag.tsv"
            done
        done

        # bowtie2 (short reads): a pair is host when either mate aligns.
        if [[ $rtype == short ]]; then
            timed "$out/logs/bowtie2_$set.log" bowtie2 --very-sensitive -p "$threads" -x "$idx/bt2" \
                -1 "${files[0]}" -2 "${files[1]}" -S "$scratch/bt2.sam"
            sam_called "$scratch/bt2.sam" > "$scratch/called.txt"
            score bowtie2 "" "aligned (--very-sensitive)" "$rtype" "$acc" "$set" "$scratch/called.txt"
            rm -f "$scratch/bt2.sam"
        fi

        # minimap2 (its index of the host is built in the run, in about a second): host when a
        # primary record is mapped.
        preset=$([[ $rtype == short ]] && echo sr || echo map-pb)
        timed "$out/logs/minimap2_$set.log" minimap2 -a -x "$preset" -t "$threads" -o "$scratch/mm2.sam" \
            "$data/$host.fa" "${files[@]}"
        sam_called "$scratch/mm2.sam" > "$scratch/called.txt"
        score minimap2 "" "mapped (-x $preset)" "$rtype" "$acc" "$set" "$scratch/called.txt"
        rm -f "$scratch/mm2.sam"

        # BBDuk: its defaults (a read or pair with one k-mer of the host; maskmiddle on), k = 31. It
        # builds its k-mer table from ref= in every run.
        bb_in=(in="${files[0]}")
        [[ $paired -eq 0 ]] || bb_in+=(in2="${files[1]}")
        timed "$out/logs/bbduk_$set.log" bbduk.sh ref="$data/$host.fa" k=31 threads="$threads" \
            "${bb_in[@]}" outm="$scratch/bbduk_m.fq" overwrite=t
        awk 'NR % 4 == 1 { print substr($1, 2) }' "$scratch/bbduk_m.fq" > "$scratch/called.txt"
        score bbduk 31 "1 k-mer (default)" "$rtype" "$acc" "$set" "$scratch/called.txt"
        rm -f "$scratch/bbduk_m.fq"

        # Kraken 2: classified = host (a database of the host alone), default confidence 0.
        if [[ -z "$kraken_reason" ]]; then
            kopt=()
            [[ $paired -eq 0 ]] || kopt=(--paired)
            timed "$out/logs/kraken2_$set.log" kraken2 --db "$kdb" --threads "$threads" "${kopt[@]}" \
                --output "$scratch/kraken.out" "${files[@]}"
            awk -F'\t' '$1 == "C" { print $2 }' "$scratch/kraken.out" > "$scratch/called.txt"
            score kraken2 35 "classified (default)" "$rtype" "$acc" "$set" "$scratch/called.txt"
            rm -f "$scratch/kraken.out"
        else
            not_run kraken2 35 "classified (default)" "$rtype" "$acc" "$set" "$kraken_reason"
        fi
    done
}
if has_part main; then main_experiment; fi

# ---- the deep experiment: human chr22 host, five bacteria, short pairs at depth
# deep_score TOOL K RULE CALLED_NAMES_FILE: the run's row on every pair, and its calls among
# bowtie2's subsample (deep_sub) as an untimed row, so that every tool meets bowtie2 on the same
# pairs.
deep_score() {
    score "$1" "$2" "$3" short "" deep "$4"
    awk 'NR == FNR { keep[$1] = 1; next } { n = $1; sub(/\/[12]$/, "", n) } n in keep' \
        "$scratch/deep_sub_names.txt" "$4" > "$scratch/sub_called.txt"
    wall='' cpu='' rss='' load=''
    score "$1" "$2" "$3" short "" deep_sub "$scratch/sub_called.txt"
}

# deep_flagged: qmer's surprising verdicts (pairs of the bacteria called, pairs of the host
# missed), for the default rule and Deacon's, one a line with the pair's k-mers and hits, which
# other tools agree (called the same bacterial pair, missed the same host pair; bowtie2 only within
# its subsample), each mate's trinucleotide entropy in bits (at most 6; low-complexity sequence
# such as microsatellites scores low) and the mates.
deep_flagged() {
    local rule tag
    for rule in default "$deacon_rule"; do
        tag=deep_qmer_k31_${rule// /_}
        awk -F'\t' -v rule="$rule" -v h="$deep_host" '
            !/^#/ && $1 != "read_id" { g = $1; sub(/_[0-9]+$/, "", g)
                if ((g == h) != ($NF == 1)) print rule "\t" ($NF == 1 ? "other_called" : "host_missed") "\t" $1 "\t" g "\t" $2 "\t" $3 "\t" $4 }' \
            "$scratch/$tag.tsv"
    done > "$scratch/deep_flagged.tsv"
    local -a tools=("$scratch"/deep_*.called)
    awk -F'\t' -v OFS='\t' '
        function entropy(s,    i, n, c, e, m) {
            n = length(s) - 2
            if (n < 1) return 0
            for (i = 1; i <= n; ++i) c[substr(s, i, 3)]++
            e = 0
            for (m in c) e -= c[m] / n * log(c[m] / n) / log(2)
            return e
        }
        FILENAME ~ /deep_flagged\.tsv$/ { row[++rows] = $0; pair[rows] = $3; want[$3] = 1; next }
        FILENAME ~ /\.called$/ { n = $1; sub(/\/[12]$/, "", n); t = FILENAME; sub(/.*\//, "", t)
                                 sub(/^deep_/, "", t); sub(/\.called$/, "", t); if (n in want) called[t, n] = 1; ran[t] = 1; next }
        FILENAME ~ /deep_sub_names\.txt$/ { if ($1 in want) insub[$1] = 1; next }
        FNR % 4 == 1 { n = substr($1, 2); sub(/\/[12]$/, "", n); keep = n in want; next }
        FNR % 4 == 2 && keep { seq[n, ++mate[n]] = $0 }
        END {
            print "rule", "verdict", "pair", "genome", "kmers", "hits", "containment", "others_agreeing",
                  "entropy_mate1", "entropy_mate2", "mate1", "mate2"
            for (i = 1; i <= rows; ++i) {
                split(row[i], f, "\t")
                n = pair[i]; agree = ""
                for (t in ran) {
                    if (t ~ /^qmer/ || (t == "bowtie2" && !(n in insub))) continue
                    if (((t, n) in called) == (f[2] == "other_called")) agree = agree (agree == "" ? "" : " ") t
                }
                print row[i], (agree == "" ? "-" : agree), sprintf("%.2f", entropy(seq[n, 1])),
                      sprintf("%.2f", entropy(seq[n, 2])), seq[n, 1], seq[n, 2]
            }
        }' "$scratch/deep_flagged.tsv" "${tools[@]}" "$scratch/deep_sub_names.txt" \
        "$deep_dir/r1.fq" "$deep_dir/r2.fq" > "$out/deep_qmer_flagged.tsv"
}

deep_experiment() {
    local r1=$deep_dir/r1.fq r2=$deep_dir/r2.fq s1=$deep_sub_dir/r1.fq s2=$deep_sub_dir/r2.fq rule tag
    local dkdb=$idx/kraken_human dk_reason=
    set_host[deep]=$deep_host
    set_others[deep]="${deep_others[*]}"
    set_host[deep_sub]=$deep_host
    set_others[deep_sub]="${deep_others[*]}"
    truth_of deep "$r1"
    truth_of deep_sub "$s1"
    awk 'NR % 4 == 1 { print substr($1, 2) }' "$s1" > "$scratch/deep_sub_names.txt"
    cat "$r1" "$r2" "$s1" "$s2" > /dev/null  # every tool reads them from the page cache

    log "deep: indexes of $deep_host"
    timed "$out/logs/deep_qmer_index.log" "$qmer" index -q -t "$threads" -o "$idx/human_k31.qmer" "$data/$deep_host.fa"
    echo "qmer,31,index of $deep_host,$wall,$cpu,$rss,$(stat -c %s "$idx/human_k31.qmer"),$load" >> "$builds"
    timed "$out/logs/deep_bowtie2_build.log" bowtie2-build --threads "$threads" "$data/$deep_host.fa" "$idx/bt2_human"
    echo "bowtie2,,index of $deep_host,$wall,$cpu,$rss,$(du -cb "$idx"/bt2_human.* | tail -1 | cut -f1),$load" >> "$builds"
    # minimap2's index is built once here (the main experiment's runs build it): its pairs/s are
    # then those of mapping, like the other tools' that load an index.
    timed "$out/logs/deep_minimap2_index.log" minimap2 -x sr -t "$threads" -d "$idx/human.sr.mmi" "$data/$deep_host.fa"
    echo "minimap2,,index of $deep_host (-x sr),$wall,$cpu,$rss,$(stat -c %s "$idx/human.sr.mmi"),$load" >> "$builds"
    if [[ $kraken -eq 0 ]]; then
        dk_reason="not run: --no-kraken"
    elif kraken_db "$dkdb" "$data/$deep_host.fa" "$deep_host" deep_kraken2; then
        echo "kraken2,35,index of $deep_host,$wall,$cpu,$rss,$(du -cb "$dkdb"/*.k2d | tail -1 | cut -f1),$load" >> "$builds"
    else
        dk_reason="not run: kraken2-build failed (logs/deep_kraken2_build.log)"
    fi

    log "deep: $deep_pairs pairs of $deep_host, as many over ${deep_others[*]}"
    # qmer: the default rule, Deacon's, and --quick, whose verdicts must be the default's.
    for rule in default "$deacon_rule" quick; do
        rule_options "$rule"
        tag=deep_qmer_k31_${rule// /_}
        timed "$out/logs/$tag.log" "$qmer" query -q -t "$threads" "${ropt[@]}" -o "$scratch/$tag.tsv" \
            --summary "$scratch/$tag.json" "$idx/human_k31.qmer" "$r1" "$r2"
        qmer_called "$scratch/$tag.tsv" > "$scratch/$tag.called"
        deep_score qmer 31 "$rule" "$scratch/$tag.called"
    done
    deep_quick_differences=$(comm -3 <(sort "$scratch/deep_qmer_k31_default.called") \
                                     <(sort "$scratch/deep_qmer_k31_quick.called") | wc -l)
    [[ $deep_quick_differences -eq 0 ]] ||
        log "warning: --quick changed the verdicts of $deep_quick_differences pairs (summary.md lists the count)"
    rm -f "$scratch/deep_qmer_k31_quick.tsv"

    # bowtie2 on its subsample only (~6k pairs/s on 2 cores: 2,000,000 pairs would take 6 min).
    timed "$out/logs/deep_bowtie2.log" bowtie2 --very-sensitive -p "$threads" -x "$idx/bt2_human" \
        -1 "$s1" -2 "$s2" -S "$scratch/bt2.sam"
    sam_called "$scratch/bt2.sam" > "$scratch/deep_bowtie2.called"
    score bowtie2 "" "aligned (--very-sensitive)" short "" deep_sub "$scratch/deep_bowtie2.called"
    rm -f "$scratch/bt2.sam"

    # minimap2: the SAM holds only the mapped records (--sam-hit-only; the same calls, a smaller
    # file).
    timed "$out/logs/deep_minimap2.log" minimap2 -a --sam-hit-only -x sr -t "$threads" -o "$scratch/mm2.sam" \
        "$idx/human.sr.mmi" "$r1" "$r2"
    sam_called "$scratch/mm2.sam" > "$scratch/deep_minimap2.called"
    deep_score minimap2 "" "mapped (-x sr)" "$scratch/deep_minimap2.called"
    rm -f "$scratch/mm2.sam"

    timed "$out/logs/deep_bbduk.log" bbduk.sh ref="$data/$deep_host.fa" k=31 threads="$threads" \
        in="$r1" in2="$r2" outm="$scratch/bbduk_m.fq" overwrite=t
    awk 'NR % 4 == 1 { print substr($1, 2) }' "$scratch/bbduk_m.fq" > "$scratch/deep_bbduk.called"
    deep_score bbduk 31 "1 k-mer (default)" "$scratch/deep_bbduk.called"
    rm -f "$scratch/bbduk_m.fq"

    if [[ -z "$dk_reason" ]]; then
        timed "$out/logs/deep_kraken2.log" kraken2 --db "$dkdb" --threads "$threads" --paired \
            --output "$scratch/kraken.out" "$r1" "$r2"
        awk -F'\t' '$1 == "C" { print $2 }' "$scratch/kraken.out" > "$scratch/deep_kraken2.called"
        deep_score kraken2 35 "classified (default)" "$scratch/deep_kraken2.called"
        rm -f "$scratch/kraken.out"
    else
        not_run kraken2 35 "classified (default)" short "" deep "$dk_reason"
        not_run kraken2 35 "classified (default)" short "" deep_sub "$dk_reason"
    fi

    deep_flagged
    rm -f "$scratch"/deep_qmer_*.tsv
}
deep_quick_differences=
if has_part deep; then deep_experiment; fi

# ---- the speed experiment: qmer --preset long against minimap2 on long reads
# speed_run RUN LOG OUT: one timed run of RUN on the speed reads, its output (qmer's TSV,
# minimap2's PAF or SAM, BBDuk's matched reads) into OUT; the names it called into OUT.called.
speed_run() {
    local run=$1 logf=$2 outf=$3 reads=$speed_dir/$speed_acc.fq
    case $run in
        qmer_long) timed "$logf" "$qmer" query -q -t "$threads" -o "$outf" "$idx/speed_long.qmer" "$reads" ;;
        qmer_long_quick) timed "$logf" "$qmer" query -q -t "$threads" --quick -o "$outf" "$idx/speed_long.qmer" "$reads" ;;
        qmer_k31) timed "$logf" "$qmer" query -q -t "$threads" -o "$outf" "$idx/speed_k31.qmer" "$reads" ;;
        # PAF without base-level alignment (no -a, no -c): minimap2's fastest way to say whether a
        # read maps; the .mmi is loaded, not built.
        minimap2) timed "$logf" minimap2 -x map-pb -t "$threads" -o "$outf" "$idx/$host.map-pb.mmi" "$reads" ;;
        # SAM with base-level alignment, as depletion pipelines that keep the unmapped reads run it.
        minimap2_sam) timed "$logf" minimap2 -a -x map-pb -t "$threads" -o "$outf" "$idx/$host.map-pb.mmi" "$reads" ;;
        bbduk) timed "$logf" bbduk.sh ref="$data/$host.fa" k=31 threads="$threads" in="$reads" \
                   outm="$outf" overwrite=t ;;
    esac
    case $run in
        qmer*) qmer_called "$outf" ;;
        minimap2) cut -f1 "$outf" ;;
        minimap2_sam) sam_called "$outf" ;;
        bbduk) awk 'NR % 4 == 1 { print substr($1, 2) }' "$outf" ;;
    esac > "$outf.called"
}

speed_experiment() {
    local reads=$speed_dir/$speed_acc.fq rep run g c hc oc
    set_host[speed]=$host
    truth_of speed "$reads"
    speed_bases=$(awk 'NR % 4 == 2 { s += length($0) } END { print s }' "$reads")
    cat "$reads" > /dev/null

    log "speed: indexes of $host"
    timed "$out/logs/speed_qmer_index_long.log" "$qmer" index -q -t "$threads" --preset long -o "$idx/speed_long.qmer" "$data/$host.fa"
    echo "qmer,17,index of $host (--preset long),$wall,$cpu,$rss,$(stat -c %s "$idx/speed_long.qmer"),$load" >> "$builds"
    timed "$out/logs/speed_qmer_index_k31.log" "$qmer" index -q -t "$threads" -o "$idx/speed_k31.qmer" "$data/$host.fa"
    timed "$out/logs/speed_minimap2_index.log" minimap2 -x map-pb -t "$threads" -d "$idx/$host.map-pb.mmi" "$data/$host.fa"
    echo "minimap2,,index of $host (-x map-pb),$wall,$cpu,$rss,$(stat -c %s "$idx/$host.map-pb.mmi"),$load" >> "$builds"

    local hr=${truth[speed.$host]} orr=0
    for g in "${others[@]}"; do orr=$((orr + ${truth[speed.$g]})); done
    echo "rep,run,reads,bases,wall_s,cpu_s,peak_rss_mib,load1,host_reads,host_called,other_reads,other_called" > "$speed_csv"
    for ((rep = 1; rep <= reps; ++rep)); do
        log "speed: round $rep of $reps"
        for run in qmer_long minimap2 qmer_long_quick minimap2_sam qmer_k31 bbduk; do
            speed_run "$run" "$out/logs/speed_${run}_$rep.log" "$scratch/speed_$run.out"
            hc=0 oc=0
            while read -r g c; do
                if [[ $g == "$host" ]]; then hc=$c; else oc=$((oc + c)); fi
            done < <(by_genome < "$scratch/speed_$run.out.called")
            echo "$rep,$run,$((hr + orr)),$speed_bases,$wall,$cpu,$rss,$load,$hr,$hc,$orr,$oc" >> "$speed_csv"
        done
        if [[ $rep -eq 1 ]]; then
            speed_quick_differences=$(comm -3 <(sort "$scratch/speed_qmer_long.out.called") \
                                              <(sort "$scratch/speed_qmer_long_quick.out.called") | wc -l)
            [[ $speed_quick_differences -eq 0 ]] ||
                log "warning: --quick changed the verdicts of $speed_quick_differences long reads"
        fi
        rm -f "$scratch"/speed_*.out "$scratch"/speed_*.out.called
    done
}
speed_csv=$out/speed.csv
speed_bases=
speed_quick_differences=
if has_part speed; then speed_experiment; fi

# ---------------------------------------------------------------- 4. the record
version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo missing; }
# The realized read accuracy pbsim reports per read set (its log's "read accuracy" mean).
pbsim_accuracy() {  # LOG
    awk -F' : ' '/^read accuracy mean/ { split($2, v, " "); print v[1]; exit }' "$1" 2>/dev/null || true
}
mean_length() { awk 'NR % 4 == 2 { s += length($0); n++ } END { if (n) printf "%.0f", s / n }' "$1"; }
{
    echo "date=$(date -u +%FT%TZ)"
    echo "started=$stamp"
    echo "cpu=$(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1)"
    echo "nproc=$(nproc)"
    echo "threads=$threads"
    echo "commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "qmer=$("$qmer" --version) ($qmer, built $(date -u -r "$qmer" +%FT%TZ))"
    echo "host=$host (${genome_file[$host]}, $(bases_of "$data/$host.fa") bp)"
    for g in "${others[@]}"; do echo "other=$g (${genome_file[$g]}, $(bases_of "$data/$g.fa") bp)"; done
    echo "parts=$parts"
    echo "short_pairs=$short_pairs"
    echo "long_reads=$long_reads"
    echo "accuracies=$accuracies"
    if has_part main; then
        for acc in $accuracies; do echo "pbsim_accuracy_$acc=$(pbsim_accuracy "$out/logs/pbsim_${host}_$acc.log")"; done
        echo "long_mean_length=$(mean_length "$long_dir/$host.${accuracies%% *}.fq")"
    fi
    echo "kmers=$kmers"
    echo "containments=$containments"
    echo "deacon_rule=$deacon_rule"
    if has_part deep; then
        echo "deep_host=$deep_host (${genome_file[$deep_host]}, $(bases_of "$data/$deep_host.fa") bp)"
        for g in "${deep_others[@]}"; do echo "deep_other=$g"; done
        echo "deep_pairs=$deep_pairs"
        echo "deep_align_pairs=$deep_align_pairs"
        echo "deep_quick_differences=$deep_quick_differences"
    fi
    if has_part speed; then
        echo "speed_reads=$speed_reads"
        echo "speed_accuracy=$speed_acc"
        echo "speed_pbsim_accuracy=$(pbsim_accuracy "$out/logs/speed_pbsim_${host}_$speed_acc.log")"
        echo "speed_bases=$speed_bases"
        echo "speed_mean_length=$(mean_length "$speed_dir/$speed_acc.fq")"
        echo "speed_reps=$reps"
        echo "speed_quick_differences=$speed_quick_differences"
    fi
    for p in pbsim art-nextgen-simulation-tools bowtie2 minimap2 bbmap kraken2 samtools maffilter-examples; do
        echo "version_$p=$(version_of "$p")"
    done
    echo "load_before=$load_before"
    echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)"
    [[ $smoke -eq 0 ]] || echo "smoke=1"
} > "$out/meta.txt"
rm -rf "$scratch"
/usr/bin/python3 "$here/summarize.py" "$out"
log "results in $out"
