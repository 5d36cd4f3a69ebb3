"""The tables a store holds and how rows become them: :data:`TABLES`, the identity
columns every summary row carries and their types, rows and columns as Arrow tables
with the declared types (:mod:`collateral.schema`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

#: The tables a store may hold: the summary and the trace tables.
TABLES: tuple[str, ...] = (
    "summary",
    "cwnd",
    "queue",
    "cbr",
    "drops",
    "congestion",
    "classes",
    "media",
    "rtt",
    "throughput",
)
_STRING_WHEN_EMPTY = {"link", "key", "point", "scenario", "model_version", "code_version"}


#: The store's own columns of a summary row (the metrics' types come from the core's
#: declared schema, :mod:`collateral.schema`; the parameters' from their values).
IDENTITY_COLUMNS = {
    "key": "string",
    "point": "string",
    "rep": "uint32",
    "seed": "uint64",
    "scenario": "string",
    "model_version": "string",
    "code_version": "string",
}


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows (dicts) as an Arrow table: columns in first-seen order, missing values NULL,
    typed as :func:`columns_to_table` types them."""
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    return columns_to_table({name: [r.get(name) for r in rows] for name in names})


def columns_to_table(
    columns: Mapping[str, Sequence[Any]], nulls: Mapping[str, Any] | None = None
) -> pa.Table:
    """Columns (name -> values, all as long: lists, or numpy arrays as the core hands
    a batch's metrics over) as an Arrow table. Identity columns and metrics get their
    declared types whatever the batch holds; parameter columns are typed from their
    values (a column with no value at all: double, or string for the few text ones).
    ``nulls``: a bool mask per array column that has missing values (True: missing)."""
    import pyarrow as pa

    from ..schema import arrow_type, column
    from .arrays import array

    nulls = nulls or {}
    cols = {}
    for name, values in columns.items():
        declared = IDENTITY_COLUMNS.get(name) or (c["dtype"] if (c := column(name)) else None)
        if declared is not None:
            cols[name] = array(values, arrow_type(declared), nulls.get(name))
            continue
        if all(v is None for v in values):
            typ = pa.string() if name in _STRING_WHEN_EMPTY else pa.float64()
            cols[name] = pa.nulls(len(values), typ)
            continue
        if any(isinstance(v, float) for v in values) and all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in values
        ):
            values = [None if v is None else float(v) for v in values]
        try:
            cols[name] = array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: keep them as text
            cols[name] = array([None if v is None else str(v) for v in values])
    return pa.table(cols)
