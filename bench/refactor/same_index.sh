#!/usr/bin/env bash
# same_index.sh OLD NEW: builds the same indexes with two qmer binaries and compares them byte for
# byte. Each binary runs in a folder of its own under the same relative command line (an index
# records its command line), so a refactoring that must not change the index format or its
# contents is checked on every build route: the default kind (counted build, super-k-mer bins,
# count-and-gather, spilled bins, plain hash), every other --filter, --append (merge and inserts)
# and a reference from stdin. The kinds other than the default are built with -t 1: their
# concurrent inserts (the cuckoo filter's evictions, a linear probing QF's placements, a Bloom
# filter's approximate size) make -t 2 indexes differ between two runs of one binary, and so do
# the default filter's k-mer by k-mer inserts: the appends that insert run with -t 1. Prints one line per case and exits non-zero if any pair differs.
# Needs g++ (bench/scale/make_data.cpp makes the random references). Scratch goes to a folder
# under $TMPDIR that is removed however the script ends.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 OLD_QMER NEW_QMER" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/same_index.XXXXXX")
trap 'rm -rf "$work"' EXIT

g++ -O2 -std=c++20 -o "$work/make_data" "$repo/bench/scale/make_data.cpp"
mkdir -p "$work/data"
cp "$repo/data/lambda_virus.fa.gz" "$work/data/"
"$work/make_data" --size 4000000 --seed 7 --ref "$work/data/random4M.fa" 2>/dev/null
"$work/make_data" --size 12000000 --seed 8 --repetitive --ref "$work/data/rep12M.fa" 2>/dev/null
"$work/make_data" --size 2000000 --seed 9 --ref "$work/data/more2M.fa" 2>/dev/null
for side in old new; do
    mkdir -p "$work/$side"
    ln -s "$([[ $side == old ]] && echo "$old" || echo "$new")" "$work/$side/qmer"
    ln -s ../data "$work/$side/data"
done

