"""Reading a store with SQL: a DuckDB view per table over the verified parts (leaving
out damaged parts and copies of trials), ``views.sql`` for the duckdb CLI, queries."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .files import atomic_write_text
from .sandbox import QueryRefused, check_reads_only, lock_down, permission_text, sql_str
from .tables import TABLES

if TYPE_CHECKING:
    import duckdb

Output = Literal["pandas", "polars", "arrow"]


class Views:
    """:class:`~collateral.store.Store`'s views and queries (a mixin: the store keeps the
    state)."""

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
            out.append(f"CREATE OR REPLACE VIEW {t} AS {src}")
        return out

    def connect(self, sandbox: bool = True) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table of this store, reading
        only its verified parts. ``sandbox`` (default): the connection can open no file
        outside the store's ``parts/``, loads no extension and cannot be reconfigured
        (:mod:`.sandbox`); ``sandbox=False`` gives DuckDB's full access, for code that
        means to write elsewhere (``COPY … TO``)."""
        import duckdb

        self.meta()
        con = duckdb.connect(
            config={"autoload_known_extensions": False, "autoinstall_known_extensions": False}
        )
        root = str(self.path.resolve()).replace("\\", "/") + "/"
        for stmt in self._view_sql(root, full=None):
            con.execute(stmt)
        if sandbox:
            lock_down(con, root + "parts/")
        return con

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
        con = self.connect(sandbox)
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
            if output == "pandas":
                return rel.df()
            if output == "polars":
                return rel.pl()
            fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
            return fetch()
        finally:
            con.close()

    def summary(self, output: Output = "pandas") -> Any:
        """The summary table, one row per trial, sorted by key."""
        return self.query("SELECT * FROM summary ORDER BY key", output)
