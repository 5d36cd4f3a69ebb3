#!/usr/bin/env bash
# Runs every test: the Rust workspace (optimised as the simulator is used; the test-release
# profile of Cargo.toml, release without fat LTO so the test binaries link quickly) and the
# Python tests against a freshly built native module. Sets the venv up first if needed.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
if [[ -x .venv/bin/maturin ]]; then
    # shellcheck disable=SC1091
    . .venv/bin/activate
    tools/build_native.sh  # rebuild: the Rust code may have changed
    cargo build --release -q -p collateral-emu
    install -m 755 target/release/collateral-emu .venv/bin/collateral-emu
else
    ./setup.sh --no-demo
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi

echo "==> cargo test --workspace --profile test-release"
cargo test --workspace --profile test-release -q --exclude collateral-fuzz
# The scenario fuzz property, with overflow checks and debug assertions on (~1 min).
echo "==> cargo test --profile fuzz -p collateral-fuzz"
cargo test --profile fuzz -q -p collateral-fuzz
# Two workers (pytest-xdist) for everything but the testbed's real-time tests, which
# then run alone: a router sharing its CPUs with other tests would miss real time.
echo "==> pytest (in parallel), then the testbed's real-time tests alone"
pytest -q -n "${COLLATERAL_TEST_WORKERS:-2}" --dist loadgroup -m "not realtime"
pytest -q -m realtime
