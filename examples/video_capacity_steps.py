"""RFC 8867 §5.1 in small: one video call (GCC, NADA or SCReAM) on a link whose capacity steps
1 → 2.5 → 0.6 → 1 Mbit/s at 0/40/60/80 s (120 s, 50 ms one way, a 300 ms queue at
2 Mbit/s), as cisco/ns3-rmcat runs the case. Prints, every 2 s, the capacity, the
controller's target and the call's sending and receiving rates, then the call's summary; with the
encoder's ceiling at RFC 8867's 1.5 Mbit/s and at 3 Mbit/s (so the 2.5 Mbit/s step binds).

    python examples/video_capacity_steps.py [--controller gcc|nada|scream] [--seed N]
"""

from __future__ import annotations

import argparse

import collateral
from collateral.spec import LinkSpec, MediaSpec, QueueSpec, Scenario
from collateral.vocabulary import MEDIA_CONTROLLERS

#: (from s, Mbit/s)
STEPS = [(0, 1.0), (40, 2.5), (60, 0.6), (80, 1.0)]
SECONDS = 120


def capacity(t: float) -> float:
    return next(r for s, r in reversed(STEPS) if s <= t)


def trace_ms() -> list[int]:
    """Mahimahi delivery opportunities (1504 B each) spread evenly over each millisecond."""
    ms, credit = [], 0.0
    for t in range(1, SECONDS * 1000 + 1):
        credit += capacity((t - 1) / 1000) * 1e6 / 1000 / (1504 * 8)
        while credit >= 1:
            ms.append(t)
            credit -= 1
    return ms


def run(max_rate: str, controller: str = "gcc", seed: int = 1) -> collateral.Result:
    q = QueueSpec(limit="60p")
    sc = Scenario(
        down=LinkSpec(trace={"ms": trace_ms()}, queue=q),
        up=LinkSpec(rate="2Mbit", queue=q),
        rtt="100ms",
        media=MediaSpec(max_rate=max_rate, controller=controller),
        duration=f"{SECONDS}s",
        warmup="0s",
        seed=seed,
    )
    return collateral.simulate(sc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controller", default="gcc", choices=MEDIA_CONTROLLERS)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for max_rate in ("1.5Mbit", "3Mbit"):
        r = run(max_rate, args.controller, args.seed)
        t = r.traces["media"]
        print(
            f"{args.controller}, encoder max {max_rate}\n"
            "  t_s  capacity  target    sent  received  (Mbit/s)"
        )
        for i in range(0, len(t["time_s"]), 2):
            s = t["time_s"][i]
            print(
                f"{s:5.0f} {capacity(s):9.2f} {t['target_bps'][i] / 1e6:7.3f}"
                f" {t['sent_bps'][i] / 1e6:7.3f} {t['received_bps'][i] / 1e6:9.3f}"
            )
        m = r.summary["media"][0]
        print(
            f"  mean received {m['received_bps'] / 1e6:.3f} Mbit/s,"
            f" loss {100 * m['loss_rate']:.2f} %,"
            f" frame delay p50/p95/p99 {1e3 * m['frame_delay_p50_s']:.0f}/"
            f"{1e3 * m['frame_delay_p95_s']:.0f}/{1e3 * m['frame_delay_p99_s']:.0f} ms,"
            f" {100 * m['frames_late']:.1f} % of frames later than 150 ms\n"
        )


if __name__ == "__main__":
    main()
