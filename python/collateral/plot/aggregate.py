"""Aggregation: the points a store figure plots (table()): the median or mean over each
point's trials with a 95 % bootstrap or min-max interval, after the ``where`` filters."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .errors import StorePlotError, api_names
from .param import Param, codes
from .sweep import MAX_FACETS, MAX_HUES, PlotData, load_data, resolve_measure, resolve_param

if TYPE_CHECKING:
    import pandas as pd

Interval = Literal["bootstrap", "minmax"]
Stat = Literal["median", "mean"]

#: Resamples and seed of the bootstrap intervals (fixed: the same figure every time);
#: with many points, fewer resamples each (at least 999), about 2 million in all.
N_RESAMPLES = 9_999
MIN_RESAMPLES = 999
_RESAMPLE_BUDGET = 2_000_000
SEED = 20_150_815


def n_resamples(points: int) -> int:
    """Bootstrap resamples per point when a figure has ``points`` points."""
    return max(
        MIN_RESAMPLES, min(N_RESAMPLES, _RESAMPLE_BUDGET // max(1, points) // 1000 * 1000 - 1)
    )


#: Resampled values drawn at once: the resamples are taken in chunks of about this many
#: values, so a point of many trials does not hold them all (9 999 x n).
_CHUNK_VALUES = 1 << 22


def _interval(
    y: np.ndarray, stat: Stat, interval: Interval, resamples: int = N_RESAMPLES
) -> tuple[float, float]:
    """The 95 % percentile-bootstrap interval of the median or mean of ``y`` (Efron and
    Tibshirani 1993, ch. 13): ``resamples`` resamples of ``len(y)`` with replacement,
    the 2.5th and 97.5th percentiles (linear between ranks) of their statistic. Computed
    as ``scipy.stats.bootstrap(method="percentile", vectorized=True)`` does, from the same
    generator's draws (tested equal), without importing scipy.stats: about 1 s of a
    ``collateral plot``, and a call's overhead per point."""
    if len(y) == 0:
        return (math.nan, math.nan)
    if interval == "minmax" or len(y) == 1 or np.all(y == y[0]):
        return float(np.min(y)), float(np.max(y))
    y = np.asarray(y)
    fn = np.median if stat == "median" else np.mean
    rng = np.random.default_rng(SEED)
    n = len(y)
    rows = max(1, _CHUNK_VALUES // n)
    theta = np.concatenate(
        [
            fn(y[rng.integers(0, n, (min(rows, resamples - k), n))], axis=-1)
            for k in range(0, resamples, rows)
        ]
    )
    lo, hi = np.quantile(theta, [0.025, 0.975])
    return float(lo), float(hi)


def _parse_where(data: PlotData, where: Sequence[str] | Mapping[str, Any] | None) -> pd.Series:
    import pandas as pd

    mask = pd.Series(True, index=data.df.index)
    items = list(where.items()) if isinstance(where, Mapping) else []
    if isinstance(where, str):  # one condition, not its letters
        where = [where]
    if not isinstance(where, Mapping):
        for w in where or ():
            k, sep, v = str(w).partition("=")
            if not sep or not k.strip():
                raise StorePlotError("--where", f"{w!r}: expected KEY=VALUE, e.g. tcp.cc=cubic")
            items.append((k.strip(), v.strip()))
    for k, v in items:
        p = resolve_param(data, "--where", k)
        vals = p.values
        if p.numeric:
            text = str(v).strip()
            if p.unit and text.endswith(p.unit):  # 20kB where the unit is kB
                text = text.removesuffix(p.unit).strip()
            try:
                want = float(text)
            except (TypeError, ValueError):
                unit = f" in {p.unit} (e.g. 20 or 20{p.unit})" if p.unit else ""
                raise StorePlotError("--where", f"{k}={v}: expected a number{unit}") from None
            hit = np.isclose(vals.astype(float), want, rtol=1e-9, atol=1e-12)
        else:
            text = vals.astype(str)
            hit = text == str(v)
            # Else as stored and typed elsewhere (fq_codel for FQ-CoDel), any case: when
            # that names one value (free text such as a tag's may differ by case alone).
            like = {x for x in pd.unique(text) if _spelling(x) == _spelling(str(v))}
            if not hit.any() and len(like) == 1:
                hit = text == like.pop()
        if not hit.any():
            shown = ", ".join(p.show(x) for x in pd.unique(vals))
            raise StorePlotError("--where", f"{k}={v}: no trial has it; values: {shown}")
        mask &= hit
    return mask


def _spelling(v: str) -> str:
    """A category as written any of its ways: fq_codel, FQ-CoDel, fq-codel."""
    return v.strip().lower().replace("-", "").replace("_", "")


@api_names
def table(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """What :func:`figure` plots: a row per (facet, hue, x) with ``n`` (trials with a
    value), ``value`` (the median or mean), ``lo``, ``hi`` (the interval), in the
    measure's unit; x is NaN for a point whose trials have no value of a numeric x (the
    figures draw it as a level across the axis). ``df.attrs`` holds the labels and what
    the points pool over."""
    return build_table(load_data(store_dir), x, y, hue, facet, stat, interval, where)[0]


def build_table(
    data: PlotData,
    x: str,
    y: str,
    hue: str | None,
    facet: str | None,
    stat: Stat,
    interval: Interval,
    where: Sequence[str] | Mapping[str, Any] | None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    import pandas as pd

    if stat not in ("median", "mean"):
        raise StorePlotError("--stat", f"{stat!r}: median or mean")
    if interval not in ("bootstrap", "minmax"):
        raise StorePlotError("--interval", f"{interval!r}: bootstrap or minmax")
    px = resolve_param(data, "--x", x)
    m = resolve_measure(data, y)
    ph = resolve_param(data, "--hue", hue) if hue else None
    pf = resolve_param(data, "--facet", facet) if facet else None
    named = [("--x", px), ("--hue", ph), ("--facet", pf)]
    for i, (o1, p1) in enumerate(named):
        for o2, p2 in named[i + 1 :]:
            if p1 is not None and p2 is not None and codes(p1.values) == codes(p2.values):
                raise StorePlotError(o2, f"{p2.key} is the same as {o1} {p1.key}; give another key")
    mask = _parse_where(data, where)
    if px.note_rows is not None:  # said of the kept rows only
        px = dataclasses.replace(px, note=px.note_over(mask.to_numpy()))

    def column(p: Param | None) -> Any:
        if p is None:
            return ""
        return p.values if p.numeric else p.values.astype(object).where(p.values.notna(), "none")

    frame = pd.DataFrame(
        {"x": column(px), "hue": column(ph), "facet": column(pf), "y": m.values(data.df)}
    )[mask.to_numpy()]
    # Trials without an x (an AQM's points on a drop-tail limit axis) stay: their rows
    # have x NaN, and the figures draw them as a level across the axis, not as nothing.
    if px.numeric and frame["x"].isna().all():
        raise StorePlotError("--x", f"{px.key}: no trial has a value")
    pooled = []
    fixed = [p for p in (px, ph, pf) if p is not None]
    for k in data.swept:
        p = data.params[k]
        if any(p is q or codes(p.values) == codes(q.values) for q in fixed):
            continue
        sub = pd.DataFrame({"g": _group_codes(frame, ("x", "hue", "facet")), "v": p.values[mask]})
        if (sub.groupby("g")["v"].nunique(dropna=False) > 1).any():
            pooled.append(k)
    for o, p in (("--hue", ph), ("--facet", pf)):
        limit = MAX_HUES if o == "--hue" else MAX_FACETS
        if p is not None and frame[o[2:]].nunique(dropna=False) > limit:
            raise StorePlotError(
                o, f"{p.key} has {frame[o[2:]].nunique()} values; at most {limit} (use --where)"
            )
    if frame["y"].notna().sum() == 0:
        raise StorePlotError("--y", f"{m.name}: no trial has a value (all NULL)")
    if px.numeric:
        xs = sorted(v for v in pd.unique(frame["x"]) if not pd.isna(v))
    else:
        present = list(pd.unique(frame["x"]))
        xs = [v for v in px.order if v in present] + [v for v in present if v not in px.order]
    groups = frame.groupby(["facet", "hue", "x"], sort=False, dropna=False)
    resamples = n_resamples(groups.ngroups)
    rows = []
    for (fv, hv, xv), g in frame.groupby(["facet", "hue", "x"], sort=False, dropna=False):
        yv = g["y"].to_numpy(dtype=float)
        yv = yv[np.isfinite(yv)]
        centre = (np.median(yv) if stat == "median" else np.mean(yv)) if len(yv) else math.nan
        lo, hi = _interval(yv, stat, interval, resamples)
        rows.append(
            {
                "facet": fv,
                "hue": hv,
                "x": xv,
                "n": len(yv),
                "trials": len(g),
                "value": float(centre),
                "lo": lo,
                "hi": hi,
            }
        )
    out = pd.DataFrame(rows)

    def order(p: Param | None, col: str) -> list[Any]:
        present = list(pd.unique(out[col]))
        if p is None:
            return present
        if p.numeric:
            return sorted(present, key=lambda v: (pd.isna(v), v if not pd.isna(v) else 0))
        return [v for v in p.order if v in present] + [v for v in present if v not in p.order]

    fo, ho = order(pf, "facet"), order(ph, "hue")
    out["_f"] = out["facet"].map({v: i for i, v in enumerate(fo)})
    out["_h"] = out["hue"].map({v: i for i, v in enumerate(ho)})
    out["_x"] = out["x"].map({v: i for i, v in enumerate(xs)})
    out = (
        out.sort_values(["_f", "_h", "_x"]).drop(columns=["_f", "_h", "_x"]).reset_index(drop=True)
    )
    if ph is None:
        out = out.drop(columns="hue")
    if pf is None:
        out = out.drop(columns="facet")
    meta = {
        "x": px,
        "hue": ph,
        "facet": pf,
        "measure": m,
        "stat": stat,
        "interval": interval,
        "pooled": pooled,
        "xs": xs,
        "hues": ho,
        "facets": fo,
        "name": data.name,
        "where": where,
        "points": len(out),
        "unplaced": unplaced(out),
    }
    out.attrs.update(
        x=px.label,
        y=m.axis_label,
        hue=ph.label if ph else None,
        facet=pf.label if pf else None,
        stat=stat,
        interval=interval,
        pooled=pooled,
        resamples=resamples if interval == "bootstrap" else None,
    )
    if pooled:
        warnings.warn(
            f"each point pools trials of different {', '.join(pooled)}; fix them with"
            " --hue, --facet or --where",
            stacklevel=3,
        )
    return out, meta


def from_zero(tab: pd.DataFrame) -> bool:
    """No value or interval end below 0: the measure is an amount (goodput, delay, loss,
    a count) read against 0, so its axis starts at 0 rather than at the data (a 0.3 %
    difference drawn on a 48.0-48.2 axis looks like a collapse)."""
    v = tab[["value", "lo", "hi"]].to_numpy(float)
    v = v[np.isfinite(v)]
    return bool(len(v)) and bool((v >= 0).all())


def unplaced(tab: pd.DataFrame) -> pd.DataFrame:
    """The rows of a table whose trials have no x value (drawn across the axis)."""
    x = tab["x"]
    return tab[x.isna()] if x.dtype.kind == "f" else tab.iloc[:0]


def _group_codes(frame: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    import pandas as pd

    keys = frame[list(cols)].astype(object).where(frame[list(cols)].notna(), "\0none")
    return pd.MultiIndex.from_frame(keys).factorize()[0]


def eq(s: pd.Series, v: Any) -> pd.Series:
    """``s == v``, NaN equal to NaN (a numeric hue some trials lack)."""
    import pandas as pd

    return s.isna() if pd.isna(v) else s == v
