"""Benchmark (not a test): the full MMSys 2011 Figure 6 sweep, end to end, stored.

2 congestion controls (CUBIC, NewReno) x 2 rules (FB-loose, FB-strict) x 501 byte
queue limits (52 500 - 67 500 B in 30-byte steps) x 30 trials of 180 s = 60 120 trials,
ADSL1, 100 ms RTT, CBR both ways (examples/mmsys-fig6.toml), run with
`collateral.runner.run_experiment` into a fresh results directory. Prints the wall time,
trials/s, the Parquet size and a check that the store holds exactly one row per trial.

    python benchmarks/mmsys_fig6.py                    # threads on all cores
    python benchmarks/mmsys_fig6.py --executor processes
    python benchmarks/mmsys_fig6.py --compare 6000     # threads vs processes on a subset

Until the core has CUBIC, the sweep runs NewReno only with 60 trials per point: the
same 60 120 trials of work.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from collateral.experiment import load_experiment
from collateral.runner import run_experiment
from collateral.spec import CC_ALGORITHMS
from collateral.store import open_store

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "examples" / "mmsys-fig6.toml"


def overrides() -> list[tuple[str, object]]:
    if "cubic" in CC_ALGORITHMS:
        return []
    print("note: the core has no cubic yet; running newreno with 60 trials per point")
    return [("sweep.tcp.cc", ["newreno"]), ("experiment.trials", 60)]


def run_once(executor: str, workers: int, out: Path, limit: int | None = None) -> dict:
    ov = overrides()
    if limit is not None:  # a subset: the first limits of the sweep, all CCs and rules
        exp = load_experiment(EXPERIMENT, ov)
        per_limit = len(exp) // 501
        n = max(1, limit // per_limit)
        ov.append(
            (
                "sweep.queue.limit",
                {"from": "52500B", "to": f"{52500 + 30 * (n - 1)}B", "step": "30B"},
            )
        )
    t0 = time.perf_counter()
    exp = load_experiment(EXPERIMENT, ov)
    t_load = time.perf_counter() - t0
    report = run_experiment(exp, out, workers=workers, executor=executor)
    wall = time.perf_counter() - t0
    st = open_store(out)
    keys = st.keys()
    return {
        "trials": len(exp),
        "load_s": t_load,
        "wall_s": wall,
        "run_s": report.wall_s,
        "rate": len(exp) / wall,
        "parquet_mb": st.size_bytes() / 1e6,
        "parts": len(st.part_dirs()),
        "rows": len(keys),
        "unique": len(set(keys)),
        "busy": report.busy_s / (report.wall_s * report.workers) if report.wall_s else 0,
        "core_ms": 1000 * report.busy_s / max(report.ran, 1),
        "py_ms": 1000 * report.cpu_s / max(report.ran, 1),
        "workers": report.workers,
        "executor": report.executor,
    }


def show(name: str, r: dict) -> None:
    print(
        f"{name}: {r['trials']:,} trials in {r['wall_s']:.1f} s wall"
        f" (expansion {r['load_s']:.1f} s, running {r['run_s']:.1f} s)"
        f" = {r['rate']:,.0f} trials/s on {r['workers']} {r['executor']};"
        f" workers busy {r['busy']:.0%}; per trial {r['core_ms']:.2f} ms in the core and"
        f" {r['py_ms']:.2f} ms of Python; {r['rows']:,} rows ({r['unique']:,} distinct keys)"
        f" in {r['parts']} parts, Parquet {r['parquet_mb']:.1f} MB"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--executor", choices=("threads", "processes"), default="threads")
    ap.add_argument("-j", "--workers", type=int, default=0)
    ap.add_argument("--output", help="results directory (default: a fresh temporary one)")
    ap.add_argument(
        "--compare", type=int, metavar="N", help="only compare threads and processes on ~N trials"
    )
    args = ap.parse_args()
    base = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="fig6-"))
    if args.compare:
        for ex in ("threads", "processes"):
            out = base / ex
            shutil.rmtree(out, ignore_errors=True)
            show(ex, run_once(ex, args.workers, out, limit=args.compare))
        return 0
    if base.exists() and any(base.iterdir()):
        print(f"{base} is not empty: give a fresh --output", file=sys.stderr)
        return 2
    r = run_once(args.executor, args.workers, base)
    show("fig6", r)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MB; results in {base}")
    ok = r["rows"] == r["unique"] == r["trials"]
    print("one row per trial: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
