"""One model, two clocks: the testbed's collection computes exactly what the simulator
computes. A simulated trial's own per-packet records are written out as the testbed's
endpoints and router write their logs, read back through the testbed's collection path
(``emulate.collect``, which hands them to the core's measurement) and must give the
simulator's summary, column for column. No root needed: nothing is emulated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import collateral
from collateral import emulate as emu
from collateral.schema import nan_to_none
from collateral.spec import Scenario

#: Counters the kernel's TCP does not report to the testbed (the testbed gives None),
#: and the simulator's event count: the only summary fields that differ by design.
NOT_IN_THE_TESTBED = {
    "segments_sent",
    "timeouts",
    "fast_retransmits",
    "completed_s",
    "ecn_reductions",
    "ce_received",
}


def _write_testbed_logs(sc: Scenario, r: collateral.Result, wd: Path) -> None:
    """The logs the testbed's endpoints and router would have written for this trial."""
    end = sc.duration
    n_tcp = len(sc.tcp)
    cbr = r.traces["cbr"]
    router_rows = []
    for j in range(len(sc.cbr)):
        k = cbr["flow"] == n_tcp + j
        seq = cbr["seq"][k].astype(np.int64)
        sent = np.rint(cbr["sent_s"][k] * 1e9).astype(np.int64)
        size = cbr["bytes"][k].astype(np.int64)
        fate = cbr["fate"][k]
        owd = np.rint(np.nan_to_num(cbr["owd_s"][k]) * 1e9).astype(np.int64)
        rows = "\n".join(f"{q},{s},{n}" for q, s, n in zip(seq, sent, size, strict=True))
        (wd / f"cbr{j}-send.csv").write_text(f"seq,send_ns,len\n{rows}\n")
        # Received: when they arrived; in flight at the end: they arrive after it.
        got = fate == 0
        late = fate == 3
        recv = [(q, s + d) for q, s, d in zip(seq[got], sent[got], owd[got], strict=True)]
        recv += [(q, end + 1_000_000_000) for q in seq[late]]
        recv.sort()
        rows = "\n".join(f"{q},{t}" for q, t in recv)
        (wd / f"cbr{j}-recv.csv").write_text(f"seq,recv_ns\n{rows}\n")
        # Dropped by a queue: the router logs the drop with the UDP port and sequence.
        router_rows += [
            f"0,1,0,{n},17,{6001 + j},{7001 + j},{q}"
            for q, n in zip(seq[fate == 1], size[fate == 1], strict=True)
        ]
    (wd / "router.csv").write_text(
        "t_ns,ev,dir,ip_len,proto,sport,dport,useq\n" + "\n".join(router_rows) + "\n"
    )
    cong = r.traces["congestion"]
    for i, t in enumerate(r.tcp):
        # The receiver's byte counter at the warm-up and at the end; the sender's polled
        # retransmission counter; the congestion events.
        (wd / f"tcp{i}-recv.csv").write_text(
            f"t_ns,bytes\n0,0\n{sc.warmup},1000\n{end},{1000 + t['bytes_delivered']}\n"
        )
        (wd / f"tcp{i}-send.csv").write_text(
            f"t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state\n{end},10,10,100,{t['retransmits']},0\n"
        )
        times = np.rint(cong["time_s"][cong["flow"] == i] * 1e9).astype(np.int64)
        (wd / f"tcp{i}-congestion.csv").write_text("t_ns\n" + "".join(f"{x}\n" for x in times))
    q = r.summary["queues"]
    # As the router writes it: JSON, so NaN (a class with no arrivals) as null.
    report = {"down": q["down"], "up": q["up"], "phases": r.summary["phases"]}
    (wd / "router.json").write_text(json.dumps(nan_to_none(report), allow_nan=False))


def test_the_testbeds_collection_gives_the_simulators_summary(tmp_path):
    sc = Scenario(
        down={"rate": "1.5Mbit", "queue": {"limit": "20kB", "rule": "fb-loose"}},
        up={"rate": "256kbit", "queue": {"limit": "20kB", "rule": "fb-loose"}},
        rtt="100ms",
        duration="30s",
        warmup="5s",
        tcp=[{"cc": "cubic", "profile": "linux-6"}],
        cbr=[
            {"direction": "down"},
            {"direction": "up"},
            {"direction": "down", "size": "200B", "tag": 46},
            {"direction": "down", "app": "quake3"},
        ],
        seed=11,
    )
    r = collateral.simulate(sc)
    fates = np.bincount(r.traces["cbr"]["fate"], minlength=4)
    assert fates[0] > 1000 and fates[1] > 0 and fates[3] > 0, fates  # arrived, dropped, in flight
    _write_testbed_logs(sc, r, tmp_path)
    e = emu.collect(sc, tmp_path)
    sim, got = r.summary, e.summary
    assert got["mode"] == "emulation" and sim["mode"] == "simulation"
    for key in ("duration_s", "warmup_s", "packets_delivered", "queues", "phases", "web"):
        assert nan_to_none(got[key]) == nan_to_none(sim[key]), key
    assert len(got["cbr"]) == 4
    for s, g in zip(sim["cbr"], got["cbr"], strict=True):
        assert nan_to_none(g) == nan_to_none(s)  # every column, exactly
    for s, g in zip(sim["tcp"], got["tcp"], strict=True):
        for col, v in s.items():
            if col in NOT_IN_THE_TESTBED:
                assert nan_to_none(g[col]) is None, col
            else:
                assert nan_to_none(g[col]) == nan_to_none(v), col
    # The per-packet trace the testbed returns is the simulator's too.
    for col in ("flow", "seq", "bytes", "fate", "extra_delay_s"):
        np.testing.assert_array_equal(e.traces["cbr"][col], r.traces["cbr"][col], err_msg=col)


