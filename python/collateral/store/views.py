"""Reading a store with SQL: a DuckDB view per table over the verified parts (leaving
out damaged parts and copies of trials), the ``flows`` view (:mod:`.flows`),
``views.sql`` for the duckdb CLI, queries.

The views label what the files leave out: a drop-tail queue (no ``kind`` in its
scenario) has ``down_queue_kind`` ``'drop-tail'``, not NULL, and a trace value the core
writes for "not set" (``ssthresh`` before the first congestion event) is NULL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .files import atomic_write_text
from .flows import flows_view_sql
from .sandbox import QueryRefused, check_reads_only, lock_down, permission_text, sql_str
from .tables import TABLES

if TYPE_CHECKING:
    import duckdb

Output = Literal["pandas", "polars", "arrow"]
#: The queue kind of a queue without one (the scenario's default discipline).
DROP_TAIL = "drop-tail"


class Views:
    """:class:`~collateral.store.Store`'s views and queries (a mixin: the store keeps the
    state)."""

    #: The views' SQL and the sandboxed connection made with it (:meth:`_sandboxed_cursor`).
    _kept_connection: tuple[list[str], duckdb.DuckDBPyConnection] | None = None

    def tables(self) -> list[str]:
        """The tables present in verified parts (``summary`` always)."""
        have = {t for p in self._usable()[0] for t in p.tables}
        return [t for t in TABLES if t == "summary" or t in have]

    def _view_sql(self, root: str, full: bool | None = None) -> list[str]:
        """A view per table over the verified parts: by a glob over ``parts/`` when every
        part is sound, else by name, leaving out damaged parts and copies of trials."""
        parts, problems = self._usable(full)
        tables = [t for t in TABLES if t == "summary" or any(t in p.tables for p in parts)]
        dups = {pr.part: pr.duplicates for pr in problems if pr.kind == "overlap"}
        out = []
        for t in tables:
            having = [p for p in parts if t in p.tables]
            if not having:  # no part at all
                out.append(f"CREATE OR REPLACE VIEW {t} AS SELECT NULL::VARCHAR AS key LIMIT 0")
                continue
            if not problems:
                glob = f"{root}parts/*/{t}.parquet"
                src = f"SELECT * FROM read_parquet({sql_str(glob)}, union_by_name = true)"
            else:
                files = [f"{root}parts/{p.name}/{t}.parquet" for p in having if p.name not in dups]
                selects = []
                if files:
                    listed = ", ".join(sql_str(f) for f in files)
                    selects.append(f"SELECT * FROM read_parquet([{listed}], union_by_name = true)")
                for p in having:
                    if p.name in dups:
                        skip = ", ".join(sql_str(k) for k in sorted(dups[p.name]))
                        f = sql_str(f"{root}parts/{p.name}/{t}.parquet")
                        selects.append(f"SELECT * FROM read_parquet({f}) WHERE key NOT IN ({skip})")
                src = " UNION ALL BY NAME ".join(selects)
            # A trace's columns are the declared ones; the summary's, its parts'.
            cols = _summary_names(having) if t == "summary" else _declared(t)
            out.append(f"CREATE OR REPLACE VIEW {t} AS {_labelled(t, src, cols)}")
        names = _summary_names([p for p in parts if "summary" in p.tables])
        out.append(flows_view_sql([*names, *_added(names)]))
        return out

    def connect(self, sandbox: bool = True) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table of this store, reading
        only its verified parts. ``sandbox`` (default): the connection can open no file
        outside the store's ``parts/``, loads no extension and cannot be reconfigured
        (:mod:`.sandbox`); ``sandbox=False`` gives DuckDB's full access, for code that
        means to write elsewhere (``COPY … TO``)."""
        return self._new_connection(*self._views(), sandbox)

    def _views(self) -> tuple[str, list[str]]:
        """The store's root (absolute, ``/``-terminated) and its views' SQL over it."""
        self.meta()
        root = str(self.path.resolve()).replace("\\", "/") + "/"
        return root, self._view_sql(root, full=None)

    @staticmethod
    def _new_connection(root: str, views: list[str], sandbox: bool) -> duckdb.DuckDBPyConnection:
        import duckdb

        con = duckdb.connect(
            config={"autoload_known_extensions": False, "autoinstall_known_extensions": False}
        )
        for stmt in views:
            con.execute(stmt)
        if sandbox:
            lock_down(con, root + "parts/")
        return con

    def _sandboxed_cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor on a sandboxed connection this store keeps while its views' SQL stays
        the same: creating the views reads the parts' schemas (about 0.2 s for a store of
        a few dozen parts), and a report, a plot or the claims ask many queries. The views
        find the parts when a query runs (a glob, or the parts named when some are left
        out), so a kept connection answers as a new one would; its settings are locked."""
        root, views = self._views()
        kept = self._kept_connection
        if kept is None or kept[0] != views:
            # The old one is not closed here: a query of another thread may still read
            # on a cursor of it; it goes with its last cursor.
            kept = self._kept_connection = (views, self._new_connection(root, views, True))
        return kept[1].cursor()

    def write_views_sql(self) -> Path:
        """``views.sql``: the views with paths relative to the store, for the duckdb CLI."""
        text = (
            "-- DuckDB views over this directory's Parquet files. From this directory:\n"
            "--   duckdb -init views.sql\n" + "".join(s + ";\n" for s in self._view_sql(""))
        )
        path = self.path / "views.sql"
        atomic_write_text(path, text)
        return path

    def query(self, sql: str, output: Output = "pandas", sandbox: bool = True) -> Any:
        """Runs SQL over the views; returns a pandas or polars DataFrame or an Arrow table.

        ``sandbox`` (default): ``sql`` must be one statement that only reads (``SELECT``,
        ``WITH``, ``DESCRIBE``, ``SHOW``, ``SUMMARIZE``, ``EXPLAIN``) and may read no file
        outside the store's parts; anything else raises :class:`QueryRefused` before it
        runs (``COPY … TO``, ``ATTACH``, ``EXPORT``, ``CREATE``, ``INSTALL``/``LOAD``,
        ``SET``; ``read_csv('/etc/passwd')``). ``sandbox=False``: DuckDB as it is."""
        import duckdb

        if output not in ("pandas", "polars", "arrow"):
            raise ValueError(f"output must be pandas, polars or arrow, not {output!r}")
        con = self._sandboxed_cursor() if sandbox else self.connect(sandbox=False)
        try:
            if sandbox:
                check_reads_only(con, sql)
            try:
                rel = con.sql(sql)
            except duckdb.PermissionException as e:
                if not sandbox:
                    raise
                parts = str(self.path / "parts")
                raise QueryRefused(permission_text(e, parts)) from None
            if rel is None:  # a statement without a result
                return None
            rel = _uhugeint_as_double(rel)
            if output == "pandas":
                return _pandas(rel)
            if output == "polars":
                return rel.pl()
            return _arrow(rel)
        finally:
            con.close()

    def summary(self, output: Output = "pandas") -> Any:
        """The summary table, one row per trial, sorted by key."""
        return self.query("SELECT * FROM summary ORDER BY key", output)


def _summary_names(parts: list[Any]) -> list[str]:
    """The columns of the parts' summaries (first seen first), as their check read them."""
    out: dict[str, None] = {}
    for p in parts:
        out.update(dict.fromkeys(p.columns or ()))
    return list(out)


