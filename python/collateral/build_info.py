"""Which builds of the native core and of the testbed's router are installed.

``./test.sh`` installs the tests' builds (Cargo's ``test-release`` profile: the core's
overflow checks and debug assertions on; the same results, slower trials) and leaves
them there; ``tools/build_native.sh`` puts the release builds back, the module
profile-guided. A benchmark that timed the tests' build unawares would print figures that
hold for no build a user runs, so the timing benchmarks call :func:`require_release`.
"""

from __future__ import annotations

import os
import subprocess

#: Set to 1 to time whatever build is installed (the benchmarks then say which it is).
ANY_BUILD = "COLLATERAL_BENCH_ANY_BUILD"

_FIX = "tools/build_native.sh installs the release builds (./test.sh leaves the tests')"


def core() -> str:
    """The native module's build in words: ``release, profile-guided``, ``release``,
    ``instrumented`` (the profile's training build), ``checked`` (the tests') or
    ``unknown`` (a module built before it said)."""
    from . import _native

    build = getattr(_native, "build", None)
    if build is None:
        return "unknown"
    b = build()
    if b["checked"]:
        return "checked"
    return {"use": "release, profile-guided", "generate": "instrumented"}.get(b["pgo"], "release")


def emulator(path: str) -> str:
    """The build of the ``collateral-emu`` at ``path``: ``release`` or ``checked``, from
    its ``--version`` line (``unknown`` for a binary older than that line)."""
    p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    for build in ("checked", "release"):
        if f"({build} build)" in p.stdout:
            return build
    return "unknown"


def require_release(prog: str, *, emulator_path: str | None = None) -> str:
    """Exits naming the fix unless the native module (and the router at
    ``emulator_path``, when given) are release builds, or ``$COLLATERAL_BENCH_ANY_BUILD``
    is 1. Returns the line a benchmark prints to say what it timed."""
    build = core()
    what = f"core: {build}"
    slow = [] if build.startswith("release") else [f"the native module is {_the(build)}"]
    if emulator_path is not None:
        emu = emulator(emulator_path)
        what += f"; router: {emu} ({emulator_path})"
        if emu != "release":
            slow.append(f"{emulator_path} is {_the(emu)}")
    if slow and os.environ.get(ANY_BUILD) != "1":
        raise SystemExit(
            f"{prog}: {' and '.join(slow)}, which times nothing a user runs; {_FIX}, "
            f"or set {ANY_BUILD}=1 to time it anyway (under sudo: sudo {ANY_BUILD}=1 ...)"
        )
    return what


def _the(build: str) -> str:
    if build == "unknown":
        return "a build that does not say which (older than this check)"
    return f"the {build} build"
