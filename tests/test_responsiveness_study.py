"""The responsiveness study (issue 29, simulator side): the experiment file has the links,
queues and RRUL load the design says, the physics behind the claims matches hand
computations, and the quick variant runs, draws and gives every claim a verdict."""

from __future__ import annotations

import pytest
from conftest import QuickRuns

from collateral.experiment import load_experiment
from collateral.reproduce import STUDIES, experiment_path
from collateral.reproduce.today.resp_physics import (
    BDPS,
    LINKS,
    grade,
    grades_between,
    rpm_at_least_foreign,
    rpm_at_most,
)
from collateral.reproduce.today.resp_table import QUEUES

MS = 1e-3


@pytest.fixture(scope="module")
def exp():
    return load_experiment(experiment_path("responsiveness"))


def test_registered_with_a_quick_variant():
    fig = STUDIES["responsiveness"]
    assert fig.experiment == "responsiveness" and not fig.testbed
    quick = load_experiment(experiment_path("responsiveness"), list(fig.quick))
    assert quick.settings.trials == 1 and len(quick.points) == 30


def test_experiment_has_the_designed_points(exp):
    assert exp.settings.trials >= 3 and exp.settings.seeds == "common"
    seen = {(p.tags["link"], p.tags["queue"]) for p in exp.points}
    assert seen == {(lk, q) for lk in LINKS for q in QUEUES} and len(exp.points) == 30
    for p in exp.points:
        sc, link, q = p.scenario, p.tags["link"], p.tags["queue"]
        lk = LINKS[link]
        assert sc.workload is not None and sc.workload.kind == "rrul"
        assert (sc.down.rate, sc.up.rate, sc.rtt) == (lk.down_bps, lk.up_bps, round(lk.rtt_s * 1e9))
        assert [t.direction for t in sc.tcp] == ["down"] * 4 + ["up"] * 4
        cc = "prague" if q == "dualpi2-l4s" else "cubic"
        assert all(t.cc == cc and t.profile == "linux-6" for t in sc.tcp)
        ecn = {"dualpi2-l4s": "l4s", "fq_codel-ecn": "classic"}.get(q, "off")
        assert all(t.ecn == ecn for t in sc.tcp)
        # The workload's eight probes, then the call both ways.
        assert [(c.app, c.direction) for c in sc.cbr[8:]] == [("g711", "down"), ("g711", "up")]
        for d, spec in (("down", sc.down), ("up", sc.up)):
            assert spec.framing.overhead == lk.overhead and spec.framing.atm == lk.atm
            if q.startswith("drop-tail-"):
                k = float(q.removeprefix("drop-tail-"))
                assert spec.queue.limit.amount == lk.limit(k, d)
                assert spec.queue.limit.unit == "packets"
            else:
                assert spec.queue.kind == q.removesuffix("-ecn").removesuffix("-l4s")


def test_drop_tail_limits_by_hand():
    adsl, cable = LINKS["ADSL1"], LINKS["cable"]
    # ADSL1 down: 1.5 Mbit/s x 50 ms = 9375 B = 6.25 packets; up 1.07 -> the floor of 4.
    assert [adsl.limit(k, "down") for k in BDPS] == [4, 6, 13, 25]
    assert [adsl.limit(k, "up") for k in BDPS] == [4, 4, 4, 4]
    # cable: 83.3 packets down, 16.7 up per BDP.
    assert [cable.limit(k, "down") for k in BDPS] == [42, 83, 167, 333]
    assert [cable.limit(k, "up") for k in BDPS] == [8, 17, 33, 67]


