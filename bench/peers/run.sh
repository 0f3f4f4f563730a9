#!/usr/bin/env bash
# End-to-end benchmark of qmer against BBDuk, KMC and Jellyfish (issue 10, items 1-2) and the
# verdict measurement of issue 7, on two mixes. See bench/peers/README.md for what it measures and why.
#
# usage: bench/peers/run.sh [--quick] [--mix first|second|both] [--threads N] [--reps N] [--reads N]
#                           [--mix-reads N] [--work DIR] [--qmer PATH] [--no-install] [--out DIR]
#   --quick       100,000 reads per set and in the second mix, 20,000 for kmc_tools filter,
#                 1 repetition (a smoke run)
#   --mix WHICH   first: reference big, bacterial reads (build, query, kmc_tools, verdict);
#                 second: reference panel, reads 1/3 human; both (default)
#   --threads N   threads for every tool (default 2)
#   --reps N      repetitions of each timed run, interleaved across tools (default 3)
#   --reads N     first mix: ART reads per read set, positives and negatives each (default 1,000,000)
#   --mix-reads N second mix: ART reads in all, 2/3 from panel, 1/3 human (default 1,870,000)
#   --work DIR    data and scratch (default bench/peers/work, git-ignored; data is reused)
#   --qmer PATH   the qmer binary, which must exist (default build/release/qmer, built with the
#                 release preset if absent)
#   --out DIR     results folder (default bench/peers/results/<date>[-quick])
#   --no-install  do not apt-get install missing packages
#   --data-only   stop after installing, building the helpers and making the data
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

threads=2
reps=3
nreads=1000000
nfilter=200000
mix_reads=1870000
mix=both
quick=0
install=1
data_only=0
work=$here/work
qmer=$repo/build/release/qmer
qmer_given=0
out=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1; nreads=100000; nfilter=20000; mix_reads=100000; reps=1 ;;
        --mix) mix=$2; shift ;;
        --mix-reads) mix_reads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; qmer_given=1; shift ;;
        --out) out=$2; shift ;;
        --no-install) install=0 ;;
        --data-only) data_only=1 ;;
        -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $nfilter -le $nreads ]] || nfilter=$nreads
case "$mix" in
    first) run_first=1; run_second=0 ;;
    second) run_first=0; run_second=1 ;;
    both) run_first=1; run_second=1 ;;
    *) echo "run.sh: --mix takes first, second or both, not '$mix'" >&2; exit 2 ;;
esac
[[ $mix_reads -ge 3 ]] || { echo "run.sh: --mix-reads must be at least 3, not '$mix_reads'" >&2; exit 2; }
date_tag=$(date +%F)
[[ -n "$out" ]] || out=$(unused_results_dir "$here/results/$date_tag$([[ $quick -eq 1 ]] && echo -quick || true)")
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
git_head=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
log() { echo "[peers $(date +%T)] $*" >&2; }

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(bbmap kmc jellyfish art-nextgen-simulation-tools time tabix g++ libhts-dev
          python3-matplotlib kleborate-examples kaptive-example ragout-examples sibelia-examples
          abacas-examples bowtie2-examples maffilter-examples)
ensure_packages run.sh "$install" "${packages[@]}"

# ---------------------------------------------------------------- 2. qmer and the two helpers
if [[ ! -x "$qmer" ]]; then
    # Only the default binary is built: a --qmer that names no binary is a typo, not a request.
    [[ $qmer_given -eq 0 ]] || { echo "run.sh: --qmer $qmer: no such executable" >&2; exit 2; }
    log "building qmer (release preset)"
    (cd "$repo" && cmake --preset release >/dev/null && cmake --build --preset release --target qmer -j"$threads")
    qmer=$repo/build/release/qmer
fi
mkdir -p "$work/bin"
for tool in kseq_floor exact_check; do
    if [[ ! -x "$work/bin/$tool" || "$here/$tool.cpp" -nt "$work/bin/$tool" ||
          "$repo/io/detail/kseq_reader.hpp" -nt "$work/bin/$tool" ]]; then
        g++ -std=c++20 -O2 -Wall -Wextra -Wpedantic -Wshadow -I"$repo" -o "$work/bin/$tool" "$here/$tool.cpp" -lhts
    fi
