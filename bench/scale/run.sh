#!/usr/bin/env bash
# Human-scale benchmark of qmer's query on a host-sized index: a synthetic reference of --size bp
# against a --small baseline measured in the same run. See bench/scale/README.md.
#
# usage: bench/scale/run.sh [--size BP] [--small BP] [--reads N] [--threads N] [--reps N]
#                           [--repetitive] [--error E] [--seed S] [--work DIR] [--qmer PATH]
#                           [--out DIR] [--query-args 'ARGS'] [--reuse-index] [--no-install]
#   --size BP       large reference, bases (default 2,400,000,000: a human-sized host)
#   --small BP      baseline reference, bases, measured first (default 49,000,000)
#   --reads N       reads per read set, present and absent each (default 500,000; 150 bp)
#   --threads N     qmer -t, for index and query (default 2)
#   --reps N        repetitions of each timed query, the fastest is reported (default 3)
#   --repetitive    also build and query a repetitive reference of each size (half of it mutated
#                   copies of 20 repeat units of 300 bp-6 kbp, 1-3% substitutions per copy)
#   --error E       substitution rate of the present reads (default 0)
#   --seed S        reference seed (default 1; reads and absent reads use seeds derived from it)
#   --work DIR      data, indexes and scratch (default bench/scale/work, git-ignored; data is reused)
#   --qmer PATH     the qmer binary (default build/release/qmer)
#   --out DIR       results folder (default bench/scale/results/<date>, or <date>-<size> when
#                   --size is not the default)
#   --query-args A  extra options for every timed qmer query, word-split (e.g. '--mmap' or '--quick')
#   --reuse-index   use an index already in --work (built from the same data by the same qmer
#                   binary) and its recorded build row instead of building it again
#   --no-install    do not apt-get install missing packages (time, g++, python3)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

size=2400000000
small=49000000
nreads=500000
threads=2
reps=3
repetitive=0
error=0
seed=1
work=$here/work
qmer=$repo/build/release/qmer
out=
reuse_index=0
install=1
query_args=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift ;;
        --small) small=$2; shift ;;
        --reads) nreads=$2; shift ;;
        --threads) threads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --repetitive) repetitive=1 ;;
        --error) error=$2; shift ;;
        --seed) seed=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        --query-args) query_args=$2; shift ;;
        --reuse-index) reuse_index=1 ;;
        --no-install) install=0 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (--help lists the options)" >&2; exit 2 ;;
    esac
    shift
done
for v in size small nreads threads reps seed; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || { echo "run.sh: --${v/nreads/reads} must be a positive integer, not '${!v}'" >&2; exit 2; }
done
[[ $error =~ ^(0|0?\.[0-9]+|1)$ ]] || { echo "run.sh: --error must be a rate in [0, 1], not '$error'" >&2; exit 2; }
[[ $small -lt $size ]] || { echo "run.sh: --small ($small) must be below --size ($size)" >&2; exit 2; }
[[ $small -ge 1000 ]] || { echo "run.sh: --small must be at least 1000 bp" >&2; exit 2; }
[[ -x "$qmer" ]] || { echo "run.sh: no qmer binary at '$qmer' (build it: cmake --preset release && cmake --build --preset release -j2)" >&2; exit 1; }
qmer=$(cd "$(dirname "$qmer")" && pwd)/$(basename "$qmer")

date_tag=$(date +%F)
if [[ -z "$out" ]]; then
    out=$here/results/$date_tag
    [[ $size -eq 2400000000 ]] || out=$out-$size
fi
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
log() { echo "[scale $(date +%T)] $*" >&2; }

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(time g++ python3)
ensure_packages run.sh "$install" "${packages[@]}"

# ---------------------------------------------------------------- 2. the data generator
mkdir -p "$work/bin"
gen=$work/bin/make_data
if [[ ! -x "$gen" || "$here/make_data.cpp" -nt "$gen" ]]; then
    log "compiling make_data"
    g++ -O2 -std=c++20 -o "$gen.tmp" "$here/make_data.cpp"
    mv "$gen.tmp" "$gen"
