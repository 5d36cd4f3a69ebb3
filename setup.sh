#!/usr/bin/env bash
# Sets collateral up from a fresh checkout, then runs the demo. Safe to re-run: each
# step is skipped when already done, and nothing is installed that is already present.
#   ./setup.sh            system packages, Rust, .venv with collateral built (release), demo
#   ./setup.sh --no-demo  the same without the demo
#   ./setup.sh --tests    the same, but collateral built as ./test.sh tests it (below)
set -euo pipefail
cd "$(dirname "$0")"

run_demo=1
build=release
case "${1:-}" in
    "") ;;
    --no-demo) run_demo=0 ;;
    --tests) run_demo=0 build=tests ;;
    *) echo "usage: ./setup.sh [--no-demo | --tests]" >&2; exit 2 ;;
esac

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 1; }

# 1. System packages, only those missing. iproute2 and ethtool are for the emulation
#    testbed (network namespaces, offload settings); a C toolchain links the Rust core.
have() { command -v "$1" >/dev/null || [[ -x "/usr/sbin/$1" || -x "/sbin/$1" ]]; }
missing=()
have cc || missing+=(build-essential)
if ! have cargo && ! have rustup && [[ ! -f "$HOME/.cargo/env" ]]; then
    have curl || missing+=(curl ca-certificates)  # to fetch rustup
fi
have ip || missing+=(iproute2)
have ethtool || missing+=(ethtool)
# A real browser for the HTML report's rendering test (headless Chromium).
have chromium || missing+=(chromium)
# Real measurement clients, run through the testbed by `collateral shell` and its tests.
have ping || missing+=(iputils-ping)
have irtt || missing+=(irtt)
have iperf3 || missing+=(iperf3)
have python3 || missing+=(python3)
if command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    missing+=(python3-venv)
fi
if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "please install: ${missing[*]} (no apt-get here)"
    sudo=""
    [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
    say "installing ${missing[*]}"
    $sudo apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# 2. Rust (stable, at least the workspace's rust-version).
if ! command -v cargo >/dev/null && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null; then
    if command -v rustup >/dev/null; then
        say "installing the stable Rust toolchain with rustup"
        rustup toolchain install stable --profile minimal && rustup default stable
    else
        say "installing Rust with rustup (https://rustup.rs)"
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
            || die "could not install Rust; install it from https://rustup.rs and re-run"
        # shellcheck disable=SC1091
        . "$HOME/.cargo/env"
    fi
fi
command -v cargo >/dev/null || die "cargo not found; install Rust from https://rustup.rs"

# 3. Python >= 3.11 in a virtualenv, with collateral built in release mode (the native
#    module is compiled with optimisations: a debug build is ~30x slower).
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Python >= 3.11 is needed; python3 is $(python3 --version 2>&1)"
if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install -q --upgrade pip maturin uv
if [[ $build == tests ]]; then
    # Cargo's test-release profile (release without fat LTO, parallel codegen, the
    # core's overflow checks and debug assertions on), which `cargo test --profile
    # test-release` then reuses: one compile of the workspace instead of the three a
    # profile-guided build and the tests' own profile take. Every result is the same;
    # only the speed differs (tools/build_native.sh restores the release builds).
    tools/build_tests.sh
else
    say "building collateral (release, profile-guided: tools/build_native.sh)"
    tools/build_native.sh  # and the testbed's collateral-emu, beside the venv's python
fi

# 4. The demo: a table on the terminal and out/demo.png.
if ((run_demo)); then
    say "collateral demo"
    collateral demo
    echo
    echo "Next: ./test.sh runs the Rust and Python tests; '. .venv/bin/activate' puts"
    echo "'collateral' on your PATH (collateral --help)."
fi
