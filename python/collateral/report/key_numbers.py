"""A store's key numbers: per point, the medians over its trials of TCP goodput per
direction, each real-time flow's loss and delay, each video call's rate, frame delay
and late frames, and a workload's scores (latency idle and loaded, RPM, QoO; the most
common bufferbloat grade), rows labelled by the parameters that tell the points apart."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..display import Unit, column_unit, decimals, fmt_fixed, is_null
from .parameters import param_label, parameters
from .tables import Cell, Table


@dataclass
class Measure:
    label: str
    tooltip: str
    values: Any  # per-trial Series
    unit: Unit
    #: A word per trial (a grade): the point's most common one, not a median.
    words: bool = False


#: A workload's scores the table shows (a simulated RRUL or responsiveness run, an
#: imported measurement), where a trial has them.
_SCORES = (
    ("latency_idle_s", "latency idle"),
    ("latency_loaded_s", "latency loaded"),
    ("latency_loaded_down_s", "latency loaded ↓ phase"),
    ("latency_loaded_up_s", "latency loaded ↑ phase"),
    ("rpm", "responsiveness"),
    ("bufferbloat_grade", "bufferbloat grade"),
    ("qoo_voip", "QoO VoIP"),
)


def _flow_name(df: Any, kind: str, i: int) -> str:
    app = df.get(f"{kind}{i}_app")
    d = df.get(f"{kind}{i}_direction")
    arrow = ""
    if d is not None and d.dropna().nunique() == 1:
        arrow = {"down": " ↓", "up": " ↑"}.get(str(d.dropna().iloc[0]), "")
    if app is not None and app.dropna().nunique() == 1:
        return f"{app.dropna().iloc[0]}{arrow}"
    return f"CBR {i}{arrow}"


def _call_name(df: Any, i: int) -> str:
    """A video call's name: its controller and direction where one for every trial."""
    parts = [f"video {i}"]
    for col in (f"media{i}_controller", f"media{i}_direction"):
        v = df[col].dropna() if col in df.columns else None
        if v is not None and v.nunique() == 1:
            x = str(v.iloc[0])
            parts.append({"down": "↓", "up": "↑"}.get(x, x.upper()))
    return " ".join(parts)


def _measures(df: Any) -> list[Measure]:
    """The key measures of a summary, per trial: TCP goodput per direction (the sum over
    that direction's flows), per real-time flow its loss and additional delay, per video
    call its received rate, frame delay and late frames."""
    import pandas as pd

    out: list[Measure] = []
    tcp = sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"tcp(\d+)_goodput_bps", c))})
    # A measurement imported before its streams' directions were stored has no direction
    # column: its per-direction sums (down_goodput_bps, up_goodput_bps) say which way.
    if tcp and not any(f"tcp{i}_direction" in df.columns for i in tcp):
        sums = [(d, f"{d}_goodput_bps") for d in ("down", "up") if f"{d}_goodput_bps" in df.columns]
        if any(df[c].notna().any() for _, c in sums):
            for d, c in sums:
                total = pd.to_numeric(df[c], errors="coerce")
                if total.notna().any():
                    arrow = "↓" if d == "down" else "↑"
                    out.append(
                        Measure(
                            f"TCP goodput {arrow}, all flows",
                            f"application bytes delivered per second, {d}stream, summed over"
                            " the direction's flows",
                            total,
                            column_unit(c, total),
                        )
                    )
            tcp = []
    for d, arrow in (("down", "↓"), ("up", "↑")):
        flows = [
            i
            for i in tcp
            if f"tcp{i}_direction" not in df.columns
            or (df[f"tcp{i}_direction"] == d).any()
            or (d == "down" and df[f"tcp{i}_direction"].isna().all())
        ]
        if not flows:
            continue
        total = pd.Series(0.0, index=df.index)
        any_flow = pd.Series(False, index=df.index)
        for i in flows:
            mine = (
                df[f"tcp{i}_direction"] == d
                if f"tcp{i}_direction" in df.columns and df[f"tcp{i}_direction"].notna().any()
                else pd.Series(d == "down", index=df.index)
            )
            v = pd.to_numeric(df[f"tcp{i}_goodput_bps"], errors="coerce")
            total = total + v.where(mine & v.notna(), 0.0)
            any_flow |= mine & v.notna()
        total = total.where(any_flow)
        per_row = sum(
            (df[f"tcp{i}_direction"] == d).astype(int)
            if f"tcp{i}_direction" in df.columns and df[f"tcp{i}_direction"].notna().any()
            else int(d == "down")
            for i in flows
        )
        several = bool((pd.Series(per_row, index=df.index) > 1).any())
        out.append(
            Measure(
                f"TCP goodput {arrow}" + (", all flows" if several else ""),
                f"application bytes delivered per second after the warm-up, {d}stream"
                + (", summed over the direction's flows" if several else ""),
                total,
                column_unit("tcp0_goodput_bps", total),
            )
        )
    cbr = sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"cbr(\d+)_sent", c))})
    fields = (
        ["loss_rate", "delay_median_s", "delay_p95_s"]
        if len(cbr) <= 2
        else [
            "loss_rate",
            "delay_p95_s",
        ]
    )
    names = {"loss_rate": "loss", "delay_median_s": "delay p50", "delay_p95_s": "delay p95"}
    from .. import schema

    for i in cbr[:4]:
        who = _flow_name(df, "cbr", i)
        for f in fields:
            col = f"cbr{i}_{f}"
            if col not in df.columns:
                continue
            v = pd.to_numeric(df[col], errors="coerce")
            meaning = (schema.column(col) or {}).get("meaning", "")
            out.append(Measure(f"{who} {names[f]}", meaning, v, column_unit(col, v)))
    calls = sorted(
        {int(m[1]) for c in df.columns if (m := re.fullmatch(r"media(\d+)_received_bps", c))}
    )
    for i in calls[:3]:
        who = _call_name(df, i)
        for f, name in (
            ("received_bps", "received"),
            ("frame_delay_p95_s", "frame delay p95"),
            ("frames_late", "frames late"),
        ):
            col = f"media{i}_{f}"
            if col in df.columns:
                v = pd.to_numeric(df[col], errors="coerce")
                meaning = (schema.column(col) or {}).get("meaning", "")
                out.append(Measure(f"{who} {name}", meaning, v, column_unit(col, v)))
    for col, name in _SCORES:
        if col not in df.columns or not df[col].notna().any():
            continue
        meaning = (schema.column(col) or {}).get("meaning", "")
        if col == "bufferbloat_grade":
            out.append(Measure(name, meaning, df[col], Unit("", 1.0), words=True))
            continue
        v = pd.to_numeric(df[col], errors="coerce")
        out.append(Measure(name, meaning, v, column_unit(col, v)))
    for i in sorted({int(m[1]) for c in df.columns if (m := re.fullmatch(r"web(\d+)_users", c))}):
        col = f"web{i}_response_median_s"
        if col in df.columns:
            v = pd.to_numeric(df[col], errors="coerce")
            out.append(
                Measure(
                    f"web {i} response p50", "median object response time", v, column_unit(col, v)
                )
            )
    return out


