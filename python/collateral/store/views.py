"""Reading a store with SQL: a DuckDB view per table over the verified parts (leaving
out damaged parts and copies of trials), ``views.sql`` for the duckdb CLI, queries."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .files import atomic_write_text
from .tables import TABLES

if TYPE_CHECKING:
    import duckdb

Output = Literal["pandas", "polars", "arrow"]


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


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
                src = f"SELECT * FROM read_parquet({_sql_str(glob)}, union_by_name = true)"
            else:
                files = [f"{root}parts/{p.name}/{t}.parquet" for p in having if p.name not in dups]
                selects = []
                if files:
                    listed = ", ".join(_sql_str(f) for f in files)
                    selects.append(f"SELECT * FROM read_parquet([{listed}], union_by_name = true)")
                for p in having:
                    if p.name in dups:
                        skip = ", ".join(_sql_str(k) for k in sorted(dups[p.name]))
                        f = _sql_str(f"{root}parts/{p.name}/{t}.parquet")
                        selects.append(f"SELECT * FROM read_parquet({f}) WHERE key NOT IN ({skip})")
                src = " UNION ALL BY NAME ".join(selects)
            out.append(f"CREATE OR REPLACE VIEW {t} AS {src}")
        return out

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table of this store, reading
        only its verified parts."""
        import duckdb

        self.meta()
        con = duckdb.connect()
        root = str(self.path.resolve()).replace("\\", "/") + "/"
        for stmt in self._view_sql(root, full=None):
            con.execute(stmt)
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

    def query(self, sql: str, output: Output = "pandas") -> Any:
        """Runs SQL over the views; returns a pandas or polars DataFrame or an Arrow table."""
        con = self.connect()
        try:
            rel = con.sql(sql)
            if rel is None:  # a statement without a result
                return None
            if output == "pandas":
                return rel.df()
            if output == "polars":
                return rel.pl()
            if output == "arrow":
                fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table
                return fetch()
            raise ValueError(f"output must be pandas, polars or arrow, not {output!r}")
        finally:
            con.close()

    def summary(self, output: Output = "pandas") -> Any:
        """The summary table, one row per trial, sorted by key."""
        return self.query("SELECT * FROM summary ORDER BY key", output)
