#!/usr/bin/env bash
# Two qmer binaries on the same query, alternated: the CPU time (perf stat's task-clock) of each
# run, and the medians and minimums per binary with their ratio (B / A). For changes of a few
# percent on a machine whose runs move by 10-20%: the two binaries see the same load, run after
# run. Nothing else should run meanwhile (say the load with the figures).
#
# Usage: bench/query/alternate.sh A_QMER B_QMER INDEX READS [ROUNDS (6)] [-- QUERY OPTIONS...]
# e.g.   bench/query/alternate.sh /tmp/old/qmer build/release/qmer \
#            bench/peers/work/index/panel.qmer bench/peers/work/data/mix2_1870000/absent.fq 6 -- -t 1
set -euo pipefail
if [[ $# -lt 4 ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
a=$1 b=$2 index=$3 reads=$4
shift 4
rounds=6
if [[ $# -gt 0 && $1 != -- ]]; then
    rounds=$1
    shift
fi
[[ $# -gt 0 && $1 == -- ]] && shift
command -v perf >/dev/null || { echo "alternate.sh: needs perf (Debian: linux-perf)" >&2; exit 2; }
cpu_ms() {
    perf stat -x, -e task-clock "$1" query -x "$index" "${@:2}" "$reads" -o /dev/null 2>&1 >/dev/null |
        awk -F, '/task-clock/ { print $1 }'
}
times_a=() times_b=()
for ((r = 0; r < rounds; ++r)); do
    times_a+=("$(cpu_ms "$a" "$@")")
    times_b+=("$(cpu_ms "$b" "$@")")
done
python3 - "${times_a[*]}" "${times_b[*]}" "$*" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print(f"options: {sys.argv[3] or '(none)'}")
print("A ms: " + " ".join(f"{x:.0f}" for x in a))
print("B ms: " + " ".join(f"{x:.0f}" for x in b))
print(f"median A {statistics.median(a):.0f} B {statistics.median(b):.0f} B/A {statistics.median(b) / statistics.median(a):.3f}; "
      f"min A {min(a):.0f} B {min(b):.0f} B/A {min(b) / min(a):.3f}")
PY
