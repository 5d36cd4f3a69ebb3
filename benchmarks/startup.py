"""Benchmark (not a test): the whole ``collateral simulate`` command against a bare Python.

Times, as processes started from here (exec to exit, output discarded), a warm-up pair
then ``--pairs`` alternated pairs of

- ``collateral simulate --link adsl1 --duration 180s`` (the ADSL1 trial of issue 33:
  import, the scenario's validation, a 180 s trial, the table printed), and
- ``python -c pass`` from the same interpreter,

and prints each one's median and range and the ratio per pair (median, range): how
many bare Python start-ups the command costs. ``--floor`` times, in the same rounds, what
the command cannot do without: pydantic (the scenario's validation: importing
``BaseModel``; then a one-field model defined, which imports pydantic's field types, and
validated once, which builds its validator and imports the plugin loader) and, beside
that model, rich's console and table (its output), each as a ratio to the bare start.
``--importtime`` adds the modules that the command imports (``python -X importtime``),
largest first, each with what it imports.

    python benchmarks/startup.py
    python benchmarks/startup.py --pairs 20 --floor --importtime
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMAND = [sys.executable, "-m", "collateral", "simulate", "--link", "adsl1", "--duration", "180s"]
BARE = [sys.executable, "-c", "pass"]
#: A one-field model defined (pydantic's field types are imported) and validated once
#: (its validator is built on first use, as the spec's models' are: ``defer_build``; the
#: plugin loader and ``importlib.metadata`` are imported): importing ``BaseModel`` alone
#: does neither.
_ONE_MODEL = (
    "from pydantic import BaseModel, ConfigDict\n"
    "class A(BaseModel):\n"
    "    model_config = ConfigDict(defer_build=True)\n"
    "    x: int\n"
    "A(x=1)"
)
FLOOR = {
    "from pydantic import BaseModel": [sys.executable, "-c", "from pydantic import BaseModel"],
    "... a one-field model validated": [sys.executable, "-c", _ONE_MODEL],
    "... and rich's console, table": [
        sys.executable,
        "-c",
        _ONE_MODEL + "\nimport rich.console, rich.table",
    ],
}


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t


def importtime(env: dict[str, str]) -> None:
    p = subprocess.run(
        [sys.executable, "-X", "importtime", *COMMAND[1:]],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    rows = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cum, name = line.removeprefix("import time:").split("|")
        if len(name) - len(name.lstrip()) == 1:  # imported by the command itself
            rows.append((int(cum), name.strip()))
    print("the command's largest imports, each with what it imports (ms):")
    for cum, name in sorted(rows, reverse=True)[:12]:
        print(f"  {cum / 1000:7.1f}  {name}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=10, help="alternated pairs (default: 10)")
    ap.add_argument("--importtime", action="store_true", help="also list the largest imports")
    ap.add_argument("--floor", action="store_true", help="also time pydantic and rich alone")
    args = ap.parse_args()
    if args.pairs < 1:
        print(f"--pairs: {args.pairs}: must be >= 1", file=sys.stderr)
        return 2
    from collateral.build_info import require_release

    print(require_release("startup.py"))
    # Byte-compiled modules are used as a user's installed package would have them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    floors = FLOOR if args.floor else {}
    for c in (COMMAND, BARE, *floors.values()):
        timed(c, env)  # warm-up: page cache, .pyc files
    cmd, bare = [], []
    floor: dict[str, list[float]] = {name: [] for name in floors}
    for _ in range(args.pairs):
        cmd.append(timed(COMMAND, env))
        bare.append(timed(BARE, env))
        for name, c in floors.items():
            floor[name].append(timed(c, env))
    ratios = [c / b for c, b in zip(cmd, bare, strict=True)]

    def show(v: list[float]) -> str:
        return (
            f"median {1000 * statistics.median(v):.1f} ms ({1000 * min(v):.1f}-{1000 * max(v):.1f})"
        )

    print(f"collateral simulate (ADSL1, 180 s): {show(cmd)}")
    print(f"python -c pass:                     {show(bare)}")
    print(
        f"ratio per pair: median {statistics.median(ratios):.1f}x"
        f" ({min(ratios):.1f}-{max(ratios):.1f}), {args.pairs} pairs"
    )
    for name, v in floor.items():
        r = [f / b for f, b in zip(v, bare, strict=True)]
        print(
            f"{name}: {show(v)}, to bare per round: median {statistics.median(r):.1f}x"
            f" ({min(r):.1f}-{max(r):.1f})"
        )
    if args.importtime:
        importtime(env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
