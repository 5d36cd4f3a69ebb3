#!/usr/bin/env bash
# Sourced by tools/build_tests.sh and tools/build_native.sh: `develop ARGS...` runs
# `maturin develop ARGS...`, with `--uv` when setup.sh put uv in the venv (it installs the
# dependencies in seconds where pip takes most of a minute). uv reads its own settings,
# not pip's: those a machine sets for pip (a CA bundle, an index, local wheels, a timeout)
# are carried over; should uv fail all the same, pip is tried.

# The project's venv, when none is active (maturin and the module go there): so that
# test.sh's advice, `tools/build_native.sh`, works from any shell.
if [[ -z "${VIRTUAL_ENV:-}" && -f .venv/bin/activate ]]; then
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi

# Fails unless the installed module says it was built as the caller built it (`says
# checked=False pgo=use`): the benchmarks tell the tests' build from a release one by it.
says() {
    "${VIRTUAL_ENV:?no virtualenv}/bin/python" - "$0" "$@" <<'PY'
import sys
from collateral import _native
b = _native.build()
bad = [w for w in sys.argv[2:] if str(b[w.split("=")[0]]) != w.split("=", 1)[1]]
sys.exit(f"{sys.argv[1]}: the module says {b}, not {' '.join(bad)}" if bad else 0)
PY
}

# Exports $2 as $1's value when $1 is set and $2 is not.
carry() {
    if [[ -n "${!1:-}" && -z "${!2:-}" ]]; then
        export "$2=${!1}"
    fi
}

# Fails as maturin failed (build_native.sh falls back on that), after writing the .pyc files.
develop() {
    local rc=0
    if [[ ! -x "${VIRTUAL_ENV:-}/bin/uv" ]]; then
        maturin develop "$@" || rc=$?
    else
        carry PIP_CERT SSL_CERT_FILE
        carry PIP_INDEX_URL UV_INDEX_URL
        carry PIP_EXTRA_INDEX_URL UV_EXTRA_INDEX_URL
        carry PIP_FIND_LINKS UV_FIND_LINKS
        carry PIP_DEFAULT_TIMEOUT UV_HTTP_TIMEOUT
        if ! maturin develop --uv "$@"; then
            echo "maturin develop --uv failed (above); trying again with pip" >&2
            maturin develop "$@" || rc=$?
        fi
    fi
    compile_bytecode
    return "$rc"
}

# Writes the .pyc files of the venv's packages and of collateral's own: uv installs none,
# and where PYTHONDONTWRITEBYTECODE is set (as on these machines) Python never writes
# them either, so every process compiled pandas, matplotlib, pydantic ... from source
# again: importing pandas took 2.0 s instead of 0.65 s, and the tests' many `collateral`
# processes a third of the suite. ~20 s the first time, ~2 s after (up-to-date files are
# skipped). A file that does not compile (a package's template) is not ours to fix.
compile_bytecode() {
    "${VIRTUAL_ENV:?no virtualenv}/bin/python" -m compileall -q -j 0 \
        "$VIRTUAL_ENV/lib" python >/dev/null 2>&1 || true
}
