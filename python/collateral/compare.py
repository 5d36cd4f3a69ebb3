"""Simulation against emulation: the same scenario's key numbers side by side, and a
figure of their delay distributions and windows, the way the MMSys 2011 study set its
ns-2 results beside its dummynet testbed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .plots import _STYLE, plt, save

if TYPE_CHECKING:
    from .result import Result

__all__ = ["METRICS", "compare_rows", "compare_stores", "fig_compare", "fig_compare_stores"]

#: (label, unit, how to read it from a Result, scale for display)
METRICS: list[tuple[str, str, Any, float]] = [
    ("TCP goodput", "Mbit/s", lambda r: sum(t["goodput_bps"] for t in r.tcp), 1e-6),
    ("CBR loss down", "%", lambda r: _cbr(r, "down", "loss_rate"), 100.0),
    ("CBR delay p50 down", "ms", lambda r: _cbr(r, "down", "delay_median_s"), 1e3),
    ("CBR delay p95 down", "ms", lambda r: _cbr(r, "down", "delay_p95_s"), 1e3),
    ("CBR loss up", "%", lambda r: _cbr(r, "up", "loss_rate"), 100.0),
    ("CBR delay p50 up", "ms", lambda r: _cbr(r, "up", "delay_median_s"), 1e3),
]


def _cbr(r: Result, direction: str, key: str) -> float:
    vals = [c[key] for c in r.cbr if c["direction"] == direction]
    return float(vals[0]) if vals else math.nan


def _difference(sim: float, emu: float, unit: str) -> tuple[float, str]:
    """Percentage points for rates in %, else relative difference in %."""
    if unit == "%":
        return emu - sim, "pp"
    return ((emu - sim) / sim * 100 if sim else math.nan), "%"


def compare_rows(sim: Sequence[Result], emu: Sequence[Result]) -> list[dict[str, Any]]:
    """Per metric: the mean (and min to max) over the simulated and the emulated trials, and
    the difference, relative for rates and delays, absolute (percentage points) for loss."""
    rows = []
    for label, unit, get, scale in METRICS:
        s = np.array([get(r) for r in sim], dtype=float) * scale
        e = np.array([get(r) for r in emu], dtype=float) * scale
        sm, em = (
            float(np.nanmean(s)) if len(s) else math.nan,
            float(np.nanmean(e)) if len(e) else math.nan,
        )
        diff, diff_unit = _difference(sm, em, unit)
        rows.append(
            {
                "metric": label,
                "unit": unit,
                "sim": sm,
                "sim_range": (float(np.nanmin(s)), float(np.nanmax(s))) if len(s) else None,
                "emu": em,
                "emu_range": (float(np.nanmin(e)), float(np.nanmax(e))) if len(e) else None,
                "diff": diff,
                "diff_unit": diff_unit,
            }
        )
    return rows


def fig_compare(sim: Sequence[Result], emu: Sequence[Result], path: str | Path) -> list[Path]:
    """Delay CDFs (downstream CBR, all trials pooled) and the first trial's cwnd from
    each side over 10 s after the warm-up."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(_STYLE):
        fig, (cdf, win) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
        for label, results, color in (("simulation", sim, "C0"), ("emulation", emu, "C3")):
            d = (
                np.concatenate([r.cbr_packets("down")["extra_delay_s"] for r in results])
                if results
                else np.array([])
            )
            d = np.sort(d[np.isfinite(d)]) * 1e3
            if len(d):
                cdf.plot(
                    d,
                    np.arange(1, len(d) + 1) / len(d),
                    color=color,
                    label=f"{label} ({len(results)} trials)",
                )
            if results:
                r = results[0]
                t0 = r.warmup_s
                t, cwnd, _ = r.cwnd_series(0, step=0.001, t0=t0, t1=min(t0 + 10, r.duration_s))
                win.plot(t - t0, cwnd, drawstyle="steps-post", color=color, label=label)
        cdf.set_xlabel("additional one-way delay, downstream CBR (ms)")
        cdf.set_ylabel("fraction of packets")
        cdf.set_ylim(0, 1)
        cdf.legend(loc="lower right")
        win.set_xlabel("time after warm-up (s)")
        win.set_ylabel("cwnd (packets)")
        win.set_ylim(bottom=0)
        win.legend(loc="upper right")
        sc = (sim or emu)[0].scenario if (sim or emu) else None
        fig.suptitle("Simulation vs emulation" + (f"\n{sc.describe()}" if sc else ""))
        return save(fig, path)


#: Summary columns behind METRICS, for stored results.
_COLUMNS = [
    ("TCP goodput", "Mbit/s", "tcp0_goodput_bps", 1e-6),
    ("CBR loss down", "%", "cbr0_loss_rate", 100.0),
    ("CBR delay p50 down", "ms", "cbr0_delay_median_s", 1e3),
    ("CBR delay p95 down", "ms", "cbr0_delay_p95_s", 1e3),
]


def compare_stores(sim: Any, emu: Any) -> list[dict[str, Any]]:
    """Like :func:`compare_rows` over two results directories of the same experiment,
    using only the trials both hold (matched by trial key)."""
    s, e = sim.summary(), emu.summary()
    common = sorted(set(s["key"]) & set(e["key"]))
    if not common:
        raise ValueError("the two directories share no trial: run the same experiment file")
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
    they agree; and the downstream delay CDFs when both kept the ``cbr`` trace."""
    s, e = sim.summary().set_index("key"), emu.summary().set_index("key")
    common = sorted(set(s.index) & set(e.index))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            1, len(_COLUMNS), figsize=(4 * len(_COLUMNS), 4.2), layout="constrained"
        )
        for ax, (label, unit, col, scale) in zip(axes, _COLUMNS, strict=False):
            x = s.loc[common, col].astype(float) * scale
            y = e.loc[common, col].astype(float) * scale
            ax.scatter(x, y, s=18)
            lo = float(np.nanmin([x.min(), y.min(), 0]))
            hi = float(np.nanmax([x.max(), y.max()])) * 1.05 or 1.0
            ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, ls=":")
            ax.set_xlabel(f"simulation ({unit})")
            ax.set_ylabel(f"emulation ({unit})")
            ax.set_title(label)
        fig.suptitle(f"Simulation vs emulation, {len(common)} matched trials")
        return save(fig, path)
