"""The plotly renderer of store figures (plotly_figure()): the same points as figure(),
whose hover shows each point's value, interval and number of trials."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..display import fmt_tick
from .aggregate import Interval, Stat, build_table, eq, from_zero
from .labels import caption, title_head, where_text
from .sweep import load_data

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go


def plotly_figure(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
    zoom: bool = False,
) -> go.Figure:
    """The interactive form of :func:`figure`: a plotly figure whose hover shows each
    point's value, interval and trial count."""
    data = load_data(store_dir)
    tab, meta = build_table(data, x, y, hue, facet, stat, interval, where)
    return draw_plotly(tab, {**meta, "zoom": zoom}, title)


def draw_plotly(tab: pd.DataFrame, meta: Mapping[str, Any], title: str | None) -> go.Figure:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    facets = meta["facets"] if pf is not None else [None]
    hues = meta["hues"] if ph is not None else [None]
    ncol = min(3, len(facets))
    nrow = math.ceil(len(facets) / ncol)
    fig = make_subplots(
        rows=nrow,
        cols=ncol,
        shared_yaxes=True,
        subplot_titles=[f"{pf.name} = {pf.show(f)}" for f in facets] if pf is not None else None,
    )
    band = "95 % CI" if meta["interval"] == "bootstrap" else "min-max"
    unit = f" {m.unit}" if m.unit else ""
    xs = meta["xs"]
    for i, fv in enumerate(facets):
        sub = tab if pf is None else tab[eq(tab["facet"], fv)]
        for j, hv in enumerate(hues):
            s = sub if ph is None else sub[eq(sub["hue"], hv)]
            name = ph.show(hv) if ph is not None else m.name
            color = _PALETTE[j % len(_PALETTE)]
            if px.numeric:  # points without an x: a dashed level across the axis
                off, s = s[s["x"].isna()], s[s["x"].notna()]
                for _, r in off.iterrows():
                    legend = i == 0 and ph is not None and s.empty
                    for trace in _level(go, r, xs, name, color, legend, px.name):
                        fig.add_trace(trace, row=i // ncol + 1, col=i % ncol + 1)
            if s.empty:
                continue
            pos = {v: k for k, v in enumerate(xs)}
            idx = np.array([pos[v] for v in s["x"]])
            # None between values that skip a sampled x of the grid: no line bridges it.
            xv: list[Any] = []
            yv: list[Any] = []
            lo: list[Any] = []
            hi: list[Any] = []
            cd: list[Any] = []
            for k, (_, r) in enumerate(s.iterrows()):
                if k and idx[k] - idx[k - 1] != 1:
                    xv.append(None)
                    yv.append(None)
                    lo.append(None)
                    hi.append(None)
                    cd.append([None] * 4)
                xv.append(px.show(r["x"]) if not px.numeric else float(r["x"]))
                yv.append(r["value"])
                lo.append(max(0.0, r["value"] - r["lo"]))
                hi.append(max(0.0, r["hi"] - r["value"]))
                cd.append([int(r["n"]), r["lo"], r["hi"], px.show(r["x"])])
            fig.add_trace(
                go.Scatter(
                    x=xv,
                    y=yv,
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=(i == 0 and ph is not None),
                    connectgaps=False,
                    line={"color": color, "width": 1.6},
                    marker={"size": 7},
                    error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True},
                    customdata=cd,
                    hovertemplate=(
                        (f"{ph.name} = {ph.show(hv)}<br>" if ph is not None else "")
                        + f"{px.name} = %{{customdata[3]}}<br>"
                        + f"{meta['stat']}: %{{y:.4g}}{unit}<br>"
                        + f"{band}: %{{customdata[1]:.4g}} to %{{customdata[2]:.4g}}{unit}<br>"
                        + "trials: %{customdata[0]}<extra></extra>"
                    ),
                ),
                row=i // ncol + 1,
                col=i % ncol + 1,
            )
    head = title or title_head(m, px)
    sub = caption(meta, tab)
    w = where_text(meta["where"])
    fig.update_layout(
        title={"text": f"{head}<br><sup>{meta['name']}: {sub}{'; ' + w if w else ''}</sup>"},
        legend_title_text=ph.name if ph is not None else None,
        template="plotly_white",
        height=max(460, 340 * nrow + 140),
        hovermode="closest",
    )
    xtitle = px.label + (f"<br><sup>{px.note}</sup>" if px.note and px.numeric else "")
    for k in range(len(facets)):
        r, c = k // ncol + 1, k % ncol + 1
        fig.update_xaxes(title_text=xtitle if r == nrow else None, row=r, col=c)
        if px.numeric and 1 < len(xs) <= 12 and np.min(np.diff(xs)) > (xs[-1] - xs[0]) / 20:
            fig.update_xaxes(tickvals=xs, ticktext=[fmt_tick(float(v)) for v in xs], row=r, col=c)
        if not px.numeric:
            fig.update_xaxes(
                type="category",
                categoryorder="array",
                categoryarray=[px.show(v) for v in xs],
                row=r,
                col=c,
            )
        fig.update_yaxes(title_text=m.axis_label if c == 1 else None, row=r, col=c)
        if from_zero(tab) and not meta.get("zoom"):  # amounts are read against 0
            fig.update_yaxes(rangemode="tozero", row=r, col=c)
    return fig


def _level(
    go: Any, r: Any, xs: list[Any], name: str, color: str, legend: bool, xname: str
) -> list[Any]:
    """A point without an x value: its median as a dashed line across the sampled x,
    its interval a shaded band behind it."""
    a, b = (xs[0], xs[-1]) if xs else (0.0, 1.0)
    text = f"{name}: no {xname}<br>median {r['value']:.4g}, {r['lo']:.4g} to {r['hi']:.4g}"
    band = go.Scatter(
        x=[a, b, b, a],
        y=[r["lo"], r["lo"], r["hi"], r["hi"]],
        fill="toself",
        fillcolor=color,
        opacity=0.15,
        mode="none",
        legendgroup=name,
        showlegend=False,
        hoverinfo="skip",
    )
    line = go.Scatter(
        x=[a, b],
        y=[r["value"], r["value"]],
        mode="lines",
        name=name,
        legendgroup=name,
        showlegend=legend,
        line={"color": color, "width": 1.6, "dash": "dash"},
        hovertemplate=f"{text}<br>trials: {int(r['n'])}<extra></extra>",
    )
    return [band, line]


_PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]  # (matplotlib's: the PNG and the HTML agree)
