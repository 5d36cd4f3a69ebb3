"""Drawing helpers every figure shares: a y axis that shows 0 whole or is marked as cut,
lines that break where nothing was sampled, step series without repeated samples."""

from __future__ import annotations

from typing import Any

import numpy as np


def floor_at_zero(ax: Any, top: float | None = None, margin: float = 0.04) -> None:
    """Starts the y axis a little below 0 (``margin`` of the range) so markers, bars'
    ends and bands at exactly 0 show whole instead of being cut by the axis, and draws
    the 0 line. ``top``: the upper limit (default: matplotlib's)."""
    hi = ax.get_ylim()[1] if top is None else float(top)
    if not np.isfinite(hi) or hi <= 0:
        hi = 1.0
    ax.set_ylim(-margin * hi, hi)
    ax.axhline(0.0, color="0.4", lw=0.6, zorder=1.5)


def mark_cut(ax: Any) -> None:
    """Marks a y axis that does not start at 0 as cut: two slanted strokes across the
    foot of its left spine (the usual sign of a broken axis), so a difference drawn on
    a narrow range is not read as a ratio."""
    kw = {"transform": ax.transAxes, "color": "0.15", "lw": 1.1, "clip_on": False, "zorder": 5}
    for dy in (0.0, 0.022):
        ax.plot([-0.018, 0.018], [0.03 + dy, 0.05 + dy], **kw)
    ax.plot(
        [0, 0],
        [0.035, 0.067],
        transform=ax.transAxes,
        color="white",
        lw=2.4,
        clip_on=False,
        zorder=4,
    )


def break_gaps(x: Any, y: Any, step: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``x``, ``y`` (sorted by x) with a NaN inserted wherever two neighbouring x are
    more than 1.5 ``step`` apart, so a line drawn through them stops where nothing was
    sampled instead of bridging the gap. ``step`` defaults to the smallest spacing of
    ``x``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2:
        return x, y
    gaps = np.diff(x)
    if step is None:
        pos = gaps[gaps > 0]
        step = float(pos.min()) if len(pos) else 0.0
    cut = np.flatnonzero(gaps > 1.5 * step + 1e-12) + 1 if step > 0 else np.array([], int)
    return np.insert(x, cut, np.nan), np.insert(y, cut, np.nan)


def steps_compact(t: Any, *ys: Any) -> tuple[np.ndarray, ...]:
    """A step series (drawn with ``drawstyle="steps-post"``) without the samples that
    repeat the one before in every ``ys``: the same picture from far fewer points, so
    vector files stay small. Keeps the first and last sample."""
    t = np.asarray(t)
    ys = tuple(np.asarray(y) for y in ys)
    if len(t) < 3:
        return (t, *ys)
    keep = np.zeros(len(t), dtype=bool)
    keep[0] = keep[-1] = True
    for y in ys:
        a, b = y[1:], y[:-1]
        same = (a == b) | (np.isnan(a) & np.isnan(b)) if y.dtype.kind == "f" else a == b
        keep[1:] |= ~same
    return (t[keep], *(y[keep] for y in ys))
