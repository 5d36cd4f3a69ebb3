"""The evidence as a figure: one row per candidate, ranked as the table is, with three
panels sharing the rows — packets late or lost, the p95 added delay of each direction,
and the bulk flows' utilisation — each a median with the trials' range as whiskers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .model import Advice
from .text import want

#: Delays below this (s) are drawn at it: the log axis needs a floor.
FLOOR_S = 1e-4
_MARKS = {"down": "o", "up": "^"}


def plot(advice: Advice, path: str | Path) -> list[Path]:
    """Writes :func:`figure` to ``path`` (PNG, SVG, ... by its suffix)."""
    from ..plot.style import save

    return save(figure(advice), Path(path))


def figure(advice: Advice) -> Any:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..plot.style import STYLE, plt

    rows = advice.ranked
    n = len(rows)
    best, ties = advice.best, advice.ties()
    with plt.rc_context(STYLE):
        fig, (late_ax, delay_ax, util_ax) = plt.subplots(
            1, 3, sharey=True, figsize=(11, 1.7 + 0.27 * n), layout="constrained",
            gridspec_kw={"width_ratios": [1, 1.4, 1]},
        )  # fmt: skip
        ys = list(range(n))[::-1]  # the best at the top
        for ax in (late_ax, delay_ax, util_ax):
            ax.axhspan(ys[0] - 0.5, ys[0] + 0.5, color="C2", alpha=0.15, lw=0)
            ax.grid(axis="x", alpha=0.3)
        for y, o in zip(ys, rows, strict=True):
            color = "k" if o.meets else "0.6"
            lo, hi = o.late_range
            late_ax.errorbar(
                100 * o.late, y, xerr=[[100 * (o.late - lo)], [100 * (hi - o.late)]],
                fmt="s", color=color, ms=4, capsize=2,
            )  # fmt: skip
            dlo, dhi = o.delay_range
            worse = o.delay
            for d, v in o.delay_s.items():
                x = max(v, FLOOR_S) * 1e3 if math.isfinite(v) else math.nan
                delay_ax.plot(
                    x, y, _MARKS[d], color=color, ms=5, mfc="none" if d == "up" else color
                )
            if math.isfinite(worse) and math.isfinite(dhi):
                delay_ax.plot(
                    [max(dlo, FLOOR_S) * 1e3, max(dhi, FLOOR_S) * 1e3], [y, y], color=color, lw=1
                )
            ulo, uhi = o.utilisation_range
            util_ax.errorbar(
                100 * o.utilisation, y,
                xerr=[[100 * (o.utilisation - ulo)], [100 * (uhi - o.utilisation)]],
                fmt="o", color=color, ms=4, capsize=2,
            )  # fmt: skip
        labels = []
        for o in rows:
            mark = "★ " if o is best else ("= " if o in ties else "")
            labels.append(mark + o.candidate.label)
        late_ax.set_yticks(ys, labels, fontsize=8)
        for tick, o in zip(late_ax.get_yticklabels(), rows, strict=True):
            tick.set_color("k" if o.meets else "0.5")
        late_ax.set_ylim(-0.7, n - 0.3)
        late_ax.axvline(100 * advice.target, color="C3", ls="--", lw=1)
        late_ax.set_xscale("symlog", linthresh=max(100 * advice.target, 0.1))
        late_ax.set_xlim(0, 100)
        call = advice.app == "video"
        late_ax.set_xlabel(
            f"{'frames late or incomplete' if call else 'late or lost'} (%)\n"
            f"dashed: the target, {advice.target:.0%}"
        )
        delay_ax.set_xscale("log")
        what = "p95 frame delay, capture to arrival" if call else "p95 added one-way delay"
        delay_ax.set_xlabel(f"{what} (ms)\n● down, △ up; below {FLOOR_S * 1e3:g} ms drawn at it")
        plain = FuncFormatter(lambda v, _: f"{v:g}")
        # 1-2-5 ticks, labelled plainly: a narrow decade gets no 6×10¹ minor labels.
        delay_ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        delay_ax.xaxis.set_minor_formatter(NullFormatter())
        for ax in (late_ax, delay_ax):
            ax.xaxis.set_major_formatter(plain)
        util_ax.set_xlim(0, 100)
        which = " and ".join(advice.rates)
        util_ax.set_xlabel(f"bulk goodput (%)\nof the {which} rate")
        fig.suptitle(
            f"{advice.app}: {want(advice)}\n{advice.setup}\nmedians of {advice.trials}"
            " trial(s), whiskers min–max; grey: misses the target; shaded: recommended",
            fontsize=9,
        )
        return fig
