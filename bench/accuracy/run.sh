#!/usr/bin/env bash
# Host depletion accuracy: which reads of a host genome each tool calls (sensitivity) and which
# reads of unrelated species it leaves alone (specificity), for simulated Illumina pairs and noisy
# long reads, against alignment (bowtie2, minimap2) and k-mer peers (BBDuk, Kraken 2). See
# bench/accuracy/README.md.
#
# usage: bench/accuracy/run.sh [--smoke] [--short-pairs N] [--long-reads N] [--accuracies LIST]
#                              [--kmers LIST] [--containments LIST] [-t N] [--work DIR]
#                              [--out DIR] [--qmer PATH] [--no-install] [--no-kraken]
#   --smoke            a check of every step in under 2 minutes: 1,000 pairs, 100 long reads
#   --short-pairs N    ART pairs of the host; as many again spread over the others
#                      (default 200000)
#   --long-reads N     pbsim reads of the host per accuracy; as many over the others
#                      (default 20000)
#   --accuracies LIST  pbsim mean accuracies in percent (default "80 85 90 95")
#   --kmers LIST       k of the qmer host indexes (default "31 21 19 17"; 31 is qmer's default)
#   --containments LIST  --min-containment values tried on long reads (default "0.005 0.01 0.02 0.05")
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
threads=2
work=$here/work
out=
qmer=$repo/build/release/qmer
install=1
kraken=1
smoke=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1; short_pairs=1000; long_reads=100 ;;
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
        -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for n in "$short_pairs" "$long_reads" "$threads"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: '$n' is not a positive count" >&2; exit 2; }
done
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
declare -A seed_of=([ecoli]=1 [hpylori]=2 [saureus]=3 [vcholerae]=4 [ssuis]=5)
data=$work/data
mkdir -p "$data"
for g in "$host" "${others[@]}"; do
    [[ -s "$data/$g.fa" ]] || { zcat "${genome_file[$g]}" > "$data/$g.fa.tmp" && mv "$data/$g.fa.tmp" "$data/$g.fa"; }
done
bases_of() { grep -v '^>' "$1" | tr -d '\n\r' | wc -c; }