done
floor=$work/bin/kseq_floor
exact=$work/bin/exact_check

# ---------------------------------------------------------------- 3. data
ex=/usr/share/doc
# "big": every complete bacterial genome of the example packages (assembled contigs left out,
# they repeat the references), as bench/BASELINES.md's "big": many strains of few species.
big_sources=(
    "$ex"/kleborate/examples/data/{Klebs_HS11286,Klebs_Kp1084,MGH78578,NTUH-K2044}.fna.xz
    "$ex"/kaptive/examples/{exact_match,fragmented_assembly,inexact_match,very_poor_match}.fasta.gz
    "$ex"/ragout/examples/E.Coli/references/{DH1,MG1655-K12}.fasta.gz
    "$ex"/ragout/examples/H.Pylori/references/{ELS37,G27,Gambia94_24,Puno120,SJM180}.fasta.gz
    "$ex"/ragout/examples/S.Aureus/references/{COL,JKD6008,N315,RF122,USA300_FPR3757}.fasta.gz
    "$ex"/ragout/examples/V.Cholerae/references/{H1,O1_Inaba,O1_biovar,O395}.fasta.gz
    "$ex"/sibelia/examples/C-Sibelia/Staphylococcus_aureus/{NCTC8325,RN4220}.fasta.gz
    "$ex"/bowtie2/examples/reference/lambda_virus.fa.gz
)
# "panel" (second mix): 15 complete genomes of 5 species, a subset of big half its size, each
# genome whole (chromosomes and plasmids). Of big's files it leaves out the kaptive assemblies,
# RN4220's contigs, the shotgun V. cholerae H1 and O1 Inaba, and, to stay under 50 Mbp, Kp1084,
# MGH78578, JKD6008, NCTC8325 and lambda.
panel_sources=(
    "$ex"/kleborate/examples/data/{Klebs_HS11286,NTUH-K2044}.fna.xz
    "$ex"/ragout/examples/E.Coli/references/{DH1,MG1655-K12}.fasta.gz
    "$ex"/ragout/examples/H.Pylori/references/{ELS37,G27,Gambia94_24,Puno120,SJM180}.fasta.gz
    "$ex"/ragout/examples/S.Aureus/references/{COL,N315,RF122,USA300_FPR3757}.fasta.gz
    "$ex"/ragout/examples/V.Cholerae/references/{O1_biovar,O395}.fasta.gz
)
klebs_source=$ex/kleborate/examples/data/Klebs_HS11286.fna.xz
neg_source=$ex/abacas-examples/SS_SC84.dna.gz
unpack() { case "$1" in *.xz) xzcat "$1" ;; *.gz) zcat "$1" ;; *) cat "$1" ;; esac; }

data=$work/data
mkdir -p "$data"
bases_of() { grep -v '^>' "$1" | tr -d '\n' | wc -c; }

