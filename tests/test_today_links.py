"""The "today's links" study (today-links): the experiment file has the links, queues and
traffic the design says, the link physics behind the claims match hand computations, and
the quick variant runs, draws and gives every claim a verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import QuickRuns

from collateral.experiment import load_experiment
from collateral.reproduce import STUDIES, experiment_path
from collateral.reproduce.today.links import cdf_points
from collateral.reproduce.today.links_physics import LINKS, docsis_grant_wait_s
from collateral.reproduce.today.links_table import QUEUES
from collateral.spec.docsis import LLD_DUALPI2
from collateral.spec.leo import LEO_PRESETS, LeoSpec
from collateral.units import parse_duration, parse_rate


@pytest.fixture(scope="module")
def exp():
    return load_experiment(experiment_path("today-links"))


def test_registered_with_a_fast_quick_variant():
    fig = STUDIES["today-links"]
    assert fig.experiment == "today-links" and not fig.testbed
    quick = load_experiment(experiment_path("today-links"), list(fig.quick))
    assert quick.settings.trials == 1
    assert quick.points[0].scenario.duration == parse_duration("15s")
    # The quick run still holds the satellite's first handover (12 s) after its warm-up.
    assert quick.points[0].scenario.warmup < parse_duration("12s") < parse_duration("15s")


def test_experiment_has_the_designed_points(exp):
    assert exp.settings.trials >= 3 and exp.settings.seeds == "common"
    assert "cbr" in exp.settings.traces, "the p99 and the CDFs need the per-packet trace"
    seen = {(p.tags["link"], p.tags["queue"]) for p in exp.points}
    assert seen == {(lk, q) for lk in LINKS for q in QUEUES} and len(exp.points) == 12
    for p in exp.points:
        sc, link, q = p.scenario, p.tags["link"], p.tags["queue"]
        lk = LINKS[link]
        assert sc.rtt == round(lk.rtt_s * 1e9)
        assert [(c.app, c.direction) for c in sc.cbr] == [
            ("g711", "down"), ("g711", "up"), ("quake3", "down"), ("quake3", "up"),
        ]  # fmt: skip
        assert all(c.ecn == ("ect1" if q == "dualpi2" else "not_ect") for c in sc.cbr)
        assert sc.media is not None and sc.media.controller == "gcc"
        assert sc.media.direction == "down" and sc.media.ecn == "not_ect"
        dirs = [t.direction for t in sc.tcp]
        assert dirs == ["down"] * lk.bulk[0] + ["up"] * lk.bulk[1]
        assert all(t.cc == "cubic" and t.ecn == "off" for t in sc.tcp)
        assert (sc.down.rate, sc.up.rate) == tuple(round(r) for r in lk.nominal_bps)
        for d, spec in (("down", sc.down), ("up", sc.up)):
            qd = spec.queue.model_dump()
            if q == "drop-tail":
                assert spec.queue.limit.amount == 256_000 and spec.queue.limit.unit == "bytes"
            elif q == "cake":
                nominal = lk.nominal_bps[lk.index(d)]
                assert abs(parse_rate(qd["bandwidth"]) - nominal) <= 1e-4 * nominal
            elif q == "dualpi2" and link == "docsis" and d == "up":
                lld = spec.queue.model_validate({**LLD_DUALPI2, "scheduler": "ts_fifo"})
                assert qd == lld.model_dump()
        if link == "starlink":
            for d, spec in (("down", sc.down), ("up", sc.up)):
                assert spec.leo == LeoSpec(**LEO_PRESETS["starlink"][d])
        assert (sc.up.docsis is not None) == (link == "docsis")
        assert (sc.down.trace is not None) == (sc.up.trace is not None) == (link == "cellular")


def test_cellular_traces_stay_within_the_walks_bounds(exp):
    """The claims take the walks' bounds (1-40 Mbit/s down, 0.5-8 up) as the link's
    lowest and highest rate: check them on the shipped traces, 100 ms at a time (one
    opportunity either way of rounding per 100 ms bin)."""
    sc = next(p.scenario for p in exp.points if p.tags["link"] == "cellular")
    for spec, lo, hi in ((sc.down, 1e6, 40e6), (sc.up, 0.5e6, 8e6)):
        ms = np.asarray(spec.trace.ms)
        bins = np.bincount((ms - 1) // 100, minlength=ms[-1] // 100)
        rates = bins * 1504 * 8 / 0.1
        one = 1504 * 8 / 0.1
        assert rates.min() >= lo - one and rates.max() <= hi + one
        assert abs(spec.trace.mean_bps - spec.rate) <= 1


def test_cellular_traces_are_the_generators_seeded_walks(exp):
    """The inline traces are what the experiment file's command lines write."""
    from collateral.links import synthetic

    sc = next(p.scenario for p in exp.points if p.tags["link"] == "cellular")
    ms, s = 1_000_000, 1_000_000_000
    down = synthetic.random_walk(10e6, 1e6, 40e6, 100 * ms, 10 * s, 33)
    up = synthetic.random_walk(3e6, 0.5e6, 8e6, 100 * ms, 10 * s, 31)
    assert sc.down.trace.ms == down and sc.up.trace.ms == up


