#!/usr/bin/env bash
# Load and faults, measured (issue 18, item 5). One run:
#   1. load: one `qmer query` alone, then PROCS (8) at once on the same index with 2 threads each,
#      as a default query and with --mmap (on a 2-core machine: 16 threads on 2 cores); every
#      output compared with the lone run's; each process's peak RSS (its JSON summary) and all
#      together's (the sum of their Pss, sampled every 0.1 s) recorded;
#   2. faults made mid-run (each lands after the run's temporaries exist; exit 0 in the CSV means
#      the run had ended before the fault): a reads file that grows, is truncated or is replaced; a disk that
#      fills while --matched is written (a 4 MiB tmpfs, root only; skipped with the reason
#      otherwise); the output folder removed; SIGTERM; SIGKILL (and the next run into the folder);
#   3. bad inputs: each must give exit != 0, one stderr line, and no file under the output's name;
#   4. files lost: every input's SHA-256 before and after (must be unchanged).
# Writes results/DATE-load.csv, results/DATE-faults.csv and a verdict line per part on stdout.
#
# usage: bench/reliability/load_and_faults.sh [QMER]   (default: build/release/qmer)
# env:   SIZE (reference bp, default 50,000,000), READS (reads per half, default 400,000),
#        PROCS (8), WORK (bench/reliability/work; git-ignored)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
qmer=$(realpath "${1:-$here/../../build/release/qmer}")
size=${SIZE:-50000000}
nreads=${READS:-400000}
procs=${PROCS:-8}
work=${WORK:-$here/work}
day=$(date +%F)
mkdir -p "$work/bin" "$here/results"
cd "$work"
log() { echo "[reliability] $*" >&2; }

# ---- data (fixed seeds; reused when present)
gen=bin/make_data
if [[ ! -x $gen || $here/../scale/make_data.cpp -nt $gen ]]; then
    g++ -O2 -std=c++20 -o "$gen" "$here/../scale/make_data.cpp"
fi
if [[ ! -s ref.fa || ! -s reads.fq ]]; then
    log "making a $size bp reference and 2 x $nreads reads"
    "$gen" --size "$size" --seed 11 --ref ref.fa --reads "$nreads" --read-seed 12 --error 0.01 \
        --present present.fq --absent absent.fq --absent-seed 13 2> /dev/null
    # Present and absent reads interleaved in blocks: a realistic mix for the verdicts.
    paste -d '\n' <(paste - - - - < present.fq) <(paste - - - - < absent.fq) | tr '\t' '\n' \
        > reads.fq
    rm -f present.fq absent.fq
fi
[[ -s ref.qmer ]] || "$qmer" index -q -t 2 -o ref.qmer ref.fa
sha256sum ref.fa reads.fq ref.qmer > inputs.sha256

# ---- 1. load
# The machine's peak is the largest sum of the queries' proportional set sizes (Pss: a page shared
# by n processes counts 1/n in each), sampled every 0.1 s: other processes on the machine do not
# enter it. The default query reads the index into its own huge pages (one copy per process);
# --mmap answers from the page cache, one copy for all.
strip_timing() { grep -v -E '"(wall_seconds|cpu_seconds|reads_per_second|peak_rss_bytes)"' "$1"; }
field() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1"; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
index_bytes=$(stat -c %s ref.qmer)
load_csv=$here/results/$day-load.csv
echo "date,cores,load_before,mode,procs,threads_each,reads,index_mib,lone_wall_s,all_wall_s,failed,identical_outputs,lone_rss_mib,max_rss_each_mib,machine_peak_pss_mib" > "$load_csv"
run_load() { # mode extra-args...
    local mode=$1
    shift
    log "load ($mode): one query alone, then $procs at once"
    rm -rf load && mkdir load
    local start lone_wall all_wall load_before
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    start=$EPOCHREALTIME
    "$qmer" query -q -t 2 "$@" -o load/lone.tsv --summary load/lone.json ref.qmer reads.fq
    lone_wall=$(elapsed "$start")
    start=$EPOCHREALTIME
    local pids=() i
    for i in $(seq "$procs"); do
        "$qmer" query -q -t 2 "$@" -o "load/q$i.tsv" --summary "load/q$i.json" ref.qmer reads.fq &
        pids+=($!)
    done
    (
        while :; do
            { cat "${pids[@]/#//proc/}"/smaps_rollup 2> /dev/null || true; } |
                awk '/^Pss:/ { s += $2 } END { print s + 0 }'
            sleep 0.1
        done
    ) > load/pss.txt &
    local sampler=$! failed=0 p
    for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
    all_wall=$(elapsed "$start")
    kill "$sampler" 2> /dev/null || true
    local peak_pss identical=0 max_rss=0 rss
    peak_pss=$(sort -n load/pss.txt | tail -1)
    for i in $(seq "$procs"); do
        if cmp -s load/lone.tsv "load/q$i.tsv" &&
            cmp -s <(strip_timing load/lone.json) <(strip_timing "load/q$i.json"); then
            identical=$((identical + 1))
        fi
        rss=$(field "load/q$i.json" peak_rss_bytes)
        if ((rss > max_rss)); then max_rss=$rss; fi
    done
    echo "$day,$(nproc),$load_before,$mode,$procs,2,$(grep -c '^+$' reads.fq),$((index_bytes >> 20)),$lone_wall,$all_wall,$failed,$identical,$(($(field load/lone.json peak_rss_bytes) >> 20)),$((max_rss >> 20)),$((peak_pss >> 10))" >> "$load_csv"
    echo "load ($mode): $procs queries at once: $failed failed, $identical of $procs outputs identical to the lone run; wall $all_wall s (lone $lone_wall s); peak RSS each <= $((max_rss >> 20)) MiB, all together (Pss) $((peak_pss >> 10)) MiB; index $((index_bytes >> 20)) MiB"
}
run_load default
run_load mmap --mmap

