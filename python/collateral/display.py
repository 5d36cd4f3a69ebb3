"""How numbers are shown: display units, number formatting and shortened values.

One leaf module (it imports nothing of the package but the schema, lazily) used by the
CLI's tables, ``query``, the HTML report and the plots alike, so a column reads in the
same unit everywhere. Stored values stay in SI units (s, bit/s, bytes, shares as
fractions); only what is shown is scaled.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: The scale ladders of each stored unit: (smallest value shown in it, name, factor).
_LADDERS: dict[str, tuple[tuple[float, str, float], ...]] = {
    "bit/s": (
        (1e9, "Gbit/s", 1e-9),
        (1e6, "Mbit/s", 1e-6),
        (1e3, "kbit/s", 1e-3),
        (0.0, "bit/s", 1.0),
    ),
    "s": ((1.0, "s", 1.0), (0.0, "ms", 1e3)),
    "B": ((1e9, "GB", 1e-9), (1e6, "MB", 1e-6), (1e3, "kB", 1e-3), (0.0, "B", 1.0)),
}
#: Columns that hold a share (a fraction stored from 0 to 1), shown in per cent.
_SHARE = re.compile(
    r"(^|_)(loss_rate|drop_rate|share|over_\d+ms|over_budget|frames_late|frames_incomplete|discarded)$"
)


@dataclass(frozen=True)
class Unit:
    """How a column's values are shown: the unit's name and the factor from the stored
    value (``Unit("ms", 1e3)``: a stored 0.0123 s shows as 12.3 ms)."""

    name: str = ""
    scale: float = 1.0

    def of(self, v: Any) -> Any:
        """``v`` in this unit: divided by 1e6 or 1e3 as one would write it (so that
        1376540 bit/s is exactly 1.37654 Mbit/s), or times 1e3 or 100."""
        return v / round(1 / self.scale) if self.scale < 1 else v * self.scale

    def label(self, text: str) -> str:
        """An axis or column label with this unit: ``delay p95 (ms)``."""
        return f"{text} ({self.name})" if self.name else text


def stored_unit(column: str) -> str:
    """The unit a result column is stored in: the schema's declaration (metrics, also
    under a flow's common name: ``bytes_delivered``), else
    the suffix of a scenario parameter (``rtt_s``, ``down_rate_bps``,
    ``down_queue_limit_bytes``); ``"%"`` for a share; ``""`` when it has none."""
    if is_share(column):
        return "%"
    from .schema import column as declared
    from .schema import flow_columns

    col = declared(column) or flow_columns().get(column)  # a metric of the flows view
    if col is not None and col["unit"]:
        return str(col["unit"])
    for suffix, unit in (("_bps", "bit/s"), ("_s", "s"), ("_bytes", "B")):
        if column.endswith(suffix):
            return unit
    return ""


def is_share(column: str) -> bool:
    """A share stored as a fraction from 0 to 1 (loss rates, the share of packets over
    a delay budget)."""
    return bool(_SHARE.search(column))


def _rung(unit: str, magnitude: float) -> Unit:
    ladder = _LADDERS.get(unit)
    if ladder is None:
        return Unit("%", 100.0) if unit == "%" else Unit(unit)
    _, name, scale = next(r for r in ladder if magnitude >= r[0])
    return Unit(name, scale)


#: A column's unit when its values are not at hand (a measure's axis before the data):
#: delays in ms, rates in Mbit/s, amounts in kB; packet sizes in B.
_CONVENTIONAL = {"s": Unit("ms", 1e3), "bit/s": Unit("Mbit/s", 1e-6), "B": Unit("kB", 1e-3)}


def column_unit(column: str, values: Iterable[Any] | None = None) -> Unit:
    """One unit for a whole column: the rung of its stored unit's ladder that its
    typical (median) magnitude reaches, so most values read between 1 and 1000 (delays
    of 50 ms in ms, 60 s durations in s, 18 Mbit/s in Mbit/s, packet sizes in B);
    without values, the conventional one (ms, Mbit/s, kB; B for a packet size)."""
    unit = stored_unit(column)
    if values is not None:
        return _rung(unit, typical(values))
    if unit == "B" and column.endswith(("packet_bytes", "_size")):
        return Unit("B", 1.0)
    return _CONVENTIONAL.get(unit) or _rung(unit, 1.0)


def value_unit(v: float, unit: str) -> Unit:
    """The unit one value reads best in alone (a table cell, a message)."""
    return _rung(unit, abs(v))


def typical(values: Any) -> float:
    """The median magnitude of the finite non-zero values (0 when there are none)."""
    a = _numeric_finite(values)
    if a is None:
        xs = sorted(abs(v) for v in finite(values) if v != 0)
        return xs[len(xs) // 2] if xs else 0.0
    import numpy as np

    a = np.abs(a[a != 0])
    if not a.size:
        return 0.0
    k = a.size // 2  # the same element as the sorted list's: a selection, not a sort
    return float(np.partition(a, k)[k])


def _numeric_finite(values: Any) -> Any:
    """A numeric column's finite values as a float array, without a Python loop (a
    60 000-trial store's columns took a second that way); None for anything else, which
    :func:`finite` reads value by value."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind is None or kind not in "biuf":
        return None
    import numpy as np

    if hasattr(values, "to_numpy"):  # pandas, nullable dtypes included: NA -> NaN
        a = values.to_numpy(dtype=float, na_value=np.nan)
    else:
        a = np.asarray(values, dtype=float)
    return a[np.isfinite(a)]


