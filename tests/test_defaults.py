"""Issue 28's defaults: one set across Python, TOML and the CLI (link, profile), Linux's
DualPI2 unless asked, the RED family by name from the link, seeded start offsets, and
the description naming what differs from the kernel and what varies across trials."""

import inspect
import json
import math

import numpy as np
import pytest

import collateral
from collateral.experiment import Experiment
from collateral.spec import AQM_SHORTHANDS, LinkSpec, Scenario, TcpSpec, build_scenario
from collateral.spec.link import AqmSpec


def test_tcp_spec_defaults_are_the_clis():
    t = TcpSpec()
    assert (t.profile, t.cc, t.start, t.start_spread) == ("linux-6", "newreno", 0, 10**9)
    native = t.to_native()
    assert native["profile"] == "linux-6" and native["start_spread_ns"] == 1_000_000_000
    # A fixed start sends no spread: its JSON is what it was before the field existed.
    assert "start_spread_ns" not in TcpSpec(start_spread=0).to_native()


def test_help_shows_every_tcp_field_with_its_meaning():
    doc = inspect.getdoc(TcpSpec) or ""
    assert "Fields:" in doc
    for name in TcpSpec.model_fields:
        assert f"    {name}: " in doc, name
    assert "offset uniform in [0, start_spread)" in doc
    assert "start_spread: Duration = '1s'" in doc


def test_a_stop_must_follow_the_latest_start():
    with pytest.raises(ValueError, match=r"after start 0s \+ start_spread 1s"):
        TcpSpec(stop="0.5s")
    assert TcpSpec(stop="0.5s", start_spread=0).stop == 500_000_000


def test_a_scenario_without_link_or_rates_is_adsl1_as_on_the_cli():
    sc = Scenario()
    assert (sc.link, sc.down.rate, sc.up.rate) == ("adsl1", 1_500_000, 256_000)
    assert build_scenario().link == sc.link
    # One rate alone is still a mistake, not ADSL1.
    with pytest.raises(ValueError, match="rate missing"):
        Scenario(down=LinkSpec(rate="1Mbit"))
    exp = Experiment.from_dict({"scenario": {"tcp": [{}]}})
    assert exp.points[0].scenario.link == "adsl1"


@pytest.mark.parametrize("kind", ["red", "fred", "cbt", "cbq"])
def test_the_red_family_is_usable_by_name(kind):
    assert kind in AQM_SHORTHANDS
    sc = build_scenario(aqm=kind, duration="3s", warmup="1s")
    assert collateral.simulate(sc).summary["down_goodput_bps"] > 0
    assert "from the link rate" in sc.describe()


def _w_q(rate_bps):
    """Adaptive RED's weight 1 − e^(−1/C), C in 1500-byte packets per second."""
    return -math.expm1(-1 / (rate_bps / 12_000))


