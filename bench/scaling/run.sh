#!/usr/bin/env bash
# Speed-up against threads (issue 40, item 4): qmer index, KMC on the same reference, qmer query
# (plain FASTQ, BGZF, --quick) and the quotient filters' concurrent inserts (qf_qf_bench, the
# source paper's experiment (a)), each at every thread count of --threads. See README.md here.
#
# usage: bench/scaling/run.sh [--threads LIST] [--size BP] [--reads N] [--reps N]
#                             [--qf-slots-log2 Q] [--work DIR] [--out DIR] [--qmer PATH]
#                             [--no-install] [--skip-qf] [--skip-kmc]
#   --threads LIST     comma-separated thread counts (default: 1, 2, 4, ... up to nproc, and
#                      nproc itself; here: DEFAULT_THREADS)
#   --size BP          synthetic reference length (default 49,000,000: the 16-genome bacterial
#                      reference of issue 40)
#   --reads N          150 bp reads, 2/3 from the reference and 1/3 absent, interleaved in one
#                      FASTQ, plus a BGZF copy of it (default 2,500,000)
#   --reps N           repetitions; the best (lowest wall) of them is reported (default 2)
#   --qf-slots-log2 Q  qf_qf_bench table size, 2^Q slots filled to 70% (default 24)
#   --work DIR         data, indexes and scratch (default bench/scaling/work, git-ignored; the
#                      data is reused when made by the same make_data.cpp with the same sizes)
#   --out DIR          results folder (default bench/scaling/results/<UTC date-time>)
#   --qmer PATH        the qmer binary (default build/release/qmer; qf_qf_bench is always
#                      build/release/bench/qf_qf_bench; both are built when missing)
#   --no-install       do not apt-get install missing Debian packages (kmc, tabix, time, g++,
#                      python3, python3-matplotlib); without matplotlib the plot is skipped
#   --skip-qf          do not run qf_qf_bench
#   --skip-kmc         do not run KMC
#
# Outputs in --out: runs.csv, speedup.csv, qf_threads.csv, meta.txt, summary.md, speedup.png
# and logs/ (the last log of every tool).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

log() { echo "[scaling $(date '+%F %T')] $*" >&2; }
die() { echo "[scaling $(date '+%F %T')] run.sh: $*" >&2; exit 1; }

ncores=$(nproc)
default_threads() {
    local t=1 list=()
    while [[ $t -le $ncores ]]; do list+=("$t"); t=$((t * 2)); done
    [[ ${list[-1]} -eq $ncores ]] || list+=("$ncores")
    local IFS=,
    echo "${list[*]}"
}

threads_list=$(default_threads)
size=49000000
nreads=2500000
reps=2
qf_q=24
seed=1
work=$here/work
out=
qmer=$repo/build/release/qmer
qf_bench=$repo/build/release/bench/qf_qf_bench
install=1
skip_qf=0
skip_kmc=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --threads) threads_list=${2-}; shift ;;
        --size) size=${2-}; shift ;;
        --reads) nreads=${2-}; shift ;;
        --reps) reps=${2-}; shift ;;
        --qf-slots-log2) qf_q=${2-}; shift ;;
        --work) work=${2-}; shift ;;
        --out) out=${2-}; shift ;;
        --qmer) qmer=${2-}; shift ;;
        --no-install) install=0 ;;
        --skip-qf) skip_qf=1 ;;
        --skip-kmc) skip_kmc=1 ;;
        -h|--help)
            awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" |
                sed "s/DEFAULT_THREADS/$(default_threads)/"
            exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (--help lists the options)" >&2; exit 2 ;;
    esac
    shift
done

# ---------------------------------------------------------------- 0. checking the options
bad() { echo "run.sh: $*" >&2; exit 2; }
for v in size nreads reps qf_q; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || bad "--$v must be a positive integer, not '${!v}'"
done
[[ $size -ge 1000 ]] || bad "--size must be at least 1000 bp"
[[ $nreads -ge 3 ]] || bad "--reads must be at least 3"
[[ $qf_q -ge 10 && $qf_q -le 30 ]] || bad "--qf-slots-log2 must be in 10..30"
[[ $threads_list =~ ^[0-9]+(,[0-9]+)*$ ]] || bad "--threads must be a comma-separated list of thread counts, not '$threads_list'"
mapfile -t threads < <(tr , '\n' <<< "$threads_list" | sort -n -u)
[[ ${threads[0]} -ge 1 ]] || bad "--threads: thread counts must be positive"
threads_list=$(IFS=,; echo "${threads[*]}")
[[ ${threads[0]} -eq 1 ]] || log "warning: --threads lacks 1: speedup_vs_1 and efficiency will be NA"
[[ ${threads[-1]} -le $ncores ]] || log "warning: ${threads[-1]} threads on $ncores cores: oversubscribed"

