"""The words of a store figure: its title's head, the line saying what each point is and
pools over, the ``where`` filters, and the caption paragraph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from .measure import Measure
    from .param import Param


def caption(meta: Mapping[str, Any], tab: pd.DataFrame) -> str:
    n = tab["n"]
    trials = f"{n.min()}" if n.min() == n.max() else f"{n.min()}-{n.max()}"
    what = "median" if meta["stat"] == "median" else "mean"
    band = "95 % bootstrap interval" if meta["interval"] == "bootstrap" else "min-max"
    text = f"{what} of {trials} trials per point, {band}"
    if n.max() == 1:  # no centre and no spread to speak of
        text = "1 trial per point, no interval"
    if meta["pooled"]:
        text += f"; pooled over {', '.join(meta['pooled'])}"
    off = unplaced_text(meta)
    if off:
        text += f"; {off}"
    if meta.get("zoom"):
        text += "; y axis cut (not from 0)"
    return text


def unplaced_text(meta: Mapping[str, Any]) -> str:
    """What the dashed levels are: the points without an x value (AQMs on a drop-tail
    limit axis), named by their hue; "" when every point has one."""
    rows, px, ph = meta.get("unplaced"), meta["x"], meta["hue"]
    if rows is None or rows.empty:
        return ""
    if ph is None or "hue" not in rows:
        who = f"{len(rows)} point{'s' if len(rows) > 1 else ''}"
    else:
        who = ", ".join(dict.fromkeys(ph.show(v) for v in rows["hue"]))
    return f"{who}: no {px.name}, a dashed level across the axis"


def title_head(m: Measure, px: Param) -> str:
    head = f"{m.label}{f' ({m.subject})' if m.subject else ''} vs {px.name}"
    return head[:1].upper() + head[1:]


def where_text(where: Any) -> str:
    if not where:
        return ""
    items = where.items() if isinstance(where, Mapping) else (str(w).split("=", 1) for w in where)
    return ", ".join(f"{k}={v}" for k, v in items)


def caption_text(meta: Mapping[str, Any], tab: pd.DataFrame) -> str:
    """One paragraph saying what the figure shows (for a report's caption)."""
    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    unit = f" in {m.unit}" if m.unit else ""
    text = f"{m.meaning[:1].upper()}{m.meaning[1:]}{unit}, against {px.label}"
    if ph is not None:
        text += f", a line per {ph.name}"
    if pf is not None:
        text += f", a panel per {pf.name}"
    text += f"; {caption(meta, tab)}"
    w = where_text(meta["where"])
    if w:
        text += f"; only trials with {w}"
    if px.note and px.numeric:
        text += f". {px.note}"
    return text + "."
