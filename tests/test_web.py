"""Web users, phases and per-class measurements from Python: spec validation, what
crosses to the core, and the summary columns a sweep stores."""

import json

import pytest
from pydantic import ValidationError

from collateral import _native
from collateral.experiment import load_experiment
from collateral.reproduce import experiment_path
from collateral.runner import summary_columns
from collateral.spec import HTTP_MODEL, Scenario, WebSpec


def _scenario(**kw) -> Scenario:
    base = dict(down={"rate": "10Mbit"}, up={"rate": "10Mbit"}, rtt="10ms", duration="20s")
    return Scenario(**{**base, **kw})


def test_mah_model_comes_from_the_core():
    # Mah's files per page: 51.2 % of pages have one file; replies' median is ~2.1 kB.
    pts = HTTP_MODEL["objects_per_page"]["points"]
    assert pts[1] == [1.0, pytest.approx(0.511773)]
    reply = dict((p, v) for v, p in HTTP_MODEL["reply_bytes"]["points"])
    assert reply[0.502439] == 2112.0


def test_web_spec_to_native_sets_delays_and_truncation():
    w = WebSpec(
        users=10,
        extra_delay_min="5ms",
        extra_delay_max="75ms",
        think_max="300s",
        tcp={"profile": "freebsd-7", "rwnd_segments": 11},
    ).to_native()
    assert w["extra_delay_ms"] == {"kind": "uniform", "low": 5.0, "high": 75.0}
    assert w["model"]["think_s"]["max"] == 300.0
    assert w["model"]["think_s"]["points"] == HTTP_MODEL["think_s"]["points"]
    assert w["tcp"]["profile"] == "freebsd-7" and w["tcp"]["rwnd_segments"] == 11
    assert w["parallel"] == 4 and w["stop_ns"] is None


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"users": 0}, "greater than 0"),
        ({"users": 5, "extra_delay_min": "10ms", "extra_delay_max": "5ms"}, "extra_delay_max"),
        ({"users": 5, "start": "10s", "stop": "5s"}, "stop must be after start"),
    ],
)
def test_bad_web_groups_are_refused(kw, message):
    with pytest.raises(ValidationError, match=message):
        WebSpec(**kw)


def test_phases_must_be_ordered_and_inside_the_run():
    with pytest.raises(ValidationError, match=r"phases\[1\] \(b\) must start after"):
        _scenario(phases=[{"name": "a", "start": "5s"}, {"name": "b", "start": "5s"}])
    with pytest.raises(ValidationError, match="starts after the end"):
        _scenario(phases=[{"name": "a", "start": "30s"}])


@pytest.mark.parametrize(
    "model, message",
    [
        ({"reply_bytes": {"kind": "pareto", "scale": 1000}}, "reply_bytes: shape: missing"),
        ({"think_s": {"kind": "pareto", "scale": -1, "shape": 1}}, "think_s: need scale > 0"),
        ({"reply_size": {"kind": "constant", "value": 1}}, "unknown distribution 'reply_size'"),
        ({"think_s": {"kind": "gamma"}}, "think_s: unknown variant `gamma`"),
    ],
)
def test_bad_distributions_are_named(model, message):
    with pytest.raises(ValidationError, match=message):
        _scenario(web=[{"users": 3, "model": model}])


def test_a_web_trial_reports_groups_phases_and_class_bins():
    sc = _scenario(
        warmup="2s",
        web=[{"users": 50, "stop": "15s", "think_max": "60s", "tcp": {"profile": "freebsd-7"}}],
        cbr=[{"size": "1000B", "interval": "10ms", "jitter": "0s", "start": "5s", "tag": 46}],
        phases=[{"name": "web", "start": "2s"}, {"name": "+mm", "start": "5s"}],
    )
    raw = _native.simulate(sc.to_native_json())
    s = raw["summary"]
    w = s["web"][0]
    assert w["users"] == 50 and w["objects_completed"] > 0
    assert w["objects_completed"] <= w["connections"]
    mm = [p for p in s["phases"] if p["phase"] == "+mm" and p["class"] == "tagged"]
    assert len(mm) == 2  # down and up
    down = next(p for p in mm if p["direction"] == "down")
    assert down["arrivals"] == 1500  # 15 s at 100 packets/s
    assert [
        p["arrivals"] for p in s["phases"] if p["phase"] == "web" and p["class"] == "tagged"
    ] == [
        0,
        0,
    ]
    c = raw["traces"]["classes"]
    assert len(c["time_s"]) == 20 * 2 * 3  # 1 s bins x directions x classes
    # The bins add up to the phases (the run has no drops here on the tagged class).
    tagged = (c["direction"] == 0) & (c["class"] == 1) & (c["time_s"] >= 5)
    assert int(c["arrivals"][tagged].sum()) == 1500
    cols = summary_columns(s)
    assert cols["web0_connections"] == w["connections"]
    # Stored as JSON: NaN (a class with no arrivals has no drop rate) becomes null.
    assert json.loads(cols["phases"]) == json.loads(json.dumps(s["phases"]).replace("NaN", "null"))


def test_study_experiment_loads_with_every_discipline():
    exp = load_experiment(experiment_path("parris-cbt"), [("experiment.trials", 1)])
    tags = sorted(t.point.tags["discipline"] for t in exp.trials())
    assert tags == ["CBQ", "CBT", "CBT-queue-avg", "FRED", "RED", "drop-tail"]
    sc = next(iter(exp.trials())).scenario()
    assert [p.name for p in sc.phases] == [
        "web",
        "+multimedia",
        "+udpblast",
        "-udpblast",
        "-multimedia",
        "-web",
    ]
    tagged = [c for c in sc.cbr if c.tag]
    assert len(tagged) == 6
    # ~160 kB/s of multimedia in all; the blast at the link rate.
    assert sum(c.size / (c.interval / 1e9) for c in tagged) == pytest.approx(160_000)
    blast = next(c for c in sc.cbr if not c.tag)
    assert blast.size * 8 / (blast.interval / 1e9) == pytest.approx(10e6)
