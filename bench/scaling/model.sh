#!/usr/bin/env bash
# The scaling model's measurements (issue 40, item 5): each pipeline stage's capacity on ONE
# thread, on the machine at hand (ours have 2 cores), from which bench/scaling/model.py predicts
# the speed-up at 8, 16 and 64 threads. Nothing here needs more than one core; run it on an idle
# machine (it records the load average before and after).
#
# What it measures, best of --reps, one thread each:
#   floor     decompress + parse only (bench/peers/kseq_floor.cpp) of the reads, plain, gzip and
#             BGZF, and of the reference
#   reader    qmer's serial reader, and the chunked reader's cutting and parsing stages
#             (bench/io/reader_bench): the input stage's capacity before and after issue 40
#   load      qmer query of one read at -t 1 and -t 2: loading the index (its parallel part from
#             the difference: t1 = s + p, t2 = s + p / 2)
#   query     qmer query -t 1 (default and --quick) on the plain reads: total time; the lookups'
#             share is the total less the load and the floor
#   index     qmer index -t 1 --timings: each phase's wall and CPU time
#   writer    the fill's serial stage in seconds as `qmer index -t 2 --timings` reports it, and
#             perf samples of the build's writer (the rank-select writer and the sink that
#             feeds it, the index file's writes) as a share of a one-thread build, where perf works
#   qf        qf_qf_bench --threads-only at 1 thread (the papers' experiment (a))
# and writes model.csv (stage,case,seconds,detail) into --out, then runs model.py on it.
#
# usage: bench/scaling/model.sh [--size BP] [--reads N] [--reps N] [--work DIR] [--out DIR]
#                               [--qmer PATH] [--qf-slots-log2 Q]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
size=49000000
reads=900000
reps=3
work=$here/work
out=$here/results/model-$(date -u +%Y-%m-%dT%H%M)
qmer=$repo/build/release/qmer
qf_bench=$repo/build/release/bench/qf_qf_bench
qf_slots=24

while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift 2 ;;
        --reads) reads=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --qmer) qmer=$2; shift 2 ;;
        --qf-slots-log2) qf_slots=$2; shift 2 ;;
        -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "model.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

log() { echo "[model $(date -u +%H:%M:%S)] $*" >&2; }
for tool in g++ bgzip gzip /usr/bin/time python3; do
    command -v "$tool" >/dev/null || {
        echo "model.sh: $tool is missing (Debian: g++, tabix, gzip, time, python3)" >&2
        exit 1
    }
done
[[ -x "$qmer" && -x "$qf_bench" ]] || {
    echo "model.sh: build first: cmake --build --preset release --target qmer qf_qf_bench" >&2
    exit 1
}

mkdir -p "$work/bin" "$work/model" "$out"
data=$work/model
floor=$work/bin/kseq_floor
if [[ ! -x "$floor" || "$repo/bench/peers/kseq_floor.cpp" -nt "$floor" ]]; then
    log "compiling kseq_floor"
    g++ -std=c++20 -O2 -I"$repo" -o "$floor" "$repo/bench/peers/kseq_floor.cpp" -lhts
fi
gen=$work/bin/make_data
if [[ ! -x "$gen" || "$repo/bench/scale/make_data.cpp" -nt "$gen" ]]; then
    log "compiling make_data"
    g++ -O2 -std=c++20 -o "$gen" "$repo/bench/scale/make_data.cpp"
fi

# Data: a random reference and reads, 2/3 from it, 1/3 absent (one file), made once per size.
stamp=$data/made-$size-$reads
if [[ ! -e "$stamp" ]]; then
    log "making data: $size bp reference, $reads reads"
    rm -f "$data"/made-*
    present=$((reads * 2 / 3))
    "$gen" --size "$size" --ref "$data/ref.fa" --reads "$present" --present "$data/present.fq" \
        2>/dev/null
    "$gen" --size "$size" --reads $((reads - present)) --absent "$data/absent.fq" 2>/dev/null
    cat "$data/present.fq" "$data/absent.fq" >"$data/reads.fq"
    rm -f "$data/present.fq" "$data/absent.fq"
    gzip -6 -c "$data/reads.fq" >"$data/reads.fq.gz"
    bgzip -c "$data/reads.fq" >"$data/reads.fq.bgz"
    touch "$stamp"
