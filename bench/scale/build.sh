#!/usr/bin/env bash
# Human-scale build benchmark: qmer index against KMC and Jellyfish on a synthetic reference of
# --size bp (random, and repetitive unless --random-only), in one run, interleaved; then qmer again
# at --max-memory limits set as multiples of its index size. See bench/scale/README.md.
#
# usage: bench/scale/build.sh [--size BP] [--threads N] [--reps N] [--limits 'X ...']
#                             [--random-only] [--seed S] [--work DIR] [--qmer PATH] [--out DIR]
#                             [--qmer-args 'ARGS'] [--jf-memory BYTES] [--no-install]
#   --size BP        reference length, bases (default 2,400,000,000: a human-sized host; records of
#                    at most 100 Mbp, the same data as run.sh's, reused from --work when present)
#   --threads N      threads of every tool: qmer -t, kmc -t, jellyfish -t (default 2)
#   --reps N         rounds; each round runs every tool once, interleaved (default 1)
#   --limits 'X ...' qmer --max-memory limits, multiples of the unlimited index file's size
#                    (default '1.3 1.5 2'; '' for none)
#   --random-only    the random reference only (default: random, then repetitive: half of it
#                    mutated copies of 20 repeat units of 300 bp-6 kbp, 1-3% substitutions per copy)
#   --kinds 'K ...'  the references to build, in order, from 'random repetitive' (the default)
#   --tools 'T ...'  the tools to run, from 'qmer kmc jellyfish' (the default; the --max-memory
#                    runs need qmer)
#   --seed S         reference seed (default 1)
#   --work DIR       data, outputs and scratch (default bench/scale/work, git-ignored; shared with
#                    run.sh: the references are reused)
#   --qmer PATH      the qmer binary (default build/release/qmer)
#   --out DIR        results folder (default bench/scale/results/<date>/build, or
#                    <date>-<size>/build when --size is not the default: git-ignored)
#   --qmer-args A    extra options for every qmer index run, word-split (e.g. '--plain-hash')
#   --jf-memory B    the most memory Jellyfish's hash may take, bytes (default 12 GiB, KMC's
#                    default -m 12): its -s is the reference length, halved until
#                    'jellyfish mem' fits (past that, Jellyfish writes and merges several files)
#   --no-install     do not apt-get install missing packages (time, g++, kmc, jellyfish,
#                    python3-matplotlib)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

size=2400000000
threads=2
reps=1
limits="1.3 1.5 2"
kinds_opt="random repetitive"
tools="qmer kmc jellyfish"
seed=1
work=$here/work
qmer=$repo/build/release/qmer
out=
qmer_args=
jf_memory=$((12 << 30))
install=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift ;;
        --threads) threads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --limits) limits=$2; shift ;;
        --random-only) kinds_opt=random ;;
        --kinds) kinds_opt=$2; shift ;;
        --tools) tools=$2; shift ;;
        --seed) seed=$2; shift ;;
        --work) work=$2; shift ;;
        --qmer) qmer=$2; shift ;;
        --out) out=$2; shift ;;
        --qmer-args) qmer_args=$2; shift ;;
        --jf-memory) jf_memory=$2; shift ;;
        --no-install) install=0 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "build.sh: unknown argument '$1' (--help lists the options)" >&2; exit 2 ;;
    esac
    shift
