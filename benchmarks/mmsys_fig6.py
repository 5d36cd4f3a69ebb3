"""Benchmark (not a test): the full MMSys 2011 Figure 6 sweep, end to end, stored.

2 congestion controls (CUBIC, NewReno) x 2 rules (FB-loose, FB-strict) x 501 byte
queue limits (52 500 - 67 500 B in 30-byte steps) x 30 trials of 180 s = 60 120 trials,
ADSL1, 100 ms RTT, CBR both ways (examples/mmsys-fig6.toml), run with
`collateral.runner.run_experiment` into a fresh results directory. Prints the wall time,
trials/s, the Parquet size and a check that the store holds exactly one row per trial.

    python benchmarks/mmsys_fig6.py                    # threads on all cores
    python benchmarks/mmsys_fig6.py --executor processes
    python benchmarks/mmsys_fig6.py --compare 6000     # threads vs processes on a subset
    python benchmarks/mmsys_fig6.py --scaling          # 1, 2, 4 ... all cores: the table

``--scaling`` runs the sweep with 10 trials per point (20 040 trials) on 1, 2, 4, ...
workers up to the machine's cores (threads), then on all cores as processes (or the
runs ``--runs`` names), each into a fresh directory, and prints one row per run:
trials/s and speed-up over the first run, both for the whole call (the experiment's
expansion included) and for the running alone (what ``collateral run`` reports); the
core's time per trial (without the GIL); the hand-back per trial (the core's results
made Python objects, and the wait for the GIL, which grows with the threads that want
it); how busy the workers were; the workers' time idle before their first batch and
after their last; the batches; the coordinator's share (the Python outside the core, as
a share of the core's time). Every run's summary table must be identical to the first's
(an MD5 over its sorted rows); the exit status says whether it was.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from collateral.build_info import require_release
from collateral.experiment import load_experiment
from collateral.runner import run_experiment
from collateral.store import open_store

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "examples" / "mmsys-fig6.toml"


def run_once(
    executor: str,
    workers: int,
    out: Path,
    limit: int | None = None,
    trials: int | None = None,
    progress: bool | None = None,
    batch_seconds: float | None = None,
) -> dict:
    ov: list[tuple[str, object]] = [] if trials is None else [("experiment.trials", trials)]
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
    more = {} if batch_seconds is None else {"batch_seconds": batch_seconds}
    report = run_experiment(exp, out, workers=workers, executor=executor, progress=progress, **more)
    wall = time.perf_counter() - t0
    st = open_store(out)
    keys = st.keys()
    return {
        "trials": len(exp),
        "load_s": t_load,
        "wall_s": wall,
        "run_s": report.wall_s,
        "rate": len(exp) / wall,
        "run_rate": report.rate,
        "parquet_mb": st.size_bytes() / 1e6,
        "parts": len(st.part_dirs()),
        "rows": len(keys),
        "unique": len(set(keys)),
        "busy": report.busy_s / (report.wall_s * report.workers) if report.wall_s else 0,
        "idle_start": report.idle_start_s / (report.wall_s * report.workers or 1),
        "idle_tail": report.idle_tail_s / (report.wall_s * report.workers or 1),
        "batches": report.batches,
        "core_ms": 1000 * report.busy_s / max(report.ran, 1),
        "handoff_ms": 1000 * report.handoff_s / max(report.ran, 1),
        "py_ms": 1000 * report.cpu_s / max(report.ran, 1),
        "workers": report.workers,
        "executor": report.executor,
    }


def show(name: str, r: dict) -> None:
    print(
        f"{name}: {r['trials']:,} trials in {r['wall_s']:.1f} s wall"
        f" (expansion {r['load_s']:.1f} s, running {r['run_s']:.1f} s)"
        f" = {r['rate']:,.0f} trials/s on {r['workers']} {r['executor']};"
        f" workers busy {r['busy']:.0%}; per trial {r['core_ms']:.2f} ms in the core,"
        f" {r['handoff_ms']:.3f} ms handing results back and {r['py_ms']:.2f} ms of Python;"
        f" {r['rows']:,} rows ({r['unique']:,} distinct keys)"
        f" in {r['parts']} parts, Parquet {r['parquet_mb']:.1f} MB"
    )


#: Trials per point of the scaling runs (2 004 points: 20 040 trials).
SCALING_TRIALS = 10


def digest(out: Path) -> str:
    """An MD5 over a store's summary rows, sorted: every column but the versions of the
    code and the core that ran them and the trial and point keys, which hash the core's
    version (provenance, not results), so that two builds' stores can be compared."""
    from collateral import query

    t = query(
        out,
        "select md5(string_agg(j, chr(10) order by j)) d from (select to_json(s)::varchar j"
        " from (select * exclude (key, point, code_version, model_version) from summary) s)",
    )
    return str(t["d"][0])