fi

csv=$out/model.csv
echo "stage,case,seconds,detail" >"$csv"
row() { echo "$1,$2,$3,$4" >>"$csv"; }
# Wall seconds of a command (stdout and stderr to files in $out/logs).
mkdir -p "$out/logs"
wall() {
    local name=$1
    shift
    /usr/bin/time -f "%e" -o "$out/logs/$name.time" "$@" >"$out/logs/$name.out" 2>"$out/logs/$name.err"
    cat "$out/logs/$name.time"
}
best() {  # best of $reps: best NAME CMD...
    local name=$1 b=""
    shift
    for ((r = 0; r < reps; r++)); do
        local t
        t=$(wall "$name" "$@")
        if [[ -z "$b" ]] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
    done
    echo "$b"
}

uptime >"$out/load_before.txt"
{
    echo "date=$(date -u '+%F %T %Z')"
    echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "nproc=$(nproc)"
    echo "commit=$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet || echo +dirty)"
    echo "size=$size reads=$reads reps=$reps"
} >"$out/meta.txt"

log "floor: reading only"
bytes_plain=$(stat -c %s "$data/reads.fq")
row floor reads_plain "$(best floor_plain "$floor" "$data/reads.fq")" "$bytes_plain bytes"
row floor reads_gzip "$(best floor_gzip "$floor" "$data/reads.fq.gz")" "$bytes_plain bytes"
row floor reads_bgzf "$(best floor_bgzf "$floor" "$data/reads.fq.bgz")" "$bytes_plain bytes"
row floor reference "$(best floor_ref "$floor" "$data/ref.fa")" "$(stat -c %s "$data/ref.fa") bytes"

# qmer's own readers (bench/io/reader_bench, its own 200 MB FASTQ of 150 bp reads): today's serial
# reader (the pipelines' input stage before issue 40), the chunked reader's serial cutting stage
# and one thread of its parsing stage, medians of 5 repetitions, bytes of FASTQ text per second.
reader_bench=$repo/build/release/bench/io_reader_bench
if [[ -x "$reader_bench" ]]; then
    log "qmer's readers (bench/io/reader_bench)"
    # One benchmark a run: the CSV reporter refuses runs whose counters differ.
    for b in sequence_reader/plain chunk_cut chunk_parse; do
        "$reader_bench" --benchmark_filter="^$b/repeats" \
            --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
            --benchmark_out="$out/logs/reader_bench.csv" --benchmark_out_format=csv \
            >"$out/logs/reader_bench.txt" 2>&1 || true
        # name,iterations,real_time,cpu_time,time_unit,bytes_per_second,...
        awk -F, '$1 ~ /_median"?$/ { gsub(/"/, "", $1); sub(/\/repeats:[0-9]+_median$/, "", $1);
                 printf "reader,%s,%s,bytes per second (median)\n", $1, $6 }' \
            "$out/logs/reader_bench.csv" >>"$csv"
    done
fi

log "index, one thread, with phase timings"
idx=$data/ref.qmer
best_index=""
for ((r = 0; r < reps; r++)); do
    t=$(wall index "$qmer" index -t 1 --timings -o "$idx" "$data/ref.fa")
    if [[ -z "$best_index" ]] || awk -v t="$t" -v b="$best_index" 'BEGIN { exit !(t < b) }'; then
        best_index=$t
        cp "$out/logs/index.err" "$out/logs/index_best.err"
    fi
