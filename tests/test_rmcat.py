"""Issue 31's RMCAT reproductions: several calls in a scenario (a list; an error names the
call; one call is stored as before), RFC 8868's criteria as a run's summary carries
them, the claims' bounds worked by hand, and the five ``rmcat-*`` quick reproductions'
claims, tables and figures (the session's quick runs, run once for every module)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import QuickRuns
from pydantic import ValidationError

import collateral
from collateral.spec import MediaSpec, Scenario

#: One worker for the modules that share the session's quick runs (run once).
pytestmark = pytest.mark.xdist_group("quick_runs")

RMCAT = ("rmcat-capacity", "rmcat-flows", "rmcat-feedback", "rmcat-tcp", "rmcat-short-tcp")


# --- several calls ------------------------------------------------------------------


def test_a_bad_call_in_a_list_is_named_by_its_index(tmp_path: Path):
    from collateral.experiment.errors import ExperimentError
    from collateral.experiment.load import load_experiment

    exp = tmp_path / "calls.toml"
    exp.write_text(
        '[experiment]\ndescription = "two calls"\n[scenario]\nduration = "2s"\n'
        'media = [{ controller = "gcc" }, { controller = "nada", fps = 0 }]\n'
    )
    with pytest.raises(ExperimentError, match=r"scenario\.media\[1\]\.fps = 0: must be >= 1$"):
        load_experiment(exp)
    with pytest.raises(ValidationError, match="at least 1 item"):
        Scenario(media=[])
    with pytest.raises(ValidationError, match="at most 64 items"):
        Scenario(media=[{}] * 65)


def test_one_call_is_stored_as_before_and_a_list_as_a_list():
    one = Scenario(media={"controller": "nada", "start": "1s"})
    assert isinstance(one.media, MediaSpec) and one.calls == [one.media]
    # The core's object for one call, field by field (as before lists existed).
    want = {
        "direction": "down",
        "controller": "nada",
        "start_ns": 1_000_000_000,
        "start_rate_bps": 150_000,
        "min_rate_bps": 150_000,
        "max_rate_bps": 1_500_000,
        "fps": 30.0,
        "reaction_lag_ns": 200_000_000,
        "key_interval_ns": 0,
        "feedback_interval_ns": 50_000_000,
        "playout_ns": 150_000_000,
        "tag": 0,
        "ecn": "not_ect",
    }
    assert one.to_native()["media"] == want
    stored = one.model_dump(mode="json")["media"]
    assert isinstance(stored, dict) and stored["start"] == "1s"
    assert Scenario.model_validate_json(one.model_dump_json()) == one
    listed = Scenario(media=[{"controller": "nada", "start": "1s"}, {"direction": "up"}])
    assert listed.to_native()["media"][0] == want
    assert [c.direction for c in listed.calls] == ["down", "up"]
    assert Scenario.model_validate_json(listed.model_dump_json()) == listed


def test_the_criteria_of_two_calls_on_a_stepping_capacity():
    """1 Mbit/s for 10 s then 3 Mbit/s for 10 s: a mean capacity of 2 Mbit/s (to the
    1504-byte delivery opportunities); no fall, so no reaction to one; the calls' shares
    add to one and Jain's index is (a + b)² / 2(a² + b²); the trace holds each call's
    20 one-second bins, the second call's first five empty (it starts at 5 s)."""
    sc = Scenario(
        duration="20s",
        warmup="0s",
        bin="1s",
        down={"trace": {"steps": [["0s", "1Mbit"], ["10s", "3Mbit"]], "until": "20s"}},
        up={"rate": "4Mbit"},
        media=[{"controller": "gcc"}, {"controller": "nada", "start": "5s"}],
    )
    r = collateral.simulate(sc)
    a, b = r.summary["media"]
    for m in (a, b):
        assert m["capacity_bps"] == pytest.approx(2e6, rel=1e-3)
        assert math.isnan(m["adapt_down_s"])
        assert m["utilisation"] == pytest.approx(m["received_bps"] / m["capacity_bps"])
    x, y = a["received_bps"], b["received_bps"]
    assert a["call_share"] + b["call_share"] == pytest.approx(1.0)
    assert a["jain_index"] == pytest.approx((x + y) ** 2 / (2 * (x * x + y * y)))
    t = r.traces["media"]
    assert len(t["time_s"]) == 40
    assert list(t["received_bps"][20:25]) == [0.0] * 5 and t["received_bps"][26] > 0


# --- the claims' bounds, by hand --------------------------------------------------------