failed=0
n=0
# run NAME COMMAND...: COMMAND (from the folder, ./qmer ...) with each binary; compares *.qmer.
run() {
    local name=$1
    shift
    n=$((n + 1))
    local side
    for side in old new; do
        rm -f "$work/$side"/*.qmer
        (cd "$work/$side" && bash -c "$*" >"$work/$side.out" 2>"$work/$side.err") ||
            { echo "FAIL  $name: $side exited $? ($(tail -1 "$work/$side.err"))"; failed=1; return; }
    done
    local how
    how=$(grep -o 'distinct, index.*' "$work/new.err" | tail -1 || true)
    local f
    for f in "$work/old"/*.qmer; do
        local b
        b=$(basename "$f")
        if cmp -s "$f" "$work/new/$b"; then
            echo "same  $name ($b: $(stat -c %s "$f") bytes; $how)"
        else
            echo "DIFF  $name ($b)"
            failed=1
        fi
    done
}

run "default, lambda, -t 1" ./qmer index -t 1 -o a.qmer data/lambda_virus.fa.gz
run "default, lambda, -t 2" ./qmer index -t 2 -o a.qmer data/lambda_virus.fa.gz
run "default, random 4 Mbp, -t 1" ./qmer index -t 1 -o a.qmer data/random4M.fa
run "default, random 4 Mbp, -t 2" ./qmer index -t 2 -o a.qmer data/random4M.fa
run "default, repetitive 12 Mbp (count and gather), -t 2" ./qmer index -t 2 -o a.qmer data/rep12M.fa
run "default, repetitive 12 Mbp, -t 1" ./qmer index -t 1 -o a.qmer data/rep12M.fa
run "default, two references, -t 2" ./qmer index -t 2 -o a.qmer data/random4M.fa data/lambda_virus.fa.gz
run "default, --plain-hash, -t 2" ./qmer index --plain-hash -t 2 -o a.qmer data/random4M.fa
run "default, -k 21, -t 2" ./qmer index -k 21 -t 2 -o a.qmer data/random4M.fa
run "default, -k 15 (plain: no minimizer), -t 2" ./qmer index -k 15 -t 2 -o a.qmer data/random4M.fa
run "default, --fpr 0.0001 --seed 5" ./qmer index --fpr 0.0001 --seed 5 -t 2 -o a.qmer data/random4M.fa
run "default, --fill 0.5" ./qmer index --fill 0.5 -t 2 -o a.qmer data/random4M.fa
run "default, --cascading" ./qmer index --cascading -t 2 -o a.qmer data/random4M.fa
run "default, --expected above the count" ./qmer index --expected 20000000 -t 2 -o a.qmer data/random4M.fa
run "default, --expected below the count" ./qmer index --expected 1000 -t 2 -o a.qmer data/random4M.fa
run "default, to stdout" "./qmer index -t 2 -o - data/random4M.fa > out.qmer"
run "default, --max-memory 120M (spilled super-k-mers)" ./qmer index --max-memory 120M -t 2 -o a.qmer data/rep12M.fa
run "default, --plain-hash --max-memory 130M (spilled buckets)" ./qmer index --plain-hash --max-memory 130M -t 2 -o a.qmer data/rep12M.fa
run "default, --plain-hash --fpr 1e-9 --max-memory 190M" ./qmer index --plain-hash --fpr 1e-9 --max-memory 190M -t 2 -o a.qmer data/rep12M.fa
run "default, --plain-hash --fpr 1e-7 --max-memory 170M (passes)" ./qmer index --plain-hash --fpr 1e-7 --max-memory 170M -t 2 -o a.qmer data/rep12M.fa
run "default, --fpr 1e-7 --max-memory 170M (passes, crowded windows)" ./qmer index --fpr 1e-7 --max-memory 170M -t 2 -o a.qmer data/rep12M.fa
run "default, --fpr 1e-12 (concurrent table)" ./qmer index --fpr 1e-12 -t 2 -o a.qmer data/random4M.fa
run "default, stdin" "gzip -dc data/lambda_virus.fa.gz | ./qmer index -t 2 -o a.qmer -"
run "default, stdin and a file" "cat data/more2M.fa | ./qmer index -t 2 -o a.qmer - data/lambda_virus.fa.gz"
for kind in locally-locked bounded-growing linear-probing external-locks bloom blocked-bloom cuckoo; do
    run "$kind, lambda, -t 1" ./qmer index --filter $kind -t 1 -o a.qmer data/lambda_virus.fa.gz
    run "$kind, random 4 Mbp, -t 1" ./qmer index --filter $kind -t 1 -o a.qmer data/random4M.fa
    run "$kind, --expected 5000000, -t 1" ./qmer index --filter $kind --expected 5000000 -t 1 -o a.qmer data/random4M.fa
    run "$kind, --plain-hash, -k 21, -t 1" ./qmer index --filter $kind --plain-hash -k 21 -t 1 -o a.qmer data/random4M.fa
done
run "bloom, stdin with --expected" "cat data/more2M.fa | ./qmer index --filter bloom --expected 3000000 -t 1 -o a.qmer -"
run "bounded-growing, stdin" "cat data/more2M.fa | ./qmer index --filter bounded-growing -t 2 -o a.qmer -"
run "append (merge) onto default" "./qmer index -q -t 2 -o a.qmer data/random4M.fa && ./qmer index --append -t 2 -o a.qmer data/more2M.fa"
run "append (merge, new level) onto lambda" "./qmer index -q -t 2 -o a.qmer data/lambda_virus.fa.gz && ./qmer index --append -t 2 -o a.qmer data/random4M.fa"
run "append twice onto default" "./qmer index -q -t 2 -o a.qmer data/lambda_virus.fa.gz && ./qmer index -q --append -t 2 -o a.qmer data/more2M.fa && ./qmer index --append -t 1 -o a.qmer data/random4M.fa"
run "append from stdin onto default" "./qmer index -q -t 2 -o a.qmer data/random4M.fa && cat data/more2M.fa | ./qmer index --append -t 2 -o a.qmer -"
run "append onto --cascading (inserts)" "./qmer index -q --cascading -t 2 -o a.qmer data/random4M.fa && ./qmer index --append -t 1 -o a.qmer data/more2M.fa"
run "append onto --plain-hash" "./qmer index -q --plain-hash -t 2 -o a.qmer data/random4M.fa && ./qmer index --plain-hash --append -t 2 -o a.qmer data/more2M.fa"
run "append onto --fpr 1e-9" "./qmer index -q --fpr 1e-9 -t 2 -o a.qmer data/lambda_virus.fa.gz && ./qmer index --append -t 1 -o a.qmer data/more2M.fa"
run "append onto bounded-growing" "./qmer index -q --filter bounded-growing -t 2 -o a.qmer data/random4M.fa && ./qmer index --filter bounded-growing --append -t 1 -o a.qmer data/more2M.fa"
run "append onto bounded-growing, stdin" "./qmer index -q --filter bounded-growing -t 1 -o a.qmer data/lambda_virus.fa.gz && cat data/more2M.fa | ./qmer index --filter bounded-growing --append -t 1 -o a.qmer -"
run "append, --max-memory 100M (through a scratch file)" "./qmer index -q -t 2 -o a.qmer data/random4M.fa && ./qmer index --append --max-memory 100M --temp-dir . -t 1 -o a.qmer data/more2M.fa"

echo "$n cases; $([[ $failed == 0 ]] && echo 'every index identical' || echo 'SOME DIFFER OR FAILED')"
exit $failed
