"""What the MMSys 2011 figures share: the set-up's link rates and CBR flow, the payload
capacity TCP can reach, styles per queue rule, medians over the trials of each sweep
point, and sweep curves drawn without lines across sizes that were not sampled."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.draw import break_gaps
from ...spec import LINK_RATES

if TYPE_CHECKING:
    import pandas as pd


MSS, DATA = 1448, 1500
CBR_BPS = 186 * 8 / 0.020  # one 186-byte packet every 20 ms
LINKS = {k: (float(d), float(u)) for k, (d, u) in LINK_RATES.items()}  # bit/s, the core's
RULE_STYLE = {
    "ps": ("C2", "^", "PS (slots)"),
    "fb-strict": ("C0", "o", "FB-strict"),
    "fb-loose": ("C3", "s", "FB-loose"),
}


def capacity(link: str) -> float:
    """Goodput a bulk flow can reach next to the downstream CBR (payload bit/s)."""
    return (LINKS[link][0] - CBR_BPS) * MSS / DATA


def agg(df: pd.DataFrame, by: list[str], col: str, q: tuple[float, float] = (0.0, 1.0)):
    g = df.groupby(by)[col]
    out = g.median().rename("med").to_frame()
    out["lo"] = g.quantile(q[0])
    out["hi"] = g.quantile(q[1])
    out["n"] = g.size()
    return out.reset_index()


def grid_step(xs: Any) -> float:
    """The sampling step of a figure's x values (all series together): the smallest
    spacing between two distinct sampled values."""
    u = np.unique(np.asarray(list(xs), dtype=float))
    d = np.diff(u)
    return float(d.min()) if len(d) else 0.0


def marks_and_lines(ax: Any, x: Any, med: Any, lo: Any, hi: Any, step: float, **kw: Any) -> None:
    """Median markers with lo-hi bars at the sampled x, joined by a line only between
    neighbours at most 1.5 ``step`` apart: no line across sizes that were not sampled."""
    x, med = np.asarray(x, dtype=float), np.asarray(med, dtype=float)
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    color = kw.pop("color")
    ax.errorbar(
        x,
        med,
        yerr=[med - lo, hi - med],
        color=color,
        ls="none",
        capsize=3,
        zorder=3,
        clip_on=False,
        **kw,
    )
    bx, by = break_gaps(x, med, step)
    ax.plot(bx, by, color=color, lw=1.5, zorder=2.5)