if [[ $run_first -eq 1 ]]; then
    if [[ ! -s "$data/big.fa" ]]; then
        log "reference big: ${#big_sources[@]} files"
        for f in "${big_sources[@]}"; do unpack "$f"; done > "$data/big.fa.tmp"
        mv "$data/big.fa.tmp" "$data/big.fa"
    fi
    [[ -s "$data/klebs.fa" ]] || { unpack "$klebs_source" > "$data/klebs.fa.tmp" && mv "$data/klebs.fa.tmp" "$data/klebs.fa"; }
    [[ -s "$data/suis.fa" ]] || { unpack "$neg_source" > "$data/suis.fa.tmp" && mv "$data/suis.fa.tmp" "$data/suis.fa"; }

    # ART HS25 150 bp single-end reads with fixed seeds; -f is a fold coverage, so the read count is
    # close to (not exactly) N. Positives from klebs (which "big" contains), negatives from S. suis.
    reads_dir=$data/reads_$nreads
    mkdir -p "$reads_dir"
    simulate() {  # name genome seed
        local name=$1 genome=$2 seed=$3
        if [[ ! -s "$reads_dir/$name.fq.gz" || ! -s "$reads_dir/$name.bgzf.fq.gz" ]]; then
            local len fold
            len=$(bases_of "$genome")
            fold=$(awk -v n="$nreads" -v l="$len" 'BEGIN { printf "%.4f", n * 150 / l }')
            log "art_illumina $name: $nreads reads (fold $fold) from $genome"
            art_illumina -q -ss HS25 -i "$genome" -l 150 -f "$fold" -rs "$seed" -na -o "$reads_dir/$name" >/dev/null
            gzip -6 -c "$reads_dir/$name.fq" > "$reads_dir/$name.fq.gz.tmp"
            mv "$reads_dir/$name.fq.gz.tmp" "$reads_dir/$name.fq.gz"
            bgzip -@ "$threads" -c "$reads_dir/$name.fq" > "$reads_dir/$name.bgzf.fq.gz.tmp"
            mv "$reads_dir/$name.bgzf.fq.gz.tmp" "$reads_dir/$name.bgzf.fq.gz"
        fi
        # The first nfilter reads, for kmc_tools filter (7-14 k reads/s in bench/BASELINES.md: too slow for all).
        if [[ ! -s "$reads_dir/$name.sub$nfilter.fq" ]]; then
            head -n $((4 * nfilter)) "$reads_dir/$name.fq" > "$reads_dir/$name.sub$nfilter.fq"
        fi
    }
    # ART is single-threaded: simulate both sets at once.
    simulate pos "$data/klebs.fa" 11286 &
    pos_job=$!
    simulate neg "$data/suis.fa" 84
    wait "$pos_job"
    # "mix": what a screen of a sample usually sees, reads partly absent from the reference: 2 of
    # every 3 reads from pos, 1 from neg, interleaved, as many reads as a set (issue 15's mixed case).
    if [[ ! -s "$reads_dir/mix.fq.gz" || ! -s "$reads_dir/mix.bgzf.fq.gz" ]]; then
        log "mix: 2/3 positives, 1/3 negatives, interleaved"
        # Streams pos.fq and reads neg.fq alongside: after every second positive record, one negative.
        awk -v n="$nreads" -v negf="$reads_dir/neg.fq" '
            function emit(r) { print r; if (++out >= n) exit }
            {
                rec = $0
                for (l = 2; l <= 4; ++l) { getline line; rec = rec "\n" line }
                emit(rec)
                if (++c % 2 == 0) {
                    r = ""
                    for (l = 1; l <= 4; ++l) { if ((getline line < negf) <= 0) break; r = r (l > 1 ? "\n" : "") line }
                    if (l > 4) emit(r)
                }
            }' "$reads_dir/pos.fq" > "$reads_dir/mix.fq"
        gzip -6 -c "$reads_dir/mix.fq" > "$reads_dir/mix.fq.gz.tmp" && mv "$reads_dir/mix.fq.gz.tmp" "$reads_dir/mix.fq.gz"
        bgzip -@ "$threads" -c "$reads_dir/mix.fq" > "$reads_dir/mix.bgzf.fq.gz.tmp"
        mv "$reads_dir/mix.bgzf.fq.gz.tmp" "$reads_dir/mix.bgzf.fq.gz"
    fi
fi

# draws the second mix's reads from ART's output: argv PRESENT_FQ ABSENT_FQ N_PRESENT N_ABSENT DIR;
# writes DIR/present.fq.tmp, DIR/absent.fq.tmp (the draws, in random order) and DIR/mix.fq (both,
# shuffled together). One fixed seed: the same files on every machine with the same ART output.
read -r -d '' shuffle_py <<'EOF' || true
import random
import sys

present_fq, absent_fq, n_present, n_absent, out_dir = sys.argv[1:]
rng = random.Random(2)


def draw(path, n):
    with open(path) as f:
        it = iter(f)
        pool = [head + next(it) + next(it) + next(it) for head in it]
    if len(pool) < n:
        sys.exit(f"run.sh: {path} holds {len(pool)} reads, fewer than the {n} needed")
    return rng.sample(pool, n)


present = draw(present_fq, int(n_present))
absent = draw(absent_fq, int(n_absent))
for name, reads in (("present", present), ("absent", absent)):
    with open(f"{out_dir}/{name}.fq.tmp", "w") as f:
        f.writelines(reads)
mixed = present + absent
rng.shuffle(mixed)
with open(f"{out_dir}/mix.fq", "w") as f:
    f.writelines(mixed)
