"""``collateral infer --replay --testbed``: the replay of a measured run on the namespace
testbed (real Linux TCP through the simulator's queue code, in real time), beside the
simulator; and the one-line refusals where the testbed cannot run it."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest


def test_testbed_needs_the_replay(measured_cable, cli_main):
    rc, _, err = cli_main("infer", str(measured_cable), "--testbed")
    assert rc == 2 and err.endswith("--testbed: runs the replay on the testbed; give --replay too")


def test_testbed_is_refused_in_one_line_without_root(measured_cable, cli_main, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    rc, _, err = cli_main("infer", str(measured_cable), "--replay", "--testbed")
    assert rc == 2 and len(err.splitlines()) == 1
    assert err.endswith("--testbed: emulation needs root (network namespaces); run it with sudo")


def test_a_replay_the_testbed_refuses_is_one_line(measured_cable, cli_main, monkeypatch):
    """The measurement's CUBIC, on a kernel that offers only reno (as checked before
    anything is created; root and tools taken as present)."""
    from collateral.emulate import checks, endpoints

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    # ip and ethtool present (checks' own lookup), and collateral-emu: patching
    # shutil.which alone would hide the venv's collateral-emu from find_emulator too.
    monkeypatch.setattr(checks.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    monkeypatch.setattr(endpoints, "find_emulator", lambda: "/usr/sbin/collateral-emu")
    monkeypatch.setattr(checks, "available_congestion_controls", lambda: ["reno"])
    rc, _, err = cli_main("infer", str(measured_cable), "--replay", "--testbed")
    assert rc == 2 and len(err.splitlines()) == 1
    assert err.endswith(
        "--testbed: tcp[0].cc: 'cubic' is not available in this kernel; it offers: reno"
    )


needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/sys/net/ipv4/tcp_available_congestion_control"),
    reason="the testbed needs root and Linux",
)


@pytest.mark.realtime  # the testbed in real time: run alone (test.sh)
@needs_root
def test_the_download_replayed_on_the_testbed_queues_as_the_fifo_does(measured_cable):
    """The run's first 17 s (idle from 0 s, the download from 5 to 15 s) replayed on the
    testbed: 18 s in real time. The truth: 30 ms RTT, 50 Mbit/s, 500 kB of drop-tail
    buffer, whose ceiling is 500e3 x 8 / 50e6 = 80 ms; CUBIC keeps it at least 0.7 full."""
    from collateral import emulate
    from collateral.inference import from_store, infer, replay

    obs = from_store(measured_cable)
    inf = infer(obs)
    keep = obs.probe_sent_s < 17.0
    first = dataclasses.replace(
        obs,
        probe_sent_s=obs.probe_sent_s[keep],
        rtt_s=obs.rtt_s[keep],
        flows=[f for f in obs.flows if f.direction == "down"],
    )
    sc = replay.scenario(inf, first)
    assert [t.direction for t in sc.tcp] == ["down"] * 4 and sc.duration < 18.1e9
    sides = {s.phase: s for s in replay.compare(inf, first, emulate.emulate(sc))}
    idle, down = sides["idle"].replayed, sides["download"].replayed
    # Idle probes cross empty queues: the base RTT plus two 88-byte serialisations.
    assert idle["p50_s"] == pytest.approx(0.030, abs=0.001)
    # Under the download the probe waits behind 0.7 to 1 of the 80 ms buffer (and a
    # release up to a few ms late on a busy machine).
    assert 0.030 + 0.7 * 0.080 < down["p50_s"] <= down["p95_s"] < 0.030 + 0.080 + 0.005
    # What the four flows delivered: the line's 50 Mbit/s of IP packets, as goodput,
    # for their 10 s, and after their stop at most what the 500 kB buffer and the 30 ms
    # path held (their sockets' unsent bytes are dropped, as the simulator sends none).
    got = sides["down bytes"].replayed["bytes"]
    line = 50e6 / 8 * 1448 / 1500 * 10
    assert 0.9 * line < got < line + 500e3 + 50e6 / 8 * 0.030
    assert np.isfinite(sides["download"].ks)