def test_link_physics_by_hand():
    assert docsis_grant_wait_s() == pytest.approx(0.008)  # 2 + 2 + 2 + 2 ms
    cell = LINKS["cellular"]
    # 1504 B at 1 Mbit/s = 12.032 ms; the packet in service and one of each of 2
    # downloads, the video's 1240 B = 9.92 ms and the game's 328 B = 2.624 ms.
    assert cell.sparse_wait_s("down") == pytest.approx(3 * 0.012032 + 0.00992 + 0.002624)
    # Upstream: no bulk flow, no video: the packet in service (24.064 ms at 0.5 Mbit/s)
    # and the game's (5.248 ms).
    assert cell.sparse_wait_s("up") == pytest.approx(0.024064 + 0.005248)
    assert cell.drain_s("down") == pytest.approx(256_000 / 1500 * 1504 * 8 / 10_659_149)
    dc = LINKS["docsis"]
    # 1518 B at 20 Mbit/s = 0.6072 ms, twice (in service, the upload's), the game's
    # 346 B = 0.1384 ms, and the grant's 8 ms.
    assert dc.sparse_wait_s("up") == pytest.approx(2 * 0.0006072 + 0.0001384 + 0.008)
    assert dc.drain_s("up") == pytest.approx(256_000 / 1500 * 1518 * 8 / 20e6)
    sat = LINKS["starlink"]
    assert sat.floor_bps == (parse_rate("50Mbit"), parse_rate("5Mbit"))
    assert sat.own_delay_s == (0.010, 0.010) and sat.spike_s == 0.020
    assert sat.reconfigurations(5, 60) == 4  # 12, 27, 42, 57 s
    assert sat.reconfigurations(3, 15) == 1 and sat.reconfigurations(13, 27) == 0
    assert sat.burst_losses(5, 60) == pytest.approx(4.0)  # 20 ms of a 20 ms call: 1 each
    assert cell.reconfigurations(0, 1e6) == 0


def test_cdf_levels_off_at_one_minus_loss():
    x, y = cdf_points(np.array([0.001, 0.002, 0.003]), 4)
    assert list(x) == [0.001, 0.002, 0.003]
    assert list(y) == [0.25, 0.5, 0.75]
    big = np.sort(np.random.default_rng(1).exponential(size=100_000))
    x, y = cdf_points(big, 100_000)
    assert len(x) < 1000 and y[-1] == 1.0 and x[-1] == big[-1]
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) > 0)


@pytest.mark.xdist_group("quick_runs")
def test_quick_run_draws_and_every_claim_has_a_verdict(quick_runs: QuickRuns):
    rep = quick_runs.reps["today-links"]  # the session's quick run (conftest.py)
    assert rep.trials_run == rep.trials_total == 12
    names = {f.name for f in rep.files}
    assert {"today-links-cdf.png", "today-links-cdf.svg", "today-links.md"} <= names
    assert rep.claims and all(c.holds is not None and c.tolerance for c in rep.claims)
    texts = [c.text for c in rep.claims]
    for link in LINKS:
        assert any(t.startswith("(a) " + link) for t in texts), link
    assert any(t.startswith("(c) starlink") for t in texts)
    assert any(t.startswith("(d) docsis") for t in texts)
    md = (rep.store / "figures" / "today-links.md").read_text()
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(rows) == 12
    # The physics the quick run cannot miss: drop-tail's call waits behind 256 kB on the
    # cellular downstream, FQ-CoDel's does not.
    dt = next(c for c in rep.claims if c.text.startswith("(b) cellular"))
    assert dt.holds, dt
    assert not math.isnan(float(dt.ours.split("p95 ")[1].split(" ms")[0]))
