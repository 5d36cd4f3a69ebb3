"""The what-if figure: per queue, the RPM (left) and the call's 95th-percentile delay
each way (right), the inferred queue first."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def draw(rows: list[dict[str, Any]], path: Path) -> list[Path]:
    """Draws the figure to ``path`` as the plots are saved (its directory made; PNG
    without a suffix); returns the files written."""
    import numpy as np

    from ..plot.style import plt, save

    names = [r["queue"] for r in rows]
    x = np.arange(len(rows))
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    rpm = [r["rpm"] or 0 for r in rows]
    a.bar(x, rpm, color=["0.55", *["C0"] * (len(rows) - 1)])
    for i, r in enumerate(rows):
        a.annotate(str(r["bufferbloat_grade"] or ""), (i, rpm[i]), ha="center", va="bottom")
    a.set_ylabel("RPM under RRUL (higher is better)")
    a.set_title("Responsiveness, with the bufferbloat grade")
    w = 0.38
    for k, (d, c) in enumerate((("down", "C1"), ("up", "C2"))):
        v = [(r[f"call_{d}_delay_p95_s"] or 0) * 1e3 for r in rows]
        b.bar(x + (k - 0.5) * w, v, w, color=c, label=f"call {d}")
    b.set_ylabel("call delay p95 (ms, above propagation)")
    b.set_title("A G.711 call beside the load")
    b.legend(frameon=False)
    for ax in (a, b):
        ax.set_xticks(x, names, rotation=20, ha="right")
        ax.spines[["top", "right"]].set_visible(False)
    return save(fig, path)