def test_share_bounds_beside_tcp_by_hand():
    from collateral.reproduce.rmcat.claims import full_queue_s, share_bounds

    sc = Scenario(
        down={"rate": "2Mbit", "queue": {"limit": "75kB"}}, up={"rate": "4Mbit"}, media={}
    )
    # Ceiling: 1.5 Mbit/s of frames with at most B/1200 + 1 packets of 40 header bytes:
    # 1.55 Mbit/s + 40·8·30 = 1.5596 Mbit/s; NewReno's goodput 1448/1500 of the other
    # 0.4404 Mbit/s: 1.5596 / (1.5596 + 0.42513) = 0.78580.
    top = 1_559_600
    ceiling = top / (top + 1448 / 1500 * (2e6 - top))
    assert ceiling == pytest.approx(0.78580, abs=1e-5)
    # GCC/NADA's floor: R_min 150 kbit/s with at least 40 B per 1200: 155 kbit/s of 2.
    assert share_bounds(sc, "gcc", 0.0) == pytest.approx((0.0775, ceiling))
    assert share_bounds(sc, "nada", 0.1)[0] == pytest.approx(0.0775 * 0.9)
    # The full 75 kB queue and a 1504-byte opportunity at 2 Mbit/s: 306.016 ms.
    assert full_queue_s(sc, 2e6) == pytest.approx(0.306016)
    # SCReAM's: 3000 B per round of 100 + 306.016 + 50 ms = 52.6 kbit/s of 2 Mbit/s.
    assert share_bounds(sc, "scream", 0.0)[0] == pytest.approx(24_000 / 0.456016 / 2e6)


# --- the quick reproductions ---------------------------------------------------------

#: Per study: claims, table rows (case, queue, controller, call) and panels.
SHAPES = {
    "rmcat-capacity": (12, 3, 3),
    "rmcat-flows": (15, 2 * 3 + 3 * 3 + 3 * 3, 9),
    "rmcat-feedback": (12, 6, 3),
    "rmcat-tcp": (24, 4 * 3, 12),
    "rmcat-short-tcp": (9, 6, 3),
}


@pytest.mark.parametrize("fig_id", RMCAT)
def test_each_rmcat_reproduction_checks_claims_and_writes_its_table(
    fig_id: str, quick_runs: QuickRuns
):
    rep = quick_runs.reps[fig_id]
    claims, rows, _ = SHAPES[fig_id]
    assert len(rep.claims) == claims
    assert all(isinstance(c.holds, bool) and c.tolerance and c.why for c in rep.claims)
    md = next(f for f in rep.files if f.name == f"{fig_id}.md").read_text()
    assert sum(line.startswith("| ") for line in md.splitlines()) == 1 + rows  # + heading
    csv = next(f for f in rep.files if f.name == f"{fig_id}.csv").read_text().splitlines()
    assert len(csv) == 1 + rows and "frame_delay_p95_s" in csv[0]


def test_rmcat_tables_follow_the_experiments_order(quick_runs: QuickRuns):
    md = next(f for f in quick_runs.reps["rmcat-tcp"].files if f.suffix == ".md").read_text()
    body = [ln.split(" | ")[1:3] for ln in md.splitlines() if ln.startswith("| - |")]
    assert [q for q, _ in body[::3]] == ["dt-300ms", "dt-1000ms", "fq_codel", "cake"]
    assert [cc for _, cc in body[:3]] == ["gcc", "nada", "scream"]


@pytest.mark.parametrize("fig_id", RMCAT)
def test_each_rmcat_figure_has_its_panels_and_a_legend_of_what_it_draws(
    fig_id: str, quick_runs: QuickRuns
):
    (fig, _, caption), *_ = quick_runs.drawn[fig_id]
    assert caption
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == SHAPES[fig_id][2]
    assert [ax.get_title().split(":")[0] for ax in panels[:3]] == ["GCC", "NADA", "SCREAM"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert ("TCP flow starts" in labels) == (fig_id == "rmcat-tcp")
    assert ("capacity (up)" in labels) == (fig_id == "rmcat-feedback")
    if fig_id == "rmcat-feedback":
        assert "call 1 (up): received rate" in labels


def test_the_capacity_figure_draws_the_steps_beside_the_rates(quick_runs: QuickRuns):
    (fig, _, _), *_ = quick_runs.drawn["rmcat-capacity"]
    gcc = next(ax for ax in fig.axes if ax.get_title() == "GCC")
    # RFC 8867 §5.1's steps, in Mbit/s, as the black step line.
    steps = [ln for ln in gcc.get_lines() if ln.get_color() == "k"]
    assert len(steps) == 1
    assert sorted(set(steps[0].get_ydata())) == [0.6, 1.0, 2.5]
    assert gcc.get_ylabel() == "rate (Mbit/s)" and gcc.get_xlabel() == "time (s)"
