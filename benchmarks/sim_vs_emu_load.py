"""The simulator beside the testbed for the built-in RRUL workload and for web users,
on 50/10 Mbit/s with a 30 ms base RTT, FQ-CoDel or drop-tail of one BDP each way
(187 500 B down, 37 500 B up). Each row: the simulated and the emulated value.

    sudo .venv/bin/python benchmarks/sim_vs_emu_load.py [--only NAME ...] [--duration 20s]

Needs root (network namespaces). Runs in real time: about 25 s a case.
"""

from __future__ import annotations

import argparse
import os

import collateral
from collateral.emulate import emulate
from collateral.spec import Scenario, WorkloadSpec

FQ = {"kind": "fq_codel"}
QUEUES = {
    "fq_codel": ({"rate": "50Mbit", "queue": FQ}, {"rate": "10Mbit", "queue": FQ}),
    "droptail-1bdp": (
        {"rate": "50Mbit", "queue": {"limit": "187500B"}},
        {"rate": "10Mbit", "queue": {"limit": "37500B"}},
    ),
}
CUBIC = {"cc": "cubic", "profile": "linux-6"}
#: Mah's model with the think times cut at 10 s, so 30 users browse steadily.
WEB = {"users": 30, "think_max": "10s", "tcp": CUBIC}

RRUL_FIELDS = (
    "latency_idle_s", "latency_loaded_s", "latency_increase_s", "rpm", "rpm_band",
    "bufferbloat_grade", "probe_loss_rate", "down_goodput_bps", "up_goodput_bps",
    "load_saturated_s",
)  # fmt: skip
WEB_FIELDS = (
    "pages_started", "pages_completed", "objects_completed", "response_mean_s",
    "response_median_s", "response_p95_s", "retransmits", "timeouts", "setup_retries",
)  # fmt: skip


def cases(duration: str) -> dict[str, Scenario]:
    out = {}
    for q, (down, up) in QUEUES.items():
        link = dict(down=down, up=up, rtt="30ms", duration=duration, seed=1)
        # The workload's flows as the front builds them, with CUBIC (Linux's default).
        w = WorkloadSpec(kind="rrul")
        out[f"rrul-{q}"] = Scenario(**link, warmup="0s", workload=w, tcp=w.flows(CUBIC)[0])
        out[f"web-{q}"] = Scenario(**link, warmup="2s", web=[WEB], tcp=[CUBIC])
    return out


def rows(r: collateral.Result, name: str) -> dict[str, object]:
    s = r.summary
    if not name.startswith("web"):
        return {k: s.get(k) for k in RRUL_FIELDS}
    w = s["web"][0]
    return {**{k: w[k] for k in WEB_FIELDS}, "down_goodput_bps": s["down_goodput_bps"]}


def fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--duration", default="20s")
    a = ap.parse_args()
    for name, sc in cases(a.duration).items():
        if a.only and name not in a.only:
            continue
        sim = rows(collateral.simulate(sc), name)
        load = os.getloadavg()[0]
        r = emulate(sc)
        emu = rows(r, name)
        t = r.summary
        print(
            f"== {name}  (load {load:.2f} before, {os.getloadavg()[0]:.2f} after;"
            f" router release error p99 {fmt(t.get('release_error_p99_s'))} s,"
            f" late {t.get('late')})"
        )
        print(f"{'':24} {'simulator':>12} {'testbed':>12}")
        for k in sim:
            print(f"{k:24} {fmt(sim[k]):>12} {fmt(emu[k]):>12}")


if __name__ == "__main__":
    main()
