"""How the report shows numbers: a column's display unit (ms or s, Mbit/s or kbit/s,
kB, %) from its name and typical value, decimals for a column, and the thousands-
separated text of a value ("—" for nothing)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Summary fields that are shares (0-1) and shown as %. The core's schema gives them no
#: unit; it could declare one (then this list goes).
_SHARES = ("loss_rate", "over_100ms", "over_500ms", "over_1000ms", "drop_rate")


@dataclass(frozen=True)
class Unit:
    """How a column's values are shown: the label's unit and the factor from the stored
    (SI) value."""

    label: str = ""
    scale: float = 1.0


def unit(name: str, values: Any) -> Unit:
    """The display unit of a stored column, from the schema's unit (metrics) or the
    parameter naming convention (``_s``, ``_bps``, ``_bytes``): seconds as ms when the
    values are under a second, bit/s as Mbit/s or kbit/s, bytes as kB."""
    from .. import schema

    col = schema.column(name)
    unit = col["unit"] if col else ""
    if col is None:
        unit = (
            "s"
            if name.endswith("_s")
            else "bit/s"
            if name.endswith("_bps")
            else "B"
            if name.endswith("_bytes")
            else ""
        )
    if any(name.endswith("_" + s) or name == s for s in _SHARES):
        return Unit("%", 100.0)
    big = _typical(values)
    if unit == "s":
        return Unit("ms", 1e3) if big < 1 else Unit("s")
    if unit == "bit/s":
        return Unit("Mbit/s", 1e-6) if big >= 1e6 else Unit("kbit/s", 1e-3)
    if unit == "B":
        return Unit("kB", 1e-3) if big >= 1e4 else Unit("B")
    return Unit(unit)


def _typical(values: Any) -> float:
    """The median magnitude of the finite non-zero values (0 when there are none)."""
    xs = sorted(abs(float(v)) for v in _finite(values) if v != 0)
    return xs[len(xs) // 2] if xs else 0.0


def _finite(values: Any) -> list[float]:
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def decimals(values: Any) -> int:
    """Decimals for a column: none for whole numbers, else three significant digits of
    its typical value, at most 4."""
    if all(float(v).is_integer() for v in _finite(values)):
        return 0
    t = _typical(values)
    if t == 0 or t >= 100:
        return 0
    return min(4, max(0, 2 - math.floor(math.log10(t))))


def is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(v, float) and not math.isfinite(v)


def fmt_number(v: Any, decimals: int) -> str:
    """``v`` with thousands separators and fixed decimals; "—" for nothing (None, NaN)."""
    if is_missing(v):
        return "—"
    if isinstance(v, bool) or not isinstance(v, int | float):
        try:
            v = float(v)
        except (TypeError, ValueError):
            return str(v)
    if not math.isfinite(float(v)):
        return "—"
    return f"{float(v):,.{decimals}f}"
