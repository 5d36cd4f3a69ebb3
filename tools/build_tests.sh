#!/usr/bin/env bash
# Builds collateral as ./test.sh tests it, into the active virtualenv: the native module
# (with the test extras) and collateral-emu, both with Cargo's test-release profile, the
# profile `cargo test --profile test-release` uses, so the workspace compiles once for
# the module, the testbed and the Rust tests. Results are identical to the release
# build's; a trial is slower (no fat LTO, no profile-guided layout, the core's overflow
# checks and debug assertions on), so benchmarks want tools/build_native.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
printf '\033[1m==> %s\033[0m\n' "building collateral for the tests (cargo profile test-release)"
# shellcheck source=tools/develop.sh
. tools/develop.sh
develop --profile test-release -E test -q
# The whole workspace's tests and binaries, as `cargo test --workspace` resolves their
# features (dev-dependencies included): the router links the same core as the tests, and
# test.sh's `cargo test` then compiles only the fuzz crate's two examples (~1 s).
cargo build --workspace --profile test-release -q --bins --tests
install -m 755 target/test-release/collateral-emu "${VIRTUAL_ENV:?no virtualenv}/bin/collateral-emu"
says checked=True

