"""Peak memory of one trial against its length (issue 13: memory flat in trial length
with traces off).

Each trial runs in a fresh Python process (so the peak is that trial's alone): ADSL2
(24/1 Mbit/s), 100 ms RTT, one bulk NewReno flow down, CBR both ways, traces off, for
180 s and 3 600 s of simulated time. Prints the process's peak RSS (ru_maxrss) beside
that of a process that only imports collateral, builds the scenario and runs a 1 s
trial first (so that what the first trial of a process pays once — lazily imported
modules, the core's code paged in, the allocator's first arenas — is not counted), and
the difference: what the trial itself held beyond that. The same pair without the CBR
flows shows what grows with the length: only the real-time flows' per-packet records
(a send and an arrival time, 16 bytes a packet, plus 8 bytes a packet while the summary
sorts the delays), which the exact delay quantiles need.

    python benchmarks/peak_rss.py
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import resource, sys, time
import collateral
from collateral.spec import build_scenario
dur, cbr = sys.argv[1], sys.argv[2]
sc = build_scenario(
    link="adsl2", duration=dur, warmup="10s", queue="60kB", rule="fb-loose", cbr=cbr
)
sc = sc.model_copy(update={"trace": sc.trace.model_copy(update={
    k: False for k in type(sc.trace).model_fields})})
warm = build_scenario(link="adsl2", duration="1s", warmup="0.5s", queue="60kB", cbr="none")
collateral.simulate(warm.model_copy(update={"trace": sc.trace}))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if dur != "0":
    r = collateral.simulate(sc)
    wall = time.perf_counter() - t
else:
    wall = 0.0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, peak, wall)
"""


def run(duration: str, cbr: str) -> tuple[int, int, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, duration, cbr], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


def main() -> None:
    print(
        f"{'trial':>10} {'CBR':>5} {'peak RSS':>10} {'before':>10} {'trial held':>11} {'wall':>8}"
    )
    for cbr in ("both", "none"):
        for dur in ("180s", "3600s"):
            before, peak, wall = run(dur, cbr)
            print(
                f"{dur:>10} {cbr:>5} {peak / 1024:8.1f} MB {before / 1024:8.1f} MB"
                f" {(peak - before) / 1024:9.1f} MB {wall:7.2f} s"
            )


if __name__ == "__main__":
    main()