def scaling(base: Path, runs: list[tuple[str, int]], batch_seconds: float | None) -> int:
    """The scaling table (module docstring); 0 when every run stored the same results."""
    trials = len(load_experiment(EXPERIMENT, [("experiment.trials", SCALING_TRIALS)]))
    print(f"{trials:,} trials per run; {os.cpu_count()} cores")
    print(
        "| workers | trials/s | speed-up | running: trials/s | speed-up | core ms/trial"
        " | hand-back ms/trial | workers busy | idle at start | idle at end | batches"
        " | coordinator |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    first_rate, first_run, first_digest, same = 0.0, 0.0, "", True
    for ex, n in runs:
        out = base / f"{ex}-{n}"
        shutil.rmtree(out, ignore_errors=True)
        r = run_once(ex, n, out, trials=SCALING_TRIALS, progress=False, batch_seconds=batch_seconds)
        d = digest(out)
        first_rate, first_digest = first_rate or r["rate"], first_digest or d
        first_run = first_run or r["run_rate"]
        same &= d == first_digest and r["rows"] == r["unique"] == r["trials"]
        label = f"{n}" + (" (processes)" if ex == "processes" else "")
        print(
            f"| {label} | {r['rate']:,.0f} | {r['rate'] / first_rate:.1f}"
            f" | {r['run_rate']:,.0f} | {r['run_rate'] / first_run:.1f} | {r['core_ms']:.2f}"
            f" | {r['handoff_ms']:.3f} | {r['busy']:.0%} | {r['idle_start']:.1%}"
            f" | {r['idle_tail']:.1%} | {r['batches']} | {r['py_ms'] / r['core_ms']:.1%} |"
            + ("" if d == first_digest else f" results differ: {d}"),
            flush=True,
        )
        shutil.rmtree(out, ignore_errors=True)
    print(f"results identical on every run: {'yes' if same else 'NO'} ({first_digest})")
    return 0 if same else 1


def scaling_runs(text: str | None, cores: int) -> list[tuple[str, int]]:
    """``threads:1,threads:16,processes:16``; by default 1, 2, 4 ... threads up to every
    core, then every core as processes."""
    if not text:
        runs = [("threads", n) for n in (1, 2, 4, 8, 16, 32, 64) if n < cores]
        return [*runs, ("threads", cores), ("processes", cores)]
    out = []
    for item in text.split(","):
        ex, _, n = item.partition(":")
        try:
            workers = int(n)
        except ValueError:
            workers = 0
        if ex not in ("threads", "processes") or workers < 1:
            raise SystemExit(f"--runs: {item!r}: expected threads:N or processes:N")
        out.append((ex, workers))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--executor", choices=("threads", "processes"), default="threads")
    ap.add_argument("-j", "--workers", type=int, default=0)
    ap.add_argument("--output", help="results directory (default: a fresh temporary one)")
    ap.add_argument(
        "--compare", type=int, metavar="N", help="only compare threads and processes on ~N trials"
    )
    ap.add_argument(
        "--scaling",
        action="store_true",
        help="the table of trials/s on 1, 2, 4 ... workers up to all cores (module docstring)",
    )
    ap.add_argument("--runs", help="with --scaling: the runs, e.g. threads:1,processes:16")
    ap.add_argument("--batch-seconds", type=float, help="core seconds per batch (the runner's)")
    args = ap.parse_args()
    print(require_release("mmsys_fig6.py"))
    base = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="fig6-"))
    if args.scaling:
        runs = scaling_runs(args.runs, args.workers or os.cpu_count() or 1)
        return scaling(base, runs, args.batch_seconds)
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
    print(f"peak RSS {rss:.0f} MB; results in {base}; summary digest {digest(base)}")
    ok = r["rows"] == r["unique"] == r["trials"]
    print("one row per trial: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
