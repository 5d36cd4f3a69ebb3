"""Store figures read honestly (issue 28): amounts on an axis from 0, every point of a
sweep drawn (an AQM without a drop-tail limit as a level across the limit axis), axis
labels in the schema's words and units, and the report's figure saying, not warning,
what its markers pool."""

import textwrap
import warnings

import duckdb
import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

from collateral import plot as storeplot
from collateral import schema
from collateral.experiment import load_experiment
from collateral.report.figures import own_figure
from collateral.runner import run_experiment
from collateral.store import Store

# Two drop-tail limits in bytes and two AQMs with no limit of their own: 4 points.
AQM_MIX = """
[experiment]
name = "aqm-mix"
trials = 3
seed = 7

[scenario]
down = { rate = "10Mbit" }
up = { rate = "2Mbit" }
rtt = "40ms"
duration = "2s"
warmup = "500ms"
tcp = [{ cc = "cubic", profile = "linux-6" }]
cbr = [{ direction = "down" }]

[[sweep]]
"down.queue.limit" = ["10kB", "40kB"]

[[sweep]]
"down.queue" = [{ kind = "codel" }, { kind = "fq_codel" }]
"""


@pytest.fixture(scope="module")
def aqm_mix(tmp_path_factory):
    d = tmp_path_factory.mktemp("aqm-mix")
    (d / "aqm-mix.toml").write_text(textwrap.dedent(AQM_MIX))
    run_experiment(load_experiment(d / "aqm-mix.toml"), d / "store", workers=1, progress=False)
    return d / "store"


def _rows(store, y_sql):
    """Per (kind, limit in bytes or None): the trials' values, from the Parquet files."""
    rows = duckdb.sql(
        f"""SELECT coalesce(down_queue_kind, 'drop-tail'), down_queue_limit_bytes,
                   list({y_sql} ORDER BY key)
            FROM read_parquet('{store}/parts/*/summary.parquet', union_by_name = true)
            GROUP BY ALL"""
    ).fetchall()
    return {(k, b): np.array(v, float) for k, b, v in rows}


def test_an_amount_is_read_from_zero(aqm_mix):
    truth = _rows(aqm_mix, "tcp0_goodput_bps / 1e6")
    every = np.concatenate(list(truth.values()))
    assert every.min() > 1.0  # 10 Mbit/s of goodput: matplotlib alone would cut the axis
    fig = storeplot.figure(aqm_mix, "queue.limit", "goodput_mbps", hue="queue.kind")
    lo, hi = fig.axes[0].get_ylim()
    assert lo <= 0.0 < every.max() <= hi
    # The interactive form too.
    page = storeplot.plotly_figure(aqm_mix, "queue.limit", "goodput_mbps", hue="queue.kind")
    assert page.layout.yaxis.rangemode == "tozero"


def test_a_zoomed_amount_is_marked_as_cut(aqm_mix):
    every = np.concatenate(list(_rows(aqm_mix, "tcp0_goodput_bps / 1e6").values()))
    fig = storeplot.figure(aqm_mix, "queue.limit", "goodput_mbps", hue="queue.kind", zoom=True)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert 0.0 < lo <= every.min() and every.max() <= hi
    strokes = [ln for ln in ax.lines if ln.get_transform() == ax.transAxes]
    assert len(strokes) == 3  # two slanted strokes and the gap in the spine
    assert "y axis cut (not from 0)" in " ".join(fig._suptitle.get_text().split())


def test_every_point_of_the_sweep_is_drawn(aqm_mix):
    truth = _rows(aqm_mix, "cbr0_delay_p95_s * 1e3")
    assert len(truth) == 4  # 2 drop-tail limits, CoDel and FQ-CoDel without one
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out with a warning
        fig = storeplot.figure(aqm_mix, "queue.limit", "voip_p95_ms", hue="queue.kind")
    ax = fig.axes[0]
    markers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    placed = sum(len(c.lines[0].get_xdata()) for c in markers)
    levels = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert placed == 2 and len(levels) == 2
    assert placed + len(levels) == len(truth) == len(fig.collateral_table)
    got = sorted(float(ln.get_ydata()[0]) for ln in levels)
    want = sorted(float(np.median(truth[(k, None)])) for k in ("codel", "fq_codel"))
    assert got == pytest.approx(want, rel=1e-12)
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert names == ["drop-tail", "CoDel", "FQ-CoDel"]  # the sweep's order, levels too
    assert "CoDel, FQ-CoDel: no queue limit" in " ".join(fig._suptitle.get_text().split())


def test_axis_labels_are_the_schemas_names_and_units(aqm_mix):
    decl = schema.column("tcp0_goodput_bps")
    assert (decl["name"], decl["unit"]) == ("goodput_bps", "bit/s")
    fig = storeplot.figure(aqm_mix, "down.queue.limit", "tcp0_goodput_bps", hue="kind")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "goodput, TCP flow 0 (Mbit/s)"
    assert ax.get_xlabel() == "down queue limit (kB)"
    fig = storeplot.figure(aqm_mix, "queue.kind", "queue_down_max_bytes", hue="limit")
    assert fig.axes[0].get_ylabel() == "max, down queue (kB)"
    assert fig.axes[0].get_xlabel() == "queue kind"


def test_the_reports_figure_says_what_it_draws(aqm_mix):
    st = Store(aqm_mix)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = own_figure(st, st.summary(), "")
    assert view is not None
    assert "CoDel, FQ-CoDel: no down queue limit, a dashed level across the axis" in view.caption
    assert "median of 3 trials per point" in view.caption
    assert view.title == (
        "VoIP delay p95 (ms) against down queue limit (kB), one line per down queue kind"
    )


THREE_KEYS = """
[experiment]
name = "three-keys"
trials = 1
seed = 3

[scenario]
link = "adsl1"
rtt = "50ms"
duration = "1s"
warmup = "200ms"
tcp = [{ cc = "newreno", profile = "linux-6" }]
cbr = [{ direction = "down" }]

[sweep]
"tcp.cc" = ["newreno", "cubic"]
"queue.rule" = ["fb-strict", "fb-loose"]
"queue.limit" = ["10kB", "20kB"]
"""


def test_a_third_swept_key_gets_a_panel_not_a_pooled_marker(tmp_path):
    (tmp_path / "t.toml").write_text(textwrap.dedent(THREE_KEYS))
    run_experiment(load_experiment(tmp_path / "t.toml"), tmp_path / "s", workers=1, progress=False)
    got = storeplot.suggest(tmp_path / "s")
    assert (got["x"], got["hue"], got["facet"]) == ("queue.limit", "tcp.cc", "queue.rule")
    st = Store(tmp_path / "s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = own_figure(st, st.summary(), "")
    assert "pool" not in view.caption and "a panel per queue rule" in view.caption