def finite(values: Iterable[Any]) -> list[float]:
    """The values that are finite numbers, as floats (None, NaN, text left out)."""
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def fmt_number(v: float) -> str:
    """Six significant digits without an exponent where one is not needed: 1376540
    bit/s reads 1,376,540, not 1.37654e+06."""
    if v != 0 and (abs(v) >= 1e15 or abs(v) < 1e-4):
        return f"{v:.6g}"
    if abs(v) >= 1e5:
        return f"{v:,.0f}"
    return f"{v:.6g}"


def is_null(v: Any) -> bool:
    """Nothing to show: None, NaN, or pandas' NA and NaT."""
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(v != v)
    except (TypeError, ValueError):
        return False


def decimals(values: Iterable[Any]) -> int:
    """Decimals for a column of numbers: none for whole numbers, else three significant
    digits of its typical value, at most 4."""
    a = _numeric_finite(values)
    if a is None:
        values = list(values)
        whole = all(float(v).is_integer() for v in finite(values))
    else:
        import numpy as np

        whole = bool(np.all(np.floor(a) == a))
    if whole:
        return 0
    t = typical(values)
    if t == 0 or t >= 100:
        return 0
    return min(4, max(0, 2 - math.floor(math.log10(t))))


def fmt_fixed(v: Any, places: int) -> str:
    """``v`` with thousands separators and ``places`` decimals (a table's column);
    "—" for nothing (None, NaN, infinity)."""
    if is_null(v):
        return "—"
    if isinstance(v, bool) or not isinstance(v, int | float):
        try:
            v = float(v)
        except (TypeError, ValueError):
            return str(v)
    if not math.isfinite(float(v)):
        return "—"
    return f"{float(v):,.{places}f}"


def fmt_bps(x: float) -> str:
    """A rate in bit/s in four significant digits of its unit: ``1.366 Mbit/s``."""
    for scale, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if x >= scale:
            return f"{x / scale:.4g} {unit}"
    return f"{x:.0f} bit/s"


def fmt_tick(v: float) -> str:
    """An axis tick: a whole number as one (``64``), else four significant digits."""
    if v == int(v) and abs(v) < 1e12:
        return str(int(v))
    return f"{v:.4g}"


def fmt_cell(v: Any, unit: str | None) -> str:
    """A value in a human unit of its own (18.68 Mbit/s, 0.94 ms, 30 kB) where its
    stored unit is known; other numbers as :func:`fmt_number`; NULL for a missing one."""
    if is_null(v):
        return "NULL"
    # numpy's numbers too: a nullable column's cells (UInt64 with NULL) come as those.
    if unit and isinstance(v, numbers.Real) and not isinstance(v, bool):
        u = value_unit(float(v), unit)
        if u.name != unit or unit in _LADDERS:
            return f"{u.of(float(v)):.4g} {u.name}"
    return fmt_number(v) if isinstance(v, float) else str(v)


def short(value: object, limit: int = 40) -> str:
    """``repr`` cut short, safe for any value: a 5000-character text or a 5000-digit
    number is not echoed back whole."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**limit:
        # str() of a huge int is refused by Python (and would not help): count digits.
        return f"<a number of about {abs(value).bit_length() * 30103 // 100000 + 1} digits>"
    try:
        text = repr(value)
    except Exception:  # pragma: no cover - a repr that fails
        text = f"<{type(value).__name__}>"
    if len(text) <= limit:
        return text
    quote = text[0] if text[:1] in ("'", '"') else ""
    return text[: limit - 3 - len(quote)] + "..." + quote


#: Why trials of several seeds came out the same: what simulate --trials and run say.
SEED_FREE = (
    "nothing in the scenario depends on the seed (no TCP start spread, CBR jitter, random"
    " loss or web users)"
)
