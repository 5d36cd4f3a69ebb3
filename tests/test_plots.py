"""Figures built from real trials: windows, files, and the data they show."""

import numpy as np

import collateral
from collateral.plot import fig_cwnd_queue, three_epochs
from collateral.spec import LinkSpec, QueueSpec, Scenario, TcpSpec


def _trial():
    q = QueueSpec(limit="20p")
    sc = Scenario(
        down=LinkSpec(rate="10Mbit", queue=q),
        up=LinkSpec(rate="10Mbit", queue=q),
        rtt="20ms",
        tcp=[TcpSpec(profile="linux-2.6.25")],
        duration="60s",
        warmup="5s",
    )
    return collateral.simulate(sc)


def test_three_epochs_spans_four_congestion_events(tmp_path):
    r = _trial()
    t0, t1 = three_epochs(r)
    c = r.traces["congestion"]["time_s"]
    inside = c[(c >= t0) & (c <= t1)]
    assert len(inside) == 4, inside
    # The window is padded by a tenth of an epoch on each side, no more.
    epoch = (inside[-1] - inside[0]) / 3
    assert t0 < inside[0] and inside[0] - t0 <= 0.1 * epoch + 1e-9
    paths = fig_cwnd_queue(r, path=tmp_path / "epochs.svg")
    assert [p.suffix for p in paths] == [".svg"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_queue_series_follows_the_sawtooth():
    r = _trial()
    _, _, packets = r.queue_series("down", step="1ms", t0=10, t1=60)
    # A 20-slot queue fills to its limit before each loss and drains below it after.
    assert packets.max() == 20
    assert np.quantile(packets, 0.1) < 10