[[ -n "$out" ]] || out=$here/results/$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p "$work" "$out" "$out/logs"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)

# ---------------------------------------------------------------- 1. packages (only the missing)
packages=(time g++ python3 tabix)
[[ $skip_kmc -eq 1 ]] || packages+=(kmc)
ensure_packages run.sh "$install" "${packages[@]}"
# matplotlib is optional: installed when missing, unless --no-install (plot.py then skips the plot)
[[ $install -eq 0 ]] || ensure_packages run.sh 1 python3-matplotlib

# ---------------------------------------------------------------- 2. binaries
missing_targets=()
if [[ ! -x "$qmer" ]]; then
    [[ "$qmer" == "$repo/build/release/qmer" ]] || die "no qmer binary at '$qmer'"
    missing_targets+=(qmer)
fi
[[ $skip_qf -eq 1 || -x "$qf_bench" ]] || missing_targets+=(qf_qf_bench)
if [[ ${#missing_targets[@]} -gt 0 ]]; then
    log "building ${missing_targets[*]} (release preset)"
    (cd "$repo" && { [[ -d build/release ]] || cmake --preset release >/dev/null; } &&
        cmake --build --preset release --target "${missing_targets[@]}" -j"$ncores") ||
        die "building ${missing_targets[*]} failed"
fi
qmer=$(cd "$(dirname "$qmer")" && pwd)/$(basename "$qmer")

mkdir -p "$work/bin"
gen=$work/bin/make_data
if [[ ! -x "$gen" || "$repo/bench/scale/make_data.cpp" -nt "$gen" ]]; then
    log "compiling bench/scale/make_data.cpp"
    g++ -O2 -std=c++20 -o "$gen.tmp" "$repo/bench/scale/make_data.cpp" || die "compiling make_data failed"
    mv "$gen.tmp" "$gen"
fi
gen_id=$(sha256sum "$repo/bench/scale/make_data.cpp" | cut -c1-16)

# ---------------------------------------------------------------- 3. data (reused when unchanged)
npresent=$((nreads - nreads / 3))
nabsent=$((nreads / 3))
ddir=$work/data/ref-$size-s$seed
rdir=$ddir/reads-r$nreads
ref=$ddir/ref.fa
reads=$rdir/reads.fq
reads_bgzf=$rdir/reads.bgzf.fq.gz
mkdir -p "$rdir"
if [[ ! -s "$ref" || "$(cat "$ddir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
    log "data: random reference of $size bp (seed $seed)"
    rm -f "$ddir/stamp" "$rdir/stamp"
    "$gen" --size "$size" --seed "$seed" --ref "$ref" 2> "$ddir/make_data.log" ||
        { cat "$ddir/make_data.log" >&2; die "make_data --ref failed"; }
    echo "$gen_id" > "$ddir/stamp"
fi
if [[ ! -s "$reads" || ! -s "$reads_bgzf" || "$(cat "$rdir/stamp" 2>/dev/null)" != "$gen_id" ]]; then
    log "data: $npresent reads of the reference and $nabsent absent reads, 150 bp, interleaved 2:1"
    rm -f "$rdir/stamp"
    "$gen" --size "$size" --seed "$seed" --reads "$npresent" --present "$rdir/present.fq" 2> "$rdir/make_data.log" ||
        { cat "$rdir/make_data.log" >&2; die "make_data --present failed"; }
    "$gen" --reads "$nabsent" --absent "$rdir/absent.fq" --absent-seed $((seed + 1000003)) 2>> "$rdir/make_data.log" ||
        { cat "$rdir/make_data.log" >&2; die "make_data --absent failed"; }
    # After every second present record, one absent record; whatever is left of either follows.
    awk -v absf="$rdir/absent.fq" '
        function absent_record(   r, l, line) {
            r = ""
            for (l = 1; l <= 4; ++l) {
                if ((getline line < absf) <= 0) return ""
                r = r (l > 1 ? "\n" : "") line
            }
            return r
        }
        {
            rec = $0
            for (l = 2; l <= 4; ++l) { getline line; rec = rec "\n" line }
            print rec
            if (++c % 2 == 0) { r = absent_record(); if (r != "") print r }
        }
        END { while ((r = absent_record()) != "") print r }' "$rdir/present.fq" > "$reads.tmp"
    mv "$reads.tmp" "$reads"
    rm -f "$rdir/present.fq" "$rdir/absent.fq"
    got=$(($(wc -l < "$reads") / 4))
    [[ $got -eq $nreads ]] || die "interleaving made $got reads, not $nreads"
    log "data: BGZF copy (bgzip -@ $ncores)"
    bgzip -@ "$ncores" -c "$reads" > "$reads_bgzf.tmp" || die "bgzip failed"
    mv "$reads_bgzf.tmp" "$reads_bgzf"
    echo "$gen_id" > "$rdir/stamp"
fi

# ---------------------------------------------------------------- 4. machine facts
git_head=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
git_dirty=$(git --no-optional-locks -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
[[ -n "$cpu_model" ]] || cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
kmc_version=NA
if [[ $skip_kmc -eq 0 ]]; then
    kmc_version=$({ kmc 2>&1 || true; } | sed -n 's/.*K-Mer Counter (KMC) ver\. *\([^ ]*\).*/\1/p' | head -1)
    [[ -n "$kmc_version" ]] || kmc_version=$(dpkg-query -W -f='${Version}' kmc 2>/dev/null || echo unknown)
fi
meta=$out/meta.txt
{
    echo "date=$(date -u '+%F %T UTC')"
    echo "cpu=$cpu_model"
    echo "nproc=$ncores"
    echo "mem_total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
    echo "mem_available_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)"
    echo "kernel=$(uname -r)"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "git_commit=$git_head"
    echo "git_dirty=$([[ $git_dirty -eq 0 ]] && echo no || echo "yes ($git_dirty tracked files)")"
    echo "qmer=$qmer"
    echo "qmer_version=$("$qmer" --version 2>&1 | head -1)"
    echo "qmer_sha256=$(sha256sum "$qmer" | cut -c1-16)"
    echo "qf_bench=$([[ $skip_qf -eq 1 ]] && echo skipped || echo "$qf_bench")"
    echo "kmc_version=$([[ $skip_kmc -eq 1 ]] && echo skipped || echo "$kmc_version")"
    echo "bgzip_version=$(bgzip --version 2>&1 | head -1)"
    echo "threads=$threads_list"
    echo "size_bp=$size"
    echo "reads=$nreads ($npresent present, $nabsent absent, 150 bp)"
    echo "reps=$reps"
    echo "qf_slots_log2=$qf_q"
    echo "qf_fill=0.7"
    echo "make_data=$gen_id"
} > "$meta"
log "qmer $(cut -c1-10 <<< "$git_head"), $ncores cores, $cpu_model; threads $threads_list; results in $out"

# ---------------------------------------------------------------- 5. measuring
runs=$out/runs.csv
echo "tool,case,threads,rep,wall_s,cpu_s,peak_rss_kb" > "$runs"
qf_csv=$out/qf_threads.csv
rm -f "$qf_csv"
scratch=$work/scratch
idx_dir=$work/index
rm -rf "$scratch" "$idx_dir"
mkdir -p "$scratch" "$idx_dir"
tv=$scratch/time.txt

# timed TOOL CASE T REP -- CMD...: runs CMD under /usr/bin/time -v (stdout and stderr to
# logs/TOOL-CASE.log) and appends a row to runs.csv: wall from bash's microsecond clock around it
# (GNU time prints 10 ms steps), CPU user + sys and peak RSS from time -v.
timed() {
    local tool=$1 case=$2 t=$3 rep=$4; shift 5
    local logf=$out/logs/$tool-$case.log t0 t1 wall cpu rss
    t0=$EPOCHREALTIME
    if ! /usr/bin/time -v -o "$tv" "$@" > "$logf" 2>&1; then
        tail -5 "$logf" >&2
        die "failed: $* (log: $logf)"
    fi
    t1=$EPOCHREALTIME
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$tv")
    rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tv")
    echo "$tool,$case,$t,$rep,$wall,$cpu,$rss" >> "$runs"
    log "  $tool $case -t $t: ${wall%???} s wall, $cpu s CPU, $((rss / 1024)) MiB"
}

# index_equal A B: whether two indexes are the same bytes apart from the command line that A's
# header records (the same length in B: only -t differs) and the checksum (the last 8 bytes).
index_equal() {
    local a=$1 b=$2 size cmd off
    size=$(stat -c %s "$a")
    [[ $(stat -c %s "$b") -eq $size ]] || return 1
    cmp -s "$a" "$b" && return 0
    cmd=$("$qmer" info --json "$a" | sed -n 's/^  "command": "\(.*\)",\{0,1\}$/\1/p')
    [[ -n "$cmd" ]] || return 1
    off=$(head -c 1048576 "$a" | grep -obaF -- "$cmd" | head -1 | cut -d: -f1 || true)
    [[ -n "$off" ]] || return 1
    # cmp -l: 1-based offsets of the differing bytes; any outside the two spans fails
    { cmp -l "$a" "$b" || true; } | awk -v lo="$off" -v hi=$((off + ${#cmd})) -v sum=$((size - 8)) '
        ($1 > lo && $1 <= hi) || $1 > sum { next }
        { bad = 1; exit }
        END { exit bad }'
}

# The reference T: the smallest thread count (1 unless --threads lacks it). Its first index and
# its query TSV are what the others are compared with.
t_ref=${threads[0]}
declare -A index_same=()
declare -A tsv_same=()
cat "$ref" "$reads" "$reads_bgzf" > /dev/null  # into the page cache, for every rep alike

# Repetitions outermost, thread counts within, tools within those: a slow spell of the machine
# hits neighbouring thread counts and all tools alike.
for rep in $(seq 1 "$reps"); do
    for t in "${threads[@]}"; do
        log "rep $rep/$reps, $t thread(s)"
        # (1) the filters' concurrent inserts and queries, once per thread count (it rotates over
        # the filters internally)
        if [[ $skip_qf -eq 0 && $rep -eq 1 ]]; then
            qdir=$scratch/qf-t$t
            mkdir -p "$qdir"
            "$qf_bench" --threads-only --threads "$t" --slots-log2 "$qf_q" --fill 0.7 --out "$qdir" \
                > "$out/logs/qf_bench-t$t.log" 2>&1 ||
                { tail -5 "$out/logs/qf_bench-t$t.log" >&2; die "qf_qf_bench failed at $t thread(s)"; }
            [[ -s "$qdir/threads.csv" ]] || die "qf_qf_bench wrote no $qdir/threads.csv"
            if [[ ! -s "$qf_csv" ]]; then cat "$qdir/threads.csv" > "$qf_csv"; else tail -n +2 "$qdir/threads.csv" >> "$qf_csv"; fi
            log "  qf_qf_bench: $(awk -F, 'NR > 1 { printf "%s%s %.1f", sep, $1, $5; sep = ", " } END { print " Mops/s inserts" }' "$qdir/threads.csv")"
        fi

        # (2) the index, and KMC counting the same reference
        # The index records its command line: the output's name is padded so that every T's
        # command line has the same length (t2_.qmer beside t16.qmer), and index_equal can
        # compare the files byte for byte outside that one string.
        printf -v pad '%*s' $((${#threads[-1]} - ${#t})) ''
        idx=$idx_dir/t$t${pad// /_}.qmer
        rm -f "$idx"
        timed qmer index "$t" "$rep" -- "$qmer" index -t "$t" -o "$idx" "$ref"
        # every index (every rep, every T) against the first one built, with t_ref threads
        if [[ $rep -eq 1 && $t -eq $t_ref ]]; then
            cp "$idx" "$idx_dir/first.qmer"
        elif index_equal "$idx_dir/first.qmer" "$idx"; then
            [[ -n "${index_same[$t]-}" ]] || index_same[$t]=yes
        else
            index_same[$t]=no
            log "  warning: the index built with $t threads (rep $rep) differs from the first, built with $t_ref"
        fi
        if [[ $skip_kmc -eq 0 ]]; then
            rm -rf "$scratch/kmc_tmp" "$scratch/kmc.kmc_pre" "$scratch/kmc.kmc_suf"
            mkdir -p "$scratch/kmc_tmp"
            timed kmc count "$t" "$rep" -- kmc -k31 -ci1 -cs255 -fm -t"$t" "$ref" "$scratch/kmc" "$scratch/kmc_tmp"
            rm -rf "$scratch/kmc_tmp" "$scratch/kmc.kmc_pre" "$scratch/kmc.kmc_suf"
        fi

        # (3) queries: plain FASTQ, BGZF, --quick (plain)
        timed qmer query-plain "$t" "$rep" -- "$qmer" query -t "$t" -o /dev/null "$idx" "$reads"
        timed qmer query-bgzf "$t" "$rep" -- "$qmer" query -t "$t" -o /dev/null "$idx" "$reads_bgzf"
        timed qmer query-quick "$t" "$rep" -- "$qmer" query --quick -t "$t" -o /dev/null "$idx" "$reads"
        if [[ $rep -eq 1 ]]; then
            # the per-read TSV, untimed, once per thread count, against the reference T's
            tsv=$scratch/query-t$t.tsv
            "$qmer" query -q -t "$t" -o "$tsv" "$idx_dir/first.qmer" "$reads" > "$out/logs/qmer-query-tsv.log" 2>&1 ||
                { tail -5 "$out/logs/qmer-query-tsv.log" >&2; die "qmer query -o TSV failed at $t thread(s)"; }
            # shellcheck disable=SC2034  # tsv_same is read through check_summary's nameref
            if [[ $t -ne $t_ref ]]; then
                if cmp -s "$tsv" "$scratch/query-t$t_ref.tsv"; then tsv_same[$t]=yes; else
                    tsv_same[$t]=no
                    log "  warning: the query TSV with $t threads differs from the one with $t_ref"
                fi
                rm -f "$tsv"
            fi
        fi
        rm -f "$idx"
    done
done
rm -f "$scratch/query-t$t_ref.tsv"

# ---------------------------------------------------------------- 6. tables, checks, plot
# speedup.csv: the best (lowest) wall of every case and thread count; speed-up against 1 thread
awk -F, -v OFS=, '
    NR == 1 { next }
    {
        c = $1 "-" $2
        if (!(c in seen)) { seen[c] = 1; cases[++nc] = c }
        if (!(($3) in tseen)) { tseen[$3] = 1; ts[++nt] = $3 + 0 }
        k = c SUBSEP $3
        if (!(k in best) || $5 + 0 < best[k]) best[k] = $5 + 0
    }
    END {
        print "case,threads,best_wall_s,speedup_vs_1,efficiency"
        for (i = 1; i <= nc; ++i)
            for (j = 1; j <= nt; ++j) {
                k = cases[i] SUBSEP ts[j]
                if (!(k in best)) continue
                one = cases[i] SUBSEP 1
                if (one in best && best[k] > 0) {
                    s = best[one] / best[k]
                    print cases[i], ts[j], sprintf("%.6f", best[k]), sprintf("%.4f", s), sprintf("%.4f", s / ts[j])
                } else print cases[i], ts[j], sprintf("%.6f", best[k]), "NA", "NA"
            }
    }' "$runs" > "$out/speedup.csv"

check_summary() {  # name of an associative array: "yes (T, T)" / "NO at T, T" / "n/a"
    local -n m=$1
    local same=() differ=() t
    for t in "${threads[@]}"; do
        [[ -n "${m[$t]-}" ]] || continue
        if [[ ${m[$t]} == yes ]]; then same+=("$t"); else differ+=("$t"); fi
    done
    if [[ ${#differ[@]} -gt 0 ]]; then echo "NO: differs at ${differ[*]} thread(s) from $t_ref thread(s)"
    elif [[ ${#same[@]} -gt 0 ]]; then echo "yes (${same[*]} thread(s) against $t_ref thread(s))"
    else echo "n/a (nothing to compare)"; fi
}
{
    echo "index_identical_across_threads=$(check_summary index_same) [every rep's index against the first, byte for byte outside the recorded command line and the checksum]"
    echo "query_tsv_identical_across_threads=$(check_summary tsv_same) [rep 1, plain FASTQ, the first index]"
    echo "index_bytes=$(stat -c %s "$idx_dir/first.qmer")"
    echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "finished=$(date -u '+%F %T UTC')"
} >> "$meta"
rm -f "$idx_dir/first.qmer"

/usr/bin/python3 "$here/plot.py" "$out" || die "plot.py failed"
log "index identical across threads: $(sed -n 's/^index_identical_across_threads=//p' "$meta")"
log "query TSV identical across threads: $(sed -n 's/^query_tsv_identical_across_threads=//p' "$meta")"
log "done: $out/summary.md"