fi
# Data made by another version of make_data.cpp is made again.
gen_id=$(sha256sum "$here/make_data.cpp" | cut -c1-16)

# ---------------------------------------------------------------- 3. machine facts
git_head=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git -C "$repo" status --porcelain --untracked-files=no -- core app io CMakeLists.txt 2>/dev/null | wc -l)
qmer_id=$(sha256sum "$qmer" | cut -c1-16)
cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
[[ -n "$cpu_model" ]] || cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
{
    echo "date=$(date '+%F %T %Z')"
    echo "host_nproc=$(nproc)"
    echo "cpu=$cpu_model"
    echo "mem_total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
    echo "kernel=$(uname -r)"
    echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
    echo "git_head=$git_head"
    echo "git_dirty_files=$git_dirty (tracked files modified under core/ app/ io/ CMakeLists.txt at the start)"
    echo "qmer=$qmer"
    echo "qmer_version=$("$qmer" --version 2>&1 | head -1)"
    echo "qmer_sha256=$qmer_id"
    echo "qmer_mtime=$(date -r "$qmer" '+%F %T')"
    echo "size=$size"
    echo "small=$small"
    echo "reads=$nreads"
    echo "threads=$threads"
    echo "reps=$reps"
    echo "repetitive=$repetitive"
    echo "error=$error"
    echo "seed=$seed"
    echo "query_args=$query_args"
    echo "make_data=$gen_id"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/meta.txt"
log "qmer $git_head ($qmer_id), $(nproc) cores, $cpu_model; results in $out"

# ---------------------------------------------------------------- 4. measuring
raw=$out/raw.csv
echo "size_bp,kind,case,rep,reads,kmers,matched,wall_s,cpu_s,max_rss_bytes,index_bytes,distinct_kmers,qmer_wall_s,load1_before" > "$raw"
scratch=$work/scratch
mkdir -p "$scratch"
tv=$scratch/time.txt

# timed LOG CMD...: runs CMD under /usr/bin/time -v, stdout + stderr to LOG; sets wall (seconds,
# from bash's microsecond clock around it: GNU time prints 10 ms steps), cpu (user + sys, s),
# rss (peak RSS, bytes) and load (1-minute load average just before).
timed() {
    local logf=$1; shift
    load=$(cut -d' ' -f1 /proc/loadavg)
    local t0=$EPOCHREALTIME
    if ! /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1; then
        echo "run.sh: failed: $* (log: $logf)" >&2
        tail -5 "$logf" >&2
        exit 1
    fi
    local t1=$EPOCHREALTIME
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 * 1024 }' "$tv")
}
# shellcheck disable=SC2206
qargs=($query_args)
# json_field FILE NAME: the first top-level "NAME": number of a qmer JSON (two-space indented)
json_field() { sed -n "s/^  \"$2\": *\([0-9.eE+-]*\).*/\1/p" "$1" | head -1; }

kinds=(random)
[[ $repetitive -eq 0 ]] || kinds+=(repetitive)
read_len=150

