"""The built-in RRUL workload and web users on the namespace testbed (needs root,
iproute2, ethtool and collateral-emu; skipped otherwise). Short runs: each expectation
is computed by hand from the path, not from a run."""

from __future__ import annotations

import os

import numpy as np
import pytest

import collateral
from collateral import emulate as emu
from collateral.emulate.logs import read_csv
from collateral.spec import Scenario

#: The testbed in real time: run alone, never beside other tests (test.sh).
pytestmark = pytest.mark.realtime

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/sys/net/ipv4/tcp_available_congestion_control"),
    reason="the testbed needs root and Linux",
)

#: 50/10 Mbit/s, 30 ms base RTT, FQ-CoDel both ways.
DOWN_BPS, UP_BPS, RTT_S = 50e6, 10e6, 0.030


def fq_codel_path(**kw) -> Scenario:
    fq = {"kind": "fq_codel"}
    return Scenario(
        down={"rate": "50Mbit", "queue": fq}, up={"rate": "10Mbit", "queue": fq}, rtt="30ms", **kw
    )


def probe_rtts(r: collateral.Result, n_tcp: int) -> np.ndarray:
    """Each probe's round trip: request (up, CBR flow 2p) plus reply (down, 2p + 1) of
    the same sequence number, the workload's four probes together."""
    tr = r.traces["cbr"]
    out = []
    for p in range(4):
        up, down = (tr["flow"] == n_tcp + 2 * p), (tr["flow"] == n_tcp + 2 * p + 1)
        a = dict(zip(tr["seq"][up], tr["owd_s"][up], strict=True))
        b = dict(zip(tr["seq"][down], tr["owd_s"][down], strict=True))
        out += [a[k] + b[k] for k in a.keys() & b.keys()]
    x = np.array(out)
    return x[~np.isnan(x)]


@needs_root
def test_rrul_on_the_testbed_marks_its_flows_and_its_probes_see_the_base_rtt(tmp_path):
    """RRUL (2 s idle, 2 s settling) on FQ-CoDel: the kernel flows' segments and ACKs
    carry their DSCP (CS0, CS1, CS5, EF) at the router; the probes' shortest round
    trip is the path's: 30 ms plus an 88-byte probe's serialisation up (70.4 us) and
    down (14.1 us), and on FQ-CoDel (a sparse flow never waits behind the bulk flows)
    within 1 ms of it; the scores come out of the core (RPM empty: no self probes)."""
    sc = fq_codel_path(
        duration="8s",
        warmup="0s",
        workload={"kind": "rrul", "idle": "2s", "settle": "2s"},
    )
    r = emu.emulate(sc, workdir=tmp_path)
    base = RTT_S + 88 * 8 / UP_BPS + 88 * 8 / DOWN_BPS
    rtts = probe_rtts(r, len(sc.tcp))
    assert len(rtts) > 100, len(rtts)
    assert base - 20e-6 <= rtts.min() <= base + 1e-3, (rtts.min(), base)
    s = r.summary
    assert s["latency_idle_s"] >= base - 20e-6 and s["latency_loaded_s"] > 0
    # No self probes (the kernel flows' samples are off, see emulate.endpoints): RPM,
    # which needs them, stays empty rather than half of it standing for the whole.
    assert not any((tmp_path / f"tcp{i}-rtt.csv").exists() for i in range(len(sc.tcp)))
    assert s["rpm"] is None or np.isnan(s["rpm"])
    assert s["bufferbloat_grade"] in ("A+", "A", "B", "C", "D", "F")
    assert sum(t["goodput_bps"] for t in r.tcp if t["direction"] == "down") > 0.5 * DOWN_BPS
    # The router saw each flow's segments (to 5001 + i) and ACKs (from it) marked.
    log = read_csv(tmp_path / "router.csv")
    for i, t in enumerate(sc.tcp):
        for col in (5, 6):  # sport (ACKs), dport (data)
            rows = log[(log[:, 4] == 6) & (log[:, col] == 5001 + i)]
            assert len(rows) > 10 and set(rows[:, 8] >> 2) == {t.tag}, (i, col)


@needs_root
def test_web_users_on_the_testbed_account_for_every_object(tmp_path):
    """Three users, constant draws: pages of 3 objects of 20 000 B, 1 s think times,
    2 connections at once. On the idle 30 ms path each object takes, by hand: the
    handshake (1 RTT), the request (352 B up at 10 Mbit/s) and the initial window of
    10 segments of 1448 B (1 RTT), whose first segment's ACK (at the earliest: a
    receiver in quick-ACK mode acknowledges each) releases the last four, the last one
    1176 B (1 RTT): at least 3 RTT plus the serialisation of the request and of 1 + 3
    segments of 1500 B and one of 1228 B at 50 Mbit/s, 91.44 ms (the simulator: 91.59).
    Every object the browser opened is done, or still under way at the end; the server
    answered each done one; the core counts them."""
    const = lambda v: {"kind": "constant", "value": v}  # noqa: E731
    model = {
        "request_bytes": const(300),
        "reply_bytes": const(20000),
        "objects_per_page": const(3),
        "think_s": const(1.0),
    }
    sc = fq_codel_path(
        duration="6s",
        warmup="0s",
        web=[{"users": 3, "parallel": 2, "model": model, "tcp": {"profile": "linux-6"}}],
    )
    r = emu.emulate(sc, workdir=tmp_path)
    obj = read_csv(tmp_path / "web0-objects.csv").reshape(-1, 7)
    srv = read_csv(tmp_path / "web0-server.csv").reshape(-1, 4)
    done = obj[:, 3] >= 0
    assert len(obj) >= 3 * 3, len(obj)  # each user at least one page
    # Not done only when opened in the last second (under way at the end).
    assert (obj[~done, 2] > 5e9).all(), obj[~done]
    assert set(obj[done, 1]) <= set(srv[:, 0])
    w = r.summary["web"][0]
    in_run = done & (obj[:, 3] <= 6e9)
    assert w["objects_completed"] == in_run.sum() and w["connections"] == len(obj)
    assert w["reply_bytes"] == 20000 * in_run.sum()
    assert w["pages_started"] * 3 >= w["connections"] >= w["pages_completed"] * 3
    floor = 3 * RTT_S + 352 * 8 / UP_BPS + (4 * 1500 + 1228) * 8 / DOWN_BPS
    assert floor <= w["response_median_s"] <= floor + 0.010, (w["response_median_s"], floor)
