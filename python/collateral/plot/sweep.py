"""A results store as the figures see it (PlotData, load_data()): its trials in the sweep's
order, parameters, measures and swept keys; ``--x``/``--y`` names resolved against it, and
suggest()'s defaults."""

from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import StorePlotError
from .measure import Measure, measures
from .param import Param, codes, params, sweep_keys, written_to_param

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

#: At most this many hue levels and facets (more is unreadable: use --where).
MAX_HUES = 12
MAX_FACETS = 24


def _experiment(store_dir: Path) -> Any:
    """The store's experiment file, loaded (None when it is missing or no longer loads)."""
    try:
        from ..experiment import ExperimentError, load_experiment

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_experiment(store_dir / "experiment.toml")
    except (ExperimentError, OSError, ValueError):
        return None


def _in_sweep_order(
    index: dict[str, int],
    df: pd.DataFrame,
    by_scenario: Callable[[], dict[str, int]] | None = None,
) -> pd.DataFrame:
    """The trials in the order of the sweep's points (``index``: point key -> its place),
    then by repetition; a trial of a point not in it by its stored scenario
    (``by_scenario()``, asked only then: when the core's version, part of the key,
    changed); the rest as stored, last."""
    if "point" not in df.columns:
        return df
    order = df["point"].map(index)
    if by_scenario and order.isna().any() and "scenario" in df.columns:
        order = order.fillna(df["scenario"].map(by_scenario()))
    order = order.fillna(len(index))
    rep = df["rep"] if "rep" in df.columns else 0
    return (
        df.assign(_o=order.to_numpy(), _r=rep)
        .sort_values(["_o", "_r"], kind="stable")
        .drop(columns=["_o", "_r"])
        .reset_index(drop=True)
    )


def _points(table: Any, df: pd.DataFrame) -> pd.DataFrame | None:
    """The points the store's last run expanded (``table``: ``Store.read_points``), when
    every stored trial's point is among them; None otherwise (the file is expanded)."""
    if table is None or "point" not in df.columns or "point_index" not in table.column_names:
        return None
    pts = table.to_pandas()
    if not df["point"].isin(pts["point"]).all():
        return None
    return pts.sort_values("point_index", kind="stable")


@dataclass
class PlotData:
    store: Path
    name: str
    df: pd.DataFrame
    params: dict[str, Param]
    measures: dict[str, Measure]
    swept: list[str]  # swept params, sweep-file order first


def load_data(store_dir: str | Path | PlotData, summary: pd.DataFrame | None = None) -> PlotData:
    """The store as the figures see it; a :class:`PlotData` already loaded is taken as it
    is (a caller that suggests, then draws, reads and expands the store once).
    ``summary``: the store's summary, when the caller has read it already (the report)."""
    from ..store import StoreError, open_store

    if isinstance(store_dir, PlotData):
        return store_dir
    p = Path(store_dir)
    if not p.is_dir():
        why = "no such directory" if not p.exists() else "is a file, not a results directory"
        raise StorePlotError("DIR", f"{str(store_dir)!r}: {why}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an older schema: the columns say what they hold
            st = open_store(p)
        df = st.summary() if summary is None else summary.copy()
        name = str(st.meta().get("experiment", p.name))
    except StoreError as e:
        raise StorePlotError("DIR", str(e)) from None
    if df.empty:
        raise StorePlotError("DIR", f"{str(store_dir)!r}: no trials stored yet")
    table = st.read_points()
    points = _points(table, df)
    if points is not None:
        df = _in_sweep_order(dict(zip(points["point"], points["point_index"], strict=True)), df)
        columns = points.drop(columns=["point", "point_index"])
    else:  # a store without the points of its run (older, imported): expand the file
        exp = _experiment(p)
        columns = None
        if exp is not None:
            import pandas as pd

            expanded = exp.points
            df = _in_sweep_order(
                {pt.key: pt.index for pt in expanded},
                df,
                lambda: {pt.stored_scenario: pt.index for pt in expanded},
            )
            columns = pd.DataFrame([pt.columns() for pt in exp.points]) if exp.points else None
    ps = params(df)
    if columns is not None:  # categories in the order the sweep makes them
        pts = params(columns)
        for k, q in ps.items():
            if not q.numeric and k in pts:
                rank = {v: i for i, v in enumerate(pts[k].order)}
                q.order = sorted(q.order, key=lambda v, r=rank: r.get(v, len(r)))  # type: ignore[misc]
    # The sweep keys and values as the run wrote them (--set applied) when its points
    # cover the store; else as its file does.
    written = sweep_keys(p, st.read_sweep(table) if points is not None else None)
    order = []
    for w, texts in written.items():
        k = written_to_param(w, ps)
        if k is None:
            continue
        order.append(k)
        q = ps[k]
        # The file's order of values, unless the run's points gave it (the file has no
        # --set, which may have reordered or replaced them).
        rank = {t: i for i, t in enumerate(texts)}
        if points is None and not q.numeric and all(str(v) in rank for v in q.order):
            q.order = sorted(q.order, key=lambda v: rank[str(v)])
    rest = [k for k, q in ps.items() if q.swept and not k.startswith("queue.")]
    consumed = {q.consumes for q in ps.values() if q.consumes}
    swept = [k for k in dict.fromkeys([*order, *rest]) if not set(ps[k].aliases) & consumed]
    keep: list[str] = []
    for k in swept:
        # A key the file does not name that follows from one already listed (the rule
        # column beside the discipline, tcp[0].cc beside tcp.cc) is not listed again.
        if not any(_follows(ps[k], ps[e], exact=k in order) for e in keep):
            keep.append(k)
    return PlotData(p, name, df, ps, measures(df), keep)


def _follows(p: Param, other: Param, exact: bool) -> bool:
    """``p`` repeats ``other`` (the same partition of the trials) or, unless ``exact``,
    is a function of it."""
    import pandas as pd

    a, b = codes(p.values), codes(other.values)
    if a == b:
        return True
    if exact:
        return False
    return bool((pd.DataFrame({"o": b, "p": a}).groupby("o")["p"].nunique() <= 1).all())


def resolve_param(data: PlotData, option: str, name: str) -> Param:
    """A parameter by key, column or short alias; one-line errors with suggestions."""
    ps = data.params
    if not isinstance(name, str) or not name.strip():
        raise StorePlotError(option, f"empty; give a swept key: {', '.join(data.swept) or 'none'}")
    name = name.strip()
    hit = ps.get(name)
    if hit is None:
        by_alias = [p for p in ps.values() if name in p.aliases]
        if by_alias:
            hit = by_alias[0]
    m = re.fullmatch(r"(down|up)_queue_limit_(bytes|packets)", name)
    if hit is not None and hit.error and m and name in data.df.columns:
        # A limit in both units: this column's alone, the other unit's points unplaced.
        import pandas as pd

        v = pd.to_numeric(data.df[name], errors="coerce").astype(float)
        in_kb = m[2] == "bytes"
        return Param(name, v / 1e3 if in_kb else v, "kB" if in_kb else "packets", True, [name])
    if hit is None:  # the last segment of one swept key: limit, cc, aqm
        short = [k for k in data.swept if re.split(r"[.\]]", k)[-1] == name]
        if len(short) == 1:
            hit = ps[short[0]]
        elif len(short) > 1:
            raise StorePlotError(option, f"{name!r} is ambiguous: {', '.join(short)}")
    if hit is None and name in data.df.columns and name in data.measures:  # a summary column
        m = data.measures[name]
        hit = Param(name, m.values(data.df), m.unit, True, [name])
    if hit is None:
        pool = [*ps, *(a for p in ps.values() for a in p.aliases), *data.measures]
        near = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}? " if near else ""
        known = (
            f"swept keys: {', '.join(data.swept)}"
            if data.swept
            else "nothing is swept in this store (every trial has the same parameters)"
        )
        raise StorePlotError(
            option, f"unknown key {name!r}; {hint}{known} (--list shows every key and measure)"
        )
    if hit.error and option == "--x":  # as a hue, facet or filter its raw values do
        raise StorePlotError(option, hit.error)
    return hit


