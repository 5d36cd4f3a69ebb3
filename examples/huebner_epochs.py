"""Huebner 2008 (CAIA TR 080818A): cwnd and queue occupancy over three congestion epochs.

One bulk TCP flow and one G.711-like flow (200 B every 20 ms, one way) share a
10 Mbit/s bottleneck with 80 ms RTT and a 1-BDP drop-tail queue (100 kB ≈ 67 slots of
1500 B, as dummynet counts them), 180 s. For each algorithm and stack the script plots
three epochs and prints the mean congestion-epoch duration. The study ran FreeBSD with
delayed ACKs turned off (net.inet.tcp.delayed_ack=0), H-TCP on Linux with
use_rtt_scaling and use_bandwidth_switch off, and FreeBSD's adaptive backoff on.

    python examples/huebner_epochs.py [out_dir]
"""

from __future__ import annotations

import sys
from pathlib import Path

import collateral
from collateral.plot import fig_cwnd_queue
from collateral.spec import CC_ALGORITHMS, CbrSpec, LinkSpec, QueueSpec, Scenario, TcpSpec

RUNS = [
    ("newreno", "linux-2.6.25", {}),
    ("htcp", "linux-2.6.25", {}),
    ("cubic", "linux-2.6.25", {}),
    ("newreno", "freebsd-7", {"delayed_ack": False}),
    ("htcp", "freebsd-7", {"delayed_ack": False}),
]


def scenario(cc: str, profile: str, overrides: dict, seed: int = 1) -> Scenario:
    q = QueueSpec(limit="67p")
    return Scenario(
        down=LinkSpec(rate="10Mbit", queue=q),
        up=LinkSpec(rate="10Mbit", queue=q),
        rtt="80ms",
        tcp=[TcpSpec(cc=cc, profile=profile, start_spread=0, **overrides)],
        cbr=[CbrSpec(direction="down", size="200B", interval="20ms", jitter="0s")],
        duration="180s",
        warmup="20s",
        seed=seed,
    )


def main(out: Path) -> dict[tuple[str, str], float]:
    epochs = {}
    for cc, profile, overrides in RUNS:
        if cc not in CC_ALGORITHMS:
            print(f"{cc:8} {profile:13} (not implemented in this build)")
            continue
        r = collateral.simulate(scenario(cc, profile, overrides))
        t = r.tcp[0]
        epochs[(cc, profile)] = t["epoch_mean_s"]
        paths = fig_cwnd_queue(r, path=out / f"huebner-epochs-{cc}-{profile}.png")
        print(
            f"{cc:8} {profile:13} mean epoch {t['epoch_mean_s']:6.2f} s over"
            f" {t['congestion_events']:3d} events; median VoIP delay"
            f" {r.cbr[0]['delay_median_s'] * 1e3:5.1f} ms; {paths[0]}"
        )
    for cc in ("newreno", "htcp"):
        if (cc, "linux-2.6.25") in epochs and (cc, "freebsd-7") in epochs:
            ratio = epochs[(cc, "linux-2.6.25")] / epochs[(cc, "freebsd-7")]
            print(f"{cc}: Linux / FreeBSD epoch ratio {ratio:.2f}")
    return epochs


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
