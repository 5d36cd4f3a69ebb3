"""Figures from any results store: a measure against a swept parameter, ``collateral plot``.

    collateral plot results/buffer-sweep --x queue.limit --y voip_p95_ms --hue queue.kind
    collateral plot results/buffer-sweep --list          # swept keys, measures, units

Each point of the figure is one combination of ``x``, ``hue`` and ``facet``: the median
(or mean, ``stat``) over its trials with a 95 % bootstrap interval (``scipy.stats.bootstrap``,
percentile method — BCa's acceleration is unstable for the median of a few trials —,
9 999 resamples, fewer (at least 999) when a figure has more than 200 points, from a
fixed seed: the same figure every time) or the trials' minimum and maximum
(``interval="minmax"``). A point whose trials all agree has no interval to draw. Markers
sit at the sampled x only; a line joins neighbouring sampled values and breaks where a
series lacks a value the others have (categorical x: markers only). Numeric x is sorted;
categorical x keeps the sweep's order. Above :data:`DENSE` x values the intervals are
bands. :func:`table` gives the plotted numbers.

**Parameters** (``x``, ``hue``, ``facet``, ``where``) are named by their dotted sweep key
as an experiment file writes it (``down.queue.limit``, ``queue.limit`` — the downstream
queue unless only the upstream one varies —, ``tcp.cc`` — every flow's, when they
agree —, ``tags.aqm``), by a store column (``down_queue_limit_bytes``, ``tag_aqm``) or by a
short alias (``limit``, ``cc``, ``aqm``) when it names one swept parameter. Besides the
columns, ``down.queue.kind`` (and ``queue.kind``, ``kind``) is the discipline:
``drop-tail`` or the AQM's kind.

**Queue limits in bytes and packets.** ``down.queue.limit`` is shown in kB when every
point's limit is known in bytes: drop-tail FB limits are bytes, and a packet limit swept
with ``packets_of`` (see :mod:`collateral.experiment`) keeps the byte size it stands for
(``tag_down_queue_limit_bytes``). When all limits count packets it is shown in packets.
A mix without the byte sizes is refused, saying how to sweep it.

**Measures** (``y``): friendly names (:func:`measures`, ``--list``) such as
``voip_p95_ms`` (the 95th percentile of the additional one-way delay of CBR flow 0),
``goodput_mbps`` (all TCP flows together), ``loss_pct``, or any numeric summary column
(``tcp0_goodput_bps`` is shown in Mbit/s: seconds in ms, bit/s in Mbit/s, bytes in kB,
loss rates and shares in %).

A swept parameter that none of ``x``, ``hue``, ``facet`` or ``where`` fixes would pool
different conditions into one point: the figure says so in its title and a warning is
issued.

:func:`plot` writes PNG, SVG or PDF (the file named, by its suffix, through
:func:`collateral.plots.save`) or, for ``.html``, an interactive plotly figure with
plotly.js embedded (4.8 MB, works offline; :func:`plotly_figure` gives the figure for a
page that loads plotly.js once), whose hover shows each point's value, interval and
number of trials.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import matplotlib.figure
    import pandas as pd
    import plotly.graph_objects as go

__all__ = [
    "Measure",
    "Param",
    "StorePlotError",
    "add_parser",
    "figure",
    "measures",
    "n_resamples",
    "params",
    "plot",
    "plotly_figure",
    "run",
    "suggest",
    "table",
]

Interval = Literal["bootstrap", "minmax"]
Stat = Literal["median", "mean"]

#: Resamples and seed of the bootstrap intervals (fixed: the same figure every time);
#: with many points, fewer resamples each (at least 999), about 2 million in all.
N_RESAMPLES = 9_999
MIN_RESAMPLES = 999
_RESAMPLE_BUDGET = 2_000_000
SEED = 20_150_815
#: Above this many x values the intervals are drawn as bands, not bars.
DENSE = 40
#: At most this many hue levels and facets (more is unreadable: use --where).
MAX_HUES = 12
MAX_FACETS = 24

_IDENTITY = {"key", "point", "rep", "seed", "scenario", "model_version", "code_version", "phases"}
_KIND_NAMES = {
    "fq_codel": "FQ-CoDel",
    "codel": "CoDel",
    "pie": "PIE",
    "red": "RED",
    "fred": "FRED",
    "cbt": "CBT",
    "cbq": "CBQ",
    "dualpi2": "DualPI2",
    "cake": "CAKE",
}
_BYTE_RULES = ("fb-strict", "fb-loose")


class StorePlotError(ValueError):
    """A bad input: ``option`` is what the CLI calls it (``--x``, ``--y``, ``DIR``...)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option
        self.message = message


# ---------------------------------------------------------------------------------------
# Units


@dataclass(frozen=True)
class _Unit:
    name: str  # "ms", "Mbit/s", "%", "kB", "" ...
    scale: float  # human value = stored value * scale


def _unit_for(column: str, declared: str | None, values: pd.Series | None = None) -> _Unit:
    """The human unit of a stored column: s -> ms, bit/s -> Mbit/s (kbit/s when small),
    bytes -> kB (B for packet sizes), rates and shares -> %."""
    peak = None
    if values is not None:
        v = values.to_numpy(dtype=float, na_value=np.nan)
        peak = float(np.nanmax(np.abs(v))) if np.isfinite(v).any() else None
    if declared == "s" or column.endswith("_s"):
        if peak is not None and peak >= 10 and not column.startswith(("cbr", "web")):
            return _Unit("s", 1.0)
        return _Unit("ms", 1e3)
    if declared == "bit/s" or column.endswith("_bps"):
        if peak is not None and peak < 1e6:
            return _Unit("kbit/s", 1e-3)
        return _Unit("Mbit/s", 1e-6)
    if declared == "B" or column.endswith("_bytes"):
        if column.endswith(("packet_bytes", "_size")):
            return _Unit("B", 1.0)
        return _Unit("kB", 1e-3)
    if column.endswith(("loss_rate", "_share")) or re.search(r"_over_\d+ms$", column):
        return _Unit("%", 100.0)
    return _Unit("", 1.0)


def _scaled(v: Any, scale: float) -> Any:
    """``v`` in the human unit: divided by 1e6, 1e3 (as one would write it), or times
    1e3 or 100."""
    return v / round(1 / scale) if scale < 1 else v * scale


