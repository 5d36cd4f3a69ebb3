"""Simulation against emulation: the medians of the main measures of each experiment
that was run both in simulation and in the testbed, side by side."""

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


def sim_vs_emu(stores: list[Any]) -> Table | None:
    """Medians of the main measures of each experiment run both in simulation and in
    the testbed (a store named ``X-emu``, or with mode = emulation)."""
    by_name: dict[str, dict[str, Any]] = {}
    for st in stores:
        df = _summary(st) if hasattr(st, "query") else st.summary()
        # A measured store (collateral import --like) stands where a testbed's would.
        mode = (
            "emulation"
            if "mode" in df.columns and df["mode"].isin(["emulation", "measured"]).any()
            else "simulation"
        )
        name = st.meta().get("experiment", st.path.name).removesuffix("-emu")
        name = name.removesuffix("-measured")
        by_name.setdefault(name, {})[mode] = df
    rows, timing = [], []
    for name, modes in by_name.items():
        if len(modes) < 2:
            continue
        line = store_line(modes["emulation"])
        if line and "LATE" in line:
            timing.append(f"{name}: {line}.")
        for col, label, unit, scale in _SIM_EMU:
            if col not in modes["simulation"] or col not in modes["emulation"]:
                continue
            s = modes["simulation"][col].median() * scale
            e = modes["emulation"][col].median() * scale
            d = decimals([s, e])
            diff = f"{(e - s) / s * 100:+.1f} %" if s and not is_null(s) else "—"
            rows.append(
                [
                    Cell(name),
                    Cell(f"{label} ({unit})"),
                    Cell(fmt_fixed(s, d)),
                    Cell(fmt_fixed(e, d)),
                    Cell(diff, sort_key(diff)),
                ]
            )
    if not rows:
        return None
    cols = [
        ("experiment", ""),
        ("measure", ""),
        ("simulation", ""),
        ("emulation", ""),
        ("difference", "(emulation − simulation) / simulation"),
    ]
    note = " ".join(["Medians over all trials.", *timing])
    return Table(cols, [False, False, True, True, True], rows, note)