def _declared(table: str) -> list[str]:
    """A trace table's declared columns."""
    from ..schema import trace_columns

    return [c["name"] for c in trace_columns(table)]


def _kind_columns(names: list[str]) -> list[tuple[str, bool]]:
    """(``{d}_queue_kind``, whether the files have it) of each direction with a queue."""
    have = set(names)
    out = []
    for d in ("down", "up"):
        col = f"{d}_queue_kind"
        if col in have or any(n.startswith(f"{d}_queue_") for n in have):
            out.append((col, col in have))
    return out


def _added(names: list[str]) -> list[str]:
    """The columns the summary view adds to the files' (a queue kind none of them has)."""
    return [c for c, present in _kind_columns(names) if not present]


def _labelled(table: str, src: str, names: list[str]) -> str:
    """``src`` with its defaults and sentinels as values: ``'drop-tail'`` for a queue
    without a kind (a column the files may not have at all: a store of drop-tail queues
    only), NULL for a trace's "not set"."""
    from ..schema import NOT_SET

    replace, extra = [], []
    if table == "summary":
        for col, present in _kind_columns(names):
            if present:
                replace.append(f"coalesce({col}, {sql_str(DROP_TAIL)}) AS {col}")
            else:
                extra.append(f"{sql_str(DROP_TAIL)} AS {col}")
    for (t, col), value in NOT_SET.items():
        if t == table and col in names:
            replace.append(f"nullif({col}, {value}) AS {col}")
    if not replace and not extra:
        return src
    star = f"* REPLACE ({', '.join(replace)})" if replace else "*"
    return f"SELECT {', '.join([star, *extra])} FROM ({src})"


def _arrow(rel: Any) -> Any:
    """The relation's rows as an Arrow table."""
    fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
    return fetch()


#: DuckDB's types whose pandas form :func:`_pandas` builds from Arrow.
_PLAIN = frozenset(
    [
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "FLOAT",
        "DOUBLE",
        "BOOLEAN",
        "VARCHAR",
    ]
)


def _pandas(rel: Any) -> Any:
    """``rel.df()``, the same frame (dtypes included: integers and booleans with NULLs in
    pandas' nullable dtypes, text that is all NULL as objects), by way of Arrow where every
    column is of a plain type: DuckDB's own conversion makes each text a Python string
    first, 1.5 s of a plot of a 60 000-trial store against 0.4 s."""
    types = [str(t) for t in rel.types]
    if len(set(rel.columns)) < len(types) or not _PLAIN.issuperset(types):
        return rel.df()
    import pandas as pd
    import pyarrow as pa

    nullable = {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.uint8(): pd.UInt8Dtype(),
        pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    table = _arrow(rel)
    if table.num_rows == 0:  # DuckDB types an empty text column as objects
        return rel.df()
    cols = {}
    for name, t, col in zip(table.column_names, types, table.columns, strict=True):
        if col.null_count == 0 or t in ("FLOAT", "DOUBLE"):
            cols[name] = col.to_pandas()
        elif t == "VARCHAR":
            whole = col.null_count < len(col)
            cols[name] = col.to_pandas() if whole else pd.Series([None] * len(col), dtype=object)
        else:
            cols[name] = col.to_pandas(types_mapper=nullable.get)
    return pd.DataFrame(cols)


def _uhugeint_as_double(rel: Any) -> Any:
    """The relation with its UHUGEINT columns (128-bit unsigned, e.g. ``sum()`` of one) as
    DOUBLE, as DuckDB itself hands HUGEINT to pandas: its pandas conversion refuses the
    type, and its Arrow one wraps values from 2^127 up to negative numbers."""
    types = [str(t) for t in rel.types]
    if "UHUGEINT" not in types:
        return rel
    # Every column by position and named again: names a query repeats stay as they were.
    cols = [
        f'#{i}{"::DOUBLE" if t == "UHUGEINT" else ""} AS "{c.replace(chr(34), chr(34) * 2)}"'
        for i, (c, t) in enumerate(zip(rel.columns, types, strict=True), 1)
    ]
    return rel.project(", ".join(cols))