done
row index total "$best_index" "wall"
# "[qmer index] reading k-mers:   0.529 s wall    0.519 s CPU   0.98 cores"
sed -n 's/^\[qmer index\] \(.*\): *\([0-9.]*\) s wall *\([0-9.]*\) s CPU.*/\1|\2|\3/p' \
    "$out/logs/index_best.err" | while IFS='|' read -r phase w c; do
    row index_phase "$phase" "$w" "cpu $c"
done

# The fill's serial stage as the build itself reports it (--timings: "X s serial", the in-order
# stage's own seconds, waits excluded), at two threads: with threads to spare each bin's middle is
# written by the thread that sorted it, so this is what stays serial at any thread count.
best_serial=""
for ((r = 0; r < reps; r++)); do
    "$qmer" index -t 2 --timings -o "$idx" "$data/ref.fa" 2>"$out/logs/index_t2.err" >/dev/null
    s=$(sed -n 's/^\[qmer index\] filling the table:.* \([0-9.]*\) s serial$/\1/p' \
        "$out/logs/index_t2.err")
    [[ -n "$s" ]] || continue
    if [[ -z "$best_serial" ]] || awk -v t="$s" -v b="$best_serial" 'BEGIN { exit !(t < b) }'; then
        best_serial=$s
    fi
done
[[ -z "$best_serial" ]] || row writer serial "$best_serial" "s, the fill's in-order stage at -t 2"

log "query of one read: loading the index, at one and two threads"
head -n 4 "$data/reads.fq" >"$data/one.fq"
row load t1 "$(best load1 "$qmer" query -t 1 -q -o /dev/null "$idx" "$data/one.fq")" "one read"
row load t2 "$(best load2 "$qmer" query -t 2 -q -o /dev/null "$idx" "$data/one.fq")" "one read"

log "query, one thread"
row query default "$(best query "$qmer" query -t 1 -q -o /dev/null "$idx" "$data/reads.fq")" plain
row query quick "$(best quick "$qmer" query -t 1 -q --quick -o /dev/null "$idx" "$data/reads.fq")" plain
row query default_bgzf "$(best query_bgzf "$qmer" query -t 1 -q -o /dev/null "$idx" "$data/reads.fq.bgz")" bgzf
row query default_gzip "$(best query_gzip "$qmer" query -t 1 -q -o /dev/null "$idx" "$data/reads.fq.gz")" gzip

# The build's serial writer inside the fill phase, from perf's samples (software clock: works in
# VMs without hardware counters). Symbols: the rank-select writer, the sink that widens a bin's
# offsets and calls it, and the index file's writes.
if command -v perf >/dev/null && perf record -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
    log "perf: the writer's share of a one-thread build"
    perf record -e cpu-clock -F 4000 -o "$out/logs/index.perf" \
        "$qmer" index -t 1 -q -o "$idx" "$data/ref.fa" >/dev/null 2>&1
    perf report -i "$out/logs/index.perf" --no-children --sort sym -g none --stdio 2>/dev/null |
        grep '%' >"$out/logs/index.perf.txt" || true
    share() { grep -E "$1" "$out/logs/index.perf.txt" | awk '{s += $1} END {printf "%.4f", s / 100}'; }
    row writer share "$(share 'rank_select_writer|superkmer_bins::append_to|_Function_handler<unsigned long \(std::span<unsigned long const|index_writer|uncached_writer')" "of all samples"
    row writer kernel_io "$(share '\[k\] (_copy_from_iter|iomap|ext4|blk|nvme|virtio)')" "of all samples"
fi

log "qf inserts, one thread (experiment (a), 2^$qf_slots slots)"
"$qf_bench" --threads-only --threads 1 --slots-log2 "$qf_slots" --out "$out/qf" 2>/dev/null
awk -F, 'NR > 1 { printf "qf,%s,%s,Mops/s insert (hit %s miss %s)\n", $1, $5, $6, $7 }' \
    "$out/qf/threads.csv" >>"$csv"

uptime >"$out/load_after.txt"
log "wrote $csv"
python3 "$here/model.py" "$csv" | tee "$out/model.md"
