"""The RRUL workload and the scores the core computes for it (issue 29): the workload's
flows and marks as Flent defines them, the scores filled only for a trial with probes,
their physics on a drop-tail link, and the CLI's table."""

import json
import subprocess
import sys

import pytest

from collateral import _native
from collateral.spec import Scenario, SpecError, build_scenario


def test_rrul_is_four_marked_flows_each_way_after_the_idle_time_and_probes_first():
    sc = build_scenario(workload="rrul", link="adsl1", cc="cubic")
    assert [(t.direction, t.tag) for t in sc.tcp] == [
        (d, tag) for d in ("down", "up") for tag in (0, 8, 40, 46)
    ]  # CS0, CS1, CS5, EF (Flent's rrul.conf)
    assert all(t.start == 5_000_000_000 and t.cc == "cubic" for t in sc.tcp)
    # Four probes, each a request up and a reply down on one schedule; no VoIP flows.
    assert len(sc.cbr) == 8
    assert [c.direction for c in sc.cbr[:2]] == ["up", "down"]
    assert [c.tag for c in sc.cbr[::2]] == [46, 8, 0, 0]
    assert all(c.interval == 200_000_000 and c.jitter == 0 for c in sc.cbr)
    native = sc.to_native()
    assert native["workload"]["kind"] == "rrul"
    assert native["tcp"][3]["tag"] == 46
    be = build_scenario(workload="rrul_be")
    assert {t.tag for t in be.tcp} == {0} and {c.tag for c in be.cbr} == {0}
    # An unmarked flow's JSON is what it was before marks existed (points keep their ids).
    assert "tag" not in build_scenario().to_native()["tcp"][0]
    assert "workload" not in build_scenario().to_native()


def test_a_scenario_naming_a_workload_gets_its_flows_once():
    sc = Scenario.model_validate({"workload": {"kind": "rrul"}, "duration": "20s"})
    assert len(sc.tcp) == 8 and len(sc.cbr) == 8
    again = Scenario.model_validate(sc.model_dump())
    assert again.to_native() == sc.to_native()
    with pytest.raises(SpecError, match="workload"):
        build_scenario(workload="rrul_up")
    # The core refuses a workload whose probes are not the scenario's first CBR flows.
    bad = dict(sc.to_native(), cbr=sc.to_native()["cbr"][2:])
    with pytest.raises(ValueError, match=r"workload: cbr\[0\.\.8\]"):
        _native.validate_scenario(json.dumps(bad))


def _summary(**params):
    sc = build_scenario(**params)
    (raw,) = _native.simulate_many([sc.to_native_json()], 0)
    return raw["summary"]


def test_scores_only_for_a_trial_with_a_workload():
    plain = _summary(duration="10s", warmup="1s")
    assert plain["rpm"] is None or plain["rpm"] != plain["rpm"]
    assert plain["bufferbloat_grade"] is None


def test_drop_tail_loaded_latency_is_the_full_buffers_and_the_grade_follows():
    """10/2 Mbit/s, 20 ms, 50 kB drop-tail each way. A loaded round trip is at most
    20 ms + 50 kB at 10 Mbit/s (40 ms) + 50 kB at 2 Mbit/s (200 ms) = 260 ms, plus a
    packet's serialisation each way (1.2 + 6 ms). At the least, all four flows of a
    direction halve at once: their windows (BDP + buffer) drop to half, leaving
    (25 + 50)/2 − 25 = 12.5 kB (10 ms) down and (5 + 50)/2 − 5 = 22.5 kB (90 ms) up:
    120 ms; the median lies between. Idle: the base RTT plus the probes'
    serialisation, under 22 ms. The self probes (the flows' RTT samples) see the same
    queues plus up to Linux's 40 ms delayed-ACK timeout, so RPM = (Foreign + Loaded)/2
    lies between (60000/267.2 + 60000/307.2)/2 = 210 and 60000/120 = 500."""
    s = _summary(
        down="10Mbit", up="2Mbit", rtt="20ms", queue="50kB", rule="fb-strict",
        workload="rrul", duration="30s",
    )  # fmt: skip
    assert 0.020 <= s["latency_idle_s"] < 0.022
    assert 0.120 < s["latency_loaded_s"] <= 0.260 + 0.0072
    increase_ms = 1e3 * s["latency_increase_s"]
    # DSLReports: C from 60 to 200 ms, D from 200 to 400.
    assert s["bufferbloat_grade"] == ("C" if increase_ms < 200 else "D")
    assert 210 < s["rpm"] < 500
    assert s["rpm_band"] == ("poor" if s["rpm"] < 300 else "fair")  # the draft's bands
    assert s["rpm_p99"] <= s["rpm_p90"]
    assert 0 <= s["qoo_voip"] <= 100 and s["aim_gaming"] in ("bad", "poor", "average")
    # Four UDP pings every 200 ms; the draft's 5000-byte probes and PTC are not RRUL's
    # (its share was given as 20 x 5000 B a second: 6.7 % of 12 Mbit/s).
    assert 18 < s["foreign_probes_per_s"] <= 20  # those answered
    assert s["probe_capacity_share"] is None and s["probe_rate_within_limits"] is None