EOF
if [[ $run_second -eq 1 ]]; then
    if [[ ! -s "$data/panel.fa" ]]; then
        log "reference panel: ${#panel_sources[@]} files"
        for f in "${panel_sources[@]}"; do unpack "$f"; done > "$data/panel.fa.tmp"
        mv "$data/panel.fa.tmp" "$data/panel.fa"
    fi
    [[ -s "$data/human.fa" ]] || human_chr22_fasta "$data/human.fa"
    # Second mix: exactly 2 of every 3 reads from panel, evenly over its bases (one fold for all its
    # records), the rest from human chr22, absent from panel. ART makes fewer reads than
    # fold x length / 150 on many short records (human.fa has ~9,600: 4% fewer at fold 4.5, 18%
    # at 0.25), so the fold is raised until it makes enough and the exact numbers are drawn at random.
    mix_present=$(((2 * mix_reads + 1) / 3))
    mix_absent=$((mix_reads - mix_present))
    mix_dir=$data/mix2_$mix_reads
    mkdir -p "$mix_dir"
    if [[ ! -s "$mix_dir/present.fq" || ! -s "$mix_dir/absent.fq" || ! -s "$mix_dir/mix.bgzf.fq.gz" ]]; then
        art_reads() {  # genome reads seed out: at least reads in out.fq
            local fold made try
            fold=$(awk -v n="$2" -v l="$(bases_of "$1")" 'BEGIN { printf "%.4f", 1.05 * n * 150 / l }')
            for try in 1 2 3 4 5; do
                log "art_illumina: $2 reads wanted (fold $fold, try $try) from $1"
                art_illumina -q -ss HS25 -i "$1" -l 150 -f "$fold" -rs "$3" -na -o "$4" >/dev/null
                made=$(($(wc -l < "$4.fq") / 4))
                [[ $made -lt $2 ]] || return 0
                fold=$(awk -v f="$fold" -v n="$2" -v m="$made" 'BEGIN { printf "%.4f", 1.02 * f * n / m }')
            done
            echo "run.sh: art_illumina made $made reads of $1, fewer than the $2 needed" >&2
            return 1
        }
        # ART is single-threaded: both at once.
        art_reads "$data/panel.fa" "$mix_present" 48 "$mix_dir/panel_art" &
        art_job=$!
        art_reads "$data/human.fa" "$mix_absent" 22 "$mix_dir/human_art"
        wait "$art_job"
        log "second mix: $mix_present reads of panel and $mix_absent of human chr22, shuffled"
        python3 -c "$shuffle_py" "$mix_dir/panel_art.fq" "$mix_dir/human_art.fq" "$mix_present" "$mix_absent" "$mix_dir"
        mv "$mix_dir/present.fq.tmp" "$mix_dir/present.fq"
        mv "$mix_dir/absent.fq.tmp" "$mix_dir/absent.fq"
        bgzip -@ "$threads" -c "$mix_dir/mix.fq" > "$mix_dir/mix.bgzf.fq.gz.tmp"
        mv "$mix_dir/mix.bgzf.fq.gz.tmp" "$mix_dir/mix.bgzf.fq.gz"
        rm -f "$mix_dir/panel_art.fq" "$mix_dir/human_art.fq" "$mix_dir/mix.fq"
    fi
fi
[[ $data_only -eq 0 ]] || { log "data ready in $data"; exit 0; }

# ---------------------------------------------------------------- 4. measuring
csv=$out/runs.csv
echo "tool,phase,reference,readset,format,rep,wall_s,cpu_s,rss_mib,index_bytes,reads,called,core_s,load1" > "$csv"
scratch=$work/scratch
mkdir -p "$scratch"
tv=$scratch/time.txt

