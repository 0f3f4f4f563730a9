# shellcheck shell=bash
# Shell helpers shared by the benchmark scripts (bench/*/run.sh, bench/scale/build.sh). Sourced,
# not run; ensure_packages calls the script's own `log`.

# ensure_packages SCRIPT INSTALL PACKAGE...: installs the Debian packages that are missing, with
# apt-get (through sudo when not root). With INSTALL 0, names the missing ones and exits 1.
ensure_packages() {
    local script=$1 install=$2
    shift 2
    local missing=() p status
    for p in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [[ "$status" == "install ok installed" ]] || missing+=("$p")
    done
    [[ ${#missing[@]} -gt 0 ]] || return 0
    if [[ $install -eq 0 ]]; then
        echo "$script: missing packages (drop --no-install to install them): ${missing[*]}" >&2
        exit 1
    fi
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    log "installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}


# unused_results_dir BASE: BASE if no such path exists, else the first of BASEb, BASEc, ... BASEz
# that does not (a second run the same day keeps the first's results); exits 1 when all are taken.
unused_results_dir() {
    local base=$1 letter
    [[ -e "$base" ]] || { echo "$base"; return 0; }
    for letter in b c d e f g h i j k l m n o p q r s t u v w x y z; do
        [[ -e "$base$letter" ]] || { echo "$base$letter"; return 0; }
    done
    echo "unused_results_dir: $base and $base{b..z} all exist: give --out" >&2
    exit 1
}

# human_chr22_fasta OUT: 21.6 Mbp of human chromosome 22 (GRCh37 coordinates) as FASTA, one record
# per alignment block, from the Ensembl Compara primate alignment that the Debian package
# maffilter-examples ships (the caller installs it). The human rows of that alignment are the
# reference's own bases: their ungapped length equals the block's size field, which is checked.
# Records are named chr22_START (0-based start). The only eukaryote in Debian's example data big
# enough to stand for a host: the benchmarks use it where a host and bacteria differ in kingdom.
human_chr22_fasta() {
    local out=$1 maf
    maf=$(dpkg -L maffilter-examples | grep -E '/Compara\.epo_5_catarrhini_hsap-projected\.chr22\..*\.maf\.gz$' | head -1)
    [[ -n "$maf" && -f "$maf" ]] || { echo "human_chr22_fasta: maffilter-examples has no chr22 alignment" >&2; return 1; }
    zcat "$maf" | awk -v out="$out.part" '
        $1 == "s" && $2 ~ /^Hsap\./ {
            seq = $7; gsub(/-/, "", seq)
            if (length(seq) != $4) { print "human_chr22_fasta: block at " $3 " is not the reference'"'"'s bases" > "/dev/stderr"; exit 1 }
            if ($5 != "+") { print "human_chr22_fasta: block at " $3 " is on the minus strand" > "/dev/stderr"; exit 1 }
            print ">chr22_" $3 > out
            for (i = 1; i <= length(seq); i += 80) print toupper(substr(seq, i, 80)) > out
        }' || return 1
    mv "$out.part" "$out"
}
