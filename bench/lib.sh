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

