"""The matplotlib renderer of store figures (figure()): points with error bars or bands,
a line per hue, a panel per facet."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..display import fmt_tick
from .aggregate import Interval, Stat, build_table, eq, from_zero
from .draw import floor_at_zero, mark_cut
from .errors import api_names
from .labels import caption, caption_text, title_head, where_text
from .sweep import PlotData, load_data

if TYPE_CHECKING:
    import matplotlib.figure
    import pandas as pd

#: Above this many x values the intervals are drawn as bands, not bars.
DENSE = 40


@api_names
def figure(
    store_dir: str | Path | PlotData,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
    zoom: bool = False,
) -> matplotlib.figure.Figure:
    """A matplotlib figure of ``y`` against ``x`` (see :mod:`collateral.plot`); the
    plotted numbers are in ``fig.collateral_table`` (:func:`table`'s frame). An amount
    is drawn from 0; with ``zoom``, its axis fits the data and is marked as cut."""
    data = load_data(store_dir)
    tab, meta = build_table(data, x, y, hue, facet, stat, interval, where)
    return draw_mpl(tab, {**meta, "zoom": zoom}, title)


def draw_mpl(
    tab: pd.DataFrame, meta: Mapping[str, Any], title: str | None
) -> matplotlib.figure.Figure:
    from .style import STYLE, plt

    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    facets = meta["facets"] if pf is not None else [None]
    hues = meta["hues"] if ph is not None else [None]
    xs = meta["xs"]
    ncol = min(3, len(facets))
    nrow = math.ceil(len(facets) / ncol)
    cats = not px.numeric
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            nrow,
            ncol,
            figsize=(5.2 * ncol + (2.2 if ph is not None else 0.4), 3.9 * nrow + 0.8),
            sharey=True,
            squeeze=False,
            layout="constrained",
        )
        for i, fv in enumerate(facets):
            ax = axes[i // ncol][i % ncol]
            sub = tab if pf is None else tab[eq(tab["facet"], fv)]
            for j, hv in enumerate(hues):
                s = sub if ph is None else sub[eq(sub["hue"], hv)]
                label = ph.show(hv) if ph is not None else None
                color = f"C{j % 10}"
                if not cats:  # points without an x: a level across the axis
                    off, s = s[s["x"].isna()], s[s["x"].notna()]
                    for _, r in off.iterrows():
                        _level(ax, r, color, label if s.empty else None)
                if s.empty:
                    continue
                pos = {v: k for k, v in enumerate(xs)}
                # A line only between neighbouring sampled values of the whole x grid.
                idx = np.array([pos[v] for v in s["x"]])
                xv = idx + (j - (len(hues) - 1) / 2) * 0.08 if cats else s["x"].to_numpy(float)
                yv = s["value"].to_numpy(float)
                lo, hi = s["lo"].to_numpy(float), s["hi"].to_numpy(float)
                gaps = np.flatnonzero(np.diff(idx) != 1) + 1
                dense = not cats and len(xs) > DENSE
                for seg in np.split(np.arange(len(xv)), gaps):
                    if len(seg) > 1 and not cats:  # categories: markers only
                        ax.plot(xv[seg], yv[seg], color=color, lw=1.4, alpha=0.8, zorder=2)
                    if dense:  # the interval as a band: bars would hide each other
                        ax.fill_between(
                            xv[seg], lo[seg], hi[seg], color=color, alpha=0.2, lw=0, zorder=1
                        )
                if dense:
                    ax.plot(xv, yv, "o", ms=2.5, color=color, label=label, zorder=3)
                    continue
                ax.errorbar(
                    xv,
                    yv,
                    yerr=np.vstack([np.clip(yv - lo, 0, None), np.clip(hi - yv, 0, None)]),
                    fmt="o",
                    ms=5,
                    color=color,
                    ecolor=color,
                    capsize=3,
                    lw=0,
                    elinewidth=1.2,
                    label=label,
                    zorder=3,
                )
            if cats:
                ax.set_xticks(range(len(xs)), [px.show(v) for v in xs])
                ax.set_xlim(-0.5, len(xs) - 0.5)
                if sum(len(px.show(v)) for v in xs) > 60:
                    ax.tick_params(axis="x", labelrotation=30)
            elif 1 < len(xs) <= 12 and np.min(np.diff(xs)) > (xs[-1] - xs[0]) / 20:
                ax.set_xticks(xs, [fmt_tick(float(v)) for v in xs])  # the sampled values
            if pf is not None:
                ax.set_title(f"{pf.name} = {pf.show(fv)}")
            if i // ncol == nrow - 1 or i + ncol >= len(facets):
                ax.set_xlabel(px.label)
            if i % ncol == 0:
                ax.set_ylabel(m.axis_label)
        for k in range(len(facets), nrow * ncol):
            axes[k // ncol][k % ncol].set_visible(False)
        if from_zero(tab):  # amounts, rates, delays: read from 0, or the cut marked
            top = np.nanmax(tab[["value", "hi"]].to_numpy(float)) * 1.05
            cut = meta.get("zoom") and axes[0][0].get_ylim()[0] > 0
            for ax in axes.flat[: len(facets)]:
                mark_cut(ax) if cut else floor_at_zero(ax, top if top > 0 else None)
        if ph is not None:
            handles, labels = axes[0][0].get_legend_handles_labels()
            seen = dict(zip(labels, handles, strict=True))
            for ax in axes.flat[1 : len(facets)]:
                for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                    seen.setdefault(lab, h)
            rank = {ph.show(h): k for k, h in enumerate(hues)}  # the hue order, levels too
            names = sorted(seen, key=lambda n: rank.get(n, len(rank)))
            fig.legend([seen[n] for n in names], names, title=ph.name, loc="outside right center")
        head = title or title_head(m, px)
        sub = caption(meta, tab)
        w = where_text(meta["where"])
        text = f"{head}\n{meta['name']}: {sub}" + (f"; {w}" if w else "")
        from . import style

        wrap = getattr(style, "suptitle", None)  # wraps long lines to the figure's width
        try:
            wrap(fig, text, fontsize=11) if wrap else fig.suptitle(text, fontsize=11)
        except Exception:  # pragma: no cover - a helper being reworked: no wrapping
            fig.suptitle(text, fontsize=11)
        if px.note and px.numeric:
            import textwrap

            width = int(fig.get_figwidth() * 13)  # characters of 9 pt text across the figure
            fig.supxlabel(textwrap.fill(px.note, width), fontsize=9, color="0.35")
    fig.collateral_table = tab  # type: ignore[attr-defined]
    fig.collateral_caption = caption_text(meta, tab)  # type: ignore[attr-defined]
    return fig


def _level(ax: Any, row: Any, color: str, label: str | None) -> None:
    """A point without an x value (an AQM on a drop-tail limit axis): its median as a
    dashed line across the axes, its interval shaded."""
    ax.axhline(row["value"], color=color, ls="--", lw=1.4, label=label, zorder=2)
    if row["hi"] > row["lo"]:
        ax.axhspan(row["lo"], row["hi"], color=color, alpha=0.15, lw=0, zorder=1)
