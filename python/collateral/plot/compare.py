"""Simulation against emulation: the same scenario's key numbers side by side, and a
figure of their delay distributions and windows, the way the MMSys 2011 study set its
ns-2 results beside its dummynet testbed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..display import column_unit
from .style import STYLE, check_figure_path, plt, save

__all__ = ["WrongSide", "compare_stores", "fig_compare_stores"]


class WrongSide(ValueError):
    """A directory on the wrong side of a comparison: ``side`` is ``"sim"`` or ``"emu"``."""

    def __init__(self, side: str, message: str) -> None:
        super().__init__(message)
        self.side = side


def _check_modes(s: Any, e: Any, sim: Any, emu: Any) -> None:
    """Each side holds what it should: simulated trials on one, emulated (or measured:
    ``collateral import``) on the other (the ``mode`` column; stores from before it are
    simulations)."""
    for side, df, st, want in (("sim", s, sim, "simulation"), ("emu", e, emu, "emulation")):
        if len(df) == 0:  # nothing to tell the side by (an empty table has no mode column)
            raise WrongSide(side, f"{st.path}: no trials stored yet")
        modes = set(df["mode"].dropna()) if "mode" in df else {"simulation"}
        if side == "emu" and modes == {"measured"}:
            continue
        if modes and modes != {want}:
            got = " and ".join(sorted(modes))
            writer = "collateral run FILE" if want == "simulation" else "collateral emulate FILE"
            raise WrongSide(
                side,
                f"{st.path} holds {got} results; give the directory '{writer} -o DIR' wrote",
            )


def _difference(sim: float, emu: float, unit: str) -> tuple[float, str]:
    """Percentage points for rates in %, else relative difference in %."""
    if unit == "%":
        return emu - sim, "pp"
    return ((emu - sim) / sim * 100 if sim else math.nan), "%"


#: (label, unit, summary column, scale for display) of each compared metric.
_COLUMNS = [
    ("TCP goodput", "Mbit/s", "tcp0_goodput_bps", 1e-6),
    ("CBR loss down", "%", "cbr0_loss_rate", 100.0),
    ("CBR delay p50 down", "ms", "cbr0_delay_median_s", 1e3),
    ("CBR delay p95 down", "ms", "cbr0_delay_p95_s", 1e3),
    ("CBR delay p50 up", "ms", "cbr1_delay_median_s", 1e3),
    ("CBR delay p95 up", "ms", "cbr1_delay_p95_s", 1e3),
]


def _no_common_trial(s: Any, e: Any) -> str:
    """Why two directories share no trial key: another experiment, or (a trial's key
    holding the core's version) the same file run by different builds."""
    builds = [
        sorted(set(df["model_version"].dropna())) if "model_version" in df else [] for df in (s, e)
    ]
    if all(builds) and not set(builds[0]) & set(builds[1]):
        return (
            "the two directories share no trial: their trials were run by different builds"
            f" of the core ({', '.join(builds[0])} and {', '.join(builds[1])}), and a"
            " trial's key holds its build: run the file again into both with this one"
        )
    return "the two directories share no trial: run the same experiment file"


def compare_stores(sim: Any, emu: Any) -> list[dict[str, Any]]:
    """Per metric: the mean over the simulated and the emulated trials of two results
    directories of the same experiment (only the trials both hold, matched by trial key),
    and the difference, relative for rates and delays, in percentage points for loss."""
    s, e = sim.summary(), emu.summary()
    _check_modes(s, e, sim, emu)
    common = sorted(set(s["key"]) & set(e["key"]))
    if not common:
        raise ValueError(_no_common_trial(s, e))
    s = s.set_index("key").loc[common]
    e = e.set_index("key").loc[common]
    rows = []
    for label, unit, col, scale in _COLUMNS:
        if col not in s or col not in e:
            continue
        sm = float(np.nanmean(s[col].astype(float))) * scale
        em = float(np.nanmean(e[col].astype(float))) * scale
        diff, du = _difference(sm, em, unit)
        rows.append(
            {
                "metric": label,
                "unit": unit,
                "sim": sm,
                "emu": em,
                "diff": diff,
                "diff_unit": du,
                "trials": len(common),
            }
        )
    return rows


def fig_compare_stores(sim: Any, emu: Any, path: str | Path) -> list[Path]:
    """Per-trial points (simulation vs emulation) of each metric, on the diagonal when
    they agree, the trials the testbed flagged late as crosses; both axes from 0, in the
    schema's display units."""
    s, e = sim.summary().set_index("key"), emu.summary().set_index("key")
    common = sorted(set(s.index) & set(e.index))
    path = check_figure_path(path)
    flags = e.loc[common, "late"] if "late" in e else None
    late = (
        np.asarray(flags.fillna(0).astype(int) == 1)
        if flags is not None
        else np.zeros(len(common), bool)
    )
    # What both sides measured, as the table compares it (a call one way only: no "up").
    shown = [c for c in _COLUMNS if c[2] in s and c[2] in e]
    if not shown:
        raise ValueError("the two directories share no compared measure (TCP goodput, CBR)")
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1, len(shown), figsize=(4 * len(shown), 4.2), layout="constrained", squeeze=False
        )
        for ax, (label, _, col, _) in zip(axes[0], shown, strict=True):
            u = column_unit(col)  # the schema's unit as every figure shows it
            x = u.of(s.loc[common, col].astype(float))
            y = u.of(e.loc[common, col].astype(float))
            ax.scatter(x[~late], y[~late], s=18)
            if late.any():  # the router missed real time: not the model's delays alone
                ax.scatter(x[late], y[late], s=30, marker="x", color="C3", label="testbed late")
                ax.legend(loc="upper left")
            lo = float(np.nanmin([x.min(), y.min(), 0]))
            hi = float(np.nanmax([x.max(), y.max()])) * 1.05 or 1.0
            ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls=":")
            pad = 0.03 * (hi - lo)  # both axes from 0, a point at 0 shown whole
            ax.set_xlim(lo - pad, hi)
            ax.set_ylim(lo - pad, hi)
            ax.set_xlabel(u.label("simulation"))
            ax.set_ylabel(u.label("emulation"))
            ax.set_title(label)
        flagged = f", {int(late.sum())} late on the testbed (×)" if late.any() else ""
        fig.suptitle(f"Simulation vs emulation, {len(common)} matched trials{flagged}")
        return save(fig, path)
