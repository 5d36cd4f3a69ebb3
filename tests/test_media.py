"""The video call (issue 31) as the Python side offers it: the ``video`` parameters of
the flat form, the ``media`` table of a scenario, and the call's summary and trace
from the core."""

from __future__ import annotations

import pytest

import collateral
from collateral.spec import MediaSpec, Scenario, SpecError, build_scenario


def test_video_builds_the_media_table_the_core_takes():
    sc = build_scenario(down="2Mbit", up="1Mbit", video="gcc", video_max_rate="3Mbit")
    assert sc.media == MediaSpec(max_rate=3_000_000)
    native = sc.to_native()["media"]
    assert native["controller"] == "gcc" and native["direction"] == "down"
    assert (native["min_rate_bps"], native["max_rate_bps"]) == (150_000, 3_000_000)
    assert native["feedback_interval_ns"] == 50_000_000 and native["playout_ns"] == 150_000_000
    # No call: no media key, so scenarios without one are what they were.
    assert "media" not in build_scenario(down="2Mbit", up="1Mbit").to_native()
    up = build_scenario(down="2Mbit", up="1Mbit", video="gcc", video_direction="up")
    assert up.media is not None and up.media.direction == "up"


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"video": "sprout"}, "video"),
        ({"video": "gcc", "video_direction": "sideways"}, "video_direction"),
        ({"video": "gcc", "video_max_rate": "fast"}, "video_max_rate"),
    ],
)
def test_a_bad_video_parameter_is_named(params, name):
    with pytest.raises(SpecError) as err:
        build_scenario(down="2Mbit", up="1Mbit", **params)
    assert err.value.param == name


def test_a_media_table_below_its_own_minimum_is_refused():
    with pytest.raises(ValueError, match="max_rate"):
        Scenario(down={"rate": "2Mbit"}, up={"rate": "1Mbit"}, media={"min_rate": "2Mbit"})


def test_a_call_alone_reports_its_rate_frames_and_trace():
    r = collateral.simulate(
        down="2Mbit", up="1Mbit", tcp_flows=0, cbr="none", video="gcc", duration="30s",
        warmup="5s",
    )  # fmt: skip
    (m,) = r.summary["media"]
    # Nothing else on the link: all of it is the call's, the received rate is below
    # the link's and the encoder's maximum, frames take at least the 50 ms one way.
    assert m["rate_share"] == 1.0 and m["cc"] == "gcc"
    assert 150_000 < m["received_bps"] <= m["sent_bps"] <= 1_600_000
    # 30 a second, their intervals Laplacian (scale 0.15 of 1/30 s): over 750 frames the
    # count's standard deviation is 0.15·√2·√750 ≈ 6 frames.
    assert m["frames"] == pytest.approx(25 * 30, abs=20)
    assert 0.05 < m["frame_delay_p50_s"] <= m["frame_delay_p95_s"] <= m["frame_delay_p99_s"]
    # A report every 50 ms (599 timers in 30 s) unless nothing new has arrived since the
    # last one, which the noisy frame intervals make rare but possible at 150 kbit/s.
    assert 570 <= m["feedback_sent"] <= 599
    t = r.traces["media"]
    assert list(t["time_s"]) == [float(s) for s in range(30)]
    # The target only grows from its 150 kbit/s start while nothing is congested.
    assert t["target_bps"][0] == pytest.approx(150_000, rel=0.1)
    assert t["target_bps"][10] > t["target_bps"][0]


@pytest.mark.parametrize("cc", ["nada", "scream"])
def test_each_controller_runs_and_is_named(cc):
    """NADA (RFC 8698) and SCReAM (RFC 8298) take the call from the core's vocabulary;
    alone on a 2 Mbit/s link each climbs from its 150 kbit/s start towards the encoder's
    1.5 Mbit/s ceiling, never above it."""
    r = collateral.simulate(
        down="2Mbit", up="1Mbit", tcp_flows=0, cbr="none", video=cc, duration="30s",
        warmup="5s",
    )  # fmt: skip
    (m,) = r.summary["media"]
    assert m["cc"] == cc and m["rate_share"] == 1.0
    assert 500_000 < m["received_bps"] <= m["sent_bps"] <= 1_600_000
    t = r.traces["media"]["target_bps"]
    assert t[0] == pytest.approx(150_000, rel=0.5) and t[0] < t[10] <= 1_500_000


def test_the_testbed_refuses_a_call_it_cannot_run():
    from collateral.emulate.checks import TestbedLimitError, check_testbed

    sc = build_scenario(down="2Mbit", up="1Mbit", video="gcc")
    with pytest.raises(TestbedLimitError, match="video call"):
        check_testbed(sc)


def test_the_core_refuses_a_call_beyond_its_limits():
    with pytest.raises(ValueError, match="max_rate"):
        Scenario(down={"rate": "2Mbit"}, up={"rate": "1Mbit"}, media={"max_rate": "2Gbit"})
