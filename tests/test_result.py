"""Result on a crafted trial: resampling of on-change traces, NaN handling, JSON, table."""

import json
import math

import numpy as np
import pytest
from rich.console import Console

from collateral.result import SSTHRESH_INFINITE, Result, step_resample

INF = SSTHRESH_INFINITE


def crafted() -> Result:
    f64, u32 = np.float64, np.uint32
    return Result(
        {
            "summary": {
                "duration_s": 0.005,
                "warmup_s": 0.001,
                "events": 10,
                "wall_s": 0.0,
                "tcp": [
                    {
                        "flow": 0,
                        "direction": "down",
                        "cc": "newreno",
                        "goodput_bps": 1.2e6,
                        "bytes_delivered": 750,
                        "segments_sent": 5,
                        "retransmits": 1,
                        "timeouts": 0,
                        "fast_retransmits": 1,
                    }
                ],
                "cbr": [
                    {
                        "flow": 2,
                        "direction": "down",
                        "sent": 2,
                        "received": 1,
                        "lost": 1,
                        "loss_rate": 0.5,
                        "base_owd_s": 0.05,
                        "delay_median_s": 0.01,
                        "delay_p95_s": 0.01,
                        "delay_max_s": 0.01,
                    },
                    # serde_json writes NaN as null: no packet received
                    {
                        "flow": 3,
                        "direction": "up",
                        "sent": 0,
                        "received": 0,
                        "lost": 0,
                        "loss_rate": None,
                        "base_owd_s": 0.05,
                        "delay_median_s": None,
                        "delay_p95_s": None,
                        "delay_max_s": None,
                    },
                ],
                "queues": {
                    "down": {"drops": 1, "max_bytes": 3000, "max_packets": 2},
                    "up": {"drops": 0, "max_bytes": 52, "max_packets": 1},
                },
            },
            "traces": {
                "cwnd": {
                    # flow 0: 3 at 0; two changes at 2.5 ms (4 then 5); loss at 4 ms -> 2/2.
                    # flow 1 starts at 1.5 ms and must not leak into flow 0.
                    "time_s": np.array([0.0, 0.0015, 0.0025, 0.0025, 0.004], f64),
                    "flow": np.array([0, 1, 0, 0, 0], u32),
                    "cwnd": np.array([3, 10, 4, 5, 2], u32),
                    "ssthresh": np.array([INF, INF, INF, INF, 2], u32),
                },
                "queue": {
                    "time_s": np.array([0.0005, 0.001, 0.0021], f64),
                    "direction": np.array([0, 1, 0], np.uint8),
                    "bytes": np.array([1500, 52, 3000], np.uint64),
                    "packets": np.array([1, 1, 2], u32),
                },
                "cbr": {
                    "flow": np.array([2, 2, 3], u32),
                    "seq": np.array([0, 1, 0], np.uint64),
                    "sent_s": np.array([0.001, 0.003, 0.002], f64),
                    "owd_s": np.array([0.06, np.nan, 0.05], f64),
                    "extra_delay_s": np.array([0.01, np.nan, 0.0], f64),
                },
                "drops": {k: np.array([]) for k in ("time_s", "direction", "flow", "bytes")},
                "congestion": {k: np.array([]) for k in ("time_s", "flow", "kind")},
            },
        }
    )


def test_cwnd_series_on_a_1ms_grid():
    t, cwnd, ssthresh = crafted().cwnd_series(0, step="1ms")
    np.testing.assert_allclose(t, [0.0, 0.001, 0.002, 0.003, 0.004, 0.005])
    # At 3 ms the last of the two changes at 2.5 ms holds; the change at exactly 4 ms
    # is already visible at 4 ms.
    np.testing.assert_array_equal(cwnd, [3, 3, 3, 5, 2, 2])
    np.testing.assert_array_equal(ssthresh, [np.nan, np.nan, np.nan, np.nan, 2, 2])


