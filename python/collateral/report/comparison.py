"""Simulation against emulation or measurement: the medians of the main measures of
each experiment that was run both in simulation and in the testbed (or measured on a
real line), side by side."""

from __future__ import annotations

import weakref
from typing import Any

from ..display import decimals, fmt_fixed, is_null
from ..emulate.timing import store_line
from .tables import Cell, Table, sort_key

#: Summary columns the report never shows: each trial's whole scenario and phases as
#: JSON, most of a large store's bytes.
_UNSHOWN = ("scenario", "phases")
#: Each store's summary as :func:`_summary` read it, for as long as the store object
#: lives (a report's stores live as long as the report is written).
_SUMMARIES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _summary(store: Any) -> Any:
    """The store's summary table without the columns of :data:`_UNSHOWN`, read once per
    store (a 60,000-trial store takes seconds)."""
    cached = _SUMMARIES.get(store)
    if cached is not None:
        return cached
    try:
        names = store.query("DESCRIBE summary")["column_name"].tolist()
    except Exception:  # no parts yet: no summary view
        names = []
    if names:
        cols = ", ".join('"' + n.replace('"', '""') + '"' for n in names if n not in _UNSHOWN)
        df = store.query(f"SELECT {cols} FROM summary")
    else:
        df = store.summary()
    _SUMMARIES[store] = df
    return df


_SIM_EMU = [
    ("tcp0_goodput_bps", "TCP goodput", "Mbit/s", 1e-6),
    ("cbr0_loss_rate", "CBR loss ↓", "%", 100.0),
    ("cbr0_delay_median_s", "CBR delay p50 ↓", "ms", 1e3),
    ("cbr0_delay_p95_s", "CBR delay p95 ↓", "ms", 1e3),
]


#: What a store's trials stand for beside the simulation: the testbed's or a real line's.
_OTHERS = ("emulation", "measured")


def _mode(df: Any) -> str:
    """``emulation`` or ``measured`` where the store holds such trials, else
    ``simulation`` (a measured store: ``collateral import --like``)."""
    modes = set(df["mode"].dropna()) if "mode" in df.columns else set()
    return next((m for m in _OTHERS if m in modes), "simulation")


def sim_vs_emu(stores: list[Any]) -> Table | None:
    """Medians of the main measures of each experiment run both in simulation and in
    the testbed (a store named ``X-emu``, or with mode = emulation) or measured on a
    real line (mode = measured). The fourth column is named for what is beside the
    simulation ("emulation", "measured", or both, when each row's experiment says
    which); the report's section heading takes that name."""
    by_name: dict[str, dict[str, Any]] = {}
    for st in stores:
        df = _summary(st) if hasattr(st, "query") else st.summary()
        name = st.meta().get("experiment", st.path.name).removesuffix("-emu")
        name = name.removesuffix("-measured")
        by_name.setdefault(name, {})[_mode(df)] = df
    paired = [(n, o) for n, m in by_name.items() for o in _OTHERS if "simulation" in m and o in m]
    kinds = [o for o in _OTHERS if any(k == o for _, k in paired)]
    rows, timing = [], []
    for name, other in paired:
        modes = by_name[name]
        line = store_line(modes[other]) if other == "emulation" else None
        if line and "LATE" in line:
            timing.append(f"{name}: {line}.")
        shown = name if len(kinds) == 1 else f"{name} ({other})"
        for col, label, unit, scale in _SIM_EMU:
            if col not in modes["simulation"] or col not in modes[other]:
                continue
            s = modes["simulation"][col].median() * scale
            e = modes[other][col].median() * scale
            d = decimals([s, e])
            diff = f"{(e - s) / s * 100:+.1f} %" if s and not is_null(s) else "—"
            rows.append(
                [
                    Cell(shown),
                    Cell(f"{label} ({unit})"),
                    Cell(fmt_fixed(s, d)),
                    Cell(fmt_fixed(e, d)),
                    Cell(diff, sort_key(diff)),
                ]
            )
    if not rows:
        return None
    other = " or ".join(kinds)
    cols = [
        ("experiment", ""),
        ("measure", ""),
        ("simulation", ""),
        (other, ""),
        ("difference", f"({other} − simulation) / simulation"),
    ]
    note = " ".join(["Medians over all trials.", *timing])
    return Table(cols, [False, False, True, True, True], rows, note)
