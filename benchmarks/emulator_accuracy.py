"""Accuracy of the emulation testbed (needs root): prints a table.

For each bottleneck rate (1.5, 24, 100 Mbit/s) with 50 ms one-way delay:
- idle link: CBR probes (186 B every 20 ms, jittered) measure the *added* one-way delay
  error = measured OWD - the model's base delay (propagation, serialisation at the
  bottleneck and on the two 1 Gbit/s access links: 3 µs for 186 B), p50 and p99;
- saturated link: one bulk TCP flow (cubic) fills the link; the rate the router puts on
  the wire (IP bytes leaving it in the measured window) is compared with the setting.

Targets (SPEC §8): delay error within 0.1 ms at p50 and 0.5 ms at p99; rate within 1 %.

    sudo .venv/bin/python benchmarks/emulator_accuracy.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import collateral
from collateral.emulate import EV_LEFT, _read_csv, emulate


def probe_errors(rate: str, seconds: int) -> tuple[float, float]:
    sc = collateral.build_scenario(
        down=rate,
        up=rate,
        rtt="100ms",
        queue="1000p",
        rule="ps",
        tcp_flows=0,
        cbr="down",
        duration=f"{seconds}s",
        warmup="1s",
    )
    r = emulate(sc)
    err = np.abs(r.traces["cbr"]["extra_delay_s"])
    err = err[~np.isnan(err)] * 1e3
    return float(np.quantile(err, 0.5)), float(np.quantile(err, 0.99))


def wire_rate(rate: str, seconds: int) -> tuple[float, float, float, float]:
    sc = collateral.build_scenario(
        down=rate,
        up=rate,
        rtt="100ms",
        queue="1000p",
        rule="ps",
        cc="cubic" if "cubic" in collateral.spec.CC_ALGORITHMS else "newreno",
        cbr="none",
        duration=f"{seconds}s",
        warmup="5s",
    )
    with tempfile.TemporaryDirectory() as d:
        r = emulate(sc, workdir=d, keep=True)
        log = _read_csv(Path(d) / "router.csv")
    # The TCP flow's goodput in IP bytes (payload · 1500/1448): what it got of the link.
    tcp_ip = r.tcp[0]["goodput_bps"] * 1500 / 1448
    left = log[(log[:, 1] == EV_LEFT) & (log[:, 2] == 0)]
    t = left[:, 0]
    lo, hi = t[0] + 5e9, t[-1] - 1e9
    sel = (t >= lo) & (t < hi)
    bits = left[sel, 3].sum() * 8
    measured = bits / ((t[sel][-1] - t[sel][0]) / 1e9)
    target = collateral.units.parse_rate(rate)
    return measured, (measured - target) / target * 100, tcp_ip, (tcp_ip - target) / target * 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=20)
    a = ap.parse_args()
    print(
        f"{'rate':>10} {'delay err p50':>14} {'p99':>8} {'wire rate':>14} {'error':>8}"
        f" {'TCP (IP bytes)':>15} {'error':>8}"
    )
    for rate in ("1.5Mbit", "24Mbit", "100Mbit"):
        p50, p99 = probe_errors(rate, a.seconds)
        wire, err, tcp, tcp_err = wire_rate(rate, a.seconds)
        print(
            f"{rate:>10} {p50:>11.3f} ms {p99:>5.3f} ms {wire / 1e6:>9.3f} Mb/s {err:>+7.2f} %"
            f" {tcp / 1e6:>10.3f} Mb/s {tcp_err:>+7.2f} %"
        )


if __name__ == "__main__":
    main()