def test_cwnd_series_before_first_record_is_nan_and_window_bounds():
    t, cwnd, _ = crafted().cwnd_series(1, step=0.001, t0=0.0, t1=0.003)
    np.testing.assert_allclose(t, [0.0, 0.001, 0.002, 0.003])
    np.testing.assert_array_equal(cwnd, [np.nan, np.nan, 10, 10])
    t, cwnd, _ = crafted().cwnd_series(0, step="500us", t0=0.002, t1=0.003)
    np.testing.assert_allclose(t, [0.002, 0.0025, 0.003])
    np.testing.assert_array_equal(cwnd, [3, 5, 5])


def test_queue_series_starts_empty_and_separates_directions():
    r = crafted()
    _, b, p = r.queue_series("down", step="1ms", t0=0.0, t1=0.003)
    np.testing.assert_array_equal(b, [0, 1500, 1500, 3000])
    np.testing.assert_array_equal(p, [0, 1, 1, 2])
    _, b_up, _ = r.queue_series(1, step=0.001, t0=0.0, t1=0.003)
    np.testing.assert_array_equal(b_up, [0, 52, 52, 52])


def test_step_must_be_positive():
    with pytest.raises(ValueError, match="step must be positive"):
        crafted().cwnd_series(0, step=0)


def test_step_resample_matches_a_naive_loop():
    rng = np.random.default_rng(7)
    times = np.sort(rng.uniform(0, 1, 50))
    values = rng.integers(0, 100, 50).astype(float)
    grid = np.linspace(-0.1, 1.1, 301)
    naive = [values[times <= g][-1] if (times <= g).any() else np.nan for g in grid]
    np.testing.assert_array_equal(step_resample(times, values, grid), naive)


def test_summary_nulls_become_nan_and_json_nulls():
    r = crafted()
    assert r.cbr[0]["loss_rate"] == 0.5
    assert math.isnan(r.cbr[1]["delay_median_s"]) and math.isnan(r.cbr[1]["loss_rate"])
    doc = json.loads(r.to_json())
    assert doc["summary"]["cbr"][1]["delay_p95_s"] is None
    assert "scenario" not in doc  # this result was built without one
    with_traces = json.loads(r.to_json(traces=True))
    assert with_traces["traces"]["cbr"]["owd_s"] == [0.06, None, 0.05]


def test_cbr_packets_by_direction():
    down = crafted().cbr_packets("down")
    np.testing.assert_array_equal(down["seq"], [0, 1])
    assert np.isnan(down["extra_delay_s"][1])  # lost
    np.testing.assert_array_equal(crafted().cbr_packets("up")["flow"], [3])


def test_table_shows_goodput_loss_and_delay():
    console = Console(record=True, width=100)
    console.print(crafted().table())
    text = console.export_text()
    assert "1.2 Mbit/s" in text
    assert "50.00 %" in text
    assert "10.0 ms" in text
    assert "TCP newreno down" in text and "CBR up" in text


def test_tables_as_arrow_pandas_and_polars_with_named_codes():
    import collateral

    r = collateral.simulate(duration="10s", warmup="2s")
    q = r.to_pandas("queue")
    assert str(q["direction"].dtype) == "category"
    assert set(q["direction"].cat.categories) == {"down", "up"}
    # The categories decode the core's codes: the same rows as the raw trace.
    raw = r.traces["queue"]
    assert (q["direction"] == "up").sum() == int((raw["direction"] == 1).sum()) > 0
    cbr = r.to_polars("cbr")
    assert cbr["fate"].to_list()[0] == "arrived" and cbr.height == len(r.traces["cbr"]["seq"])
    tcp = r.to_arrow("tcp_summary")
    assert tcp.num_rows == 1 and tcp.column("cc").to_pylist() == ["newreno"]
    assert r.to_pandas("queue_summary")["direction"].tolist() == ["down", "up"]
    with pytest.raises(ValueError, match="unknown table 'cwdn'"):
        r.to_arrow("cwdn")


