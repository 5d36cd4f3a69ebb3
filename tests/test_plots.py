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


def test_the_delay_panel_tells_lost_packets_from_those_still_in_flight():
    # A small FIFO drops CBR packets; a few are still on their way at the end. The panel
    # marks each kind with the summary's own count (it called the in-flight ones lost).
    import matplotlib.pyplot as plt

    from collateral.plot.trial import _delay_panel

    r = collateral.simulate(
        queue="6kB", cbr="down", duration="20s", warmup="5s", tcp_flows=2, start_spread="0s"
    )
    (down,) = [c for c in r.cbr if c["direction"] == "down"]
    assert down["lost"] > 0 and down["in_flight"] > 0
    fig, ax = plt.subplots()
    _delay_panel(ax, r, 5.0, 20.0)
    labels = ax.get_legend_handles_labels()[1]
    plt.close(fig)
    assert f"lost ({down['lost']})" in labels, labels
    assert f"in flight at the end ({down['in_flight']})" in labels, labels
