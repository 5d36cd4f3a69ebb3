#!/usr/bin/env bash
# Set-up of the ns-3 side-by-side benchmark: installs Debian's ns-3 (libns3-dev, 3.37)
# and a C++ compiler when missing, then compiles dumbbell.cc into build/dumbbell
# (g++ -O2 against pkg-config's ns3 modules) when the binary is missing or older than
# the source. Safe to re-run. Called by run.py; the project's ./setup.sh does not
# install ns-3.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'vs_ns3/setup.sh: %s\n' "$*" >&2; exit 1; }

modules=(ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control)

missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v taskset >/dev/null || missing+=(util-linux)
if ! command -v pkg-config >/dev/null || ! pkg-config --exists "${modules[@]}"; then
    missing+=(libns3-dev)
fi
if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "please install: ${missing[*]} (no apt-get here)"
    sudo=""
    [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
    say "installing ${missing[*]}"
    apt-cache show libns3-dev >/dev/null 2>&1 || $sudo apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}"
fi
pkg-config --exists "${modules[@]}" || die "ns-3's pkg-config modules not found: ${modules[*]}"

mkdir -p build
if [[ ! -x build/dumbbell || dumbbell.cc -nt build/dumbbell || setup.sh -nt build/dumbbell ]]; then
    say "compiling build/dumbbell against ns-3 $(pkg-config --modversion ns3-core)"
    # Debian's .pc files carry a stray '-I/usr;' (harmless: a directory that is not there)
    # and name libgsl.so/libgslcblas.so by path, which only libgsl-dev provides; ns-3's
    # own libraries already link them, so paths that are not there are left out.
    read -r -a cflags <<<"$(pkg-config --cflags "${modules[@]}")"
    libs=()
    for w in $(pkg-config --libs "${modules[@]}"); do
        [[ "$w" == /* && ! -e "$w" ]] || libs+=("$w")
    done
    g++ -O2 -std=c++17 -o build/dumbbell.tmp dumbbell.cc "${cflags[@]}" "${libs[@]}"
    mv build/dumbbell.tmp build/dumbbell
fi
