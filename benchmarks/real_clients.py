"""Real clients through the testbed against the simulator's prediction of the same load.

On the testbed (``collateral shell``: the simulator's link and queue in the router, the
kernel's TCP), ``iperf3 -R`` downloads with CUBIC while ``irtt`` sends a 60-byte probe
every 20 ms and times its round trip; in the simulator, one CUBIC download beside CBR
flows of the same probes (88 B of IP every 20 ms, no jitter) both ways, each upstream
probe paired with the downstream probe sent when it arrives (as irtt's server answers
it). Printed: irtt's RTT p50/p90/p99 against the simulator's, iperf3's goodput against
the simulator's, per link and queue, each row followed by the shell's line on the router
(what the link carried, and whether it kept real time). Needs root and irtt, iperf3
(./setup.sh).

    sudo .venv/bin/python benchmarks/real_clients.py [--seconds 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import collateral

#: (name, link options as the CLI takes them, the same as simulate() keywords).
LINKS = [
    ("ADSL1", {"link": "adsl1"}),
    ("50/10 Mbit/s 30 ms", {"down": "50Mbit", "up": "10Mbit", "rtt": "30ms"}),
]
#: Drop-tail of one downstream BDP, and FQ-CoDel (its default 10240 p limit).
QUEUES = {"ADSL1": "19kB", "50/10 Mbit/s 30 ms": "188kB"}
WARMUP_S = 5.0


def cli_options(opts: dict[str, str]) -> list[str]:
    return [x for k, v in opts.items() for x in (f"--{k.replace('_', '-')}", v)]


def testbed(link: dict[str, str], queue: dict[str, str], seconds: int) -> dict[str, Any]:
    """irtt's RTT percentiles (ms) and iperf3's goodput (bit/s) through the router, and
    the shell's line on the router."""
    with tempfile.TemporaryDirectory() as d:
        irtt_json, iperf_json = Path(d) / "irtt.json", Path(d) / "iperf.json"
        probe_s = seconds - WARMUP_S - 2
        script = (
            f"iperf3 -c $COLLATERAL_SERVER -R -C cubic -t {seconds} -J > {iperf_json} &"
            f" sleep {WARMUP_S}; irtt client -Q -i 20ms -l 60 -d {probe_s}s"
            f" -o {irtt_json} $COLLATERAL_SERVER; wait"
        )
        servers = ["--server", "iperf3 -s -B 198.18.0.1", "--server", "irtt server -b 198.18.0.1"]
        cmd = ["--", "sh", "-c", script]
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "collateral",
                "shell",
                *cli_options(link | queue),
                *servers,
                *cmd,
            ],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise SystemExit(f"shell failed: {p.stderr.strip()}")
        rtts = [
            r["delay"]["rtt"] / 1e6
            for r in json.loads(irtt_json.read_text())["round_trips"]
            if "rtt" in r.get("delay", {})
        ]
        end = json.loads(iperf_json.read_text())["end"]
        # Goodput after the warm-up: iperf3's intervals, bytes at the receiver's side.
        ivs = json.loads(iperf_json.read_text())["intervals"]
        after = [iv["sum"] for iv in ivs if iv["sum"]["start"] >= WARMUP_S]
        bits = sum(s["bytes"] for s in after) * 8
        secs = sum(s["seconds"] for s in after)
    q = np.percentile(rtts, [50, 90, 99])
    return {
        "p50": q[0],
        "p90": q[1],
        "p99": q[2],
        "goodput": bits / secs,
        "goodput_total": end["sum_received"]["bits_per_second"],
        "n": len(rtts),
        # The shell's last word: what the link carried and whether the router kept real
        # time (a row measured through a late router holds its lateness too).
        "router": next(
            (ln for ln in reversed(p.stderr.splitlines()) if "the link carried" in ln), "?"
        ),
    }


def simulator(link: dict[str, str], queue: dict[str, str], seconds: int) -> dict[str, float]:
    r = collateral.simulate(
        **link,
        **queue,
        tcp_flows=1,
        cc="cubic",
        cbr="both",
        cbr_size="88B",
        cbr_interval="20ms",
        jitter=0,
        start_spread=0,
        duration=f"{seconds}s",
        warmup=f"{WARMUP_S}s",
    )
    up, down = r.cbr_packets("up"), r.cbr_packets("down")
    ok = ~np.isnan(down["owd_s"])
    d_sent, d_owd = down["sent_s"][ok], down["owd_s"][ok]
    rtts = []
    for t, u in zip(up["sent_s"], up["owd_s"], strict=True):
        if np.isnan(u) or t < WARMUP_S:
            continue
        k = np.searchsorted(d_sent, t + u)  # the reply leaves when the probe arrives
        if k < len(d_sent):
            rtts.append((u + d_owd[k]) * 1e3)
    q = np.percentile(rtts, [50, 90, 99])
    return {"p50": q[0], "p90": q[1], "p99": q[2], "goodput": r.tcp[0]["goodput_bps"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=30)
    a = ap.parse_args()
    print("link | queue | RTT p50 tb/sim (ms) | p90 | p99 | goodput tb/sim (Mbit/s) | probes")
    for name, link in LINKS:
        for qname, queue in (("drop-tail 1 BDP", {"queue": QUEUES[name]}),
                             ("FQ-CoDel", {"aqm": "fq_codel"})):  # fmt: skip
            tb, sim = testbed(link, queue, a.seconds), simulator(link, queue, a.seconds)
            cells = [
                f"{tb[k]:.1f}/{sim[k]:.1f} ({(tb[k] / sim[k] - 1) * 100:+.0f} %)"
                for k in ("p50", "p90", "p99")
            ]
            gp = f"{tb['goodput'] / 1e6:.3f}/{sim['goodput'] / 1e6:.3f}"
            gp += f" ({(tb['goodput'] / sim['goodput'] - 1) * 100:+.1f} %)"
            print(f"{name} | {qname} | {' | '.join(cells)} | {gp} | {tb['n']}", flush=True)
            print(f"  {tb['router']}", flush=True)


if __name__ == "__main__":
    main()