# ---- 2. faults
faults_csv=$here/results/$day-faults.csv
echo "fault,exit,stderr_lines,final_files_left,temporaries_left,message" > "$faults_csv"
record() { # fault exit folder final_names...
    local fault=$1 status=$2 folder=$3
    shift 3
    local left=0 f
    for f in "$@"; do [[ -e $f ]] && left=$((left + 1)); done
    local temps=0
    [[ -d $folder ]] && temps=$(find "$folder" -maxdepth 1 -name '.*.qmer-tmp-*' | wc -l)
    local lines msg
    lines=$(wc -l < fault.err)
    msg=$(head -1 fault.err | tr ',' ';')
    echo "$fault,$status,$lines,$left,$temps,$msg" >> "$faults_csv"
    echo "fault: $fault: exit $status, $lines stderr line(s), $left final file(s), $temps temporaries: $msg"
}
# Starts a query in the background writing into folder f/; waits until its temporaries exist.
start_query() { # reads outputs...
    local reads=$1
    shift
    "$qmer" query -q -t 2 "$@" ref.qmer "$reads" 2> fault.err &
    qpid=$!
    for _ in $(seq 500); do
        [[ -n $(find f -maxdepth 1 -name '.*.qmer-tmp-*' 2> /dev/null) ]] && return 0
        sleep 0.01
    done
}
# Sets qstatus to the query's exit status (0 means the fault came after the run had ended).
finish() {
    qstatus=0
    wait "$qpid" || qstatus=$?
}
fresh() { rm -rf f && mkdir f; }

fresh && cp reads.fq f/in.fq
start_query f/in.fq -o f/out.tsv --matched f/m.fq
head -c 1000000 reads.fq >> f/in.fq
finish
record "reads file grows while read" "$qstatus" f f/out.tsv f/m.fq

fresh && cp reads.fq f/in.fq
start_query f/in.fq -o f/out.tsv --matched f/m.fq
truncate -s "$(($(stat -c %s f/in.fq) / 2))" f/in.fq
finish
record "reads file truncated while read" "$qstatus" f f/out.tsv f/m.fq

fresh && cp reads.fq f/in.fq && head -c 4000000 reads.fq > f/other.fq
start_query f/in.fq -o f/out.tsv --matched f/m.fq
mv f/other.fq f/in.fq
finish
record "reads file replaced while read" "$qstatus" f f/out.tsv f/m.fq

fresh
if mkdir -p full && mount -t tmpfs -o size=4m tmpfs full 2> /dev/null; then
    mkdir -p f && "$qmer" query -q -t 2 -o f/out.tsv --matched full/m.fq ref.qmer reads.fq \
        2> fault.err && s=0 || s=$?
    record "disk fills while --matched is written (4 MiB tmpfs)" "$s" full full/m.fq f/out.tsv
    umount full
