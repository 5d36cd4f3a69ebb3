"""The reproductions' figures as a reader sees them: nothing clipped at 0, no line across
sizes that were not run, legends off the data, bands named for the trials they span,
small vector files, readable text, and a caption beside every figure.

The session's quick run of every reproduction (tests/conftest.py) is drawn with
``save`` wrapped, so each test looks at the matplotlib figure itself (its artists in
display coordinates after a draw) as well as at the files written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import Drawn, QuickRuns, capture_saves
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

import collateral.plot as plots
from collateral.plot import style
from collateral.reproduce import STUDIES, experiment_path
from collateral.reproduce.drawing import spread_text
from collateral.reproduce.mmsys2011.loss import fine_sweep
from collateral.reproduce.mmsys2011.sweep import capacity
from collateral.reproduce.parris_cbt import _blast_per_trial, parris_multimedia
from collateral.store import Store

#: One worker for the modules that share the session's quick runs (run once).
pytestmark = pytest.mark.xdist_group("quick_runs")

#: Figures of the simulator (the testbed's is run in tests/test_fig4b.py).
SIMULATED = [fid for fid, fig in STUDIES.items() if not fig.testbed]


@pytest.fixture(scope="module")
def quick(quick_runs: QuickRuns) -> dict[str, tuple[Any, Drawn]]:
    """Every simulated reproduction in --quick mode (the session's runs, as drawn):
    fig id -> (Reproduction, figures drawn)."""
    return {fid: (rep, quick_runs.drawn[fid]) for fid, rep in quick_runs.reps.items()}


def _draw(fig) -> Any:
    """``fig`` laid out and drawn (on a fresh Agg canvas: ``save`` closed it, which
    leaves a canvas that does not draw), so window extents and transforms agree."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def _figure(quick, fig_id: str, i: int = 0):
    drawn = quick[fig_id][1]
    assert drawn, f"{fig_id} drew nothing"
    return _draw(drawn[i][0])


def _data_axes(fig) -> list[Any]:
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _display_points(ax) -> np.ndarray:
    """Every data point of ``ax`` (line vertices, scatter and band vertices, bar and box
    corners) in display coordinates; reference lines spanning the axes (axhline) are not
    data and are left out."""
    pts = []
    for ln in ax.get_lines():
        if not ln.get_visible() or ln.get_transform() != ax.transData:
            continue
        xy = np.column_stack([ln.get_xdata(orig=False), ln.get_ydata(orig=False)]).astype(float)
        pts.append(ax.transData.transform(xy[np.isfinite(xy).all(axis=1)]))
    for c in ax.collections:
        if not c.get_visible():
            continue
        off = c.get_offsets()
        if (
            len(off)
            and c.get_offset_transform() == ax.transData
            and not isinstance(c, LineCollection)
        ):
            off = np.asarray(off, dtype=float)
            pts.append(ax.transData.transform(off[np.isfinite(off).all(axis=1)]))
        for p in c.get_paths():
            v = np.asarray(p.vertices, dtype=float)
            v = v[np.isfinite(v).all(axis=1)]
            if len(v):
                pts.append(c.get_transform().transform(v))
    for p in ax.patches:
        if p.get_visible() and p.get_transform() is not None:
            v = p.get_path().vertices
            pts.append(p.get_transform().transform(v))
    pts = [p for p in pts if len(p)]
    return np.concatenate(pts) if pts else np.empty((0, 2))


def _legends(fig) -> list[Any]:
    return [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)


# ---------------------------------------------------------------------------------------
# Every figure


@pytest.mark.parametrize("fig_id", SIMULATED)
def test_every_figure_writes_a_caption_paragraph(quick, fig_id: str):
    rep, drawn = quick[fig_id]
    pngs = [f for f in rep.files if f.suffix == ".png"]
    assert pngs
    for png in pngs:
        cap = plots.caption_path(png)
        assert cap.exists(), f"no caption beside {png.name}"
        assert cap in rep.files, "the caption is among the files the reproduction lists"
        text = cap.read_text().strip()
        assert len(text) > 150 and "\n" not in text, text
    assert all(c for _, _, c in drawn), "every save() of a reproduction passes a caption"


@pytest.mark.parametrize("fig_id", SIMULATED)
def test_no_legend_covers_data(quick, fig_id: str):
    for fig, path, _ in quick[fig_id][1]:
        _draw(fig)
        points = np.concatenate([_display_points(ax) for ax in _data_axes(fig)])
        for leg in _legends(fig):
            box = leg.get_window_extent()
            inside = (
                (points[:, 0] > box.x0 + 1)
                & (points[:, 0] < box.x1 - 1)
                & (points[:, 1] > box.y0 + 1)
                & (points[:, 1] < box.y1 - 1)
            )
            assert not inside.any(), (
                f"{path.name}: the legend {[t.get_text() for t in leg.get_texts()][:3]} covers"
                f" {inside.sum()} data points, e.g. {points[inside][:3]}"
            )


@pytest.mark.parametrize("fig_id", SIMULATED)
def test_text_is_readable_and_on_the_canvas(quick, fig_id: str):
    for fig, path, _ in quick[fig_id][1]:
        _draw(fig)
        canvas = fig.bbox
        for t in fig.findobj(Text):
            if not t.get_visible() or not t.get_text().strip():
                continue
            assert t.get_fontsize() >= 8, f"{path.name}: {t.get_text()!r} at {t.get_fontsize()} pt"
        title = fig._suptitle
        if title is not None:
            box = title.get_window_extent()
            assert box.x0 >= canvas.x0 - 1 and box.x1 <= canvas.x1 + 1, (
                f"{path.name}: the title runs off the canvas: {title.get_text()!r}"
            )


# ---------------------------------------------------------------------------------------
# Item 13, one by one


def _step_lines(ax) -> list[Line2D]:
    """The lines drawn through data (not error-bar markers, not reference lines)."""
    return [
        ln
        for ln in ax.get_lines()
        if ln.get_linestyle() not in ("None", "none", "")
        and ln.get_transform() == ax.transData
        and len(ln.get_xdata()) > 1
    ]


def test_fig4_lines_stop_where_sizes_were_not_run(quick):
    fig = _figure(quick, "mmsys-fig4")
    step = 10.0  # kB: the PS sweep; the byte queues ran at 10, 20, 40, 60, 100 kB
    broken = 0
    for ax in _data_axes(fig)[:2]:
        for ln in _step_lines(ax):
            x = np.asarray(ln.get_xdata(), dtype=float)
            y = np.asarray(ln.get_ydata(), dtype=float)
            ok = np.isfinite(x) & np.isfinite(y)
            # Between two drawn neighbours (no NaN between them) the gap is one step.
            for a, b in zip(range(len(x) - 1), range(1, len(x)), strict=True):
                if ok[a] and ok[b]:
                    assert x[b] - x[a] <= 1.5 * step + 1e-9, (x[a], x[b])
            broken += int((~ok).any())
    assert broken >= 2, "the FB lines carry NaN breaks across 20-40, 40-60, 60-100 kB"


def test_fig4_and_fig6_show_zero_loss_above_the_axis(quick):
    for fig_id in ("mmsys-fig4", "mmsys-fig6a", "mmsys-fig6b", "mmsys-adsl2-loss"):
        fig = _figure(quick, fig_id)
        ax = _data_axes(fig)[0]
        lo, hi = ax.get_ylim()
        assert lo < 0 < hi and -lo >= 0.01 * hi, f"{fig_id}: y from {lo} (0 must show whole)"
        # FB-strict's ~0 loss is drawn and inside the axes.
        strict = [ln for a in _data_axes(fig) for ln in a.get_lines() if ln.get_color() in ("C0",)]
        if fig_id != "mmsys-adsl2-loss":
            ys = np.concatenate([np.asarray(ln.get_ydata(), float) for ln in strict])
            ys = ys[np.isfinite(ys)]
            assert len(ys) and ys.min() >= lo and np.isclose(ys.min(), 0, atol=0.5)


def test_fig6_quick_band_says_min_max_over_its_trials(quick):
    rep, _ = quick["mmsys-fig6a"]
    trials = int(Store(rep.store).query("SELECT max(rep) + 1 AS n FROM summary").n[0])
    fig = _figure(quick, "mmsys-fig6a")
    labels = [t.get_text() for leg in _legends(fig) for t in leg.get_texts()]
    band = [lab for lab in labels if "median" not in lab]
    assert band and all(f"min-max over {trials} trials" in lab for lab in band), labels
    assert not any("5-95" in lab for lab in [*labels, fig._suptitle.get_text()])


class _FakeStore:
    """Enough of a Store for a drawing function that reads one summary query."""

    def __init__(self, df: pd.DataFrame):
        self.df = df

    def query(self, sql: str) -> pd.DataFrame:
        return self.df

    def tables(self) -> list[str]:
        return ["summary"]


def test_fig6_band_is_5_95_only_with_enough_trials(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    rows = [
        {"rule": rule, "qb": qb, "loss": rng.uniform(0, 0.03 if rule == "fb-loose" else 0.002)}
        for rule in ("fb-loose", "fb-strict")
        for qb in np.arange(52500, 54001, 30)
        for _ in range(25)
    ]
    drawn: Drawn = []
    capture_saves(monkeypatch, drawn)
    fine_sweep("cubic")(_FakeStore(pd.DataFrame(rows)), tmp_path / "f6", "test")
    fig = _draw(drawn[0][0])
    labels = [t.get_text() for leg in _legends(fig) for t in leg.get_texts()]
    assert any("5-95 % over 25 trials" in lab for lab in labels), labels
    assert spread_text(3) == "min-max over 3 trials"
    assert spread_text(1) == "1 trial: no spread"


def test_fig3_y_axis_spans_the_data_and_marks_the_capacity(quick):
    for fig_id, link in (("mmsys-fig3a", "adsl1"), ("mmsys-fig3b", "adsl2")):
        fig = _figure(quick, fig_id)
        ax = _data_axes(fig)[0]
        cap = capacity(link) / 1e6
        lo, hi = ax.get_ylim()
        assert lo > 0.5 * cap, f"{fig_id}: y from {lo}, not from the data"
        assert lo < cap < hi
        caps = [ln for ln in ax.get_lines() if "capacity" in ln.get_label()]
        assert caps and np.allclose(caps[0].get_ydata(), cap)
        # Every median and bar end is inside the axes.
        for ln in _step_lines(ax):
            y = np.asarray(ln.get_ydata(), float)
            assert np.nanmin(y) >= lo and np.nanmax(y) <= hi


def test_fig7_bound_is_off_the_boxes_and_named_once(quick):
    fig = _figure(quick, "mmsys-fig7")
    assert not any(ax.get_legend() for ax in fig.axes), "one legend, below the panels"
    for ax in _data_axes(fig):
        bound = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
        assert bound and ax.get_ylim()[1] > 1.05 * bound[0].get_ydata()[0]


def test_huebner_owd_queue_svg_is_small(quick):
    rep, drawn = quick["huebner-owd-queue"]
    svg = [f for f in rep.files if f.suffix == ".svg"]
    assert svg and svg[0].stat().st_size < 300_000, svg[0].stat().st_size
    fig = drawn[0][0]
    dense = [c for ax in fig.axes for c in ax.collections if len(c.get_offsets()) > 1000]
    assert dense and all(c.get_rasterized() for c in dense)


def test_huebner_cdf_names_each_setups_loss_and_levels_off_there(quick):
    rep, drawn = quick["huebner-cdf"]
    fig = _draw(drawn[0][0])
    s = Store(rep.store).query(
        "SELECT down_rate_bps AS rate, tcp0_cc AS cc, tcp0_profile AS p, cbr0_loss_rate AS loss"
        " FROM summary WHERE tag_bdp_fraction = 1 AND abs(rtt_s - 0.08) < 1e-6"
    )
    axes = _data_axes(fig)
    assert len(axes) == s.rate.nunique()
    for ax, (rate, g) in zip(axes, s.groupby("rate"), strict=True):
        assert f"{rate / 1e6:g} Mbit/s" in ax.get_title()
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        for r in g.itertuples():
            want = f"{r.cc} ({r.p}): {r.loss * 100:.1f} % lost"
            assert want in texts, (want, texts)
            line = next(ln for ln in ax.get_lines() if ln.get_label() == want)
            # The curve ends at 1 - loss (loss over the packets whose fate is known).
            assert abs(np.asarray(line.get_ydata())[-1] - (1 - r.loss)) < 2e-3
    lossy = s[(s.rate == s.rate.min()) & (s.loss > 0)]
    dotted = [ln for ln in axes[0].get_lines() if ln.get_linestyle() == ":"]
    assert len(dotted) == len(lossy), "a dotted level-off for each set-up that lost packets"


def _parris_two_trials(tmp_path_factory) -> Path:
    from collateral.experiment import load_experiment
    from collateral.runner import run_experiment

    out = tmp_path_factory.mktemp("parris") / "parris"
    exp = load_experiment(
        experiment_path("parris-cbt"), [("experiment.name", "parris"), ("experiment.trials", 2)]
    )
    run_experiment(exp, out, workers=0, progress=False)
    return out


def test_parris_multimedia_bars_carry_the_trials_spread(tmp_path_factory, monkeypatch):
    store = Store(_parris_two_trials(tmp_path_factory))
    drawn: Drawn = []
    capture_saves(monkeypatch, drawn)
    stem = store.path / "figures" / "parris-multimedia"
    stem.parent.mkdir(exist_ok=True)
    parris_multimedia(store, stem, "test")
    fig = _draw(drawn[0][0])
    per = _blast_per_trial(store)
    for ax, col, scale in zip(
        fig.axes, ("drop_tagged", "lat_tagged", "thr_tcp"), (100, 1e3, 1e-6), strict=True
    ):
        assert ax.get_axisbelow() is True, "gridlines behind the bars"
        bars = [p for p in ax.patches if isinstance(p, Patch) and p.get_height() != 0]
        assert bars
        errs = [c for c in ax.collections if isinstance(c, LineCollection)]
        assert errs, "error bars drawn"
        segs = errs[0].get_segments()
        g = per[col].groupby(level="discipline")
        names = [t.get_text() for t in ax.get_xticklabels()]
        lo, hi = g.min().reindex(names) * scale, g.max().reindex(names) * scale
        for seg, a, b in zip(segs, lo, hi, strict=True):
            ys = sorted(float(v) for v in np.asarray(seg)[:, 1])
            assert np.isclose(ys[0], a) and np.isclose(ys[-1], b)
    assert "min-max over 2 trials" in fig._suptitle.get_text()


def test_steps_compact_and_break_gaps():
    t = np.arange(8.0)
    y = np.array([1, 1, 1, 2, 2, 3, 3, 3], dtype=float)
    tc, yc = plots.steps_compact(t, y)
    assert list(tc) == [0, 3, 5, 7] and list(yc) == [1, 2, 3, 3]
    x, _ = plots.break_gaps([10, 20, 40, 60, 70], [1, 2, 3, 4, 5])
    assert np.isnan(x).sum() == 2 and list(np.flatnonzero(np.isnan(x))) == [2, 4]


def test_save_writes_the_caption_beside_the_figure(tmp_path):
    fig = style.plt.figure()
    files = plots.save(fig, tmp_path / "a.png", svg=True, caption="One\n  paragraph. ")
    assert [f.name for f in files] == ["a.png", "a.svg", "a.caption.txt"]
    assert (tmp_path / "a.caption.txt").read_text() == "One paragraph.\n"
    fig = style.plt.figure()
    assert [f.name for f in plots.save(fig, tmp_path / "b.svg")] == ["b.svg"]
