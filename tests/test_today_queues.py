"""The "today's access queues" study (today-queues) and the DualPI2 coupling study
(today-l4s): the experiment files load and validate, have the points the design says,
and the figure and claims code works on the session's quick run of the first and a tiny
run of the second."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
from conftest import QuickRuns

from collateral.experiment import load_experiment
from collateral.reproduce import STUDIES, Claim, experiment_path
from collateral.reproduce import today as T
from collateral.reproduce.today.table import _trials
from collateral.runner import run_experiment
from collateral.store import Store

TINY = [("experiment.trials", 1), ("scenario.duration", "15s"), ("scenario.warmup", "5s")]


def _grids(name: str) -> list[dict]:
    data = tomllib.loads(experiment_path(name).read_text())
    return data["sweep"] if isinstance(data["sweep"], list) else [data["sweep"]]


def test_figures_are_registered():
    assert STUDIES["today-queues"].experiment == "today-queues"
    assert STUDIES["today-l4s"].experiment == "l4s-coupling"
    for fid in ("today-queues", "today-l4s"):
        assert experiment_path(STUDIES[fid].experiment).exists()


#: The queues the video call is run under (issue 31: drop-tail, FQ-CoDel, CAKE, DualPI2).
VIDEO_QUEUES = ["drop-tail", "fq_codel", "cake", "dualpi2", "dualpi2-l4s"]


def test_today_queues_loads_with_the_designed_points():
    exp = load_experiment(experiment_path("today-queues"))
    grids = _grids("today-queues")
    queues = [g["tags.queue"][0] for g in grids if "tags.video" not in g]
    assert sorted(queues) == sorted(T.VARIANTS), "one grid per variant the figure knows"
    video = [g["tags.queue"][0] for g in grids if "tags.video" in g]
    assert video == VIDEO_QUEUES
    # Each variant: (1, 4 downloads) x (no upload, 1 upload) x (ADSL1, cable); the video
    # call's: one download on each link.
    assert len(exp.points) == 8 * len(queues) + 2 * len(video)
    assert exp.settings.trials == 3
    assert exp.settings.traces == ["drops"], "the ACK count with an upload needs it"
    seen = {
        tuple(p.tags.get(k) for k in ("queue", "link", "downloads", "uploads", "video"))
        for p in exp.points
    }
    assert len(seen) == len(exp.points)
    assert {(p.tags["downloads"], p.tags["uploads"]) for p in exp.points} == set(T.MIXES)
    for p in exp.points:
        sc = p.scenario
        media = sc.media
        calls = media if isinstance(media, list) else [media] if media is not None else []
        if "video" in p.tags:
            top = 1_000_000 if p.tags["link"] == "ADSL1" else 2_500_000
            assert [(m.controller, m.direction, m.max_rate, m.start_rate) for m in calls] == [
                ("gcc", "down", top, top)
            ]
            # GCC does not react to ECN marks: the call stays out of the L queue.
            assert calls[0].ecn == "not_ect" and p.tags["downloads"] == 1
        else:
            assert calls == []
        dirs = [t.direction for t in sc.tcp]
        assert dirs == ["down"] * p.tags["downloads"] + ["up"] * p.tags["uploads"]
        assert [(c.app, c.direction) for c in sc.cbr] == [
            ("g711", "down"),
            ("g711", "up"),
            ("quake3", "down"),
            ("quake3", "up"),
        ]
        assert sc.cbr[0].tag == sc.cbr[1].tag == 46 and sc.cbr[2].tag == sc.cbr[3].tag == 0
        adsl = p.tags["link"] == "ADSL1"
        rates = (1_500_000, 256_000) if adsl else (100_000_000, 20_000_000)
        assert (sc.down.rate, sc.up.rate) == rates
        assert sc.down.framing.atm is adsl and sc.down.framing.overhead == (10 if adsl else 18)
        l4s = p.tags["queue"] == "dualpi2-l4s"
        assert all(t.cc == ("prague" if l4s else "cubic") for t in sc.tcp)
        assert all(c.ecn == ("ect1" if l4s else "not_ect") for c in sc.cbr)
        ecn = {"dualpi2-l4s": "l4s", "fq_codel-ecn": "classic"}.get(p.tags["queue"], "off")
        assert all(t.ecn == ecn for t in sc.tcp)
        if p.tags["queue"] == "drop-tail":
            want = (7, 4) if adsl else (167, 34)
            assert (sc.down.queue.limit.amount, sc.up.queue.limit.amount) == want
        if p.tags["queue"] == "cake-ackfilter":
            up_q, down_q = sc.up.queue.model_dump(), sc.down.queue.model_dump()
            assert up_q["ack_filter"] == "normal" and "ack_filter" not in down_q


def test_quick_override_is_fast_and_valid():
    for fid in ("today-queues", "today-l4s"):
        fig = STUDIES[fid]
        exp = load_experiment(experiment_path(fig.experiment), list(fig.quick))
        assert exp.settings.trials == 1
        assert len(exp) == len(exp.points)


def test_l4s_coupling_loads():
    exp = load_experiment(experiment_path("l4s-coupling"))
    assert len(exp.points) == 3 and exp.settings.trials == 5
    assert "cbr" in exp.settings.traces
    sc = exp.points[0].scenario
    assert [(t.cc, t.ecn) for t in sc.tcp] == [("prague", "l4s"), ("cubic", "off")]
    assert [c.ecn for c in sc.cbr] == ["ect1", "not_ect"]
    assert sc.down.queue.kind == "dualpi2"


def _check_outputs(files: list[Path], figures: int = 1, tables: int = 1) -> None:
    suffixes = sorted(f.suffix for f in files)
    # Each figure as PNG, SVG and caption (.txt); each table as Markdown and CSV.
    assert suffixes == [
        *[".csv"] * tables, *[".md"] * tables, *[".png"] * figures, *[".svg"] * figures,
        *[".txt"] * figures,
    ]  # fmt: skip
    assert all(f.exists() and f.stat().st_size > 0 for f in files)
    png = next(f for f in files if f.suffix == ".png")
    assert png.stat().st_size > 20_000


@pytest.mark.xdist_group("quick_runs")
def test_today_queues_quick_run_draws_and_claims(quick_runs: QuickRuns):
    # The session's quick run (conftest.py): every variant, ADSL1 and cable, 1 trial of
    # 25 s, from an empty directory.
    rep = quick_runs.reps["today-queues"]
    exp = load_experiment(experiment_path("today-queues"))
    store = Store(rep.store)
    t = T.today_table(store)
    assert len(t) == len(exp.points) - 2 * len(VIDEO_QUEUES)  # the video call's apart
    assert (t.trials == 1).all()
    assert (t.down_goodput_bps > 0).all() and (t.acks_offered_per_s > 0).all()
    assert (t.acks_sent_per_s <= t.acks_offered_per_s).all()
    up = t.index.get_level_values("uploads") == 1
    assert (t.up_goodput_bps[up] > 0).all() and t.up_goodput_bps[~up].isna().all()
    # The call's delay, its quality, the TCP side, the video call (and its table).
    _check_outputs(rep.files, figures=4, tables=2)
    md = next(f for f in rep.files if f.suffix == ".md").read_text()
    assert "drop-tail" in md and "ADSL1" in md and "cable" in md
    claims = rep.claims
    assert claims and all(isinstance(c, Claim) for c in claims)
    assert all(isinstance(c.holds, bool) and c.tolerance for c in claims)
    assert {c.text[:3] for c in claims} >= {"(a)", "(b)", "(c)", "(d)", "(v)"}
    video = T.video_table(store)
    assert len(video) == 2 * len(VIDEO_QUEUES) and (video.trials == 1).all()
    # (a) only where an upload congests the upstream.
    assert all(" ul" in c.text for c in claims if c.text.startswith("(a)"))


def test_upload_alone_offers_no_acks(tmp_path: Path):
    # The ACK count with an upload takes the upload's segments out of the upstream TCP
    # count; with the upload alone nothing should be left (a few packets per run at most).
    grids = []
    for g in _grids("today-queues"):
        variant = g["tags.queue"][0] in ("drop-tail", "cake-ackfilter", "fq_codel")
        if variant and "tags.video" not in g:
            mix = {
                "tcp": [
                    [{"cc": "cubic", "profile": "linux-6", "direction": "up", "start_spread": 0}]
                ],
                "tags.downloads": [0],
                "tags.uploads": [1],
            }
            grids.append({**g, "zip": [mix, g["zip"][1]]})
    exp = load_experiment(
        experiment_path("today-queues"),
        [("experiment.name", "tq-up"), *TINY, ("sweep", grids)],
    )
    run_experiment(exp, tmp_path / "up", progress=False)
    df = _trials(Store(tmp_path / "up"))
    assert len(df) == 6
    span = 10.0
    assert (df.acks_offered_per_s.abs() * span <= 10).all(), df.acks_offered_per_s * span
    assert (df.up_goodput_bps > 0).all()


def test_today_l4s_tiny_run_draws_and_claims(tmp_path: Path):
    exp = load_experiment(
        experiment_path("l4s-coupling"),
        [("experiment.name", "l4s-tiny"), *TINY, ("sweep.rtt", ["20ms"])],
    )
    run_experiment(exp, tmp_path / "l4s", progress=False)
    store = Store(tmp_path / "l4s")
    t = T.l4s_table(store)
    assert list(t.index) == [20.0]
    r = t.iloc[0]
    assert r.prague_bps > 0 and r.cubic_bps > 0
    assert math.isfinite(r.l_p99_s) and r.l_p99_s >= r.l_p95_s * 0.999
    files = T.l4s_coupling(store, tmp_path / "fig" / "today-l4s", "test")
    _check_outputs(files)
    claims = T.l4s_claims(store)
    assert len(claims) == 2 and all(isinstance(c.holds, bool) for c in claims)


def test_claims_only_about_variants_present(tmp_path: Path):
    # A store with drop-tail only yields none of the claims (a)-(d), and no error.
    grids = [
        g
        for g in _grids("today-queues")
        if g["tags.queue"] == ["drop-tail"] and "tags.video" not in g
    ]
    exp = load_experiment(
        experiment_path("today-queues"),
        [("experiment.name", "tq-dt"), *TINY, ("scenario.duration", "8s"), ("sweep", grids)],
    )
    run_experiment(exp, tmp_path / "dt", progress=False)
    assert T.today_claims(Store(tmp_path / "dt")) == []
