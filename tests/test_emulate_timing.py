"""Whether the testbed kept real time (issue 28): the router's release error and context
switches reach every emulated trial's summary and row, a trial beyond the accuracy
target is flagged late in the run's line, ``compare`` and the report, and a sweep can
run its late trials again. None of these needs root: the testbed's runs are stood in
for by results the core measures from made-up records and router reports (the runs
themselves are in test_emulate.py)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import collateral
from collateral import _native
from collateral.emulate import run as emulate_run
from collateral.emulate import store_line, trial_line
from collateral.emulate.timing import RELEASE_ERROR_TARGET_S
from collateral.result import Result

EXAMPLE = Path(__file__).parents[1] / "examples" / "sim-vs-emu.toml"
SHORT = [
    ("experiment.trials", 1),
    ("scenario.duration", "4s"),
    ("scenario.warmup", "1s"),
    ("sweep.tcp.cc", ["newreno"]),
]
_QUEUE = {k: 0 for k in ("arrivals", "delivered", "drops", "ce_marks", "wire_losses")}
_QUEUE |= {"in_flight": 0, "max_bytes": 0, "max_packets": 0}


def _router(p99_ns: int | None) -> str:
    """A router report; with ``p99_ns``, its timing (p50 2 µs, max 20 ms, 2245
    preemptions, 9 voluntary switches)."""
    r: dict = {"down": _QUEUE, "up": _QUEUE, "phases": []}
    if p99_ns is not None:
        r["timing"] = {
            "frames": 100,
            "release_error_p50_ns": 2_000,
            "release_error_p99_ns": p99_ns,
            "release_error_max_ns": 20_000_000,
            "preemptions": 2245,
            "voluntary_switches": 9,
        }
    return json.dumps(r)


def _testbed_result(sc, p99_ns: int | None) -> Result:
    """What the core measures for a testbed trial of ``sc`` whose router reports
    ``p99_ns`` (no packets: only the timing matters here)."""
    tcp = [{"bytes_delivered": 0, "congestion_times": [], "retransmits": 0} for _ in sc.tcp]
    empty = (np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.uint32))
    raw = _native.measure_testbed(
        sc.to_native_json(), json.dumps(tcp), [empty for _ in sc.cbr], _router(p99_ns)
    )
    return Result(raw, sc)


def test_the_target_is_the_readmes_half_millisecond():
    assert RELEASE_ERROR_TARGET_S == 0.0005


def test_the_routers_timing_reaches_the_summary_and_the_stored_row():
    from collateral.runner import summary_columns

    sc = collateral.build_scenario(link="adsl1", duration="2s", warmup="0s")
    r = _testbed_result(sc, 7_800_000)
    s = r.summary
    assert s["late"] == 1
    assert (s["release_error_p50_s"], s["release_error_p99_s"]) == (0.000002, 0.0078)
    assert (s["release_error_max_s"], s["router_preemptions"]) == (0.02, 2245)
    assert s["router_voluntary_switches"] == 9
    row = summary_columns(s)
    assert (row["late"], row["release_error_p99_s"], row["router_preemptions"]) == (1, 0.0078, 2245)
    # Exactly at the target is on time; a router without timing, and the simulator,
    # leave the fields empty (NULL in the store).
    assert _testbed_result(sc, 500_000).summary["late"] == 0
    assert _testbed_result(sc, None).summary["late"] is None
    sim = collateral.simulate(sc).summary
    assert sim["late"] is None and math.isnan(sim["release_error_p99_s"])
    flat = summary_columns(sim)
    assert flat["late"] is None and flat["release_error_p99_s"] is None


def test_a_trial_says_in_one_line_whether_it_was_late():
    late = {
        "late": 1,
        "release_error_p99_s": 0.0078,
        "release_error_max_s": 0.020,
        "router_preemptions": 2245,
    }
    line = trial_line(late)
    assert line is not None and "\n" not in line
    assert line.startswith("testbed LATE: ")
    assert "7.8 ms late at p99 (target 0.5 ms; max 20.0 ms, 2245 preemptions)" in line
    ok = {**late, "late": 0, "release_error_p99_s": 0.00004, "router_preemptions": 0}
    assert trial_line(ok) == (
        "testbed on time: release error p99 0.04 ms (target 0.5 ms; max 20.0 ms, 0 preemptions)"
    )
    assert trial_line({"late": None}) is None
    assert trial_line({"mode": "simulation"}) is None


def test_a_store_says_how_many_of_its_testbed_trials_were_late():
    df = pd.DataFrame(
        {
            "key": ["a", "b", "c"],
            "late": [1, 0, None],
            "release_error_p99_s": [0.0078, 0.0001, None],
        }
    )
    line = store_line(df, rerun="collateral emulate X.toml --rerun-late")
    assert line == (
        "testbed LATE: 1 of 2 trials beyond the release error target 0.5 ms at p99 (worst"
        " 7.8 ms): their delays include the testbed's own lateness; rerun them:"
        " collateral emulate X.toml --rerun-late"
    )
    df.loc[0, "late"], df.loc[0, "release_error_p99_s"] = 0, 0.0003
    assert store_line(df) == (
        "testbed on time: all 2 trials within the release error target 0.5 ms at p99 (worst 0.3 ms)"
    )
    assert store_line(df.drop(columns="late")) is None  # a simulation, or an old store
    assert store_line(df.iloc[2:]) is None  # no testbed timing


@pytest.fixture
def fake_testbed(monkeypatch):
    """emulate_experiment without the testbed: each trial's result is what the core
    measures for a router whose release error p99 is the next of ``p99s`` (ns)."""
    p99s: list[int] = []

    def emulate(scenario, *a, **kw):
        return _testbed_result(scenario, p99s.pop(0))

    monkeypatch.setattr(emulate_run, "emulate", emulate)
    monkeypatch.setattr(emulate_run, "check_ready", lambda sc: {})
    return p99s


def test_a_sweep_reruns_its_late_trials_and_sets_the_late_ones_aside(tmp_path, fake_testbed):
    from collateral.experiment import load_experiment
    from collateral.store import open_store

    exp = load_experiment(EXAMPLE, SHORT)
    out, lines = tmp_path / "emu", []
    fake_testbed += [3_000_000]
    assert emulate_run.emulate_experiment(exp, out, notify=lines.append) == (1, 1)
    (key,) = open_store(out).summary()["key"]
    assert len(lines) == 1 and lines[0].startswith(f"trial {key}: testbed LATE: ")
    row = open_store(out).summary().iloc[0]
    assert (row["late"], row["release_error_p99_s"]) == (1, 0.003)
    # Resuming leaves a late trial alone; --rerun-late runs it again, once.
    assert emulate_run.emulate_experiment(exp, out) == (0, 1)
    fake_testbed += [40_000]
    assert emulate_run.emulate_experiment(exp, out, rerun_late=True) == (1, 1)
    st = open_store(out)
    s = st.summary()
    assert list(s["key"]) == [key] and list(s["late"]) == [0]
    assert list(s["release_error_p99_s"]) == [0.00004]
    (q,) = (out / "quarantine").iterdir()
    assert "late" in (q / "reason.txt").read_text()
    assert emulate_run.emulate_experiment(exp, out, rerun_late=True) == (0, 1)
    assert fake_testbed == []


def test_a_sweep_removes_what_a_killed_writer_left_half_written(tmp_path, fake_testbed):
    """As `collateral run` does: a dead writer's part directory and hidden atomic-write
    files go when the testbed's sweep starts again; a live writer's stay."""
    from collateral.experiment import load_experiment

    exp = load_experiment(EXAMPLE, SHORT)
    out = tmp_path / "emu"
    fake_testbed += [40_000]
    assert emulate_run.emulate_experiment(exp, out) == (1, 1)
    host, dead_pid = os.uname().nodename, 999_999_999
    part = out / "tmp" / f"{host}-{dead_pid}-x"
    part.mkdir()
    (part / "summary.parquet").write_bytes(b"half")
    left = [out / f".points.parquet.{host}-{dead_pid}.ab12cd34.tmp"]
    left += [
        d / f".manifest.json.{host}-{dead_pid}.ef56ab78.tmp" for d in (out / "parts").iterdir()
    ]
    live = out / f".points.parquet.{host}-{os.getpid()}.0badc0de.tmp"
    for f in [*left, live]:
        f.write_bytes(b"half")
    assert emulate_run.emulate_experiment(exp, out) == (0, 1)
    assert not part.exists() and not any(f.exists() for f in left)
    assert live.exists()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args], capture_output=True, text=True, timeout=120
    )


def test_compare_and_the_report_flag_the_late_testbed_trials(tmp_path, fake_testbed):
    from collateral.experiment import load_experiment
    from collateral.report import sim_vs_emu
    from collateral.report.sections import section
    from collateral.runner import run_experiment
    from collateral.store import open_store

    exp = load_experiment(EXAMPLE, SHORT)
    fake_testbed += [7_800_000]
    emulate_run.emulate_experiment(exp, tmp_path / "sim-vs-emu-emu")
    run_experiment(exp, tmp_path / "sim-vs-emu", progress=False)
    sim, emu = tmp_path / "sim-vs-emu", tmp_path / "sim-vs-emu-emu"
    p = _cli("compare", str(sim), str(emu), "--plot", str(tmp_path / "compare.png"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "compare.png").stat().st_size > 0  # the late trial drawn apart
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("testbed LATE: 1 of 1 trials beyond the release error target")
    assert f"-o {emu} --rerun-late" in last
    table = sim_vs_emu([open_store(sim), open_store(emu)])
    assert "testbed LATE: 1 of 1 trials" in table.note
    notes = section(open_store(emu), set()).notes
    assert any(n.startswith("testbed LATE: 1 of 1 trials") for n in notes)
    assert not any("testbed" in n for n in section(open_store(sim), set()).notes)


def test_rerun_late_without_an_experiment_is_refused_in_one_line():
    p = _cli("emulate", "--rerun-late", "--link", "adsl1")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "collateral: error: --rerun-late: reruns an experiment's stored trials; give"
        " EXPERIMENT.toml"
    )


def test_the_shells_closing_line_says_what_the_router_reported(tmp_path):
    """``collateral shell``'s last line, from the router's report as the core measures it:
    what each direction carried and the timing line; a report that cannot be read or is
    missing is said so, not raised (the user's command already ran)."""
    from collateral.emulate.session import session_line
    from collateral.emulate.testbed import Proc
    from collateral.spec import build_scenario

    session = build_scenario(link="adsl1", tcp_flows=0, cbr="none")
    done = Proc("router", subprocess.Popen(["true"]), tmp_path / "err")
    done.popen.wait()
    (tmp_path / "err").write_text("router: something broke\n")
    report = tmp_path / "router.json"
    late = json.loads(_router(2_000_000))
    late["down"] = _QUEUE | {"delivered": 40, "drops": 3, "ce_marks": 2}
    report.write_text(json.dumps(late))
    line = session_line(session, done, report)
    assert line.startswith(
        "the link carried down 40 packets, 3 dropped by the queue, 2 CE-marked;"
        " up 0 packets, 0 dropped by the queue. testbed LATE: the router released frames"
        " 2 ms late at p99"
    ), line
    report.write_text('{"down": ')
    assert session_line(session, done, report).startswith("the router's report could not be read")
    report.unlink()
    assert session_line(session, done, report) == (
        "the router wrote no report (router: something broke)"
    )