# run_timed LOG -- CMD...: runs CMD under /usr/bin/time -v with stdout+stderr in LOG; sets
# wall, cpu (user + sys), rss (MiB) and load (1-minute load average at the start).
run_timed() {
    local logf=$1; shift; shift
    load=$(cut -d' ' -f1 /proc/loadavg)
    if ! /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1; then
        echo "run.sh: failed: $* (log: $logf)" >&2
        tail -5 "$logf" >&2
        exit 1
    fi
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + a[i]; print s }' "$tv")
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tv")
}
row() {  # tool phase reference readset format rep index_bytes reads called core_s
    echo "$1,$2,$3,$4,$5,$6,$wall,$cpu,$rss,$7,$8,$9,${10},$load" >> "$csv"
}
json_field() { sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$1" | head -1; }

# The default is the value after '=' in --filter's help line ("--filter {a,b,...}=NAME").
qmer_default=$("$qmer" index --help | sed -n 's/.*--filter [^=]*=\([a-z-]*\).*/\1/p' | head -1)
[[ -n "$qmer_default" ]] || qmer_default=default
# qmer rows: the default filter as qmer ships it (no --filter), and locally-locked (queried on
# BGZF only, to keep the run short: the input format costs both variants the same).
qmer_variants=("qmer" "qmer-locally-locked")
qmer_filter_args() { [[ "$1" == "qmer" ]] && true || echo "--filter ${1#qmer-}"; }

idx=$work/index
mkdir -p "$idx"
if [[ $run_first -eq 1 ]]; then
    ref=$data/big.fa
    log "reference big: $(bases_of "$ref") bp; qmer's default filter: $qmer_default"

    # ---- build, interleaved: floor (read the reference), qmer variants, KMC, Jellyfish
    ref_bases=$(bases_of "$ref")
    for rep in $(seq 1 "$reps"); do
        log "build round $rep/$reps"
        run_timed "$scratch/floor_ref.log" -- "$floor" "$ref"
        row floor build big - fasta "$rep" 0 0 0 NA
        for v in "${qmer_variants[@]}"; do
            rm -f "$idx/$v.qmer"
            # shellcheck disable=SC2046
            run_timed "$scratch/$v.build.log" -- "$qmer" index -q -t "$threads" $(qmer_filter_args "$v") -o "$idx/$v.qmer" "$ref"
            row "$v" build big - fasta "$rep" "$(stat -c %s "$idx/$v.qmer")" 0 0 NA
        done
        rm -rf "$idx/kmc" "$idx/kmc_tmp"; mkdir -p "$idx/kmc_tmp"
        run_timed "$scratch/kmc.build.log" -- kmc -k31 -ci1 -cs255 -fm -t"$threads" "$ref" "$idx/kmc" "$idx/kmc_tmp"
        row kmc build big - fasta "$rep" "$(($(stat -c %s "$idx/kmc.kmc_pre") + $(stat -c %s "$idx/kmc.kmc_suf")))" 0 0 NA
        rm -f "$idx/jf.jf"
        # -s: the reference length, an upper bound on its distinct k-mers that a user knows up front.
        run_timed "$scratch/jf.build.log" -- jellyfish count -m 31 -C -s "$ref_bases" -t "$threads" -o "$idx/jf.jf" "$ref"
        row jellyfish build big - fasta "$rep" "$(stat -c %s "$idx/jf.jf")" 0 0 NA
    done
    distinct=$(sed -n 's/.*No. of unique k-mers *: *\([0-9]*\).*/\1/p' "$scratch/kmc.build.log")
    for v in "${qmer_variants[@]}"; do "$qmer" info --json "$idx/$v.qmer" > "$out/info-$v.json"; done

    # ---- query, interleaved: floor, qmer variants (gzip, bgzf, plain), BBDuk (gzip)
    fmt_file() { case "$2" in gz) echo "$reads_dir/$1.fq.gz" ;; bgzf) echo "$reads_dir/$1.bgzf.fq.gz" ;; plain) echo "$reads_dir/$1.fq" ;; esac; }
    for rep in $(seq 1 "$reps"); do
        for set in pos neg mix; do
            log "query round $rep/$reps, $set"
            for fmt in gz bgzf plain; do
                f=$(fmt_file "$set" "$fmt")
                run_timed "$scratch/floor.log" -- "$floor" -t "$threads" "$f"
                n=$(cut -f2 "$scratch/floor.log")
                row floor query big "$set" "$fmt" "$rep" 0 "$n" 0 NA
                for v in "${qmer_variants[@]}"; do
                    [[ $v == qmer || $fmt == bgzf ]] || continue
                    run_timed "$scratch/$v.query.log" -- "$qmer" query -q -t "$threads" -o /dev/null --summary "$scratch/s.json" "$idx/$v.qmer" "$f"
                    row "$v" query big "$set" "$fmt" "$rep" 0 "$(json_field "$scratch/s.json" reads)" "$(json_field "$scratch/s.json" matched)" NA
                done
                # --quick: the default index, lookups stopped once a read's hits settle its match (BBDuk
                # also stops at a read's first hit).
                run_timed "$scratch/qmer-quick.query.log" -- "$qmer" query --quick -q -t "$threads" -o /dev/null --summary "$scratch/s.json" "$idx/qmer.qmer" "$f"
                row qmer-quick query big "$set" "$fmt" "$rep" 0 "$(json_field "$scratch/s.json" reads)" "$(json_field "$scratch/s.json" matched)" NA
            done
            f=$(fmt_file "$set" gz)
            # BBDuk builds its k-mer table from ref= on every run; "Processing time" is the reads alone.
            run_timed "$scratch/bbduk.log" -- bbduk.sh k=31 mm=f threads="$threads" ref="$ref" in="$f"
            n=$(awk '/^Input:/ { print $2 }' "$scratch/bbduk.log")
            c=$(awk '/^Contaminants:/ { print $2 }' "$scratch/bbduk.log")
            core=$(awk '/^Processing time:/ { print $3 }' "$scratch/bbduk.log")
            row bbduk query big "$set" gz "$rep" 0 "$n" "$c" "$core"
        done
    done

    # ---- kmc_tools filter once per read set on the first $nfilter reads (plain FASTQ): keeps reads
    # with at least one k-mer of the database (-ci1 on the read set; its default is 2).
    for set in pos neg; do
        log "kmc_tools filter, $set ($nfilter reads)"
        run_timed "$scratch/kmc_filter.log" -- kmc_tools -t"$threads" filter "$idx/kmc" "$reads_dir/$set.sub$nfilter.fq" -ci1 "$scratch/kmc_kept.fq"
        c=$(( $(wc -l < "$scratch/kmc_kept.fq") / 4 ))
        row kmc_tools query big "$set" plain 1 0 "$nfilter" "$c" NA
    done
    rm -f "$scratch/kmc_kept.fq"