def _param_cells(per_point: Any, name: str) -> tuple[str, list[Cell]]:
    """A parameter column's label and cells: numbers in their unit (a queue limit is
    stored in bytes or in packets, one column each)."""
    vals = per_point[name].tolist()
    if name.endswith("queue_kind"):  # no kind: drop-tail
        return param_label(name), [Cell("drop-tail" if is_null(v) else str(v)) for v in vals]
    nums = [v for v in vals if not is_null(v)]
    if nums and all(isinstance(v, int | float) and not isinstance(v, bool) for v in nums):
        u = column_unit(name, nums)
        scaled = [None if is_null(v) else float(v) * u.scale for v in vals]
        d = decimals(scaled)
        label = param_label(name) + (f" ({u.name})" if u.name else "")
        return label, [Cell(fmt_fixed(v, d)) for v in scaled]
    return param_label(name), [Cell("—" if is_null(v) else str(v)) for v in vals]


def key_numbers(df: Any) -> Table | None:
    """Medians over trials per point of the key measures, rows labelled by the fewest
    parameters that tell the points apart."""
    if df is None or df.empty:
        return None
    params = parameters(df)
    measures = _measures(df)
    by = df["point"] if "point" in df.columns else df[params].astype(str).agg("|".join, axis=1)
    grouped = df.groupby(by, sort=False)
    first = grouped.head(1)
    first.index = by.loc[first.index]  # one row per point, indexed by it
    counts = grouped.size()
    if params:
        first = first.sort_values(params, kind="stable", na_position="last")
    order = list(first.index)
    cols: list[tuple[str, str]] = []
    numeric: list[bool] = []
    columns_cells: list[list[Cell]] = []
    for p in params:
        label, cells = _param_cells(first.loc[order], p)
        cols.append((label, p))
        numeric.append(all(c.key is not None or _looks_numeric(c.text) for c in cells))
        columns_cells.append(cells)
    cols.append(("trials", "trials per point"))
    numeric.append(True)
    columns_cells.append([Cell(f"{int(counts[k]):,}") for k in order])
    for m in measures:
        if m.words:
            common = m.values.groupby(by, sort=False).agg(_most_common).reindex(order)
            cols.append((m.label, m.tooltip))
            numeric.append(False)
            columns_cells.append([Cell("—" if is_null(v) else str(v)) for v in common.tolist()])
            continue
        med = (m.values.groupby(by, sort=False).median() * m.unit.scale).reindex(order)
        d = decimals(med.tolist())
        cols.append((m.label + (f" ({m.unit.name})" if m.unit.name else ""), m.tooltip))
        numeric.append(True)
        columns_cells.append([Cell(fmt_fixed(v, d)) for v in med.tolist()])
    rows = [list(r) for r in zip(*columns_cells, strict=True)]
    return Table(cols, numeric, rows, "Medians over each point's trials; — : nothing measured.")


def _most_common(words: Any) -> Any:
    """The most common word of a point's trials (ties: the first in order), None without."""
    counts = words.dropna().astype(str).value_counts()
    if counts.empty:
        return None
    return min(counts.index, key=lambda w: (-counts[w], w))


def _looks_numeric(s: str) -> bool:
    return s == "—" or re.fullmatch(r"-?[\d,]+(\.\d+)?", s) is not None
