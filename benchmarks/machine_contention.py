"""Benchmark (not a test): does a many-core machine give N busy processes N cores' worth?

A sweep on N workers cannot run faster than N copies of the core run side by side.
This runs 1, 2, 4, ... copies at once (each a process of its own) of:

- ``latency``: a C loop of one chain of multiplications, bound by the multiplier's
  latency (it leaves most of a core's execution units to a sibling hyper-thread);
- ``throughput``: eight independent chains, bound by the multiplier's throughput, which
  two hardware threads of one core share (``benchmarks/contention/loops.c``);
- ``collateral-bench``: 600 ADSL1 NewReno trials of the core, no Python;

and prints, per program and number of copies, each copy's wall time over one copy's
alone, run just before (the median over three such pairs of the copies' mean, and of
the slowest and the fastest copy). The clock dropping with the load slows
all three; the virtual CPUs sharing execution units (hyper-threads, or the host's other
tenants) slows ``throughput`` and the core but not ``latency``; the core alone slower
points at its memory traffic.

    python benchmarks/machine_contention.py            # 1, 2, 4 ... every core
    python benchmarks/machine_contention.py --copies 1,8,16
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Pairs (one copy alone, then N at once) per cell.
ROUNDS = 3


def at_once(cmd: list[str], n: int) -> list[float]:
    """Wall seconds of each of ``n`` copies of ``cmd`` started together."""
    times: list[float] = []

    def one() -> None:
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(times) != n:
        raise SystemExit(f"{cmd[0]}: a copy failed")
    return times


def programs(tmp: Path) -> dict[str, list[str]]:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("no C compiler (cc): apt-get install build-essential")
    loops = tmp / "loops"
    subprocess.run([cc, "-O2", "-o", loops, ROOT / "benchmarks/contention/loops.c"], check=True)
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "collateral-sim", "--bin", "collateral-bench"],
        cwd=ROOT,
        check=True,
    )
    bench = ROOT / "target/release/collateral-bench"
    return {
        "latency": [str(loops), "latency"],
        "throughput": [str(loops), "throughput"],
        "collateral-bench": [str(bench), "600", "ADSL1 newreno (linux"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", help="e.g. 1,8,16 (default: 1, 2, 4 ... every core)")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    if args.copies:
        try:
            copies = [int(x) for x in args.copies.split(",")]
        except ValueError:
            copies = []
        if not copies or min(copies) < 1:
            print(f"--copies: {args.copies!r}: expected numbers >= 1, e.g. 1,8,16", file=sys.stderr)
            return 2
    else:
        copies = sorted({*(n for n in (1, 2, 4, 8, 16, 32, 64) if n < cores), cores})
    with tempfile.TemporaryDirectory() as tmp:
        progs = programs(Path(tmp))
        print(
            f"{cores} cores; each copy's wall time over one copy's alone, run just before"
            f" ({ROUNDS} rounds): median of the copies' mean (the slowest, the fastest copy)"
        )
        print("| copies | " + " | ".join(progs) + " |")
        print("|---|" + "---|" * len(progs))
        at_once(progs["collateral-bench"], 1)  # pages the programs in
        alone: dict[str, list[float]] = {name: [] for name in progs}
        for n in copies:
            cells = []
            for name, cmd in progs.items():
                # Alternated with one copy alone, so that the machine's drift (a shared
                # host's speed moves by tens of per cent in minutes) cancels out.
                rounds = []
                for _ in range(ROUNDS):
                    a = at_once(cmd, 1)[0]
                    t = at_once(cmd, n)
                    alone[name].append(a)
                    rounds.append((statistics.mean(t) / a, max(t) / a, min(t) / a))
                mean, slow, fast = (statistics.median(r[i] for r in rounds) for i in range(3))
                cells.append(f"{mean:.2f} ({slow:.2f}, {fast:.2f})")
            print(f"| {n} | " + " | ".join(cells) + " |", flush=True)
        print(
            "one copy alone: "
            + ", ".join(f"{k} {statistics.median(v):.2f} s" for k, v in alone.items())
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