fi

# ---------------------------------------------------------------- 5. verdict (issue 7)
# qmer's default index and verdict rule against an exact k-mer set (exact_check.cpp) on the same
# reads, read by read, for the single genome "klebs" and for "big". kmer_fpr: false positives per
# k-mer the exact set lacks; on "pos" (ART reads of the reference) those are the k-mers covering
# sequencing errors, near the index (README, Super-k-mer locality).
if [[ $run_first -eq 1 ]]; then
    vcsv=$out/verdict.csv
    echo "reference,readset,reads,qmer_called,exact_ge1,exact_ge_t,qmer_called_not_exact_t,qmer_called_exact_zero,kmers_mismatch,hits_below_exact,absent_kmers,kmer_fpr" > "$vcsv"
    log "verdict: klebs index"
    "$qmer" index -q -t "$threads" -o "$idx/klebs.qmer" "$data/klebs.fa"
    for r in klebs big; do
        index=$idx/klebs.qmer
        [[ $r == big ]] && index=$idx/qmer.qmer
        for set in pos neg; do
            log "verdict: $r $set"
            "$qmer" query -q -t "$threads" -o "$scratch/verdict.tsv" "$index" "$reads_dir/$set.fq.gz"
            "$exact" -k 31 -p "$(json_field "$out/info-qmer.json" fpr)" -r "$data/$r.fa" "$reads_dir/$set.fq.gz" "$scratch/verdict.tsv" > "$scratch/exact.txt"
            get() { sed -n "s/^$1=//p" "$scratch/exact.txt"; }
            echo "$r,$set,$(get reads),$(get qmer_called),$(get exact_ge1),$(get exact_ge_t),$(get qmer_called_not_exact_t),$(get qmer_called_exact_zero),$(get kmers_mismatch),$(get hits_below_exact),$(get absent_kmers),$(get qmer_kmer_fpr)" >> "$vcsv"
            [[ $r == klebs ]] && klebs_distinct=$(get distinct_kmers)
        done
    done
    rm -f "$scratch/verdict.tsv"
