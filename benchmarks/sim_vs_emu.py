"""The simulator beside the testbed (real Linux TCP through the router) on the set-ups
the project has compared before: ADSL1 with a 40 kB FB-strict queue (reno, cubic;
``examples/sim-vs-emu.toml``), drop-tail / CoDel / FQ-CoDel / PIE on 10 Mbit/s, RED and
CBT, and ADSL1 with ATM framing. Each row: the simulated and the emulated value.

    sudo .venv/bin/python benchmarks/sim_vs_emu.py [--only NAME ...] [--json OUT]

Needs root (network namespaces). Runs in real time: about 10 minutes for everything.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import collateral
from collateral.emulate import emulate
from collateral.spec import Scenario

ADSL1 = dict(down={"rate": "1.5Mbit"}, up={"rate": "256kbit"}, rtt="100ms")
TEN = dict(
    down={"rate": "10Mbit"},
    up={"rate": "10Mbit", "queue": {"limit": "100p", "rule": "ps"}},
    rtt="60ms",
)
BOTH = [{"direction": "down"}, {"direction": "up"}]
CUBIC4 = [{"cc": "cubic", "profile": "linux-6"}] * 4


FB40 = {"limit": "40kB", "rule": "fb-strict"}
PPPOA = {"overhead": "10B", "atm": True}


def _both_queues(base: dict, queue: dict) -> dict:
    return {**base, "down": {**base["down"], "queue": queue}, "up": {**base["up"], "queue": queue}}


def _with_down_queue(base: dict, queue: dict) -> dict:
    return {**base, "down": {**base["down"], "queue": queue}}


def cases() -> dict[str, list[dict]]:
    """Name -> the scenarios (one per seed) of each comparison."""
    out: dict[str, list[dict]] = {}
    for cc in ("newreno", "cubic"):
        out[f"adsl1-40kB-fb-strict-{cc}"] = [
            dict(
                **_both_queues(ADSL1, {"limit": "40kB", "rule": "fb-strict"}),
                duration="60s",
                warmup="10s",
                tcp=[{"cc": cc, "profile": "linux-6", "start_spread": 0}],
                cbr=BOTH,
                seed=seed,
            )
            for seed in (1, 2, 3)
        ]
    aqms = {
        "drop-tail": {"limit": "1000p", "rule": "ps"},
        "codel": {"kind": "codel", "limit": 1000},
        "fq_codel": {"kind": "fq_codel", "limit": 1000},
        "pie": {"kind": "pie", "limit": 1000},
        "red": {
            "kind": "red",
            "min_th": 5,
            "max_th": 15,
            "max_p": 0.1,
            "w_q": 0.002,
            "limit": 60,
        },
        "cbt": {
            "kind": "cbt",
            "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
            "tagged_th": 8,
            "other_th": 2,
            "limit": 60,
        },
    }
    for name, q in aqms.items():
        cbr = [{"direction": "down", "tag": 46 if name == "cbt" else 0}, {"direction": "up"}]
        out[f"10Mbit-{name}"] = [
            dict(
                **_with_down_queue(TEN, q),
                duration="20s",
                warmup="5s",
                tcp=CUBIC4,
                cbr=cbr,
                seed=1,
            )
        ]
    out["adsl1-pppoa-atm"] = [
        dict(
            down={"rate": "1.5Mbit", "framing": PPPOA, "queue": FB40},
            up={"rate": "256kbit", "framing": PPPOA, "queue": FB40},
            rtt="100ms",
            duration="20s",
            warmup="5s",
            tcp=[{"cc": "newreno", "profile": "linux-6", "start_spread": 0}],
            cbr=BOTH,
            seed=1,
        )
    ]
    return out


def metrics(r: collateral.Result) -> dict[str, float]:
    def cbr(direction: str, key: str, scale: float) -> float:
        v = [c[key] for c in r.cbr if c["direction"] == direction]
        return float(v[0]) * scale if v and v[0] is not None else math.nan

    return {
        "tcp_mbps": sum(t["goodput_bps"] for t in r.tcp) / 1e6,
        "loss_down_pct": cbr("down", "loss_rate", 100),
        "p50_down_ms": cbr("down", "delay_median_s", 1e3),
        "p95_down_ms": cbr("down", "delay_p95_s", 1e3),
        "loss_up_pct": cbr("up", "loss_rate", 100),
        "p50_up_ms": cbr("up", "delay_median_s", 1e3),
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="run only these cases (names as printed)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    a = ap.parse_args()
    out = []
    print(f"collateral {collateral.native_version}", flush=True)
    for name, scenarios in cases().items():
        if a.only and name not in a.only:
            continue
        sims, emus = [], []
        for sc in scenarios:
            s = Scenario(**sc)
            sims.append(metrics(collateral.simulate(s)))
            t = time.time()
            emus.append(metrics(emulate(s)))
            print(f"  {name} seed {sc['seed']}: emulated in {time.time() - t:.0f} s", flush=True)
        row = {"case": name, "trials": len(scenarios), "sim": mean(sims), "emu": mean(emus)}
        out.append(row)
        cols = " ".join(f"{k}={row['sim'][k]:.3g}/{row['emu'][k]:.3g}" for k in row["sim"])
        print(f"{name:28} sim/emu {cols}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