def test_link_physics_by_hand():
    adsl, cable = LINKS["ADSL1"], LINKS["cable"]
    # A 1500 B packet + 10 B in 32 cells = 1696 B: 9.045 ms at 1.5 Mbit/s, 53 ms at 256k;
    # the 88 B probe + 10 in 3 cells = 159 B: 0.848 ms and 4.969 ms.
    assert adsl.base_s() == pytest.approx(0.050 + 159 * 8 / 1.5e6 + 159 * 8 / 256e3)
    assert adsl.dt_queue_hi_s(4) == pytest.approx(26 * 1696 * 8 / 1.5e6 + 5 * 1696 * 8 / 256e3)
    # cable 4 BDP: the upstream full (68 x 1518 B at 10 Mbit/s = 82.58 ms) makes the
    # downloads' pipe 50 Mbit/s x 102.58 ms = 427.4 packets; 0.7002 x (333 + 427.4) - 427.4
    # = 105.1 packets of 1500 B at 50 Mbit/s = 25.2 ms.
    bdp = 50e6 * (0.020 + 68 * 1518 * 8 / 10e6) / 12000
    want = (717 / 1024 * (333 + bdp) - bdp) * 12000 / 50e6
    assert cable.dt_queue_lo_s(4) == pytest.approx(want) and want == pytest.approx(
        25.2 * MS, abs=0.1 * MS
    )
    assert adsl.dt_queue_lo_s(0.5) == 0.0  # 4 packets hold less than the β cut
    # Sparse probe on cable, each way: 5 packets of 1518 B, 4 ACKs of 70 B, 3 probes of 106 B.
    per = [(5 * 1518 + 4 * 70 + 3 * 106) * 8 / r for r in (50e6, 10e6)]
    assert cable.sparse_wait_s() == pytest.approx(sum(per))
    # The downloads' ACKs up: 50e6 / (1518 x 8) segments/s, one ACK per 2, 70 B each:
    # 1.153 Mbit/s, above C's 10 % of 10 Mbit/s; the uploads' down: 231 kbit/s < 5 Mbit/s.
    assert cable.acks_bps("up") == pytest.approx(50e6 / (1518 * 8) / 2 * 560)
    assert cable.c_overloaded("up") and not cable.c_overloaded("down")
    assert cable.l4s_wait_s() == pytest.approx(
        2 * 0.015 + 3 * 1518 * 8 / 10e6 + 0.001 + 10 * 1518 * 8 / 50e6
    )


def test_grades_and_rpm_bounds():
    # DSLReports: A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, else F (exclusive bounds).
    assert [grade(x * MS) for x in (0, 4.99, 5, 29.9, 30, 60, 199, 200, 400)] == [
        "A+", "A+", "A", "A", "B", "C", "C", "D", "F",
    ]  # fmt: skip
    assert grades_between(6.8 * MS, 21.4 * MS) == ["A"]
    assert grades_between(1 * MS, 45 * MS) == ["A+", "A", "B"]
    assert rpm_at_most(0.020) == pytest.approx(3000)
    assert rpm_at_least_foreign(0.020) == pytest.approx(1500)


@pytest.mark.xdist_group("quick_runs")
def test_quick_run_draws_and_every_claim_has_a_verdict(quick_runs: QuickRuns):
    rep = quick_runs.reps["responsiveness"]  # the session's quick run (conftest.py)
    assert rep.trials_run == rep.trials_total == 30
    names = {f.name for f in rep.files}
    assert {"responsiveness.png", "responsiveness.svg", "responsiveness.md"} <= names
    assert rep.claims and all(c.holds is not None and c.tolerance for c in rep.claims)
    texts = [c.text for c in rep.claims]
    for link in LINKS:
        assert any(t.startswith(f"(d) {link} fq_codel") for t in texts), link
    md = (rep.store / "figures" / "responsiveness.md").read_text()
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(rows) == 30
    # What the quick run cannot miss: on fibre FQ-CoDel's sparse probes stay within a
    # fraction of a millisecond of the empty path, and RPM falls from 0.5 to 4 BDP.
    for prefix in ("(d) fibre fq_codel", "(c) fibre", "(c) cable"):
        c = next(c for c in rep.claims if c.text.startswith(prefix))
        assert c.holds, c


def test_a_measure_the_run_did_not_take_has_no_verdict():
    # A run too short for the test's loaded phase (its load saturated at the end) has no
    # loaded RTT: "not measured", neither holds nor differs (it read "nan ms", differs).
    import math

    import pandas as pd

    from collateral.reproduce.today.resp_claims import _pi

    lk = LINKS["ADSL1"]
    idx = pd.MultiIndex.from_tuples([("ADSL1", "pie")], names=["link", "queue"])
    missing = pd.DataFrame({"latency_loaded_s": [math.nan], "rpm": [math.nan]}, index=idx)
    c = _pi(missing, "ADSL1", lk, "pie")
    assert c is not None and c.holds is None and c.ours == "not measured", c
    held = pd.DataFrame({"latency_loaded_s": [0.19], "rpm": [300.0]}, index=idx)
    c = _pi(held, "ADSL1", lk, "pie")
    assert c is not None and c.holds is True and c.ours == "190.0 ms", c