def test_ssthresh_not_yet_set_is_missing_in_tables():
    """The core's "infinite" ssthresh (u32::MAX) reads as missing, not 4294967295."""
    c = crafted().to_pandas("cwnd")
    assert c["ssthresh"].isna().tolist() == [True, True, True, True, False]
    assert c["ssthresh"].iloc[4] == 2 and c["cwnd"].tolist() == [3, 10, 4, 5, 2]
    a = crafted().to_arrow("cwnd").column("ssthresh")
    assert a.null_count == 4 and str(a.type) == "uint32"


def test_cbr_trace_says_each_packets_direction():
    import collateral

    r = collateral.simulate(duration="3s", warmup="1s", cbr="both", tcp_flows=1)
    c = r.to_pandas("cbr")
    # cbr="both": the down flow first, then the up one (their flow ids from the summary).
    down, up = r.cbr[0]["flow"], r.cbr[1]["flow"]
    assert set(c.loc[c["flow"] == down, "direction"]) == {"down"}
    assert set(c.loc[c["flow"] == up, "direction"]) == {"up"}
    assert str(c["direction"].dtype) == "category"


def test_a_bare_number_rtt_warns_once_as_the_cli_does():
    """rtt="100" is 100 s: valid, but the CLI's --rtt warns; so does the API, once."""
    import warnings

    import collateral

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            r = collateral.simulate(rtt="17", duration="2s", warmup="0.5s")
        collateral.simulate(rtt="17ms", duration="2s", warmup="0.5s")
    assert r.scenario is not None and r.scenario.rtt == 17 * 10**9
    texts = [str(w.message) for w in caught]
    assert texts == ["rtt='17': read as 17 s, an unusual round trip; did you mean 17ms?"], texts
    assert caught[0].filename == __file__  # it points at the caller's line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        collateral.simulate(aqm={"kind": "pie", "target": 20}, duration="2s", warmup="0.5s")
    assert [str(w.message) for w in caught] == ["aqm: target=20: read as 20 s; did you mean 20ms?"]
    # queue=100 is 100 B: no full-size segment fits (as --queue 100 warns).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        collateral.simulate(queue=100, duration="2s", warmup="0.5s")
        collateral.simulate(queue="1500B", duration="2s", warmup="0.5s")
    assert [str(w.message) for w in caught] == [
        "queue=100: 100 B, smaller than one 1500-byte packet; the queue drops every"
        " full-size TCP segment"
    ]


def test_a_window_outside_the_trial_is_refused_not_filled():
    r = crafted()
    end = r.duration_s
    for kw, message in (
        ({"t0": 0.0, "t1": end + 1}, "t1: "),
        ({"t0": -1.0, "t1": end}, "t0: -1 s is outside the trial"),
        ({"t0": end / 2, "t1": end / 4}, "t1: "),
    ):
        with pytest.raises(ValueError, match=message):
            r.cwnd_series(0, step="1ms", **kw)
        with pytest.raises(ValueError, match=message):
            r.queue_series("down", step="1ms", **kw)
    assert r.cwnd_series(0, step="1ms", t0=0.0, t1=end)[0][-1] == pytest.approx(end)


def test_a_trace_not_recorded_is_named_by_every_accessor():
    r = crafted()
    r.traces.clear()
    for call in (
        lambda: r.cwnd_series(0),
        lambda: r.queue_series("down"),
        lambda: r.cbr_packets("down"),
        lambda: r.to_arrow("cwnd"),
    ):
        with pytest.raises(ValueError, match=r"trace was not recorded: .*scenario\(traces=True\)"):
            call()


def test_an_experiments_trial_runs_again_with_its_traces():
    from collateral.experiment import Experiment

    exp = Experiment.from_dict(
        {"experiment": {"name": "x", "traces": []}, "scenario": {"duration": "2s", "warmup": "1s"}}
    )
    t = exp.trials()[0]
    assert not t.scenario().trace.cwnd and t.scenario(traces=True).trace.cwnd
    assert t.scenario(traces=True).seed == t.seed
