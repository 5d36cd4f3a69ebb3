"""The video call (issue 31) as the Python side offers it: the ``video`` parameters of
the flat form, the ``media`` table of a scenario, and the call's summary and trace
from the core."""

from __future__ import annotations

import re

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
        # Below the encoder's floor: named by the option (it read "video: min_rate ...").
        ({"video": "gcc", "video_max_rate": "2"}, "video_max_rate"),
        # A call's settings without a call are not silently dropped.
        ({"video_max_rate": "3Mbit"}, "video_max_rate"),
        ({"video_direction": "up"}, "video_direction"),
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


def test_the_testbed_takes_a_call_and_the_core_measures_its_records():
    """The testbed's endpoints' records of a call, measured by the core's own code: two
    frames (0 and 100 ms) of two 1000-byte packets in a 1 s run without warm-up; frame 0
    complete 40 ms after capture, frame 1 with a packet dropped; 3 packets received =
    24 kbit/s; the target 150 kbit/s, then 300 kbit/s from 0.5 s: mean 225 kbit/s."""
    import numpy as np

    from collateral import _native
    from collateral.emulate.checks import TestbedLimitError, check_testbed
    from collateral.emulate.logs import DROPPED_IN_QUEUE

    sc = build_scenario(down="2Mbit", up="1Mbit", tcp_flows=0, cbr="none", video="gcc",
                        duration="1s", warmup="0s")  # fmt: skip
    check_testbed(sc)  # no longer refused
    # SCReAM's window releases packets when a report arrives, which the testbed's
    # sender does not do yet: refused, naming the controller.
    scream = build_scenario(down="2Mbit", up="1Mbit", video="scream")
    with pytest.raises(TestbedLimitError, match=r"media\.controller: scream"):
        check_testbed(scream)
    ms = 1_000_000
    u64, u32 = np.uint64, np.uint32
    rec = {
        "sent": np.array([0, 0, 100 * ms, 100 * ms], u64),
        "arrived": np.array([30 * ms, 40 * ms, DROPPED_IN_QUEUE, 150 * ms], u64),
        "lens": np.full(4, 1000, u32),
        "frame": np.array([0, 0, 1, 1], u32),
        "captured": np.array([0, 100 * ms], u64),
        "first": np.array([0, 2], u64),
        "count": np.array([2, 2], u32),
        "target_t": np.array([0, 500 * ms], u64),
        "target_bps": np.array([150_000.0, 300_000.0]),
        "feedback_sent": 19,
        "feedback_lost": 1,
    }
    measure = lambda r: _native.measure_testbed(sc.to_native_json(), "[]", [], None, r)  # noqa: E731
    (m,) = measure(rec)["summary"]["media"]
    assert (m["flow"], m["frames"], m["frames_incomplete"]) == (0, 2, 0.5)
    assert m["frame_delay_p50_s"] == 0.04 and m["received_bps"] == 24_000.0
    assert m["target_mean_bps"] == 225_000.0
    assert (m["feedback_sent"], m["feedback_lost"]) == (19, 1)
    # Records that do not fit together, or lack a key, are refused naming it.
    with pytest.raises(ValueError, match=r"frames\[1\]"):
        measure({**rec, "count": np.array([2, 3], u32)})
    with pytest.raises(ValueError, match="target_t: missing"):
        measure({k: v for k, v in rec.items() if k != "target_t"})
    with pytest.raises(ValueError, match="lens"):
        measure({**rec, "lens": np.full(4, 1000, u64)})


def test_the_core_refuses_a_call_beyond_its_limits():
    with pytest.raises(ValueError, match="max_rate"):
        Scenario(down={"rate": "2Mbit"}, up={"rate": "1Mbit"}, media={"max_rate": "2Gbit"})


def test_versus_shows_the_call_beside_each_queue(cli_main):
    """``simulate --versus`` gave a TCP and a CBR row per queue and left the call out."""
    rc, out, err = cli_main(
        "simulate", "--video", "gcc", "--cbr", "none", "--duration", "10s",
        "--queue", "60kB", "--versus", "20kB",
    )  # fmt: skip
    assert rc == 0, err
    # A row per queue (the heading names the call too).
    assert len(re.findall(r"video gcc down +[\d.]+ [kM]bit/s", out)) == 2, out
    assert "video gcc down · seed" in out
    assert "frame delay (capture to last packet)" in out


def test_the_media_trace_names_each_calls_flow():
    """With two calls the trace's rows say which call they are of (its summary's flow),
    each call a bin per second; the later call's bins before its start carry nothing."""
    sc = build_scenario(
        down="4Mbit", up="1Mbit", tcp_flows=0, cbr="none", duration="20s", warmup="2s"
    ).model_copy(update={"media": [MediaSpec(), MediaSpec(controller="nada", start="10s")]})
    r = collateral.simulate(scenario=sc)
    flows = [m["flow"] for m in r.summary["media"]]
    t = r.traces["media"]
    assert len(set(flows)) == 2 and sorted(set(t["flow"])) == sorted(flows)
    for flow in flows:
        assert list(t["time_s"][t["flow"] == flow]) == [float(s) for s in range(20)]
    late = t["flow"] == flows[1]
    assert (t["received_bps"][late][:10] == 0).all() and t["received_bps"][late][12] > 0


def test_the_trial_figure_draws_each_calls_rate(monkeypatch, tmp_path):
    """``simulate --plot`` of a trial with a call: a third panel with the call's received
    rate and its target, the trace's values in Mbit/s."""
    from collateral.plot import trial

    drawn = {}
    monkeypatch.setattr(trial, "save", lambda fig, path, **kw: drawn.setdefault("fig", fig) and [])
    r = collateral.simulate(
        down="2Mbit", up="1Mbit", tcp_flows=1, video="gcc", duration="20s", warmup="5s"
    )
    trial.fig_cwnd_delay(r, 5.0, 15.0, tmp_path / "x.png")
    axes = drawn["fig"].axes
    assert len(axes) == 3 and "video" in axes[2].get_ylabel()
    received, target = axes[2].get_lines()
    assert received.get_label() == "video gcc down received"
    t = r.traces["media"]
    sel = (t["time_s"] + 1 > 5.0) & (t["time_s"] < 15.0)
    assert list(received.get_ydata()) == list(t["received_bps"][sel] / 1e6)
    assert list(target.get_ydata()) == list(t["target_bps"][sel] / 1e6)
    # Without a call: the two panels as before.
    drawn.clear()
    plain = collateral.simulate(down="2Mbit", up="1Mbit", duration="20s")
    trial.fig_cwnd_delay(plain, path=tmp_path / "y.png")
    assert len(drawn["fig"].axes) == 2
