"""The training run of the profile-guided build (tools/build_native.sh), not a test.

Runs, with the instrumented native module, what the profile should make fast: 180 s
trials on both ADSL links with every stack (the sweeps' and benchmarks' hot path,
through the sweep runner's batch call), then the summary digest's varied scenarios
(every queue discipline, ECN, applications, web users, traces) so that no feature's
code is left looking cold. The profile steers only how the compiler lays out and
inlines code: results are the same with or without it (benchmarks/summary_digest.py).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import summary_digest

from collateral import _native
from collateral.spec import (
    TraceSpec,
    build_scenario,
)

STACKS = [
    ("newreno", "rfc"),
    ("newreno", "linux-2.6.25"),
    ("cubic", "linux-2.6.25"),
    ("htcp", "linux-2.6.25"),
    ("bbr", "linux-6"),
]
OFF = TraceSpec.off()


def hot_path() -> list[str]:
    """The benchmark's and the MMSys sweeps' trials: one bulk download and CBR both ways
    over byte and packet queues, traces off."""
    out = []
    for link in ("adsl1", "adsl2"):
        for cc, profile in STACKS:
            for seed, (queue, rule) in enumerate((("60kB", "fb-loose"), ("20p", "ps"))):
                sc = build_scenario(
                    link=link,
                    cc=cc,
                    profile=profile,
                    queue=queue,
                    rule=rule,
                    duration="180s",
                    warmup="10s",
                    seed=seed + 1,
                )
                out.append(sc.model_copy(update={"trace": OFF}).to_native_json())
    return out


def main() -> None:
    t0 = time.perf_counter()
    jobs = hot_path()
    out = _native.simulate_batch(jobs)
    bad = [e for e in out["errors"] if e]
    if bad:
        raise SystemExit(f"pgo_train: a training trial failed: {bad[0]}")
    varied = [sc for _, sc in summary_digest.scenarios()]
    _native.simulate_many([sc.to_native_json() for sc in varied], 1)
    print(
        f"pgo_train: {len(jobs)} long trials and {len(varied)} varied ones"
        f" in {time.perf_counter() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