def test_the_kernels_infinite_ssthresh_is_no_ssthresh_in_the_testbeds_trace(tmp_path):
    """Linux reports "no ssthresh yet" as 0x7fffffff, and BBR never sets one: stored as
    the number it is, it made the testbed's cwnd figure's axis reach 2.1e9 with the
    window a flat line at its foot. It is the schema's not-set value, as in the
    simulator's traces, so cwnd_series gives NaN and the figure draws no ssthresh."""
    sc = Scenario(link="adsl1", duration="10s", warmup="2s", tcp=[{"cc": "bbr"}], cbr=[])
    r = collateral.simulate(sc)
    _write_testbed_logs(sc, r, tmp_path)
    (tmp_path / "tcp0-send.csv").write_text(
        "t_ns,cwnd,ssthresh,srtt_us,total_retrans,ca_state\n"
        "1000000000,10,2147483647,100,0,0\n2000000000,38,2147483647,100,0,0\n"
        "3000000000,20,20,100,1,0\n"
    )
    e = emu.collect(sc, tmp_path)
    _t, cwnd, ssthresh = e.cwnd_series(0, step="1s", t0=1, t1=3)
    assert list(cwnd) == [10, 38, 20]
    assert np.isnan(ssthresh[:2]).all() and ssthresh[2] == 20


def test_testbed_goodput_counts_data_by_arrival_as_the_simulator_does():
    """Data held out of order at the warm-up and released later by a retransmission is
    not the window's: 140 segments of 1448 B had arrived by the warm-up (202,720 B) of
    which 150,000 B in order, so 52,720 B waited behind a hole. In order by the end:
    1,002,720 B; delivered after the warm-up: 1,002,720 - 202,720 = 800,000 B. Bytes read
    in the window (what the testbed counted before) give 850,000 B, above what crossed
    the bottleneck in it; a log without the kernel's counts still reads so."""
    from collateral.emulate.logs import delivered_after

    recv = np.array(
        [
            [1_000_000_000, 100_000, 100_000, 100, 1448],
            [2_000_000_000, 150_000, 150_000, 140, 1448],
            [10_000_000_000, 1_000_000, 1_002_720, 700, 1448],
        ]
    )
    assert delivered_after(recv, 2_000_000_000, 10_000_000_000) == 800_000
    assert delivered_after(recv[:, :2], 2_000_000_000, 10_000_000_000) == 850_000
    recv[:, 2:] = 0
    assert delivered_after(recv, 2_000_000_000, 10_000_000_000) == 850_000
    # Nothing logged by the warm-up: everything in order by the end counts.
    assert delivered_after(np.array([[3e9, 10, 20, 1, 1448]]), 2e9, 10e9) == 20


def test_stores_of_one_file_run_by_two_builds_are_told_apart():
    """No trial key in common: if the builds differ (a key holds the core's version),
    that is the reason given, not "run the same experiment file" (which was done)."""
    import pandas as pd

    from collateral.plot.compare import _no_common_trial

    s = pd.DataFrame({"key": ["a"], "model_version": ["0.1.0+aaa"]})
    e = pd.DataFrame({"key": ["b"], "model_version": ["0.1.0+bbb"]})
    said = _no_common_trial(s, e)
    assert "different builds of the core (0.1.0+aaa and 0.1.0+bbb)" in said, said
    same = _no_common_trial(s, e.assign(model_version="0.1.0+aaa"))
    assert same.endswith("run the same experiment file"), same


def test_compare_shows_each_point_where_a_sweep_has_several():
    """The overall means hide a point far off (BBR's queue beside NewReno's): a row per
    point, simulated / emulated, means over the trials both directories hold."""
    import pandas as pd

    from collateral.cli.compare import _by_point

    def store(goodput, delay, extra_key=None):
        rows = {
            "key": ["a1", "a2", "b1", *([extra_key] if extra_key else [])],
            "point": ["a", "a", "b", *(["b"] if extra_key else [])],
            "tcp0_cc": ["newreno", "newreno", "bbr", *(["bbr"] if extra_key else [])],
            "tcp0_goodput_bps": goodput,
            "cbr0_delay_median_s": delay,
        }
        return type("S", (), {"summary": lambda self: pd.DataFrame(rows)})()

    sim = store([1.0e6, 2.0e6, 1.3e6], [0.030, 0.032, 0.0326])
    emu = store([1.2e6, 1.4e6, 1.35e6, 9e6], [0.031, 0.033, 0.1408, 9.0], extra_key="b9")
    t = _by_point(sim.summary(), emu.summary())
    cells = [[c._cells[i] for c in t.columns] for i in range(t.row_count)]
    # Means over a1, a2 (b9 is the emulation's alone: not compared).
    assert cells == [["newreno", "1.5 / 1.3", "31 / 32"], ["bbr", "1.3 / 1.35", "32.6 / 140.8"]]
    head = sim.summary().head(2)  # point "a" alone
    assert _by_point(head, head) is None