else
    echo "fault,skipped,,,,cannot mount a tmpfs (not root or not allowed)" >> "$faults_csv"
fi

fresh
start_query reads.fq -o f/out.tsv --summary f/s.json --matched f/m.fq
rm -rf f
finish
record "output folder removed during the run" "$qstatus" f f/out.tsv f/s.json f/m.fq

fresh
start_query reads.fq -o f/out.tsv --matched f/m.fq
kill -TERM "$qpid"
finish
record "SIGTERM during the run" "$qstatus" f f/out.tsv f/m.fq

fresh
start_query reads.fq -o f/out.tsv --matched f/m.fq
kill -KILL "$qpid"
finish
record "SIGKILL during the run" "$qstatus" f f/out.tsv f/m.fq
touch -d '1 minute ago' f/.*.qmer-tmp-*
"$qmer" query -q -t 2 -o f/out.tsv --matched f/m.fq ref.qmer reads.fq 2> fault.err && s=0 || s=$?
# Here the outputs are expected (a clean run); the temporaries left by the kill must be gone.
record "next run after SIGKILL (leftovers aged 1 min)" "$s" f

# ---- 3. bad inputs: exit != 0, one line, no output file
log "bad inputs"
rm -rf bad && mkdir bad && cd bad
printf '@r1\nACGT\n+\nII\n' > short_quality.fq
printf '\x00\x01binary' > binary.fq
head -c 100000 ../reads.fq | gzip -c | head -c 20000 > truncated.fq.gz
xz -c < /dev/null > empty.xz 2> /dev/null || true
head -c 1000 ../reads.fq | xz -c > reads.fq.xz 2> /dev/null || true
head -c 4096 ../ref.qmer > truncated.qmer
cp ../ref.qmer flipped.qmer && printf 'X' | dd of=flipped.qmer bs=1 seek=5000 conv=notrunc 2> /dev/null
bad_total=0 bad_ok=0
try_bad() { # expected-exit description args...
    local want=$1 what=$2
    shift 2
    rm -f out.tsv
    local s=0
    "$qmer" "$@" 2> err.txt > /dev/null || s=$?
    bad_total=$((bad_total + 1))
    local lines
    lines=$(wc -l < err.txt)
    if [[ $s == "$want" && $lines == 1 && ! -e out.tsv ]]; then
        bad_ok=$((bad_ok + 1))
    else
        echo "bad input: $what: exit $s (want $want), $lines lines: $(head -1 err.txt)"
    fi
    echo "bad_input,$s,$lines,$([[ -e out.tsv ]] && echo 1 || echo 0),0,$what: $(head -1 err.txt | tr ',' ';')" >> "$faults_csv"
}
try_bad 3 "missing reads file" query -o out.tsv ../ref.qmer no_such.fq
try_bad 3 "a directory as reads" query -o out.tsv ../ref.qmer .
try_bad 3 "quality shorter than sequence" query -o out.tsv ../ref.qmer short_quality.fq
try_bad 3 "binary data" query -o out.tsv ../ref.qmer binary.fq
try_bad 3 "truncated gzip" query -o out.tsv ../ref.qmer truncated.fq.gz
[[ -s reads.fq.xz ]] && try_bad 3 "xz-compressed reads" query -o out.tsv ../ref.qmer reads.fq.xz
try_bad 4 "truncated index" query -o out.tsv truncated.qmer ../reads.fq
try_bad 4 "one byte of the index changed" query -o out.tsv flipped.qmer ../reads.fq
try_bad 4 "reads given as the index" query -o out.tsv ../reads.fq ../reads.fq
try_bad 2 "output is the reads file" query -o ../reads.fq ../ref.qmer ../reads.fq
try_bad 2 "k out of range" index -k 40 -o out.tsv ../ref.fa
try_bad 5 "output in a missing folder" query -o no/such/out.tsv ../ref.qmer ../reads.fq
cd ..
echo "bad inputs: $bad_ok of $bad_total gave the expected exit, one line and no output"

# ---- 4. files lost
if sha256sum --quiet -c inputs.sha256; then lost=0; else lost=$(sha256sum -c inputs.sha256 2> /dev/null | grep -c -v ': OK$' || true); fi
echo "files lost: $lost"
echo "files_lost,$lost,,,,inputs checked by SHA-256 before and after" >> "$faults_csv"
log "results: $here/results/$day-load.csv, $faults_csv"