# absent reads: one set for every reference (random sequence, a seed of its own)
absent_seed=$((seed + 1000003))
absent_dir=$work/data/absent-r$nreads-s$absent_seed
absent=$absent_dir/absent.fq
mkdir -p "$absent_dir"
if [[ ! -s "$absent" || "$(cat "$absent_dir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
    log "data: $nreads absent reads (seed $absent_seed)"
    rm -f "$absent_dir/stamp"
    "$gen" --reads "$nreads" --absent "$absent" --absent-seed "$absent_seed"
    echo "$gen_id" > "$absent_dir/stamp"
fi

for bp in "$small" "$size"; do
    for kind in "${kinds[@]}"; do
        name=$kind-$bp-s$seed
        ddir=$work/data/$name
        rdir=$ddir/reads-r$nreads-e$error
        ref=$ddir/ref.fa
        present=$rdir/present.fq
        one=$rdir/one.fq
        mkdir -p "$rdir"
        gen_args=(--size "$bp" --seed "$seed")
        [[ $kind == random ]] || gen_args+=(--repetitive)
        # ---- data (reused when made by this make_data.cpp with these parameters)
        if [[ ! -s "$ref" || "$(cat "$ddir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
            log "data: $kind reference, $bp bp"
            rm -f "$ddir/stamp" "$rdir/stamp"
            "$gen" "${gen_args[@]}" --ref "$ref" 2> "$ddir/make_data.log" || { cat "$ddir/make_data.log" >&2; exit 1; }
            echo "$gen_id" > "$ddir/stamp"
        fi
        if [[ ! -s "$present" || ! -s "$one" || "$(cat "$rdir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
            log "data: $nreads present reads of the $kind reference, $bp bp (error $error)"
            rm -f "$rdir/stamp"
            "$gen" "${gen_args[@]}" --reads "$nreads" --error "$error" --present "$present" --one "$one" 2> "$rdir/make_data.log" \
                || { cat "$rdir/make_data.log" >&2; exit 1; }
            echo "$gen_id" > "$rdir/stamp"
        fi

        # ---- index
        idx=$work/index/$name.qmer
        build_row=$work/index/$name.build.csv
        mkdir -p "$work/index"
        if [[ $reuse_index -eq 1 && -s "$idx" && -s "$build_row" && "$(cat "$work/index/$name.stamp" 2>/dev/null)" == "$qmer_id $gen_id" ]]; then
            log "index: reusing $idx and its build row"
            cat "$build_row" >> "$raw"
        else
            rm -f "$idx" "$build_row" "$work/index/$name.stamp"
            cat "$ref" > /dev/null  # the reference in the page cache, as the index reads it twice
            log "index: $kind, $bp bp"
            timed "$scratch/$name.index.log" "$qmer" index -t "$threads" -o "$idx" "$ref"
            "$qmer" info --json "$idx" > "$scratch/$name.info.json"
            row="$bp,$kind,index,1,0,$(json_field "$scratch/$name.info.json" kmers_scanned),0,$wall,$cpu,$rss,$(stat -c %s "$idx"),$(json_field "$scratch/$name.info.json" kmers),NA,$load"
            echo "$row" > "$build_row"
            echo "$row" >> "$raw"
            echo "$qmer_id $gen_id" > "$work/index/$name.stamp"
            tail -1 "$scratch/$name.index.log" >&2
        fi
        "$qmer" info --json "$idx" > "$out/info-$name.json"
        index_bytes=$(stat -c %s "$idx")
        distinct=$(json_field "$out/info-$name.json" kmers)

        # ---- queries, the index in the page cache (cat) before each case
        for case in one absent present; do
            case $case in one) reads=$one ;; absent) reads=$absent ;; present) reads=$present ;; esac
            cat "$idx" > /dev/null
            for rep in $(seq 1 "$reps"); do
                log "query: $kind, $bp bp, $case reads, rep $rep/$reps"
                s=$scratch/$name.$case.json
                rm -f "$s"
                if [[ $case == one ]]; then
                    # the single read: as a user runs it, no summary
                    timed "$scratch/$name.$case.log" "$qmer" query -t "$threads" "${qargs[@]}" -o /dev/null "$idx" "$reads"
                    nr=1; nk=$((read_len - 30)); nm=NA; qwall=NA
                else
                    timed "$scratch/$name.$case.log" "$qmer" query -t "$threads" "${qargs[@]}" -o /dev/null --summary "$s" "$idx" "$reads"
                    nr=$(json_field "$s" reads); nk=$(json_field "$s" kmers); nm=$(json_field "$s" matched); qwall=$(json_field "$s" wall_seconds)
                fi
                echo "$bp,$kind,$case,$rep,$nr,$nk,$nm,$wall,$cpu,$rss,$index_bytes,$distinct,$qwall,$load" >> "$raw"
            done
        done
    done
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"

# ---------------------------------------------------------------- 5. tables
/usr/bin/python3 "$here/summarize.py" "$out"
log "done: $out/results.md"
