#!/usr/bin/env bash
# Builds the native module (collateral._native) into the active virtualenv, release
# mode, with profile-guided optimisation (rustc's -Cprofile-generate / -Cprofile-use):
#   1. an instrumented build (target/pgo-gen) runs tools/pgo_train.py, a few seconds of
#      representative trials;
#   2. llvm-profdata (rustup's llvm-tools component, matched to rustc's LLVM) merges
#      the counts into target/pgo/merged.profdata;
#   3. the module is rebuilt with them (target/pgo-use) and installed;
# then the testbed's collateral-emu, release build, goes beside the venv's python.
# The profile only steers code layout and inlining: every result is the same with or
# without it (benchmarks/summary_digest.py prints the same digest). It makes a trial
# about 7-12 % faster. The profile is kept while the Rust sources and the training
# scripts (pgo_train.py and the summary digest's scenarios it runs) are unchanged, so a rebuild
# with nothing changed is quick.
#
#   tools/build_native.sh          # profile-guided when llvm-profdata can be had
#   tools/build_native.sh --plain  # a plain release build (maturin develop --release)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
# shellcheck source=tools/develop.sh
. tools/develop.sh
plain() { develop --release -E test -q; }
venv=${VIRTUAL_ENV:?no virtualenv: run ./setup.sh first}
# The testbed's router and endpoints, release build, beside the venv's python (where
# `collateral emulate` finds it): ./test.sh leaves the tests' checked build there.
emu() {
    say "building collateral-emu (the emulation testbed, release)"
    cargo build --release -q -p collateral-emu
    install -m 755 target/release/collateral-emu "$venv/bin/collateral-emu"
}
# Without the profile: the plain module and the router, and done.
plain_build() {
    plain
    emu
    exit 0
}

if [[ "${1:-}" == "--plain" ]]; then
    plain_build
fi
[[ $# -eq 0 ]] || { echo "usage: tools/build_native.sh [--plain]" >&2; exit 2; }

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [[ ! -x "$profdata" ]] && command -v rustup >/dev/null; then
    timeout 300 rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [[ ! -x "$profdata" ]]; then
    echo "build_native.sh: no llvm-profdata for this rustc (rustup component add" \
        "llvm-tools); building without profile-guided optimisation" >&2
    plain_build
fi

dir=target/pgo
stamp=$(
    {
        cat Cargo.toml Cargo.lock tools/pgo_train.py benchmarks/summary_digest.py
        rustc -vV
        find crates -name '*.rs' -o -name Cargo.toml | LC_ALL=C sort | xargs cat
    } | sha256sum | cut -c1-16
)
# Fixed paths in RUSTFLAGS, so that cargo's caches of the dependencies stay valid.
profile="$PWD/$dir/merged.profdata"
train() {
    # Each step checked: `set -e` does not apply inside a function called by `if`.
    say "profile-guided build, 1/3: instrumented module"
    rm -rf "$dir" && mkdir -p "$dir/raw" || return 1
    RUSTFLAGS="-Cprofile-generate=$PWD/$dir/raw" CARGO_TARGET_DIR=target/pgo-gen plain || return 1
    say "profile-guided build, 2/3: training run"
    python tools/pgo_train.py || return 1
    "$profdata" merge -o "$profile" "$dir/raw" || return 1
    echo "$stamp" >"$dir/stamp"
}
if [[ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" || ! -f "$profile" ]]; then
    # A failed training is no reason to fail the build: fall back to the plain module
    # (a compile error fails that build too, with the compiler's message).
    if ! train; then
        echo "build_native.sh: the profile-guided steps failed (above); building" \
            "without profile-guided optimisation" >&2
        rm -rf "$dir"
        plain_build
    fi
fi
say "profile-guided build, 3/3: optimised module"
# Cargo does not see a profile's contents change: when the module was last built with
# another profile, build everything again (with fat LTO, crates built with different
# profiles do not link: "conflicting values" of the module flag ProfileSummary).
if [[ "$(cat target/pgo-use/profile-stamp 2>/dev/null)" != "$stamp" ]]; then
    rm -rf target/pgo-use
fi
if ! RUSTFLAGS="-Cprofile-use=$profile" CARGO_TARGET_DIR=target/pgo-use plain; then
    echo "build_native.sh: the profile-guided build failed (above); building without" \
        "profile-guided optimisation" >&2
    rm -rf target/pgo-use
    plain_build
fi
echo "$stamp" >target/pgo-use/profile-stamp
says checked=False pgo=use
emu
