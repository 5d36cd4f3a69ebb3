"""Display units of stored columns (s -> ms, bit/s -> Mbit/s, bytes -> kB, rates -> %)
and numbers as the figures write them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Unit:
    name: str  # "ms", "Mbit/s", "%", "kB", "" ...
    scale: float  # human value = stored value * scale


def unit_for(column: str, declared: str | None, values: pd.Series | None = None) -> Unit:
    """The human unit of a stored column: s -> ms, bit/s -> Mbit/s (kbit/s when small),
    bytes -> kB (B for packet sizes), rates and shares -> %."""
    peak = None
    if values is not None:
        v = values.to_numpy(dtype=float, na_value=np.nan)
        peak = float(np.nanmax(np.abs(v))) if np.isfinite(v).any() else None
    if declared == "s" or column.endswith("_s"):
        if peak is not None and peak >= 10 and not column.startswith(("cbr", "web")):
            return Unit("s", 1.0)
        return Unit("ms", 1e3)
    if declared == "bit/s" or column.endswith("_bps"):
        if peak is not None and peak < 1e6:
            return Unit("kbit/s", 1e-3)
        return Unit("Mbit/s", 1e-6)
    if declared == "B" or column.endswith("_bytes"):
        if column.endswith(("packet_bytes", "_size")):
            return Unit("B", 1.0)
        return Unit("kB", 1e-3)
    if column.endswith(("loss_rate", "_share")) or re.search(r"_over_\d+ms$", column):
        return Unit("%", 100.0)
    return Unit("", 1.0)


def scaled(v: Any, scale: float) -> Any:
    """``v`` in the human unit: divided by 1e6, 1e3 (as one would write it), or times
    1e3 or 100."""
    return v / round(1 / scale) if scale < 1 else v * scale


def with_unit(label: str, unit: str) -> str:
    return f"{label} ({unit})" if unit else label


def num_text(v: float) -> str:
    if v == int(v) and abs(v) < 1e12:
        return str(int(v))
    return f"{v:.4g}"