# Reads per genome: N of the host, N spread evenly over the others.
count_for() {  # GENOME N
    if [[ $1 == "$host" ]]; then echo "$2"; else echo $(( ($2 + ${#others[@]} - 1) / ${#others[@]} )); fi
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

# Short reads: ART Illumina HS25, 150 bp pairs, fragments 300 +- 30 bp. -f is a fold coverage, so
# ~20% more pairs than wanted are simulated and thinned to the count.
short_dir=$data/short_$short_pairs
mkdir -p "$short_dir"
simulate_short() {  # GENOME
    local g=$1 n fold
    n=$(count_for "$g" "$short_pairs")
    [[ -s "$short_dir/$g.done" ]] && return 0
    fold=$(awk -v n="$n" -v l="$(bases_of "$data/$g.fa")" 'BEGIN { printf "%.5f", 1.2 * n * 300 / l }')
    art_illumina -q -ss HS25 -p -l 150 -m 300 -s 30 -i "$data/$g.fa" -f "$fold" \
        -rs "${seed_of[$g]}" -na -o "$short_dir/art_$g" > "$short_dir/art_$g.log" 2>&1
    thin_rename "$g" "$n" "$short_dir/art_${g}1.fq" "$short_dir/$g.r1.fq"
    thin_rename "$g" "$n" "$short_dir/art_${g}2.fq" "$short_dir/$g.r2.fq"
    rm -f "$short_dir/art_${g}1.fq" "$short_dir/art_${g}2.fq"
    echo "$n" > "$short_dir/$g.done"
}
if [[ ! -s "$short_dir/r1.fq" ]]; then
    log "ART: $short_pairs pairs of $host, as many over ${others[*]}"
    pids=()
    for g in "$host" "${others[@]}"; do simulate_short "$g" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done
    for m in 1 2; do
        for g in "$host" "${others[@]}"; do cat "$short_dir/$g.r$m.fq"; done > "$short_dir/r$m.fq.tmp"
        mv "$short_dir/r$m.fq.tmp" "$short_dir/r$m.fq"
    done
fi

# Long reads: pbsim 1.0.3's CLR model (its quality model file, as the package installs it), mean
# accuracy A (sd 0.02, within A-5 and A+5 points); length model mean 1200, sd 600, within 1-10 kb,
# which pbsim turns into reads of ~1.6 kb mean (its lengths are not a plain truncated normal);
# substitutions, insertions and deletions 10:60:30 (pbsim's CLR default). pbsim writes one FASTQ
# per reference record (sd_0001.fastq, ...); the depth asks for ~40% more reads than wanted,
# doubled until there are enough, then thinned to the count.
model=$(package_file pbsim model_qc_clr)
read_length=1600
simulate_long() {  # GENOME ACCURACY
    local g=$1 acc=$2 n dir depth got
    n=$(count_for "$g" "$long_reads")
    dir=$long_dir/pbsim_${g}_$acc
    [[ -s "$long_dir/$g.$acc.done" ]] && return 0
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
    thin_rename "$g" "$n" "$dir/all.fq" "$long_dir/$g.$acc.fq"
    cp "$dir/pbsim.log" "$long_dir/$g.$acc.pbsim.log"
    rm -rf "$dir"
    echo "$n" > "$long_dir/$g.$acc.done"
}
long_dir=$data/long_$long_reads
mkdir -p "$long_dir"
for acc in $accuracies; do
    [[ "$acc" =~ ^[5-9][0-9]$ ]] || { echo "run.sh: accuracy '$acc' is not a percentage 50-99" >&2; exit 2; }
    [[ -s "$long_dir/$acc.fq" ]] && continue
    log "pbsim CLR ${acc}%: $long_reads reads of $host, as many over ${others[*]}"
    pids=()
    for g in "$host" "${others[@]}"; do simulate_long "$g" "$acc" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done
    for g in "$host" "${others[@]}"; do cat "$long_dir/$g.$acc.fq"; done > "$long_dir/$acc.fq.tmp"
    mv "$long_dir/$acc.fq.tmp" "$long_dir/$acc.fq"
done
# The simulators' reports, also for reads made by an earlier run.
for acc in $accuracies; do
    for g in "$host" "${others[@]}"; do cp "$long_dir/$g.$acc.pbsim.log" "$out/logs/pbsim_${g}_$acc.log"; done
done
cp "$short_dir"/art_*.log "$out/logs/"

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

# score TOOL K RULE READTYPE ACCURACY READSET CALLED_NAMES_FILE: one row of results.csv and the
# set's rows of calls.csv, from the names a tool called and the timing of its run.
score() {
    local tool=$1 k=$2 rule=$3 rtype=$4 acc=$5 set=$6 names=$7 g c
    declare -A got=()
    while read -r g c; do got[$g]=$c; done < <(by_genome < "$names")
    local hr=${truth[$set.$host]} hc=${got[$host]:-0} orr=0 oc=0
    echo "$tool,$k,$rule,$set,$host,$hr,$hc" >> "$calls"
    for g in "${others[@]}"; do
        orr=$((orr + ${truth[$set.$g]})); oc=$((oc + ${got[$g]:-0}))
        echo "$tool,$k,$rule,$set,$g,${truth[$set.$g]},${got[$g]:-0}" >> "$calls"
    done
    awk -v row="$tool,$k,$rule,$rtype,$acc,$set" -v hr="$hr" -v hc="$hc" -v orr="$orr" -v oc="$oc" \
        -v w="$wall" -v c="$cpu" -v r="$rss" -v l="$load" 'BEGIN {
            printf "%s,%d,%d,%d,%d,%.6f,%.6f,%s,%s,%.0f,%s,%s,ok\n", row, hr, hc, orr, oc, hc / hr,
                   1 - oc / orr, w, c, (hr + orr) / w, r, l }' >> "$csv"
}
not_run() {  # TOOL K RULE READTYPE ACCURACY READSET REASON
    echo "$1,$2,$3,$4,$5,$6,,,,,,,,,,,,$7" >> "$csv"
}
sam_called() { samtools view -F 0x904 "$1" | cut -f1; }

# Read sets: short (pairs), long<ACC> (single).
sets=(short)
for acc in $accuracies; do sets+=("long$acc"); done
reads_of() {  # READSET -> the reads files
    if [[ $1 == short ]]; then echo "$short_dir/r1.fq $short_dir/r2.fq"; else echo "$long_dir/${1#long}.fq"; fi
}
type_of() { [[ $1 == short ]] && echo short || echo long; }
acc_of() { [[ $1 == short ]] && echo "" || echo "${1#long}"; }
for set in "${sets[@]}"; do
    read -r -a files <<< "$(reads_of "$set")"
    truth_of "$set" "${files[0]}"
    cat "${files[@]}" > /dev/null  # every tool reads them from the page cache
done

# ---- indexes
idx=$work/index
rm -rf "$idx"
mkdir -p "$idx"
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
if [[ $kraken -eq 0 ]]; then
    kraken_reason="not run: --no-kraken"
else
    # A database of the host alone under a taxonomy of two nodes (root 1, the host 10): the
    # taxonomy needs no NCBI download when the database is one genome. Defaults k = 35, l = 31.
    kdb=$idx/kraken
    mkdir -p "$kdb/taxonomy"
    printf '1\t|\t1\t|\tno rank\t|\t-\t|\n10\t|\t1\t|\tspecies\t|\t-\t|\n' > "$kdb/taxonomy/nodes.dmp"
    printf '1\t|\troot\t|\t-\t|\tscientific name\t|\n10\t|\t%s\t|\t-\t|\tscientific name\t|\n' "$host" > "$kdb/taxonomy/names.dmp"
    awk '/^>/ { print ">host_" ++n "|kraken:taxid|10"; next } { print }' "$data/$host.fa" > "$idx/kraken_host.fa"
    log "kraken2-build"
    if kraken2-build --no-masking --add-to-library "$idx/kraken_host.fa" --db "$kdb" > "$out/logs/kraken2_library.log" 2>&1 &&
        try_timed "$out/logs/kraken2_build.log" kraken2-build --build --threads "$threads" --db "$kdb"; then
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

    # qmer: each k with its default rule; long reads also with each containment threshold.
    for k in $kmers; do
        rules=(default)
        [[ $rtype == short ]] || for x in $containments; do rules+=("min-containment $x"); done
        for rule in "${rules[@]}"; do
            ropt=()
            [[ $rule == default ]] || ropt=(--min-containment "${rule#min-containment }")
            tag=qmer_k${k}_${rule// /_}_$set
            timed "$out/logs/$tag.log" "$qmer" query -q -t "$threads" "${ropt[@]}" -o "$scratch/$tag.tsv" \
                --summary "$scratch/$tag.json" "$idx/k$k.qmer" "${files[@]}"
            awk -F'\t' '!/^#/ && $1 != "read_id" && $NF == 1 { print $1 }' "$scratch/$tag.tsv" > "$scratch/called.txt"
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

# ---------------------------------------------------------------- 4. the record
version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo missing; }
# The realized read accuracy pbsim reports per read set (its log's "read accuracy" mean).
pbsim_accuracy() {  # ACCURACY
    awk -F' : ' '/^read accuracy mean/ { split($2, v, " "); print v[1]; exit }' "$out/logs/pbsim_${host}_$1.log" 2>/dev/null || true
}
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
    echo "short_pairs=$short_pairs"
    echo "long_reads=$long_reads"
    echo "accuracies=$accuracies"
    for acc in $accuracies; do echo "pbsim_accuracy_$acc=$(pbsim_accuracy "$acc")"; done
    echo "long_mean_length=$(awk 'NR % 4 == 2 { s += length($0); n++ } END { printf "%.0f", s / n }' "$long_dir/$host.${accuracies%% *}.fq")"
    echo "kmers=$kmers"
    echo "containments=$containments"
    for p in pbsim art-nextgen-simulation-tools bowtie2 minimap2 bbmap kraken2 samtools; do
        echo "version_$p=$(version_of "$p")"
    done
    echo "load_before=$load_before"
    echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)"
    [[ $smoke -eq 0 ]] || echo "smoke=1"
} > "$out/meta.txt"
rm -rf "$scratch"
/usr/bin/python3 "$here/summarize.py" "$out"
log "results in $out"