@pytest.mark.parametrize(
    ("kind", "explicit"),
    [
        # ADSL1: 125 packets/s down, 21.3 up; 5 ms of either is under Floyd &
        # Jacobson's 5 packets, so min_th 5 both ways; max_th 3 x, limit 4 x max_th.
        ("red", lambda r: {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": _w_q(r), "limit": 60}),
        # FRED: max_th 2 x min_th, max_p 0.02, buffer 4 x min_th.
        ("fred", lambda r: {"min_th": 5, "max_th": 10, "max_p": 0.02, "w_q": _w_q(r), "limit": 20}),
        # CBQ: the study's shares, limits RED's 60 for TCP and 30 for each UDP class.
        ("cbq", lambda r: {"shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
                           "limits": {"tcp": 60, "tagged": 30, "other": 30}}),
    ],
)  # fmt: skip
def test_the_derived_parameters_are_the_hand_computed_ones(kind, explicit):
    def run(down, up):
        sc = Scenario(
            link="adsl1",
            down=LinkSpec(queue={"kind": kind, **down}),
            up=LinkSpec(queue={"kind": kind, **up}),
            duration="8s",
            warmup="2s",
            tcp=[TcpSpec(), TcpSpec(direction="up")],
            cbr=[{"direction": "down"}, {"direction": "up"}],
        )
        s = collateral.simulate(sc).summary
        # As text: the summaries hold NaN (no delay samples), which equals nothing.
        return json.dumps({k: v for k, v in s.items() if k != "events"}, default=str)

    assert run({}, {}) == run(explicit(1_500_000), explicit(256_000))


def test_red_with_its_thresholds_given_takes_nothing_from_the_link():
    q = AqmSpec(kind="red", min_th=5, max_th=15, max_p=0.1, w_q=0.002, limit=60)
    assert q.notes() == []


def test_dualpi2_says_when_it_is_not_linuxs():
    assert AqmSpec(kind="dualpi2").notes() == []
    pinned = AqmSpec(kind="dualpi2", scheduler="ts_fifo")
    assert pinned.notes() == ["time-shifted FIFO, not Linux's WRR default"]
    sc = build_scenario(aqm={"kind": "dualpi2", "scheduler": "ts_fifo"})
    assert "queue DUALPI2 (time-shifted FIFO, not Linux's WRR default)" in sc.describe()


def test_dualpi2_default_is_linuxs_wrr_not_the_rfcs_fifo():
    """A classic CBR probe beside two Prague downloads at 24 Mbit/s (ADSL2): under the
    time-shifted FIFO a classic packet behind L packets waits until it is tshift = 50 ms
    older than the L head (the issue saw a 51 ms p95; with Linux's pacing clock in the
    Prague senders the L queue is empty more often, 37 ms); Linux's WRR serves the C
    queue at least every tenth packet (c_protection 10 %, 0.5 ms each), so the probe
    sees a few ms."""

    def probe(queue):
        sc = Scenario(
            link="adsl2",
            down=LinkSpec(queue=queue),
            up=LinkSpec(queue=queue),
            duration="20s",
            warmup="5s",
            tcp=[TcpSpec(cc="prague", ecn="l4s"), TcpSpec(cc="prague", ecn="l4s")],
            cbr=[{"direction": "down"}],
        )
        return collateral.simulate(sc).summary["cbr"][0]

    def delays(c):
        return [c[f"delay_{k}_s"] for k in ("median", "p95", "max")]

    wrr = probe({"kind": "dualpi2"})
    assert delays(wrr) == delays(probe({"kind": "dualpi2", "scheduler": "wrr"}))
    assert wrr["delay_max_s"] < 0.010
    fifo = probe({"kind": "dualpi2", "scheduler": "ts_fifo"})
    assert fifo["delay_max_s"] >= 0.050  # tshift, and the packet's own transmission
    assert fifo["delay_p95_s"] > 5 * wrr["delay_p95_s"]


def _first_cwnd_times(sc):
    r = collateral.simulate(sc)
    cw = r.traces["cwnd"]
    return [float(cw["time_s"][cw["flow"] == i].min()) for i in range(len(sc.tcp))]


def test_start_offsets_are_seeded_per_flow_and_within_the_spread():
    def sc(seed, spread):
        flows = [TcpSpec(start_spread=spread) for _ in range(4)]
        return Scenario(seed=seed, duration="4s", warmup="2s", tcp=flows)

    fixed = _first_cwnd_times(sc(1, 0))
    assert max(fixed) < 0.25  # all at t = 0 (the first sample within an RTT or two)
    a, b = _first_cwnd_times(sc(1, "1s")), _first_cwnd_times(sc(1, "1s"))
    assert a == b
    assert a != _first_cwnd_times(sc(2, "1s"))
    assert len(set(a)) == 4 and max(a) < 1.0 + 0.25
    # The offsets come from streams of their own: the CBR flow's packets do not move.
    cbr = [{"direction": "down"}]
    base = Scenario(seed=5, duration="3s", warmup="1s", cbr=cbr)
    spread = base.model_copy(update={"tcp": []})
    r0, r1 = collateral.simulate(base), collateral.simulate(spread)
    assert np.array_equal(r0.traces["cbr"]["sent_s"], r1.traces["cbr"]["sent_s"])


def test_the_description_says_what_varies_across_trials():
    sc = Scenario(tcp=[TcpSpec(), TcpSpec()])
    assert "TCP starts spread over 1s (seeded, vary by trial)" in sc.describe()
    fixed = Scenario(tcp=[TcpSpec(start_spread=0)])
    assert "spread" not in fixed.describe()


def test_a_pinned_old_default_keeps_the_trials_seeds():
    def exp(queue):
        return Experiment.from_dict(
            {"experiment": {"trials": 2}, "scenario": {"queue": queue, "tcp": [{}]}}
        )

    old = exp({"kind": "dualpi2"})
    pinned = exp({"kind": "dualpi2", "scheduler": "ts_fifo"})
    assert [t.seed for t in old.trials()] == [t.seed for t in pinned.trials()]
    assert old.points[0].key != pinned.points[0].key
    other = exp({"kind": "dualpi2", "scheduler": "wrr"})
    assert [t.seed for t in other.trials()] != [t.seed for t in old.trials()]


def test_web_connections_take_no_start_spread():
    """A web connection starts when its user asks; the template's spread is not sent
    (nor does it change a stored web experiment's identity)."""
    sc = Scenario(web=[{"users": 2}])
    assert sc.web[0].tcp.start_spread == 10**9
    assert "start_spread_ns" not in sc.to_native()["web"][0]["tcp"]


def test_a_title_rounds_a_rate_that_is_not_round():
    """A trace's mean or an inferred capacity (4 664 807 bit/s) reads ~4.665Mbit in a
    title, not 4.664807Mbit; a round rate stays exact."""
    sc = build_scenario(down="4664807", up="1Mbit")
    assert sc.describe().startswith("link ~4.665Mbit/1Mbit · ")
    assert build_scenario(link="adsl1").describe().startswith("link 1.5Mbit/256kbit (adsl1)")
