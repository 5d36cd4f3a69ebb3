"""Benchmark (not a test): one trial of the Parris/Jeffay/Smith study at scale.

The built-in experiment (`collateral reproduce --list`: parris-cbt) with 5 000 web users
instead of 1 800, six tagged multimedia streams and the UDP blast on 10 Mbit/s, 180 s of
simulated time, once per discipline. Each trial runs in a fresh Python process on one
core (the core releases the GIL; nothing else runs), which reports the core's wall time,
events and events/s, and the process's peak resident memory above what it held before
the trial (the interpreter with numpy/pyarrow loaded).

    python benchmarks/parris_scale.py                  # 5 000 users, every discipline
    python benchmarks/parris_scale.py --users 10000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys


def one(users: int, discipline: str) -> dict[str, float]:
    from collateral import _native
    from collateral.experiment import load_experiment
    from collateral.reproduce import experiment_path

    exp = load_experiment(experiment_path("parris-cbt"), [("experiment.trials", 1)])
    trial = next(t for t in exp.trials() if t.point.tags["discipline"] == discipline)
    sc = trial.scenario()
    sc = sc.model_copy(update={"web": [sc.web[0].model_copy(update={"users": users})]})
    js = sc.to_native_json()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = _native.simulate(js)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = res["summary"]
    w = s["web"][0]
    return {
        "wall_s": res["wall_s"],
        "events": s["events"],
        "packets": s["packets_delivered"],
        "connections": w["connections"],
        "peak_mb": peak / 1024,
        "added_mb": (peak - before) / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=1, help="runs per discipline (best reported)")
    ap.add_argument("--one", nargs=2, metavar=("USERS", "DISCIPLINE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(int(a.one[0]), a.one[1])))
        return
    from collateral.build_info import require_release

    print(require_release("parris_scale.py"))
    print(
        f"{a.users} web users + 6 multimedia + UDP blast, 10 Mbit/s, 180 s simulated,"
        " one core per trial"
    )
    print(
        f"{'queue':<10} {'wall_s':>8} {'events':>10} {'events/s':>10} {'packets':>9}"
        f" {'conns':>7} {'peak_MB':>8} {'trial_MB':>8}"
    )
    for d in ("drop-tail", "RED", "FRED", "CBT", "CBQ"):
        runs = []
        for _ in range(a.reps):
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(a.users), d],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs.append(json.loads(out))
        r = min(runs, key=lambda r: r["wall_s"])
        print(
            f"{d:<10} {r['wall_s']:>8.3f} {r['events']:>10} {r['events'] / r['wall_s']:>10.3e}"
            f" {r['packets']:>9} {r['connections']:>7} {r['peak_mb']:>8.0f} {r['added_mb']:>8.0f}"
        )


if __name__ == "__main__":
    main()
