"""Classic ECN in the testbed beside the simulator: real Linux CUBIC (ECN on in the
kernel, ``net.ipv4.tcp_ecn=1``) through the router running our FQ-CoDel with ECN, and
the simulator's CUBIC (profile linux-6, ``ecn = "classic"``) through the same queue.

The scenario: ADSL1 (1.5 Mbit/s down, 256 kbit/s up, 100 ms RTT), FQ-CoDel (ECN on, its
default) downstream, a 100-packet drop-tail queue upstream, one CUBIC download and a
G.711-like CBR stream (186-byte packets every 20 ms) each way; 60 s with 10 s of warm-up;
seeds 1-3 (the CBR departures follow the seed in both).

Printed per seed and as means: CE marks (the downstream queue's ``ce_marks``), drops
and, of them, drops of ECT packets (testbed: from the router log, a drop whose frame
arrived with ECT(0)/ECT(1)/CE; ``below limit``: with the queue under its packet limit,
i.e. the discipline's choice rather than an overflow; simulator: drops of the ECN flow's
data packets), TCP goodput, the downstream CBR delay (p50/p95, the added delay as the
summary defines it), and the testbed/simulator ratios. The issue's bar: goodput within
5 %, VoIP delay within 20 %.

    sudo .venv/bin/python benchmarks/ecn_testbed.py [--seeds 1 2 3] [--duration 60s]
        [--json OUT] [--keep DIR]

Needs root (network namespaces). Runs in real time: about 65 s per seed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import collateral
from collateral import emulate as emu
from collateral.spec import Scenario

LIMIT = 1000  # FQ-CoDel's packet limit (Linux's default is 10240; never reached here)


def scenario(seed: int, duration: str = "60s", warmup: str = "10s") -> Scenario:
    return Scenario(
        down={"rate": "1.5Mbit", "queue": {"kind": "fq_codel", "limit": LIMIT, "ecn": True}},
        up={"rate": "256kbit", "queue": {"limit": "100p", "rule": "ps"}},
        rtt="100ms",
        duration=duration,
        warmup=warmup,
        tcp=[{"cc": "cubic", "profile": "linux-6", "ecn": "classic", "start_spread": 0}],
        cbr=[{"direction": "down"}, {"direction": "up"}],
        trace={"drops": True},
        seed=seed,
    )


def common(r: collateral.Result) -> dict[str, float]:
    q = r.summary["queues"]["down"]
    down = next(c for c in r.cbr if c["direction"] == "down")
    up = next(c for c in r.cbr if c["direction"] == "up")
    return {
        "ce_marks": q["ce_marks"],
        "drops": q["drops"],
        "goodput_mbps": sum(t["goodput_bps"] for t in r.tcp) / 1e6,
        "retransmits": sum(t["retransmits"] or 0 for t in r.tcp),
        "p50_down_ms": down["delay_median_s"] * 1e3,
        "p95_down_ms": down["delay_p95_s"] * 1e3,
        "p50_up_ms": up["delay_median_s"] * 1e3,
        "loss_down_pct": down["loss_rate"] * 100,
    }


def sim_metrics(sc: Scenario) -> dict[str, float]:
    r = collateral.simulate(sc)
    m = common(r)
    d = r.traces["drops"]
    # Downstream drops of the ECN flow's data packets (ECT(0)); its ACKs go upstream.
    ect = (d["direction"] == 0) & (d["flow"] == 0) & (d["bytes"] > 100)
    m["ect_drops"] = int(ect.sum())
    m["ect_drops_below_limit"] = math.nan  # the trace has no occupancy
    m["ecn_reductions"] = sum(t.get("ecn_reductions") or 0 for t in r.tcp)
    return m


def emu_metrics(sc: Scenario, wd: Path) -> dict[str, float]:
    r = emu.emulate(sc, workdir=wd, keep=True)
    m = common(r)
    log = emu.read_csv(wd / "router.csv")
    col = {c: k for k, c in enumerate(emu.ROUTER_LOG_COLUMNS)}
    down = (log[:, col["dir"]] == 0) & (log[:, col["t_ns"]] < sc.duration)
    drop = down & (log[:, col["ev"]] == emu.EV_DROP)
    ect = (log[:, col["tos"]] & 3) != 0
    m["ect_drops"] = int((drop & ect).sum())
    m["ect_drops_below_limit"] = int((drop & ect & (log[:, col["qpkts"]] < LIMIT)).sum())
    m["ce_logged"] = int((down & (log[:, col["ev"]] == emu.EV_CE)).sum())
    m["ect_share"] = float(
        (ect & down & (log[:, col["ev"]] == emu.EV_QUEUED)).sum()
        / max(1, (down & (log[:, col["ev"]] == emu.EV_QUEUED)).sum())
    )
    # The kernel's ECN reductions: entries into TCP_CA_CWR (2) in the polled TCP_INFO.
    send = emu.read_csv(wd / "tcp0-send.csv")
    st = send[:, 5] if len(send) else np.zeros(0, np.int64)
    t = send[:, 0] if len(send) else np.zeros(0, np.int64)
    entry = (st[1:] == 2) & (st[:-1] != 2) & (t[1:] < sc.duration)
    m["ecn_reductions"] = int(entry.sum())
    return m


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def show(label: str, s: dict[str, float], e: dict[str, float]) -> None:
    g = e["goodput_mbps"] / s["goodput_mbps"]
    p50 = e["p50_down_ms"] / s["p50_down_ms"]
    p95 = e["p95_down_ms"] / s["p95_down_ms"]
    print(
        f"{label:8} CE marks sim {s['ce_marks']:.0f} emu {e['ce_marks']:.0f}"
        f" | ECN reductions sim {s['ecn_reductions']:.0f} emu {e['ecn_reductions']:.0f}"
        f" | drops sim {s['drops']:.0f} (ECT {s['ect_drops']:.0f})"
        f" emu {e['drops']:.0f} (ECT {e['ect_drops']:.0f},"
        f" below limit {e['ect_drops_below_limit']:.0f})"
        f" | retransmits sim {s['retransmits']:.0f} emu {e['retransmits']:.0f}",
        flush=True,
    )
    print(
        f"{'':8} goodput sim {s['goodput_mbps']:.3f} emu {e['goodput_mbps']:.3f} Mbit/s"
        f" (ratio {g:.3f}, {'ok' if abs(g - 1) <= 0.05 else 'MISS'} at 5 %)"
        f" | CBR down p50 sim {s['p50_down_ms']:.2f} emu {e['p50_down_ms']:.2f} ms"
        f" (ratio {p50:.3f}, {'ok' if abs(p50 - 1) <= 0.2 else 'MISS'})"
        f" p95 sim {s['p95_down_ms']:.2f} emu {e['p95_down_ms']:.2f} ms"
        f" (ratio {p95:.3f}, {'ok' if abs(p95 - 1) <= 0.2 else 'MISS'} at 20 %)"
        f" | CBR up p50 sim {s['p50_up_ms']:.2f} emu {e['p50_up_ms']:.2f} ms",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--warmup", default="10s")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--keep", help="keep each run's testbed logs under this directory")
    a = ap.parse_args()
    print(f"collateral {collateral.native_version}", flush=True)
    sims, emus, rows = [], [], []
    for seed in a.seeds:
        sc = scenario(seed, a.duration, a.warmup)
        s = sim_metrics(sc)
        t = time.time()
        with tempfile.TemporaryDirectory() as d:
            wd = Path(a.keep) / f"seed{seed}" if a.keep else Path(d)
            e = emu_metrics(sc, wd)
        print(
            f"seed {seed}: emulated in {time.time() - t:.0f} s;"
            f" {e['ect_share'] * 100:.0f} % of the downstream packets ECT,"
            f" {e['ce_logged']} CE rewrites logged",
            flush=True,
        )
        show(f"seed {seed}", s, e)
        sims.append(s)
        emus.append(e)
        rows.append({"seed": seed, "sim": s, "emu": e})
    if len(rows) > 1:
        show("mean", mean(sims), mean(emus))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1, default=_nan_none))
    return 0


def _nan_none(x: Any) -> Any:
    return None if isinstance(x, float) and math.isnan(x) else x


if __name__ == "__main__":
    sys.exit(main())
