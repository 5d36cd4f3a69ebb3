#!/usr/bin/env bash
# Runs every test: the Rust workspace (optimised as the simulator is used; the test-release
# profile of Cargo.toml: release without fat LTO so the test binaries link quickly, the
# core's overflow checks and debug assertions on, the fuzz property among them) and the
# Python tests against a native module and collateral-emu built with that same profile
# (tools/build_tests.sh; one compile serves all three). Sets the venv up first if needed;
# afterwards tools/build_native.sh puts the faster release builds back (the benchmarks
# refuse to time the tests' build).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
if [[ -x .venv/bin/maturin ]]; then
    # shellcheck disable=SC1091
    . .venv/bin/activate
    tools/build_tests.sh  # rebuild: the Rust code may have changed
else
    ./setup.sh --tests
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi

# The Rust tests, the scenario fuzz property among them (~30 s), with the core's overflow
# checks and debug assertions on (Cargo.toml's test-release profile).
echo "==> cargo test --workspace --profile test-release (set up in ${SECONDS} s)"
cargo test --workspace --profile test-release -q
# Two workers (pytest-xdist) for everything but the testbed's real-time tests, which
# then run alone: a router sharing its CPUs with other tests would miss real time.
echo "==> pytest (in parallel), then the testbed's real-time tests alone (at ${SECONDS} s)"
pytest -q -n "${COLLATERAL_TEST_WORKERS:-2}" --dist loadgroup -m "not realtime" --durations=5
echo "==> the real-time tests (at ${SECONDS} s)"
pytest -q -m realtime --durations=5 -rs
echo "test.sh: all green in ${SECONDS} s. The venv now holds the tests' builds (cargo profile test-release);"
echo "         tools/build_native.sh puts the faster release builds back (benchmarks refuse the tests')."
