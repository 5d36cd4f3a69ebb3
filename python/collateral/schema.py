"""The result schema, as the core declares it (``collateral._native.schema()``): every
summary field and trace column with its type, unit and meaning. The store types its
Parquet columns from it; ``collateral schema`` prints it.

Summary fields become flat store columns named by their group's prefix: the trial's own
fields as they are (``events``), a flow's as ``tcp0_goodput_bps``, ``cbr1_delay_p95_s``,
``web0_pages_completed``, a bottleneck direction's as ``queue_down_drops``; ``phases``
is kept whole as JSON text.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from . import _native

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "NOT_SET",
    "VERSION",
    "arrow_type",
    "column",
    "flatten_summary",
    "float_fields",
    "flow_columns",
    "flow_groups",
    "flow_labels",
    "metric_columns",
    "nan_to_none",
    "render",
    "trace_columns",
]

_SCHEMA: dict[str, Any] = _native.schema()
#: The schema's version; a store records the one it was written with.
VERSION: int = _SCHEMA["version"]
#: Summary fields that are parameters of the trial already (the store has them as
#: parameter columns), and flow labels that are parameters too.
_PARAMETERS = set(_SCHEMA["parameter_fields"])
_FLOW_LABELS = set(_SCHEMA["flow_labels"])
#: Trace values that mean "not set" (ssthresh before the first congestion event is
#: "infinite": the core's u32::MAX), by (table, column): missing (NULL, NaN) in the
#: tables that :meth:`collateral.Result.to_arrow` and the store's views give.
NOT_SET: dict[tuple[str, str], int] = {("cwnd", "ssthresh"): 2**32 - 1}


def _groups() -> list[dict[str, Any]]:
    return _SCHEMA["summary"]


def metric_columns() -> list[tuple[str, dict[str, Any]]]:
    """(name pattern with ``{i}``, column) of every stored summary column."""
    out = []
    for g in _groups():
        if g["key"] == "phases":  # kept whole
            col = {"name": "phases", "dtype": "json", "unit": "", "null": True}
            out.append(("phases", {**col, "meaning": g["meaning"]}))
            continue
        skip = _PARAMETERS if g["key"] == "" else _FLOW_LABELS
        out += [(f"{g['prefix']}{c['name']}", c) for c in g["columns"] if c["name"] not in skip]
    return out


@cache
def _patterns() -> list[tuple[re.Pattern[str], dict[str, Any]]]:
    """(regex of the flat store name, column) for every stored summary column."""
    index = re.escape("{i}")
    return [
        (re.compile("^" + re.escape(p).replace(index, r"(\d+|down|up)") + "$"), c)
        for p, c in metric_columns()
    ]


@cache
def column(name: str) -> dict[str, Any] | None:
    """The declared column a flat summary column name stands for (None: not declared)."""
    for rx, c in _patterns():
        if rx.match(name):
            return c
    return None


def flow_groups() -> list[dict[str, Any]]:
    """The summary's per-flow groups (``tcp``, ``cbr``, ``web``): those numbered by
    ``{i}`` whose fields include a flow label (a flow's id, direction, users)."""
    return [
        g
        for g in _groups()
        if "{i}" in g["prefix"] and any(c["name"] in _FLOW_LABELS for c in g["columns"])
    ]


@cache
def flow_columns() -> dict[str, dict[str, Any]]:
    """The per-flow metrics under their common names (``goodput_bps``,
    ``delay_p95_s``, ``pages_completed``), in declared order, each once: what one row
    per flow holds (the store's ``flows`` view). A name two groups share has one type."""
    out: dict[str, dict[str, Any]] = {}
    for g in flow_groups():
        for c in g["columns"]:
            if c["name"] in _FLOW_LABELS:
                continue
            seen = out.setdefault(c["name"], c)
            if seen["dtype"] != c["dtype"] or seen["unit"] != c["unit"]:
                raise ValueError(f"flow column {c['name']!r}: two types or units in the schema")
    return out


def flow_labels(group: dict[str, Any]) -> list[str]:
    """The labels of a flow group's flows that the store keeps as parameter columns
    (``direction``, ``cc``, ``users``; the flow id is not stored)."""
    return [c["name"] for c in group["columns"] if c["name"] in _FLOW_LABELS - {"flow"}]


def float_fields() -> dict[str, list[str]]:
    """Per summary group key ("" for the trial's own fields): its float fields."""
    return {
        g["key"]: [c["name"] for c in g["columns"] if c["dtype"] == "float64"] for g in _groups()
    }


def trace_columns(table: str) -> list[dict[str, Any]]:
    """The declared columns of a trace table (``cwnd``, ``queue``, ``cbr``...)."""
    for t in _SCHEMA["traces"]:
        if t["name"] == table:
            return t["columns"]
    raise KeyError(f"no trace table {table!r}; declared: {[t['name'] for t in _SCHEMA['traces']]}")


def code(table: str, column: str, name: str) -> int:
    """The stored code of ``name`` in a coded trace column (``code("cbr", "fate",
    "in_flight")`` is 3): the schema's order, the core's."""
    (col,) = [c for c in trace_columns(table) if c["name"] == column]
    return col["codes"].index(name)


def trace_tables() -> list[str]:
    return [t["name"] for t in _SCHEMA["traces"]]


def arrow_type(dtype: str) -> pa.DataType:
    import pyarrow as pa

    return {
        "float64": pa.float64(),
        "uint64": pa.uint64(),
        "uint32": pa.uint32(),
        "uint8": pa.uint8(),
        "string": pa.string(),
        "json": pa.string(),
    }[dtype]


def nan_to_none(v: Any) -> Any:
    """NaN (nothing to measure) and infinities as None, through dicts and lists: what
    JSON can hold, and NULL in the store, which SQL aggregates skip."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: nan_to_none(x) for k, x in v.items()}
    if isinstance(v, list):
        return [nan_to_none(x) for x in v]
    return v


def flatten_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """A trial's summary as flat store columns, every one declared (NaN is None), as the
    core flattens it (``collateral_sim::schema::flatten``), ``phases`` as JSON text.
    Raises ValueError for a field the schema does not declare."""
    return _native.flatten_summary(summary)


def render() -> str:
    """The schema as text, for ``collateral schema``."""
    lines = [f"collateral result schema, version {VERSION}", "", "summary (one row per trial):"]
    for pattern, c in metric_columns():
        unit = f" [{c['unit']}]" if c["unit"] else ""
        null = ", may be NULL" if c["null"] else ""
        lines.append(f"  {pattern:28} {c['dtype']:8}{unit} {c['meaning']}{null}")
    lines.append("  ({i}: the flow's or group's index; for queue_, down or up)")
    lines += [
        "",
        "view flows (a row per trial and flow: key, point, rep, seed, kind, flow_index, name,"
        " direction, cc, users, app, and each metric of its kind under the common name):",
        "  " + ", ".join(flow_columns()),
    ]
    for t in _SCHEMA["traces"]:
        lines += ["", f"trace {t['name']} (a row per {t['row']}; plus key):"]
        for c in t["columns"]:
            unit = f" [{c['unit']}]" if c["unit"] else ""
            lines.append(f"  {c['name']:28} {c['dtype']:8}{unit} {c['meaning']}")
    return "\n".join(lines)