def _with_unit(label: str, unit: str) -> str:
    return f"{label} ({unit})" if unit else label


# ---------------------------------------------------------------------------------------
# Measures


@dataclass(frozen=True)
class Measure:
    """A y value: ``columns`` of the summary combined (``sum``) or one column, scaled
    into ``unit``."""

    name: str
    label: str
    unit: str
    columns: tuple[str, ...]
    scale: float
    meaning: str
    combine: Literal["one", "sum"] = "one"
    subject: str = ""  # whose value: "CBR flow 0, down"

    def values(self, df: pd.DataFrame) -> pd.Series:
        """Per trial, in the human unit (NaN where the trial has no value)."""
        import pandas as pd

        cols = [pd.to_numeric(df[c], errors="coerce").astype(float) for c in self.columns]
        one = self.combine == "one"
        v = cols[0] if one else pd.concat(cols, axis=1).sum(axis=1, skipna=False)
        return _scaled(v, self.scale)

    @property
    def axis_label(self) -> str:
        return _with_unit(self.label, self.unit)


def _flow_cols(
    df: pd.DataFrame, group: str, field_: str, direction: str | None = None
) -> list[str]:
    out = []
    i = 0
    while f"{group}{i}_{field_}" in df.columns:
        d = df.get(f"{group}{i}_direction")
        if direction is None or (
            d is not None and (d.dropna() == direction).all() and d.notna().any()
        ):
            out.append(f"{group}{i}_{field_}")
        i += 1
    return out


def _cbr_name(df: pd.DataFrame, i: int = 0) -> str:
    d = df.get(f"cbr{i}_direction")
    shown = ", ".join(sorted({str(x) for x in d.dropna()})) if d is not None else ""
    return f"CBR flow {i}{', ' + shown if shown else ''}"


def measures(df: pd.DataFrame) -> dict[str, Measure]:
    """The friendly measures a summary table supports, by name, then every numeric
    summary column by its own name."""
    from .schema import column

    out: dict[str, Measure] = {}
    have = set(df.columns)

    def add(
        name: str,
        label: str,
        unit: str,
        cols: Sequence[str],
        scale: float,
        meaning: str,
        combine: Literal["one", "sum"] = "one",
        subject: str = "",
    ) -> None:
        if cols and all(c in have for c in cols):
            out[name] = Measure(name, label, unit, tuple(cols), scale, meaning, combine, subject)

    voip = _cbr_name(df)
    add(
        "voip_p95_ms",
        "VoIP delay p95",
        "ms",
        ["cbr0_delay_p95_s"],
        1e3,
        "95th percentile of CBR flow 0's additional one-way delay (one-way delay - base)",
        subject=voip,
    )
    add(
        "voip_median_ms",
        "VoIP delay median",
        "ms",
        ["cbr0_delay_median_s"],
        1e3,
        "median additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_max_ms",
        "VoIP delay max",
        "ms",
        ["cbr0_delay_max_s"],
        1e3,
        "largest additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_owd_ms",
        "VoIP one-way delay, mean",
        "ms",
        ["cbr0_owd_mean_s"],
        1e3,
        "mean one-way delay of CBR flow 0 (base delay included)",
        subject=voip,
    )
    add(
        "loss_pct",
        "VoIP loss",
        "%",
        ["cbr0_loss_rate"],
        100.0,
        "share of CBR flow 0's packets lost",
        subject=voip,
    )
    add(
        "voip_mos",
        "VoIP MOS",
        "",
        ["cbr0_mos"],
        1.0,
        "ITU-T G.107 mean opinion score of a G.711 call on CBR flow 0, 1-4.5",
        subject=voip,
    )
    if "loss_pct" in out:
        out["voip_loss_pct"] = Measure(**{**out["loss_pct"].__dict__, "name": "voip_loss_pct"})
    add(
        "voip1_p95_ms",
        "VoIP delay p95",
        "ms",
        ["cbr1_delay_p95_s"],
        1e3,
        "95th percentile of CBR flow 1's additional one-way delay",
        subject=_cbr_name(df, 1),
    )
    gp = _flow_cols(df, "tcp", "goodput_bps")
    add(
        "goodput_mbps",
        "TCP goodput, all flows",
        "Mbit/s",
        gp,
        1e-6,
        "goodput of every TCP flow together",
        "sum",
    )
    for direction in ("down", "up"):
        if f"{direction}_goodput_bps" in have:  # the core's aggregate, where it records one
            cols, combine = [f"{direction}_goodput_bps"], "one"
        else:
            cols, combine = _flow_cols(df, "tcp", "goodput_bps", direction), "sum"
        add(
            f"{direction}_goodput_mbps",
            f"TCP goodput, {direction}stream flows",
            "Mbit/s",
            cols,
            1e-6,
            f"goodput of the {direction}stream TCP flows together",
            combine,
        )  # type: ignore[arg-type]
    add(
        "retransmits",
        "TCP retransmissions, all flows",
        "",
        _flow_cols(df, "tcp", "retransmits"),
        1.0,
        "segments retransmitted by every TCP flow together",
        "sum",
    )
    add(
        "timeouts",
        "TCP timeouts, all flows",
        "",
        _flow_cols(df, "tcp", "timeouts"),
        1.0,
        "retransmission timeouts of every TCP flow together",
        "sum",
    )
    add(
        "queue_drops",
        "drops at the downstream queue",
        "",
        ["queue_down_drops"],
        1.0,
        "packets the downstream queue dropped",
    )
    add(
        "queue_max_kb",
        "downstream queue, largest",
        "kB",
        ["queue_down_max_bytes"],
        1e-3,
        "largest occupancy of the downstream queue",
    )
    add(
        "web_p95_ms",
        "web object response time, 95th pct.",
        "ms",
        ["web0_response_p95_s"],
        1e3,
        "95th percentile of web group 0's object response time",
    )
    for c in df.columns:
        decl = column(c)
        if decl is None or decl["dtype"] in ("string", "json") or c in out:
            continue
        u = _unit_for(c, decl["unit"] or None)
        out[c] = Measure(c, c, u.name, (c,), u.scale, decl["meaning"])
    return out


# ---------------------------------------------------------------------------------------
# Parameters