fi

# ---------------------------------------------------------------- 6. second mix: panel, reads 1/3 human
# qmer's default index of panel (built once, untimed), then per repetition and read set: the floor,
# qmer default and --quick, BBDuk; the mix as BGZF, the present-only and absent-only sets plain.
if [[ $run_second -eq 1 ]]; then
    panel_bases=$(bases_of "$data/panel.fa")
    log "reference panel: $panel_bases bp; index"
    "$qmer" index -q -t "$threads" -o "$idx/panel.qmer" "$data/panel.fa"
    "$qmer" info --json "$idx/panel.qmer" > "$out/info-panel.json"
    for rep in $(seq 1 "$reps"); do
        for set in mix present absent; do
            log "second mix, round $rep/$reps, $set"
            fmt=plain f=$mix_dir/$set.fq
            [[ $set != mix ]] || { fmt=bgzf f=$mix_dir/mix.bgzf.fq.gz; }
            run_timed "$scratch/floor.log" -- "$floor" -t "$threads" "$f"
            row floor query panel "$set" "$fmt" "$rep" 0 "$(cut -f2 "$scratch/floor.log")" 0 NA
            for tool in qmer qmer-quick; do
                quick_arg=()
                [[ $tool == qmer ]] || quick_arg=(--quick)
                run_timed "$scratch/$tool.query.log" -- "$qmer" query "${quick_arg[@]}" -q -t "$threads" -o /dev/null --summary "$scratch/s.json" "$idx/panel.qmer" "$f"
                row "$tool" query panel "$set" "$fmt" "$rep" 0 "$(json_field "$scratch/s.json" reads)" "$(json_field "$scratch/s.json" matched)" NA
            done
            run_timed "$scratch/bbduk.log" -- bbduk.sh k=31 mm=f threads="$threads" ref="$data/panel.fa" in="$f"
            n=$(awk '/^Input:/ { print $2 }' "$scratch/bbduk.log")
            c=$(awk '/^Contaminants:/ { print $2 }' "$scratch/bbduk.log")
            core=$(awk '/^Processing time:/ { print $3 }' "$scratch/bbduk.log")
            row bbduk query panel "$set" "$fmt" "$rep" 0 "$n" "$c" "$core"
        done
    done
fi

# ---------------------------------------------------------------- 7. summary
{
    echo "date=$(date '+%F %T %Z')"
    echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "cores=$(nproc)"
    echo "threads=$threads"
    echo "reps=$reps"
    echo "mixes=$mix"
    if [[ $run_first -eq 1 ]]; then
        echo "reads_per_set=$nreads"
        echo "kmc_filter_reads=$nfilter"
        echo "big_bases=$ref_bases"
        echo "big_files=${#big_sources[@]}"
        echo "big_distinct_kmers=$distinct"
        echo "klebs_bases=$(bases_of "$data/klebs.fa")"
        echo "klebs_distinct_kmers=$klebs_distinct"
        echo "kmc=$(kmc 2>&1 | sed -n 's/^K-Mer Counter (KMC) ver. \([^ ]*\).*/\1/p' | head -1)"
        echo "jellyfish=$(jellyfish --version 2>&1 | head -1)"
    fi
    if [[ $run_second -eq 1 ]]; then
        echo "mix_reads=$mix_reads"
        echo "mix_present=$mix_present"
        echo "mix_absent=$mix_absent"
        echo "panel_bases=$panel_bases"
        echo "panel_genomes=$(for f in "${panel_sources[@]}"; do b=${f##*/}; echo "${b%%.*}"; done | paste -sd' ')"
        echo "human_bases=$(bases_of "$data/human.fa")"
    fi
    echo "qmer=$("$qmer" --version 2>&1 | head -1) ($qmer, git HEAD at start $git_head)"
    echo "qmer_default_filter=$qmer_default"
    echo "bbduk=$(bbduk.sh --version 2>&1 | sed -n 's/^BBMap version //p;s/^Version //p' | head -1)"
    echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/meta.txt"
/usr/bin/python3 "$here/summarize.py" "$out"
log "done: $out/summary.md"