def resolve_measure(data: PlotData, name: str) -> Measure:
    if not isinstance(name, str) or not name.strip():
        raise StorePlotError("--y", "empty; give a measure such as voip_p95_ms (--list)")
    m = data.measures.get(name.strip())
    if m is not None:
        return m
    if name in data.df.columns:
        raise StorePlotError("--y", f"{name!r} is not a numeric result column (--list)")
    friendly = [k for k, v in data.measures.items() if v.name != v.columns[0]]
    near = difflib.get_close_matches(name, list(data.measures), n=1, cutoff=0.6)
    hint = f"did you mean {near[0]}? " if near else ""
    raise StorePlotError(
        "--y",
        f"unknown measure {name!r}; {hint}measures: {', '.join(friendly)}, or any numeric"
        " summary column (--list)",
    )


def suggest(store_dir: str | Path | PlotData) -> dict[str, str | None]:
    """Sensible defaults for a store: the first numeric swept key on x (else the first
    swept key), the next swept key that varies at a given x as hue, a third that still
    varies within those points as facet, and VoIP p95 delay on y (else a video call's
    frame delay p95, else TCP goodput)."""
    data = load_data(store_dir)
    ps, swept = data.params, data.swept
    numeric = [k for k in swept if ps[k].numeric and not ps[k].error]
    usable = [k for k in swept if not ps[k].error]
    x = numeric[0] if numeric else (usable[0] if usable else None)
    hue = None
    if x is not None:
        gx = codes(ps[x].values)
        for k in usable:
            if k == x:
                continue
            sub = {"g": gx, "v": codes(ps[k].values)}
            import pandas as pd

            if (pd.DataFrame(sub).groupby("g")["v"].nunique() > 1).any():
                hue = k
                break
    prefer = ("voip_p95_ms", "video_p95_ms", "goodput_mbps", "web_p95_ms")
    ys = [k for k in prefer if k in data.measures]
    y = ys[0] if ys else next(iter(data.measures), None)
    return {"x": x, "y": y, "hue": hue, "facet": _third(data, usable, [x, hue])}


def _third(data: PlotData, usable: list[str], chosen: list[str | None]) -> str | None:
    """A swept key that still varies within the points ``chosen`` makes (a panel per
    value, so that no marker pools different set-ups), or None."""
    import pandas as pd

    keys = [k for k in chosen if k is not None]
    if not keys:
        return None
    group = pd.MultiIndex.from_arrays([list(codes(data.params[k].values)) for k in keys])
    g = group.factorize()[0]
    for k in usable:
        if k in keys or data.params[k].values.nunique(dropna=False) > MAX_FACETS:
            continue
        v = codes(data.params[k].values)
        if (pd.DataFrame({"g": g, "v": v}).groupby("g")["v"].nunique() > 1).any():
            return k
    return None