@dataclass
class Param:
    """An x, hue, facet or where value: per trial, in human units."""

    key: str
    values: pd.Series  # per row (human units; strings for categories)
    unit: str = ""
    numeric: bool = False
    aliases: list[str] = field(default_factory=list)
    note: str = ""
    error: str | None = None  # why it cannot be plotted (a limit in bytes and packets)
    consumes: str = ""  # a tag column it reads (not listed as a key of its own)
    order: list[Any] = field(default_factory=list)  # category order

    @property
    def swept(self) -> bool:
        return self.values.nunique(dropna=False) > 1

    @property
    def label(self) -> str:
        return _with_unit(self.key, self.unit)

    def show(self, v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "none"
        if self.numeric:
            return f"{_num(float(v))} {self.unit}".strip()
        return str(v)


def _num(v: float) -> str:
    if v == int(v) and abs(v) < 1e12:
        return str(int(v))
    return f"{v:.4g}"


_GROUPED = re.compile(r"^(tcp|cbr|web|phases)(\d+)_(.+)$")
_UNIT_SUFFIX = re.compile(r"_(s|bps)$")


def _dotted(col: str) -> str:
    """A parameter column as the dotted key an experiment file writes."""
    if col.startswith("tag_"):
        return "tags." + col[4:]
    m = _GROUPED.match(col)
    if m:
        return f"{m[1]}[{m[2]}].{_UNIT_SUFFIX.sub('', m[3])}"
    for d in ("down", "up"):
        for sub in ("queue", "framing"):
            if col.startswith(f"{d}_{sub}_"):
                return f"{d}.{sub}.{_UNIT_SUFFIX.sub('', col[len(d) + len(sub) + 2 :])}"
        if col.startswith(f"{d}_"):
            return f"{d}.{_UNIT_SUFFIX.sub('', col[len(d) + 1 :])}"
    return _UNIT_SUFFIX.sub("", col)


def _is_param_column(col: str) -> bool:
    from .schema import column

    return col not in _IDENTITY and column(col) is None and col not in ("mode",)


def _series_param(key: str, col: str, s: pd.Series) -> Param:
    import pandas as pd

    num = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
    if num:
        u = _unit_for(col, None, s)
        return Param(key, _scaled(s.astype(float), u.scale), u.name, True)
    vals = s.astype(object).where(s.notna(), None)
    vals = vals.map(lambda v: v if v is None else str(v))
    return Param(key, vals, "", False, order=list(dict.fromkeys(vals.dropna())))


def _queue_params(df: pd.DataFrame, d: str) -> list[Param]:
    """``D.queue.kind`` and ``D.queue.limit`` (bytes where every limit is known in bytes)."""
    import pandas as pd

    n = len(df)
    kind_col = df.get(f"{d}_queue_kind", pd.Series([None] * n, index=df.index))
    rule = df.get(f"{d}_queue_rule", pd.Series([None] * n, index=df.index))
    kind = kind_col.astype(object).where(kind_col.notna(), None)
    shown = kind.map(lambda k: "drop-tail" if k is None else _KIND_NAMES.get(str(k), str(k)))
    out = [
        Param(
            f"{d}.queue.kind",
            shown,
            aliases=[f"{d}_queue_kind"],
            order=list(dict.fromkeys(shown)),
            note="the discipline: drop-tail or the AQM's kind",
        )
    ]
    # The limit is stored in one column per unit: bytes (FB rules) or packets.
    cols = [c for c in (f"{d}_queue_limit_bytes", f"{d}_queue_limit_packets") if c in df.columns]
    if not cols:
        return out

    def num(c: str) -> pd.Series:
        if c not in df.columns:
            return pd.Series([float("nan")] * n, index=df.index)
        return pd.to_numeric(df[c], errors="coerce").astype(float)

    in_bytes = num(f"{d}_queue_limit_bytes").notna()
    limit = num(f"{d}_queue_limit_bytes").where(in_bytes, num(f"{d}_queue_limit_packets"))
    bytes_ = limit.where(in_bytes)
    tagged = ""
    for t in (f"tag_{d}_queue_limit_bytes", "tag_queue_limit_bytes"):
        if t in df.columns:
            tv = pd.to_numeric(df[t], errors="coerce").astype(float)
            bytes_ = tv.where(tv.notna(), bytes_)
            tagged = t
    known = limit.notna()
    key = f"{d}.queue.limit"
    if known.any() and bytes_[known].notna().all():
        p = Param(key, bytes_ / 1e3, "kB", True, cols)  # as _scaled
        if tagged and (~in_bytes & known).any():
            which = ", ".join(sorted(set(shown[~in_bytes & known])))
            p.note = f"{which}: packet limits shown at the byte sizes swept (packets_of, {tagged})"
            p.consumes = tagged
        return [*out, p]
    if known.any() and not in_bytes[known].any():
        return [*out, Param(key, limit, "packets", True, cols)]
    p = Param(key, limit, "", True, cols)
    owner = pd.Series(
        [k if k != "drop-tail" else f"drop-tail {r}" for k, r in zip(shown, rule, strict=True)],
        index=df.index,
    )
    kinds = [
        f"{', '.join(sorted(set(owner[known & m])))} in {u}"
        for m, u in ((in_bytes, "bytes"), (~in_bytes, "packets"))
    ]
    p.error = (
        f"{key} counts bytes for some points and packets for others ({'; '.join(kinds)}),"
        " and the store does not record the byte size each packet limit stands for; sweep the"
        ' packet limits as sizes with packets_of = "1500B" (examples/buffer-sweep.toml) or'
        " plot a tag that records them"
    )
    return [*out, p]


def params(df: pd.DataFrame) -> dict[str, Param]:
    """Every parameter of a summary table by dotted key (swept or not), derived ones
    (``D.queue.kind``, ``D.queue.limit`` in bytes, ``tcp.X`` for all flows) included."""
    out: dict[str, Param] = {}
    for col in df.columns:
        if not _is_param_column(col) or re.fullmatch(r"(down|up)_queue_limit_(bytes|packets)", col):
            continue
        key = _dotted(col)
        p = _series_param(key, col, df[col])
        if key != col:
            p.aliases.append(col)
        out.setdefault(key, p)
    for d in ("down", "up"):
        for p in _queue_params(df, d):
            out[p.key] = p
    # Every flow's value, when the flows agree on every trial: tcp.cc, cbr.interval ...
    for key in list(out):
        m = re.fullmatch(r"(tcp|cbr|web)\[0\]\.(.+)", key)
        if not m:
            continue
        group, rest = m[1], m[2]
        same = [k for k in out if re.fullmatch(rf"{group}\[\d+\]\.{re.escape(rest)}", k)]
        first = out[key].values
        if all(out[k].values.equals(first) for k in same):
            p = Param(
                f"{group}.{rest}",
                first,
                out[key].unit,
                out[key].numeric,
                [],
                note=f"the same for every {group} flow",
                order=out[key].order,
            )
            out[p.key] = p
    # queue.X: the downstream queue's, unless only the upstream one varies.
    for key in list(out):
        if key.startswith("down.queue."):
            rest = key.removeprefix("down.queue.")
            up = out.get(f"up.queue.{rest}")
            pick = up if up is not None and up.swept and not out[key].swept else out[key]
            out[f"queue.{rest}"] = Param(
                f"queue.{rest}",
                pick.values,
                pick.unit,
                pick.numeric,
                [],
                note=pick.note or f"queue.{rest} = {pick.key}",
                error=pick.error,
                order=pick.order,
            )
    return out


def _sweep_keys(store_dir: Path) -> dict[str, list[str]]:
    """The sweep keys of the store's experiment file, in file order, each with its values
    as text in file order (a whole queue's as its kind); {} if unreadable."""
    try:
        data = tomllib.loads((store_dir / "experiment.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    from .experiment import is_axis_table

    keys: dict[str, list[str]] = {}

    def note(key: str, v: Any) -> None:
        vals = v.get("values", []) if isinstance(v, dict) else v
        got = keys.setdefault(key, [])
        for x in vals if isinstance(vals, list) else []:
            if isinstance(x, dict):  # a whole queue: its discipline
                k = x.get("kind")
                got.append("drop-tail" if k is None else _KIND_NAMES.get(str(k), str(k)))
            else:
                got.append(str(x))

    def walk(t: Any, prefix: str = "") -> None:
        if not isinstance(t, dict):
            return
        for k, v in t.items():
            if not prefix and k == "zip":
                for g in v if isinstance(v, list) else [v]:
                    walk(g)
            elif isinstance(v, dict) and not is_axis_table(v):
                walk(v, f"{prefix}{k}.")
            else:
                note(f"{prefix}{k}", v)

    sweep = data.get("sweep", {})
    for t in sweep if isinstance(sweep, list) else [sweep]:
        walk(t)
    return {k: list(dict.fromkeys(v)) for k, v in keys.items()}


def _experiment(store_dir: Path) -> Any:
    """The store's experiment file, loaded (None when it is missing or no longer loads)."""
    try:
        from .experiment import ExperimentError, load_experiment

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_experiment(store_dir / "experiment.toml")
    except (ExperimentError, OSError, ValueError):
        return None


def _in_sweep_order(exp: Any, df: pd.DataFrame) -> pd.DataFrame:
    """The trials in the order of the experiment file's points, then by repetition; as
    stored for trials the file does not (or no longer) describe."""
    if exp is None:
        return df
    # By point key; by the scenario itself when the core's version (part of the key) changed.
    index = {pt.key: pt.index for pt in exp.points}
    if "point" not in df.columns:
        return df
    order = df["point"].map(index)
    if order.isna().any() and "scenario" in df.columns:
        by_scenario = {pt.stored_scenario: pt.index for pt in exp.points}
        order = order.fillna(df["scenario"].map(by_scenario))
    order = order.fillna(len(index))
    rep = df["rep"] if "rep" in df.columns else 0
    return (
        df.assign(_o=order.to_numpy(), _r=rep)
        .sort_values(["_o", "_r"], kind="stable")
        .drop(columns=["_o", "_r"])
        .reset_index(drop=True)
    )


def _written_to_param(key: str, ps: Mapping[str, Param]) -> str | None:
    """A sweep key as written (``tcp.cc``, ``down.queue``, ``queue.limit``) -> a param."""
    if key in ps and ps[key].swept:
        return key
    heads = [key, key.replace("queue.", "down.queue.", 1)] if key.startswith("queue") else [key]
    for head in heads:
        if head in ps and ps[head].swept:
            return head
        under = [k for k, p in ps.items() if k.startswith(head + ".") and p.swept]
        for pref in (f"{head}.kind", f"{head}.limit"):
            if pref in under:
                return pref
        if under:
            return under[0]
    return None


@dataclass
class _Data:
    store: Path
    name: str
    df: pd.DataFrame
    params: dict[str, Param]
    measures: dict[str, Measure]
    swept: list[str]  # swept params, sweep-file order first


def _load(store_dir: str | Path) -> _Data:
    from .store import StoreError, open_store

    p = Path(store_dir)
    if not p.is_dir():
        why = "no such directory" if not p.exists() else "is a file, not a results directory"
        raise StorePlotError("DIR", f"{str(store_dir)!r}: {why}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an older schema: the columns say what they hold
            st = open_store(p)
        df = st.summary()
        name = str(st.meta().get("experiment", p.name))
    except StoreError as e:
        raise StorePlotError("DIR", str(e)) from None
    if df.empty:
        raise StorePlotError("DIR", f"{str(store_dir)!r}: no trials stored yet")
    exp = _experiment(p)
    df = _in_sweep_order(exp, df)
    ps = params(df)
    if exp is not None and exp.points:  # categories in the order the sweep makes them
        import pandas as pd

        pts = params(pd.DataFrame([pt.columns() for pt in exp.points]))
        for k, q in ps.items():
            if not q.numeric and k in pts:
                rank = {v: i for i, v in enumerate(pts[k].order)}
                q.order = sorted(q.order, key=lambda v, r=rank: r.get(v, len(r)))  # type: ignore[misc]
    written = _sweep_keys(p)
    order = []
    for w, texts in written.items():
        k = _written_to_param(w, ps)
        if k is None:
            continue
        order.append(k)
        q = ps[k]
        rank = {t: i for i, t in enumerate(texts)}
        if not q.numeric and all(str(v) in rank for v in q.order):  # the file's order
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
    return _Data(p, name, df, ps, measures(df), keep)


def _follows(p: Param, other: Param, exact: bool) -> bool:
    """``p`` repeats ``other`` (the same partition of the trials) or, unless ``exact``,
    is a function of it."""
    import pandas as pd

    a, b = _codes(p.values), _codes(other.values)
    if a == b:
        return True
    if exact:
        return False
    return bool((pd.DataFrame({"o": b, "p": a}).groupby("o")["p"].nunique() <= 1).all())


def _codes(s: pd.Series) -> tuple[int, ...]:
    import pandas as pd

    return tuple(pd.factorize(s.astype(object).where(s.notna(), "\0none"))[0].tolist())


def _resolve(data: _Data, option: str, name: str) -> Param:
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


def _measure(data: _Data, name: str) -> Measure:
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


# ---------------------------------------------------------------------------------------
# Aggregation


def n_resamples(points: int) -> int:
    """Bootstrap resamples per point when a figure has ``points`` points."""
    return max(
        MIN_RESAMPLES, min(N_RESAMPLES, _RESAMPLE_BUDGET // max(1, points) // 1000 * 1000 - 1)
    )


def _interval(
    y: np.ndarray, stat: Stat, interval: Interval, resamples: int = N_RESAMPLES
) -> tuple[float, float]:
    if len(y) == 0:
        return (math.nan, math.nan)
    if interval == "minmax" or len(y) == 1 or np.all(y == y[0]):
        return float(np.min(y)), float(np.max(y))
    from scipy.stats import bootstrap

    fn = np.median if stat == "median" else np.mean
    rng = np.random.default_rng(SEED)
    res = bootstrap(
        (y,),
        fn,
        n_resamples=resamples,
        confidence_level=0.95,
        method="percentile",
        vectorized=True,
        **({"rng": rng} if _HAS_RNG else {"random_state": rng}),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _has_rng() -> bool:
    import inspect

    from scipy.stats import bootstrap

    return "rng" in inspect.signature(bootstrap).parameters


_HAS_RNG: bool = False  # set on first use (scipy is imported lazily)


def _parse_where(data: _Data, where: Sequence[str] | Mapping[str, Any] | None) -> pd.Series:
    import pandas as pd

    mask = pd.Series(True, index=data.df.index)
    items = list(where.items()) if isinstance(where, Mapping) else []
    if not isinstance(where, Mapping):
        for w in where or ():
            k, sep, v = str(w).partition("=")
            if not sep or not k.strip():
                raise StorePlotError("--where", f"{w!r}: expected KEY=VALUE, e.g. tcp.cc=cubic")
            items.append((k.strip(), v.strip()))
    for k, v in items:
        p = _resolve(data, "--where", k)
        vals = p.values
        if p.numeric:
            try:
                want = float(v)
            except (TypeError, ValueError):
                raise StorePlotError(
                    "--where", f"{k}={v}: a number in {p.unit or 'its unit'} expected"
                ) from None
            hit = np.isclose(vals.astype(float), want, rtol=1e-9, atol=1e-12)
        else:
            hit = vals.astype(str) == str(v)
        if not hit.any():
            shown = ", ".join(p.show(x) for x in pd.unique(vals))
            raise StorePlotError("--where", f"{k}={v}: no trial has it; values: {shown}")
        mask &= hit
    return mask


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
    measure's unit. ``df.attrs`` holds the labels and what the points pool over."""
    return _table(_load(store_dir), x, y, hue, facet, stat, interval, where)[0]


def _table(
    data: _Data,
    x: str,
    y: str,
    hue: str | None,
    facet: str | None,
    stat: Stat,
    interval: Interval,
    where: Sequence[str] | Mapping[str, Any] | None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    import pandas as pd

    global _HAS_RNG
    if stat not in ("median", "mean"):
        raise StorePlotError("--stat", f"{stat!r}: median or mean")
    if interval not in ("bootstrap", "minmax"):
        raise StorePlotError("--interval", f"{interval!r}: bootstrap or minmax")
    px = _resolve(data, "--x", x)
    m = _measure(data, y)
    ph = _resolve(data, "--hue", hue) if hue else None
    pf = _resolve(data, "--facet", facet) if facet else None
    named = [("--x", px), ("--hue", ph), ("--facet", pf)]
    for i, (o1, p1) in enumerate(named):
        for o2, p2 in named[i + 1 :]:
            if p1 is not None and p2 is not None and _codes(p1.values) == _codes(p2.values):
                raise StorePlotError(o2, f"{p2.key} is the same as {o1} {p1.key}; give another key")
    mask = _parse_where(data, where)

    def column(p: Param | None) -> Any:
        if p is None:
            return ""
        return p.values if p.numeric else p.values.astype(object).where(p.values.notna(), "none")

    frame = pd.DataFrame(
        {"x": column(px), "hue": column(ph), "facet": column(pf), "y": m.values(data.df)}
    )[mask.to_numpy()]
    if px.numeric and frame["x"].isna().any():
        if frame["x"].isna().all():
            raise StorePlotError("--x", f"{px.key}: no trial has a value")
        warnings.warn(
            f"{int(frame['x'].isna().sum())} trials without a {px.key} are left out",
            stacklevel=3,
        )
        mask &= pd.Series(px.values.notna().to_numpy(), index=mask.index)
        frame = frame[frame["x"].notna()]
    pooled = []
    fixed = [p for p in (px, ph, pf) if p is not None]
    for k in data.swept:
        p = data.params[k]
        if any(p is q or _codes(p.values) == _codes(q.values) for q in fixed):
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
    _HAS_RNG = _HAS_RNG or _has_rng()
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
    }
    out.attrs.update(
        x=px.label,
        y=m.axis_label,
        hue=ph.key if ph else None,
        facet=pf.key if pf else None,
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


def _group_codes(frame: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    import pandas as pd

    keys = frame[list(cols)].astype(object).where(frame[list(cols)].notna(), "\0none")
    return pd.MultiIndex.from_frame(keys).factorize()[0]


def _caption(meta: Mapping[str, Any], tab: pd.DataFrame) -> str:
    n = tab["n"]
    trials = f"{n.min()}" if n.min() == n.max() else f"{n.min()}-{n.max()}"
    what = "median" if meta["stat"] == "median" else "mean"
    band = "95 % bootstrap interval" if meta["interval"] == "bootstrap" else "min-max"
    text = f"{what} of {trials} trials per point, {band}"
    if meta["pooled"]:
        text += f"; pooled over {', '.join(meta['pooled'])}"
    return text


def _eq(s: pd.Series, v: Any) -> pd.Series:
    """``s == v``, NaN equal to NaN (a numeric hue some trials lack)."""
    import pandas as pd

    return s.isna() if pd.isna(v) else s == v


def _head(m: Measure, px: Param) -> str:
    return f"{m.label}{f' ({m.subject})' if m.subject else ''} vs {px.key}"


def _where_text(where: Any) -> str:
    if not where:
        return ""
    items = where.items() if isinstance(where, Mapping) else (str(w).split("=", 1) for w in where)
    return ", ".join(f"{k}={v}" for k, v in items)


# ---------------------------------------------------------------------------------------
# Figures


def figure(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
) -> matplotlib.figure.Figure:
    """A matplotlib figure of ``y`` against ``x`` (see the module's docstring); the
    plotted numbers are in ``fig.collateral_table`` (:func:`table`'s frame)."""
    data = _load(store_dir)
    tab, meta = _table(data, x, y, hue, facet, stat, interval, where)
    return _mpl(tab, meta, title)


def _mpl(tab: pd.DataFrame, meta: Mapping[str, Any], title: str | None) -> matplotlib.figure.Figure:
    import matplotlib.pyplot as plt

    from .plots import STYLE

    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    facets = meta["facets"] if pf is not None else [None]
    hues = meta["hues"] if ph is not None else [None]
    xs = meta["xs"]
    ncol = min(3, len(facets))
    nrow = math.ceil(len(facets) / ncol)
    cats = not px.numeric
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            nrow,
            ncol,
            figsize=(5.2 * ncol + (2.2 if ph is not None else 0.4), 3.9 * nrow + 0.8),
            sharey=True,
            squeeze=False,
            layout="constrained",
        )
        for i, fv in enumerate(facets):
            ax = axes[i // ncol][i % ncol]
            sub = tab if pf is None else tab[_eq(tab["facet"], fv)]
            for j, hv in enumerate(hues):
                s = sub if ph is None else sub[_eq(sub["hue"], hv)]
                if s.empty:
                    continue
                pos = {v: k for k, v in enumerate(xs)}
                # A line only between neighbouring sampled values of the whole x grid.
                idx = np.array([pos[v] for v in s["x"]])
                xv = idx + (j - (len(hues) - 1) / 2) * 0.08 if cats else s["x"].to_numpy(float)
                yv = s["value"].to_numpy(float)
                lo, hi = s["lo"].to_numpy(float), s["hi"].to_numpy(float)
                label = ph.show(hv) if ph is not None else None
                color = f"C{j % 10}"
                gaps = np.flatnonzero(np.diff(idx) != 1) + 1
                dense = not cats and len(xs) > DENSE
                for seg in np.split(np.arange(len(xv)), gaps):
                    if len(seg) > 1 and not cats:  # categories: markers only
                        ax.plot(xv[seg], yv[seg], color=color, lw=1.4, alpha=0.8, zorder=2)
                    if dense:  # the interval as a band: bars would hide each other
                        ax.fill_between(
                            xv[seg], lo[seg], hi[seg], color=color, alpha=0.2, lw=0, zorder=1
                        )
                if dense:
                    ax.plot(xv, yv, "o", ms=2.5, color=color, label=label, zorder=3)
                    continue
                ax.errorbar(
                    xv,
                    yv,
                    yerr=np.vstack([np.clip(yv - lo, 0, None), np.clip(hi - yv, 0, None)]),
                    fmt="o",
                    ms=5,
                    color=color,
                    ecolor=color,
                    capsize=3,
                    lw=0,
                    elinewidth=1.2,
                    label=label,
                    zorder=3,
                )
            if cats:
                ax.set_xticks(range(len(xs)), [px.show(v) for v in xs])
                ax.set_xlim(-0.5, len(xs) - 0.5)
                if sum(len(px.show(v)) for v in xs) > 60:
                    ax.tick_params(axis="x", labelrotation=30)
            elif 1 < len(xs) <= 12 and np.min(np.diff(xs)) > (xs[-1] - xs[0]) / 20:
                ax.set_xticks(xs, [_num(float(v)) for v in xs])  # the sampled values
            if pf is not None:
                ax.set_title(f"{pf.key} = {pf.show(fv)}")
            if i // ncol == nrow - 1 or i + ncol >= len(facets):
                ax.set_xlabel(px.label)
            if i % ncol == 0:
                ax.set_ylabel(m.axis_label)
        for k in range(len(facets), nrow * ncol):
            axes[k // ncol][k % ncol].set_visible(False)
        if ph is not None:
            handles, labels = axes[0][0].get_legend_handles_labels()
            seen = dict(zip(labels, handles, strict=True))
            for ax in axes.flat[1 : len(facets)]:
                for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                    seen.setdefault(lab, h)
            fig.legend(list(seen.values()), list(seen), title=ph.key, loc="outside right center")
        head = title or _head(m, px)
        sub = _caption(meta, tab)
        w = _where_text(meta["where"])
        text = f"{head}\n{meta['name']}: {sub}" + (f"; {w}" if w else "")
        from . import plots

        wrap = getattr(plots, "suptitle", None)  # wraps long lines to the figure's width
        try:
            wrap(fig, text, fontsize=11) if wrap else fig.suptitle(text, fontsize=11)
        except Exception:  # pragma: no cover - a helper being reworked: no wrapping
            fig.suptitle(text, fontsize=11)
        if px.note and px.numeric:
            import textwrap

            width = int(fig.get_figwidth() * 13)  # characters of 9 pt text across the figure
            fig.supxlabel(textwrap.fill(px.note, width), fontsize=9, color="0.35")
    fig.collateral_table = tab  # type: ignore[attr-defined]
    fig.collateral_caption = _caption_text(meta, tab)  # type: ignore[attr-defined]
    return fig


def _caption_text(meta: Mapping[str, Any], tab: pd.DataFrame) -> str:
    """One paragraph saying what the figure shows (for a report's caption)."""
    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    unit = f" in {m.unit}" if m.unit else ""
    text = f"{m.meaning[:1].upper()}{m.meaning[1:]}{unit}, against {px.label}"
    if ph is not None:
        text += f", a line per {ph.key}"
    if pf is not None:
        text += f", a panel per {pf.key}"
    text += f"; {_caption(meta, tab)}"
    w = _where_text(meta["where"])
    if w:
        text += f"; only trials with {w}"
    if px.note and px.numeric:
        text += f". {px.note}"
    return text + "."


def plotly_figure(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
) -> go.Figure:
    """The interactive form of :func:`figure`: a plotly figure whose hover shows each
    point's value, interval and trial count."""
    data = _load(store_dir)
    tab, meta = _table(data, x, y, hue, facet, stat, interval, where)
    return _plotly(tab, meta, title)


def _plotly(tab: pd.DataFrame, meta: Mapping[str, Any], title: str | None) -> go.Figure:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    px, ph, pf, m = meta["x"], meta["hue"], meta["facet"], meta["measure"]
    facets = meta["facets"] if pf is not None else [None]
    hues = meta["hues"] if ph is not None else [None]
    ncol = min(3, len(facets))
    nrow = math.ceil(len(facets) / ncol)
    fig = make_subplots(
        rows=nrow,
        cols=ncol,
        shared_yaxes=True,
        subplot_titles=[f"{pf.key} = {pf.show(f)}" for f in facets] if pf is not None else None,
    )
    band = "95 % CI" if meta["interval"] == "bootstrap" else "min-max"
    unit = f" {m.unit}" if m.unit else ""
    xs = meta["xs"]
    for i, fv in enumerate(facets):
        sub = tab if pf is None else tab[_eq(tab["facet"], fv)]
        for j, hv in enumerate(hues):
            s = sub if ph is None else sub[_eq(sub["hue"], hv)]
            if s.empty:
                continue
            pos = {v: k for k, v in enumerate(xs)}
            idx = np.array([pos[v] for v in s["x"]])
            # None between values that skip a sampled x of the grid: no line bridges it.
            xv: list[Any] = []
            yv: list[Any] = []
            lo: list[Any] = []
            hi: list[Any] = []
            cd: list[Any] = []
            for k, (_, r) in enumerate(s.iterrows()):
                if k and idx[k] - idx[k - 1] != 1:
                    xv.append(None)
                    yv.append(None)
                    lo.append(None)
                    hi.append(None)
                    cd.append([None] * 4)
                xv.append(px.show(r["x"]) if not px.numeric else float(r["x"]))
                yv.append(r["value"])
                lo.append(max(0.0, r["value"] - r["lo"]))
                hi.append(max(0.0, r["hi"] - r["value"]))
                cd.append([int(r["n"]), r["lo"], r["hi"], px.show(r["x"])])
            name = ph.show(hv) if ph is not None else m.name
            fig.add_trace(
                go.Scatter(
                    x=xv,
                    y=yv,
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=(i == 0 and ph is not None),
                    connectgaps=False,
                    line={"color": _PALETTE[j % len(_PALETTE)], "width": 1.6},
                    marker={"size": 7},
                    error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True},
                    customdata=cd,
                    hovertemplate=(
                        (f"{ph.key} = {ph.show(hv)}<br>" if ph is not None else "")
                        + f"{px.key} = %{{customdata[3]}}<br>"
                        + f"{meta['stat']}: %{{y:.4g}}{unit}<br>"
                        + f"{band}: %{{customdata[1]:.4g}} to %{{customdata[2]:.4g}}{unit}<br>"
                        + "trials: %{customdata[0]}<extra></extra>"
                    ),
                ),
                row=i // ncol + 1,
                col=i % ncol + 1,
            )
    head = title or _head(m, px)
    sub = _caption(meta, tab)
    w = _where_text(meta["where"])
    fig.update_layout(
        title={"text": f"{head}<br><sup>{meta['name']}: {sub}{'; ' + w if w else ''}</sup>"},
        legend_title_text=ph.key if ph is not None else None,
        template="plotly_white",
        height=max(460, 340 * nrow + 140),
        hovermode="closest",
    )
    xtitle = px.label + (f"<br><sup>{px.note}</sup>" if px.note and px.numeric else "")
    for k in range(len(facets)):
        r, c = k // ncol + 1, k % ncol + 1
        fig.update_xaxes(title_text=xtitle if r == nrow else None, row=r, col=c)
        if px.numeric and 1 < len(xs) <= 12 and np.min(np.diff(xs)) > (xs[-1] - xs[0]) / 20:
            fig.update_xaxes(tickvals=xs, ticktext=[_num(float(v)) for v in xs], row=r, col=c)
        if not px.numeric:
            fig.update_xaxes(
                type="category",
                categoryorder="array",
                categoryarray=[px.show(v) for v in xs],
                row=r,
                col=c,
            )
        fig.update_yaxes(title_text=m.axis_label if c == 1 else None, row=r, col=c)
    return fig


_PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]  # (matplotlib's: the PNG and the HTML agree)

_SUFFIXES = (".png", ".svg", ".pdf", ".html")


def _check_out(out: str | Path) -> Path:
    from .plots import check_figure_path

    p = Path(out)
    if p.suffix.lower() == ".html":
        if p.name in ("", ".", "..") or str(out).endswith("/"):
            raise StorePlotError("--output", f"{str(out)!r} is not a file name")
        return p
    try:
        check_figure_path(p)
    except ValueError as e:
        raise StorePlotError("--output", str(e).removeprefix("path: ")) from None
    if not p.suffix:
        raise StorePlotError(
            "--output", f"{str(out)!r}: no suffix; give a name ending {', '.join(_SUFFIXES)}"
        )
    return p


def plot(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    out: str | Path = "plot.png",
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
) -> list[Path]:
    """Writes the figure to ``out`` — PNG, SVG or PDF by its suffix (that file only), or
    for ``.html`` a standalone interactive page (plotly.js embedded) — and returns the
    files written."""
    path = _check_out(out)
    data = _load(store_dir)
    tab, meta = _table(data, x, y, hue, facet, stat, interval, where)
    if path.suffix.lower() == ".html":
        fig = _plotly(tab, meta, title)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.write_html(path, include_plotlyjs=True, full_html=True, auto_open=False)
        return [path]
    from .plots import save

    return save(_mpl(tab, meta, title), path)


def suggest(store_dir: str | Path) -> dict[str, str | None]:
    """Sensible defaults for a store: the first numeric swept key on x (else the first
    swept key), the next swept key that varies at a given x as hue, and VoIP p95 delay
    on y (else TCP goodput)."""
    data = _load(store_dir)
    ps, swept = data.params, data.swept
    numeric = [k for k in swept if ps[k].numeric and not ps[k].error]
    usable = [k for k in swept if not ps[k].error]
    x = numeric[0] if numeric else (usable[0] if usable else None)
    hue = None
    if x is not None:
        gx = _codes(ps[x].values)
        for k in usable:
            if k == x:
                continue
            sub = {"g": gx, "v": _codes(ps[k].values)}
            import pandas as pd

            if (pd.DataFrame(sub).groupby("g")["v"].nunique() > 1).any():
                hue = k
                break
    ys = [k for k in ("voip_p95_ms", "goodput_mbps", "web_p95_ms") if k in data.measures]
    y = ys[0] if ys else next(iter(data.measures), None)
    return {"x": x, "y": y, "hue": hue}


# ---------------------------------------------------------------------------------------
# The command


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``collateral plot``: adds the subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "plot",
        help="plot a measure against a swept parameter of a results directory",
        description="Plot a measure of a results directory against a swept parameter: the "
        "median over each point's trials with a 95 % bootstrap interval (or min-max), a "
        "line per --hue value, a panel per --facet value. Keys are dotted sweep keys "
        "(queue.limit, queue.kind, tcp.cc, tags.NAME), store columns or short aliases; "
        "--list prints them and the measures, with units. Writes PNG, SVG or PDF by the "
        "suffix of -o, or a standalone interactive HTML page (.html, plotly.js embedded).",
    )
    p.add_argument("directory", metavar="DIR", help="a results directory")
    p.add_argument("--x", metavar="KEY", help="the swept parameter on the x axis")
    p.add_argument("--y", metavar="MEASURE", help="the measure, e.g. voip_p95_ms, goodput_mbps")
    p.add_argument("--hue", metavar="KEY", help="a line per value of this parameter")
    p.add_argument("--facet", metavar="KEY", help="a panel per value of this parameter")
    p.add_argument(
        "--where",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="keep only trials with this value (numbers in the key's unit, as --list shows)",
    )
    p.add_argument(
        "--stat",
        choices=("median", "mean"),
        default="median",
        help="the centre of each point (default: median)",
    )
    p.add_argument(
        "--interval",
        choices=("bootstrap", "minmax"),
        default="bootstrap",
        help="95%% bootstrap interval of the median, or the trials' min and max (default:"
        " bootstrap)",
    )
    p.add_argument("--title", metavar="TEXT", help="the figure's title")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="FILE.png, .svg, .pdf or .html (default: DIR-NAME-Y-vs-X.png here)",
    )
    p.add_argument("--list", action="store_true", help="list swept keys and measures, then exit")
    return p


def _list_text(data: _Data) -> str:
    lines = [
        f"{data.name}: {len(data.df)} trials",
        "",
        "swept keys (--x, --hue, --facet, --where):",
    ]
    import pandas as pd

    for k in data.swept:
        p = data.params[k]
        vals = [p.show(v) for v in (sorted(pd.unique(p.values.dropna())) if p.numeric else p.order)]
        if p.values.isna().any():
            vals.append("none")
        shown = ", ".join(vals[:12]) + (f", ... ({len(vals)} values)" if len(vals) > 12 else "")
        alias = f" (also {', '.join(p.aliases)})" if p.aliases else ""
        lines.append(f"  {k}{alias}: {shown}")
        if p.error:
            lines.append(f"      not plottable: {p.error}")
        elif p.note:
            lines.append(f"      {p.note}")
    if not data.swept:
        lines.append("  none: every trial has the same parameters")
    lines += ["", "measures (--y):"]
    width = max((len(k) for k, m in data.measures.items() if m.name != m.columns[0]), default=10)
    for k, m in data.measures.items():
        if m.name == m.columns[0]:
            continue
        lines.append(f"  {k:<{width}}  {m.unit or '-':<7} {m.meaning}")
    raw = [k for k, m in data.measures.items() if m.name == m.columns[0]]
    lines += [
        "",
        f"and any numeric summary column ({len(raw)}; 'collateral schema' explains them),",
    ]
    lines.append("shown in ms, Mbit/s, kB or % where it holds s, bit/s, bytes or a rate")
    return "\n".join(lines)


def _default_out(data: _Data, x: str, y: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{data.name}-{y}-vs-{x}")
    return Path(safe[:200] + ".png")


def run(args: argparse.Namespace) -> int:
    """Runs ``collateral plot`` from parsed arguments; bad input: one line, exit 2."""
    from .cli.errors import fail as _fail
    from .cli.paths import input_store as _input_store
    from .cli.paths import output_file as _output_file

    _input_store("DIR", args.directory)
    try:
        data = _load(args.directory)
        if args.list:
            print(_list_text(data))
            return 0
        missing = [o for o in ("x", "y") if not getattr(args, o)]
        if missing:
            s = suggest(args.directory)
            eg = f" e.g. --x {s['x']} --y {s['y']}" + (f" --hue {s['hue']}" if s["hue"] else "")
            if not s["x"]:
                eg = " nothing is swept in this store, so any key gives one point;"
            _fail(f"--{missing[0]}: required;{eg if s['y'] else ''} (--list shows all)")
        out = args.output
        if out is None:
            out = str(_default_out(data, args.x, args.y))
        if Path(out).suffix.lower() == ".html":
            _output_file("--output", out, "out/plot.html")
        else:
            _output_file("--output", out, "out/plot.png", figure=True)
        path = _check_out(out)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tab, meta = _table(
                data, args.x, args.y, args.hue, args.facet, args.stat, args.interval, args.where
            )
        for w in caught:
            import sys

            print(f"collateral: warning: {w.message}", file=sys.stderr)
        if path.suffix.lower() == ".html":
            fig = _plotly(tab, meta, args.title)
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.write_html(path, include_plotlyjs=True, full_html=True, auto_open=False)
            written = [path]
        else:
            from .plots import save

            written = save(_mpl(tab, meta, args.title), path)
    except StorePlotError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"--output: {e.strerror or e}: {getattr(e, 'filename', '') or args.output}")
    for w in written:
        print(f"{w}  ({len(tab)} points, {_caption(meta, tab)})")
    return 0