done
for v in size threads reps seed jf_memory; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || { echo "build.sh: --${v//_/-} must be a positive integer, not '${!v}'" >&2; exit 2; }
done
[[ $size -ge 1000 ]] || { echo "build.sh: --size must be at least 1000 bp" >&2; exit 2; }
# shellcheck disable=SC2206
limit_list=($limits)
for x in "${limit_list[@]}"; do
    if [[ ! $x =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || ! awk -v x="$x" 'BEGIN { exit !(x > 0) }'; then
        echo "build.sh: --limits takes positive multiples of the index size (e.g. '1.3 1.5 2'), not '$x'" >&2; exit 2
    fi
done
[[ -x "$qmer" ]] || { echo "build.sh: no qmer binary at '$qmer' (build it: cmake --preset release && cmake --build --preset release -j2)" >&2; exit 1; }
qmer=$(cd "$(dirname "$qmer")" && pwd)/$(basename "$qmer")

date_tag=$(date +%F)
if [[ -z "$out" ]]; then
    out=$here/results/$date_tag
    [[ $size -eq 2400000000 ]] || out=$out-$size
    out=$out/build
fi
mkdir -p "$work" "$out/logs"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
log() { echo "[build $(date +%T)] $*" >&2; }

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(time g++ kmc jellyfish python3-matplotlib)
ensure_packages build.sh "$install" "${packages[@]}"
py=/usr/bin/python3  # Debian's, which python3-matplotlib serves (not a pyenv or venv python3)

# ---------------------------------------------------------------- 2. the data generator (as run.sh)
mkdir -p "$work/bin"
gen=$work/bin/make_data
if [[ ! -x "$gen" || "$here/make_data.cpp" -nt "$gen" ]]; then
    log "compiling make_data"
    g++ -O2 -std=c++20 -o "$gen.tmp" "$here/make_data.cpp"
    mv "$gen.tmp" "$gen"
fi
# Data made by another version of make_data.cpp is made again (the stamp run.sh writes too).
gen_id=$(sha256sum "$here/make_data.cpp" | cut -c1-16)

# ---------------------------------------------------------------- 3. machine facts
git_head=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git -C "$repo" status --porcelain --untracked-files=no -- core app io CMakeLists.txt 2>/dev/null | wc -l)
# Every run uses a copy of the binary taken now (named by its hash): a rebuild in the checkout
# during a long run must not change the qmer measured halfway through.
qmer_src=$qmer
cp "$qmer_src" "$work/bin/qmer.tmp.$$"
qmer_id=$(sha256sum "$work/bin/qmer.tmp.$$" | cut -c1-16)
qmer=$work/bin/qmer-$qmer_id
mv -f "$work/bin/qmer.tmp.$$" "$qmer"
cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
[[ -n "$cpu_model" ]] || cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
{
    echo "date=$(date '+%F %T %Z')"
    echo "host_nproc=$(nproc)"
    echo "cpu=$cpu_model"
    echo "mem_total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
    echo "kernel=$(uname -r)"
    echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
    echo "disk_free_work=$(df -h --output=avail "$work" | tail -1 | tr -d ' ')"
    echo "git_head=$git_head"
    echo "git_dirty_files=$git_dirty (tracked files modified under core/ app/ io/ CMakeLists.txt at the start)"
    echo "qmer=$qmer_src (run as its copy $qmer)"
    echo "qmer_version=$("$qmer" --version 2>&1 | head -1)"
    echo "qmer_sha256=$qmer_id"
    echo "qmer_mtime=$(date -r "$qmer_src" '+%F %T')"
    echo "kmc_version=$(kmc 2>&1 | sed -n 's/^K-Mer Counter (KMC) *//p' | head -1)"
    echo "jellyfish_version=$(jellyfish --version 2>&1 | head -1)"
    echo "size=$size"
    echo "threads=$threads"
    echo "reps=$reps"
    echo "limits=$limits"
    echo "kinds=$kinds_opt"
    echo "tools=$tools"
    echo "seed=$seed"
    echo "qmer_args=$qmer_args"
    echo "jf_memory=$jf_memory"
    echo "make_data=$gen_id"
    echo "page_cache=warm (each reference is read with cat to /dev/null before every run; nothing is dropped)"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/meta.txt"
log "qmer $git_head ($qmer_id), $(nproc) cores, $cpu_model; results in $out"

# ---------------------------------------------------------------- 4. measuring
csv=$out/build.csv
echo "date,kind,size_bp,tool,threads,rep,limit_x,limit_bytes,exit,wall_s,user_s,sys_s,max_rss_bytes,output_bytes,under_limit,same_index,spilled,load1_before" > "$csv"
tv=$work/build-time.txt

# timed LOG CMD...: runs CMD under /usr/bin/time -v, stdout + stderr to LOG. Sets rc (its exit
# status: a failed run is recorded, not fatal, so that one tool running out of memory or disk at
# 2.4 Gbp does not lose the others' rows), wall (s, bash's microsecond clock around it: GNU time
# prints 10 ms steps), user and sys (s), rss (peak RSS, bytes) and load (1-minute load average
# just before).
timed() {
    local logf=$1; shift
    load=$(cut -d' ' -f1 /proc/loadavg)
    local t0=$EPOCHREALTIME
    rc=0
    /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1 || rc=$?
    local t1=$EPOCHREALTIME
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    user=$(awk -F': ' '/User time/ { printf "%.2f", $2 }' "$tv")
    sys=$(awk -F': ' '/System time/ { printf "%.2f", $2 }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 * 1024 }' "$tv")
    if [[ $rc -ne 0 ]]; then
        log "FAILED (exit $rc): $* (log: $logf)"
        tail -3 "$logf" >&2
    fi
}
# row TOOL REP LIMIT_X LIMIT_BYTES OUTPUT_BYTES UNDER_LIMIT SAME_INDEX SPILLED
row() {
    echo "$(date '+%F %T'),$kind,$size,$1,$threads,$2,$3,$4,$rc,$wall,$user,$sys,$rss,$5,$6,$7,$8,$load" >> "$csv"
}
# warm REF: the reference into the page cache before a run (the outputs of the run before, up to
# tens of GB at 2.4 Gbp, can push it out of a machine's memory), so every tool reads it warm.
warm() { cat "$1" > /dev/null; }
# same_index A B: 1 when two qmer indexes hold the same filter (every section's parameter words
# and filter words equal), else 0. Not cmp: the header holds the command line (here with or
# without --max-memory), so its length differs, and with it the zero padding that aligns each
# section's words to 64 bytes in the file, and the checksum at the end; summarize_build.py parses
# both files (io/index_file.hpp's layout) and compares the sections themselves.
same_index() { "$py" "$here/summarize_build.py" --same-index "$1" "$2"; }
# shellcheck disable=SC2206
qargs=($qmer_args)

# shellcheck disable=SC2206
kinds=($kinds_opt)
for kind in "${kinds[@]}"; do
    [[ $kind == random || $kind == repetitive ]] || { echo "build.sh: --kinds takes random and repetitive, not '$kind'" >&2; exit 2; }
done
for tool in $tools; do
    [[ $tool == qmer || $tool == kmc || $tool == jellyfish ]] || { echo "build.sh: --tools takes qmer, kmc and jellyfish, not '$tool'" >&2; exit 2; }
done
runs_tool() { [[ " $tools " == *" $1 "* ]]; }
runs=$work/build-runs
for kind in "${kinds[@]}"; do
    # ---- data: the same folders and stamp as run.sh, so either script reuses the other's FASTA
    name=$kind-$size-s$seed
    ddir=$work/data/$name
    ref=$ddir/ref.fa
    mkdir -p "$ddir"
    gen_args=(--size "$size" --seed "$seed")
    [[ $kind == random ]] || gen_args+=(--repetitive)
    if [[ ! -s "$ref" || "$(cat "$ddir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
        log "data: $kind reference, $size bp"
        rm -f "$ddir/stamp"
        "$gen" "${gen_args[@]}" --ref "$ref" 2> "$ddir/make_data.log" || { cat "$ddir/make_data.log" >&2; exit 1; }
        echo "$gen_id" > "$ddir/stamp"
    fi
    ref_bytes=$(stat -c %s "$ref")

    # ---- Jellyfish's hash size: the reference length (an upper bound on its distinct k-mers, as
    # bench/peers/run.sh passes), halved until 'jellyfish mem' says the hash fits in --jf-memory.
    jf_s=$size
    while :; do
        need=$(jellyfish mem -m 31 -s "$jf_s" | awk '{ print $1 }')
        [[ $need -gt $jf_memory && $jf_s -gt 1000000 ]] || break
        jf_s=$((jf_s / 2))
    done
    echo "jellyfish_s_$kind=$jf_s (jellyfish mem: $need bytes)" >> "$out/meta.txt"
    log "$kind reference: $ref_bytes bytes of FASTA; jellyfish -s $jf_s ($need bytes of hash)"

    rdir=$runs/$name
    rm -rf "$rdir"
    mkdir -p "$rdir/first" "$rdir/qmer" "$rdir/kmc" "$rdir/kmc-tmp" "$rdir/jf"
    first=$rdir/first/idx.qmer  # round 1's unlimited index: the one every other qmer run must equal
    index_bytes=
    for rep in $(seq 1 "$reps"); do
        # -- qmer, no limit (its default: a share of the machine's memory)
        if runs_tool qmer; then
        log "$kind, round $rep/$reps: qmer"
        warm "$ref"
        idx=$rdir/qmer/idx.qmer
        rm -f "$idx"
        lg=$out/logs/$kind-qmer-r$rep.log
        timed "$lg" "$qmer" index -t "$threads" "${qargs[@]}" -o "$idx" "$ref"
        spilled=$(grep -q 'went through a scratch file' "$lg" && echo yes || echo no)
        if [[ $rc -eq 0 && -z "$index_bytes" ]]; then
            mv "$idx" "$first"
            index_bytes=$(stat -c %s "$first")
            row qmer "$rep" NA NA "$index_bytes" NA NA "$spilled"
        elif [[ $rc -eq 0 ]]; then
            row qmer "$rep" NA NA "$(stat -c %s "$idx")" NA "$(same_index "$first" "$idx")" "$spilled"
        else
            row qmer "$rep" NA NA NA NA NA NA
        fi
        rm -f "$idx"
        [[ $rc -ne 0 ]] || tail -1 "$lg" >&2
        fi

        # -- KMC: counts of every k-mer (-ci1), counters up to 255, multi-FASTA input
        if runs_tool kmc; then
        log "$kind, round $rep/$reps: kmc"
        warm "$ref"
        rm -rf "$rdir/kmc" "$rdir/kmc-tmp"; mkdir -p "$rdir/kmc" "$rdir/kmc-tmp"
        timed "$out/logs/$kind-kmc-r$rep.log" kmc -k31 -ci1 -cs255 -fm -t"$threads" "$ref" "$rdir/kmc/db" "$rdir/kmc-tmp"
        bytes=NA
        [[ $rc -ne 0 ]] || bytes=$(($(stat -c %s "$rdir/kmc/db.kmc_pre") + $(stat -c %s "$rdir/kmc/db.kmc_suf")))
        row kmc "$rep" NA NA "$bytes" NA NA NA
        rm -rf "$rdir/kmc" "$rdir/kmc-tmp"
        fi

        # -- Jellyfish: canonical 31-mers
        if runs_tool jellyfish; then
        log "$kind, round $rep/$reps: jellyfish"
        warm "$ref"
        rm -rf "$rdir/jf"; mkdir -p "$rdir/jf"
        timed "$out/logs/$kind-jellyfish-r$rep.log" jellyfish count -m 31 -C -s "$jf_s" -t "$threads" -o "$rdir/jf/out.jf" "$ref"
        bytes=NA
        # out.jf, or with a hash too small for the reference, whatever it left besides (out.jf_0 ...)
        [[ $rc -ne 0 ]] || bytes=$(cat "$rdir"/jf/out.jf* | wc -c)
        row jellyfish "$rep" NA NA "$bytes" NA NA NA
        rm -rf "$rdir/jf"
        fi

        # -- qmer at each limit, as bytes: X times the unlimited index file's size
        if [[ -z "$index_bytes" ]]; then
            [[ ${#limit_list[@]} -eq 0 ]] || log "$kind, round $rep/$reps: no unlimited qmer index yet, so no limits"
            continue
        fi
        for x in "${limit_list[@]}"; do
            limit=$(awk -v x="$x" -v b="$index_bytes" 'BEGIN { printf "%.0f", x * b }')
            log "$kind, round $rep/$reps: qmer --max-memory $limit (${x}x the index)"
            warm "$ref"
            rm -f "$idx"
            lg=$out/logs/$kind-qmer-limit$x-r$rep.log
            timed "$lg" "$qmer" index -t "$threads" --max-memory "$limit" "${qargs[@]}" -o "$idx" "$ref"
            under=$([[ $rss -lt $limit ]] && echo yes || echo no)
            if [[ $rc -eq 0 ]]; then
                spilled=$(grep -q 'went through a scratch file' "$lg" && echo yes || echo no)
                row qmer "$rep" "$x" "$limit" "$(stat -c %s "$idx")" "$under" "$(same_index "$first" "$idx")" "$spilled"
                tail -1 "$lg" >&2
            else
                # refused (or failed): no index; under_limit still says whether the attempt stayed under
                row qmer "$rep" "$x" "$limit" NA "$under" NA NA
            fi
            rm -f "$idx"
        done
    done
    rm -rf "$rdir"
done
rm -f "$tv"
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"

# ---------------------------------------------------------------- 5. tables and plot
"$py" "$here/summarize_build.py" "$out"
log "done: $out/summary.md, $out/build.png"
