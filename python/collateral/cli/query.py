"""``query``: SQL over a results directory (DuckDB), as a table in human units, CSV
or JSON."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from ..display import fmt_cell, stored_unit
from . import HELP
from .errors import fail
from .paths import console, input_store
from .values import count


def add_parser(sub: Any) -> None:
    q = sub.add_parser(
        "query",
        help=HELP["query"],
        description="Run SQL over a results directory. Views: summary (one row per trial: "
        "key, point, rep, seed, parameters such as down_queue_limit_bytes, tcp0_cc, rtt_s, and "
        "metrics such as tcp0_goodput_bps, cbr0_loss_rate, cbr0_delay_p95_s), flows (one row "
        "per trial and flow: kind, name, direction and metrics such as goodput_bps, "
        "delay_p95_s) and the trace "
        "tables the experiment kept (cwnd, queue, cbr, drops, congestion). "
        "'collateral schema' lists every result column with its type, unit and meaning. "
        "A query only reads: one SELECT (WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN) over the "
        "store's own files; COPY, ATTACH, EXPORT, CREATE, SET, INSTALL/LOAD and files "
        "outside the store are refused.",
    )
    q.add_argument("directory", metavar="DIR", help="a results directory")
    q.add_argument("sql", metavar="SQL", help='e.g. "SELECT count(*) FROM summary"')
    q.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="output format (default: table)",
    )
    q.add_argument(
        "--max-rows",
        metavar="N",
        type=count(0, 10**9),
        default=100,
        help="rows shown in table format (default: 100; 0 = all)",
    )
    q.add_argument(
        "--raw",
        action="store_true",
        help="table format: numbers as stored (bit/s, s, B) instead of human units",
    )


def run(args: argparse.Namespace) -> int:
    from ..store import QueryRefused, StoreError, open_store

    input_store("DIR", args.directory)
    try:
        store = open_store(args.directory)
    except StoreError as e:
        fail(f"DIR: {e}")
    import duckdb

    # The table needs no pandas (a third of the command's start): Arrow's own columns,
    # when they are numbers, text, booleans or lists of those (what the views hold).
    arrow = args.format == "table"
    try:
        res = store.query(args.sql, "arrow" if arrow else "pandas")
        if arrow and res is not None and not all(map(_plain, res.schema.types)):
            # Dates, times, intervals, maps, structs...: as pandas shows them (Arrow's
            # Python values fail on dates outside Python's range, or print as reprs).
            arrow, res = False, store.query(args.sql, "pandas")
    except QueryRefused as e:
        fail(f"SQL: {e}")
    except duckdb.CatalogException as e:
        fail(f"SQL: {_missing_trace(str(e)) or e}")
    except duckdb.Error as e:
        # DuckDB's hint ("Candidate bindings: ...") kept on the line; not the query
        # echoed back under it ("LINE 1: SELECT ... ^").
        fail(f"SQL: {str(e).partition(chr(10) + 'LINE ')[0]}")
    if res is None:
        return 0
    if args.format == "csv":
        df = res
        # List cells (arrays of a trace or a sweep's values) as JSON, not numpy's repr.
        for c in df.columns:
            if df[c].dtype == object and df[c].map(_is_list).any():
                df[c] = df[c].map(lambda v: json.dumps(_listify(v)) if _is_list(v) else v)
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        print(res.to_json(orient="records", double_precision=15))
    else:
        columns = (_arrow_columns if arrow else _frame_columns)(res, args.max_rows)
        _print_table(columns, len(res), args.raw)
    return 0


def _plain(t: Any) -> bool:
    """An Arrow type the table shows from Arrow itself: a number, text, a boolean, or a
    list of numbers, text or booleans."""
    import pyarrow as pa

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
        if pa.types.is_decimal(t):
            return False
    return any(
        f(t)
        for f in (
            pa.types.is_integer,
            pa.types.is_floating,
            pa.types.is_decimal,
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_boolean,
            pa.types.is_null,
        )
    )


#: A table's columns as the table shows them: (header, numeric, the shown rows' values).
Columns = list[tuple[str, bool, list[Any]]]


def _arrow_columns(table: Any, max_rows: int) -> Columns:
    import pyarrow as pa

    shown = table if not max_rows else table.slice(0, max_rows)
    out = []
    for name, col in zip(table.column_names, shown.columns, strict=True):
        numeric = pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
        if pa.types.is_decimal(col.type):  # sum() and avg() of integers: a number
            col, numeric = col.cast(pa.float64()), True
        out.append((name, numeric, col.to_pylist()))
    return out


def _frame_columns(df: Any, max_rows: int) -> Columns:
    shown = df if not max_rows else df.head(max_rows)
    return [
        (str(c), df[c].dtype.kind in "iuf", list(shown.iloc[:, i]))
        for i, c in enumerate(df.columns)
    ]


def _print_table(columns: Columns, rows: int, raw: bool) -> None:
    """A rich table, each number in a human unit of its column's; the cells' text as it
    is (brackets are not rich's markup)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    units = [None if raw else (result_unit(name) or None) for name, _, _ in columns]
    for name, numeric, _ in columns:
        t.add_column(escape(name), justify="right" if numeric else "left")
    shown = len(columns[0][2]) if columns else 0
    for row in zip(*(values for _, _, values in columns), strict=True):
        t.add_row(*(escape(fmt_cell(v, u)) for v, u in zip(row, units, strict=True)))
    # In a pipe or a log, do not squeeze the columns into 80 characters.
    con = console()
    con.print(t)
    if shown < rows:
        con.print(f"({rows - shown} more rows; --max-rows 0 shows all)")
    elif rows == 0:  # the header alone does not say that nothing matched
        con.print("(no rows)")


#: Functions whose result is in the unit of their first argument: aggregates such as
#: ``avg(cbr0_delay_p95_s)`` or ``quantile_cont(goodput_bps, 0.9)``, and rounding.
_SAME_UNIT = frozenset(
    {
        *("avg", "mean", "median", "min", "max", "sum", "fsum", "favg", "mode", "mad"),
        *("quantile", "quantile_cont", "quantile_disc", "percentile_cont", "percentile_disc"),
        *("first", "last", "any_value", "arbitrary", "stddev", "stddev_pop", "stddev_samp"),
        *("arg_min", "arg_max", "min_by", "max_by", "argmin", "argmax"),
        *("round", "abs", "ceil", "floor", "trunc"),
    }
)
_WINDOW = re.compile(r"\s+(?:OVER|FILTER)\s*\((?:[^()]|\([^()]*\))*\)$", re.IGNORECASE)
_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\((.*)\)$", re.DOTALL)


def result_unit(header: str) -> str:
    """The stored unit of a result column by its header: a known column's (``rtt_s``,
    ``cbr0_delay_p95_s``, ``t.goodput_bps``), or, through functions that keep it
    (``avg(...)``, ``max(DISTINCT ...)``, ``round(median(...), 3)``), the unit of the
    column they are applied to; "" when unknown (``count(*)``, ``median(x) * 1e3``)."""
    text = header.strip()
    while (bare := _WINDOW.sub("", text)) != text:  # avg(x) OVER (...): x's unit too
        text = bare
    m = _CALL.match(text)
    if m is None:
        name = text.rsplit(".", 1)[-1].strip('"')
        return stored_unit(name) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else ""
    if m[1].lower() not in _SAME_UNIT:
        return ""
    depth, first = 0, m[2]
    for i, ch in enumerate(m[2]):  # the first argument: up to a top-level comma
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return ""  # "f(a) + g(b)": not one call
        if ch == "," and depth == 0:
            first = m[2][:i]
            break
    if depth < 0 or (first is m[2] and depth != 0):
        return ""
    first = re.sub(r"^\s*DISTINCT\s+", "", first, flags=re.IGNORECASE)
    return result_unit(first)


def _is_list(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or type(v).__name__ == "ndarray"


def _listify(v: Any) -> Any:
    return [_listify(x) for x in v] if _is_list(v) else (v.item() if hasattr(v, "item") else v)


def _missing_trace(message: str) -> str | None:
    """A trace table the run did not keep: said so, not DuckDB's guess at a system
    table ("Did you mean pg_index?")."""
    import re

    from ..schema import trace_tables

    m = re.match(r"Catalog Error: Table with name (\w+) does not exist", message)
    if m is None or m[1].lower() not in trace_tables():
        return None
    return (
        f"no {m[1]} table: this directory's runs kept no {m[1].lower()} traces (the experiment's"
        " [experiment] traces = [...] names the traces a run keeps)"
    )