def test_the_cli_prints_the_scores_below_the_summary():
    out = subprocess.run(
        [sys.executable, "-m", "collateral", "simulate", "--workload", "rrul",
         "--duration", "15s", "--down", "10Mbit", "--up", "2Mbit", "--rtt", "20ms"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "responsiveness under load" in out.stdout
    assert "RPM trimmed mean" in out.stdout and "bufferbloat grade" in out.stdout
    assert "workload rrul" in out.stdout
    # The probes' rows name them by their mark (the requests up, the replies down).
    assert "probe EF up" in out.stdout and "probe CS1 down" in out.stdout


def test_versus_puts_each_queues_scores_side_by_side():
    """ "What grade would my link get, and with FQ-CoDel?": one column per queue, each
    the core's own score for that queue's trial (as --json gives it)."""
    args = [sys.executable, "-m", "collateral", "simulate", "--workload", "rrul",
            "--duration", "15s", "--down", "10Mbit", "--up", "2Mbit", "--rtt", "20ms",
            "--queue", "100kB", "--versus", "fq_codel:limit=1000"]  # fmt: skip
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(
        subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=120).stdout
    )
    summaries = [q["trials"][0]["summary"] for q in doc["queues"]]
    header = next(ln for ln in out.stdout.splitlines() if ln.startswith("score"))
    assert "100kB fb-strict" in header and "fq_codel:limit=1000" in header
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("RPM trimmed mean"))
    want = [f"{s['rpm']:.0f} / {s['rpm_p90']:.0f} / {s['rpm_p99']:.0f}" for s in summaries]
    assert all(w in row for w in want), (row, want)
    assert row.index(want[0]) < row.index(want[1])  # in the order of the columns
    grades = next(ln for ln in out.stdout.splitlines() if ln.startswith("bufferbloat grade"))
    assert grades.split()[-2:] == [s["bufferbloat_grade"] for s in summaries]
    # Drop-tail's 100 kB at 2 Mbit/s up is 400 ms of queue: a worse grade than FQ-CoDel's.
    assert summaries[0]["rpm"] < summaries[1]["rpm"]


def test_the_marks_reach_the_queue_and_only_a_diffserv_queue_reads_them():
    """rrul and rrul_be differ only in DSCP marks: FQ-CoDel ignores them, so the two
    trials are the same to the bit (but for the per-class counts, which put marked UDP
    apart); CAKE's diffserv4 puts the EF and CS5 flows in its
    voice and video tins and CS1 in bulk (whose share under contention is a sixteenth of
    the rate): RRUL's CS1 download gets far less than its best-effort one, while
    rrul_be's four downloads share alike."""
    link = {"down": "50Mbit", "up": "10Mbit", "rtt": "30ms", "duration": "20s"}
    fq = [_summary(workload=w, aqm="fq_codel", **link) for w in ("rrul", "rrul_be")]
    for s in fq:
        s.pop("phases")
    assert json.dumps(fq[0], sort_keys=True) == json.dumps(fq[1], sort_keys=True)
    cake = [
        _summary(workload=w, aqm="cake:diffserv=diffserv4", **link) for w in ("rrul", "rrul_be")
    ]
    marked = [t["goodput_bps"] for t in cake[0]["tcp"][:4]]  # CS0, CS1, CS5, EF down
    alike = [t["goodput_bps"] for t in cake[1]["tcp"][:4]]
    assert marked[1] < 50e6 / 16 < marked[0] / 4
    assert max(alike) < 1.2 * min(alike)


def test_the_responsiveness_ramp_adds_a_flow_each_way_per_second_up_to_sixteen():
    sc = build_scenario(workload="responsiveness", down="50Mbit", up="10Mbit", rtt="30ms")
    starts = {d: [t.start for t in sc.tcp if t.direction == d] for d in ("down", "up")}
    ramp = [5_000_000_000 + k * 1_000_000_000 for k in range(16)]
    assert starts == {"down": ramp, "up": ramp}
    assert all(t.start_spread == 0 and t.tag == 0 for t in sc.tcp)
    assert {c.tag for c in sc.cbr} == {0} and len(sc.cbr) == 8


def test_an_experiment_file_names_the_workload_and_sweeps_it(tmp_path):
    from collateral.experiment import load_experiment

    path = tmp_path / "exp.toml"
    path.write_text(
        '[scenario]\ndown = { rate = "10Mbit" }\nup = { rate = "2Mbit" }\n'
        'workload = { kind = "rrul" }\n[sweep]\n"workload.kind" = ["rrul", "rrul_be"]\n'
    )
    rrul, be = (p.scenario for p in load_experiment(path).points)
    assert [t.tag for t in rrul.tcp] == [0, 8, 40, 46] * 2 and len(rrul.cbr) == 8
    assert [t.tag for t in be.tcp] == [0] * 8 and {c.tag for c in be.cbr} == {0}
    assert load_experiment(path).points[0].columns()["workload_kind"] == "rrul"


def test_the_testbed_runs_rrul_and_refuses_the_responsiveness_test():
    from collateral.emulate.checks import check_testbed
    from collateral.emulate.errors import TestbedLimitError

    check_testbed(build_scenario(workload="rrul"))
    check_testbed(build_scenario(workload="rrul_be"))
    with pytest.raises(TestbedLimitError, match="responsiveness: its ramp holds its flows"):
        check_testbed(build_scenario(workload="responsiveness", duration="60s"))
