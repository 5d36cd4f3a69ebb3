"""Results store: one directory per experiment, Parquet parts, DuckDB views.

Layout::

    results/mmsys-fig6/
      store.json              format, experiment name, creation time
      experiment.toml         the experiment file as last run
      parts/<id>/summary.parquet     one row per trial (key, parameters, metrics)
      parts/<id>/cwnd.parquet ...    trace tables, when the experiment keeps them
      views.sql               `duckdb -init views.sql` (from this directory) for the CLI
      tmp/                    parts being written (ignored by readers)
      locks/                  who is writing

Each completed batch of trials becomes one *part*: its tables are written to a
directory under ``tmp/`` and renamed into ``parts/`` in one atomic step, so a reader
(or a rerun after a crash) sees a batch's summary and traces together or not at all.
A trial is done when its key is in some part's summary; a killed run loses only the
batches it had not renamed yet, and a rerun does exactly those again.

Shards of one experiment may write into the same directory at once (each takes its own
lock); shards run into separate directories are combined with :meth:`Store.merge`
(``collateral merge``), which never copies a trial the destination already has.

Query with SQL through DuckDB (:meth:`Store.query`, ``collateral query DIR "SQL"``):
the views ``summary`` and, where present, ``cwnd``, ``queue``, ``cbr``, ``drops`` and
``congestion`` read every part (``union_by_name``, so parts with extra columns mix).
Values that are NaN in a trial's summary (e.g. no CBR packet arrived, so no delay) are
NULL in the tables, which SQL aggregates skip.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = ["TABLES", "Store", "StoreError", "open_store", "rows_to_table"]

FORMAT = 1
#: The tables a store may hold: the summary and the trace tables.
TABLES: tuple[str, ...] = ("summary", "cwnd", "queue", "cbr", "drops", "congestion", "classes")
_STRING_WHEN_EMPTY = {"link", "key", "point", "scenario", "model_version", "code_version"}
Output = Literal["pandas", "polars", "arrow"]


def schema_version() -> int:
    from .schema import VERSION

    return VERSION


class StoreError(ValueError):
    """A store directory that cannot be used as asked (wrong experiment, locked...)."""


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
    """Rows (dicts) as an Arrow table: columns in first-seen order, missing values NULL.
    Identity columns and metrics get their declared types whatever the batch holds;
    parameter columns are typed from their values (a column with no value at all:
    double, or string for the few text ones)."""
    import pyarrow as pa

    from .schema import arrow_type, column

    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    cols = {}
    for name in names:
        values = [r.get(name) for r in rows]
        declared = IDENTITY_COLUMNS.get(name) or (c["dtype"] if (c := column(name)) else None)
        if declared is not None:
            cols[name] = pa.array(values, type=arrow_type(declared))
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
            cols[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: keep them as text
            cols[name] = pa.array([None if v is None else str(v) for v in values])
    return pa.table(cols)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(text, encoding="utf-8")
    _fsync(tmp)
    os.replace(tmp, path)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class Store:
    """A results directory. :meth:`create` makes (or reopens) one for an experiment;
    :func:`open_store` opens an existing one for reading."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._keys: set[str] | None = None
        self._locks: list[int] = []

    # -- creation and metadata ---------------------------------------------------------

    @property
    def meta_path(self) -> Path:
        return self.path / "store.json"

    def meta(self) -> dict[str, Any]:
        try:
            return json.loads(self.meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StoreError(f"{self.path}: not a collateral results directory") from None

    def schema_version(self) -> int:
        """The result schema the store was written with (1: before it was recorded)."""
        return int(self.meta().get("schema", 1))

    @classmethod
    def create(cls, path: str | Path, experiment: str, experiment_text: str | None = None) -> Store:
        """Opens ``path`` for writing the results of ``experiment`` (by name), creating
        it if needed; refuses a directory holding another experiment's results."""
        st = cls(path)
        if st.path.exists() and not st.path.is_dir():
            raise StoreError(f"{st.path}: exists and is not a directory")
        if not st.meta_path.exists():
            own = {"parts", "tmp", "locks", "experiment.toml", "views.sql"}
            if st.path.is_dir() and any(
                not p.name.startswith(".") and p.name not in own for p in st.path.iterdir()
            ):
                raise StoreError(
                    f"{st.path}: exists, is not empty and is not a collateral results"
                    " directory; choose another output directory"
                )
            st.path.mkdir(parents=True, exist_ok=True)
            meta = {
                "format": FORMAT,
                "schema": schema_version(),
                "experiment": experiment,
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            }
            # Several shards may create the directory at once: the first link wins.
            tmp = st.path / f".store.json.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
            tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
            _fsync(tmp)
            try:
                os.link(tmp, st.meta_path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        meta = st.meta()
        if meta.get("experiment") != experiment:
            raise StoreError(
                f"{st.path} holds the results of experiment {meta.get('experiment')!r},"
                f" not {experiment!r}; choose another output directory"
            )
        if st.schema_version() != schema_version():
            raise StoreError(
                f"{st.path} holds results of schema version {st.schema_version()}; this"
                f" collateral writes version {schema_version()}; choose another output directory"
            )
        for sub in ("parts", "tmp", "locks"):
            (st.path / sub).mkdir(exist_ok=True)
        if experiment_text is not None:
            _atomic_write_text(st.path / "experiment.toml", experiment_text)
        return st

    # -- locking -----------------------------------------------------------------------

    def lock(self, shard: tuple[int, int] | None = None) -> None:
        """Takes the writer's lock: a whole-experiment run excludes every other run;
        shards exclude a second run of the same shard and any whole run."""
        (self.path / "locks").mkdir(exist_ok=True)
        whole = os.open(self.path / "locks" / "run.lock", os.O_RDWR | os.O_CREAT, 0o644)
        mode = fcntl.LOCK_SH if shard else fcntl.LOCK_EX
        try:
            fcntl.flock(whole, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(whole)
            raise StoreError(
                f"{self.path}: another run is writing here; wait for it or stop it"
            ) from None
        self._locks.append(whole)
        if shard:
            name = self.path / "locks" / f"shard-{shard[0]}-of-{shard[1]}.lock"
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                self.unlock()
                raise StoreError(
                    f"{self.path}: shard {shard[0]}/{shard[1]} is already running here"
                ) from None
            self._locks.append(fd)

    def unlock(self) -> None:
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._locks.clear()

    # -- parts -------------------------------------------------------------------------

    def part_dirs(self) -> list[Path]:
        parts = self.path / "parts"
        if not parts.is_dir():
            return []
        return sorted(p for p in parts.iterdir() if (p / "summary.parquet").is_file())

    def keys(self) -> list[str]:
        """Every trial key in the summary, in part order (a key twice would be a bug)."""
        import pyarrow.parquet as pq

        out: list[str] = []
        for p in self.part_dirs():
            out += pq.read_table(p / "summary.parquet", columns=["key"]).column(0).to_pylist()
        return out

    def done_keys(self, refresh: bool = False) -> set[str]:
        """Keys of the trials already stored (cached; :meth:`write_part` adds to it)."""
        if self._keys is None or refresh:
            self._keys = set(self.keys())
        return self._keys

    def write_part(self, summary: pa.Table, traces: Mapping[str, pa.Table] | None = None) -> Path:
        """Writes one batch atomically: all its tables appear in ``parts/`` at once."""
        import pyarrow.parquet as pq

        part_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        tmp = self.path / "tmp" / f"{socket.gethostname()}-{os.getpid()}-{part_id}"
        tmp.mkdir(parents=True)
        files = [tmp / "summary.parquet"]
        pq.write_table(summary, files[0], compression="zstd")
        for name, table in (traces or {}).items():
            files.append(tmp / f"{name}.parquet")
            pq.write_table(table, files[-1], compression="zstd")
        for f in files:
            _fsync(f)
        _fsync(tmp)
        final = self.path / "parts" / part_id
        os.rename(tmp, final)  # the commit point
        _fsync(final.parent)
        if self._keys is not None:
            self._keys.update(summary.column("key").to_pylist())
        return final

    def clean_tmp(self, max_age_s: float = 86_400) -> int:
        """Removes parts left half-written by dead writers (this host: by pid; other
        hosts: older than ``max_age_s``). Returns how many were removed."""
        tmp = self.path / "tmp"
        if not tmp.is_dir():
            return 0
        host = socket.gethostname()
        removed = 0
        for d in tmp.iterdir():
            dead = False
            if d.name.startswith(f"{host}-"):  # name: host-pid-part_id
                pid_text = d.name[len(host) + 1 :].split("-", 1)[0]
                dead = pid_text.isdigit() and not _pid_alive(int(pid_text))
            elif time.time() - d.stat().st_mtime > max_age_s:
                dead = True
            if dead:
                shutil.rmtree(d, ignore_errors=True)
                removed += 1
        return removed

    def size_bytes(self, table: str | None = None) -> int:
        """Bytes of Parquet in the store (of one table, or all)."""
        pattern = f"{table}.parquet" if table else "*.parquet"
        return sum(f.stat().st_size for f in (self.path / "parts").glob(f"*/{pattern}"))

    # -- reading -----------------------------------------------------------------------

    def tables(self) -> list[str]:
        """The tables present (``summary`` always)."""
        return [
            t for t in TABLES if t == "summary" or any((self.path / "parts").glob(f"*/{t}.parquet"))
        ]

    def _view_sql(self, root: str) -> list[str]:
        out = []
        for t in self.tables():
            glob = f"{root}parts/*/{t}.parquet"
            if t == "summary" and not self.part_dirs():
                out.append("CREATE OR REPLACE VIEW summary AS SELECT NULL::VARCHAR AS key LIMIT 0")
                continue
            out.append(
                f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet("
                f"{_sql_str(glob)}, union_by_name = true)"
            )
        return out

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table of this store."""
        import duckdb

        if not self.meta_path.exists():
            raise StoreError(f"{self.path}: not a collateral results directory")
        con = duckdb.connect()
        root = str(self.path.resolve()).replace("\\", "/") + "/"
        for stmt in self._view_sql(root):
            con.execute(stmt)
        return con

    def write_views_sql(self) -> Path:
        """``views.sql``: the views with paths relative to the store, for the duckdb CLI."""
        text = (
            "-- DuckDB views over this directory's Parquet files. From this directory:\n"
            "--   duckdb -init views.sql\n" + "".join(s + ";\n" for s in self._view_sql(""))
        )
        path = self.path / "views.sql"
        _atomic_write_text(path, text)
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

    # -- merging -----------------------------------------------------------------------

    def merge(self, sources: Iterable[str | Path]) -> tuple[int, int]:
        """Adds the trials of other stores of the same experiment (e.g. shards run in
        separate directories) that this one lacks. Returns (trials added, skipped)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        have = self.done_keys(refresh=True)
        name = self.meta().get("experiment")
        added = skipped = 0
        for src_path in sources:
            src = Store(src_path)
            other = src.meta().get("experiment")
            if other != name:
                raise StoreError(
                    f"{src.path} holds experiment {other!r}, {self.path} holds {name!r}"
                )
            for part in src.part_dirs():
                summary = pq.read_table(part / "summary.parquet")
                keys = summary.column("key")
                new = pc.invert(pc.is_in(keys, value_set=pa.array(sorted(have), pa.string())))
                n_new = pc.sum(new).as_py() or 0
                skipped += len(summary) - n_new
                if n_new == 0:
                    continue
                new_keys = pa.array(summary.filter(new).column("key").to_pylist(), pa.string())
                traces = {}
                for f in sorted(part.glob("*.parquet")):
                    if f.stem == "summary":
                        continue
                    t = pq.read_table(f)
                    traces[f.stem] = t.filter(pc.is_in(t.column("key"), value_set=new_keys))
                self.write_part(summary.filter(new), traces)
                have.update(new_keys.to_pylist())
                added += n_new
        return added, skipped


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_store(path: str | Path) -> Store:
    """Opens an existing results directory for reading (raises StoreError if it is not)."""
    st = Store(path)
    st.meta()
    if st.schema_version() != schema_version():
        import warnings

        warnings.warn(
            f"{st.path}: results of schema version {st.schema_version()}, this collateral"
            f" reads version {schema_version()}: column names and types may differ"
            " (collateral schema prints the current one)",
            stacklevel=2,
        )
    return st
