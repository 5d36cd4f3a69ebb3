"""Drawing helpers the studies share: the colour and marker per congestion control,
saving a figure with its caption, and saying in words what a band over trials is.

The studies' figures, drawn from stored results (DuckDB queries over Parquet).

Every figure states its axes with units, a legend, and a title block with the study,
parameters and trial counts; each is written as PNG (150 dpi) and SVG. Ranges are the
studies' own: median with min-max bars over trials (MMSys Fig. 3, 4), median with a
5-95 % envelope over 30 trials (Fig. 6), box plots (Fig. 7), CDFs and scatter plots
(Huebner 2008).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..plot.style import save

CC_STYLE = {"newreno": ("C0", "o"), "cubic": ("C3", "s"), "htcp": ("C2", "^"), "bbr": ("C4", "D")}


def save_with_caption(fig: Any, stem: Path, caption: str | None = None) -> list[Path]:
    """PNG and SVG at ``stem``, and ``caption`` (what the figure shows, one paragraph)
    in ``<stem>.caption.txt``."""
    return save(fig, stem, svg=True, caption=caption)


def trials_word(n: int) -> str:
    return f"{n} trial" + ("" if n == 1 else "s")


def spread_text(n: int, q: tuple[float, float] = (0.05, 0.95)) -> str:
    """What a band or bar over ``n`` trials per point is: a percentile range only when
    there are enough trials for it to mean that (20 or more for 5-95 %), else the
    min-max range it reduces to."""
    lo, hi = q
    if n >= 1 / max(min(lo, 1 - hi), 1e-9):
        return f"{lo * 100:g}-{hi * 100:g} % over {trials_word(n)}"
    return f"min-max over {trials_word(n)}" if n > 1 else "1 trial: no spread"
