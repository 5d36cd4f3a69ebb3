"""Results store: one directory per experiment, Parquet parts, DuckDB views.

Layout::

    results/mmsys-fig6/
      store.json              format, experiment name, creation time
      experiment.toml         the experiment file as last run
      parts/<id>/summary.parquet     one row per trial (key, parameters, metrics)
      parts/<id>/cwnd.parquet ...    trace tables, when the experiment keeps them
      parts/<id>/manifest.json       each table file's bytes, rows and SHA-256
      quarantine/<id>/        damaged parts moved aside (never deleted), with reason.txt
      views.sql               `duckdb -init views.sql` (from this directory) for the CLI
      tmp/                    parts being written (ignored by readers)
      locks/                  who is writing

Each completed batch of trials becomes one *part*: its tables and, last, its
``manifest.json`` are written to a directory under ``tmp/`` and renamed into ``parts/``
in one atomic step, so a reader (or a rerun after a crash) sees a batch's summary and
traces together or not at all. A trial is done when its key is in the summary of a
*verified* part; a killed run loses only the batches it had not renamed yet, and a rerun
does exactly those again.

**Verification.** Every reader and writer checks each part against its manifest before
using it: the set of table files, each file's size, and the summary's SHA-256, row count
and keys (unique, one row per trial). The trace files' SHA-256 is checked too when the
whole store holds at most :data:`CHEAP_CHECK_BYTES` of Parquet (or always, with
:meth:`Store.verify` ``(full=True)``). A part that fails — truncated, emptied or
overwritten files, a summary deleted (its trace rows would be orphaned), a missing or
broken manifest — is reported in one line and left out: its trials count as missing, so
``collateral run`` runs them again, and queries never read it (a truncated trace part
cannot break a query on ``summary``). Readers (queries, ``--dry-run``, merge sources)
change nothing; writers (``collateral run``, merge into, the testbed's experiments) call
:meth:`Store.repair`, which moves damaged parts to ``quarantine/`` (never deleting them).

A damaged ``store.json`` is a one-line error for readers; the next run of the
experiment that the directory's ``experiment.toml`` names moves it to ``quarantine/`` and
writes it anew (a directory that may belong to another experiment is never rewritten).

**No trial twice.** A part is committed under ``locks/commit.lock`` after checking the
committed parts for its keys: rows of trials some other writer stored meanwhile are
dropped from the part first, so two writers (overlapping shards, a merge beside a run)
cannot store a trial twice. Stores written before that rule may hold a trial in two
parts; readers count it once (the part that sorts first wins; views filter the others'
rows), and :meth:`Store.repair` moves a part holding only such trials to quarantine and
rewrites a part holding some without them.

**Store formats.** Format 2 (this one) has a manifest in every part; a part without one
was not committed by a writer of this format and is damaged. Format 1 stores (written
before manifests) still read: a part without a manifest is valid when its Parquet files
are readable and it has a summary. The first writer that repairs a format 1 store
migrates it: it writes each valid part's manifest from its files as they are, quarantines
unreadable ones and then records format 2 in ``store.json``.

Shards of one experiment may write into the same directory at once (each takes its own
lock, and the directory records the N of the shards running: a shard of another N is
refused while they run); shards run into separate directories are combined with
:meth:`Store.merge` (``collateral merge``), which never copies a trial the destination
already has.

Query with SQL through DuckDB (:meth:`Store.query`, ``collateral query DIR "SQL"``):
the views ``summary`` and, where present, ``cwnd``, ``queue``, ``cbr``, ``drops`` and
``congestion`` read every verified part (``union_by_name``, so parts with extra columns
mix). Values that are NaN in a trial's summary (e.g. no CBR packet arrived, so no delay)
are NULL in the tables, which SQL aggregates skip.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import shutil
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = [
    "TABLES",
    "PartProblem",
    "Store",
    "StoreError",
    "columns_to_table",
    "open_store",
    "rows_to_table",
]

#: 2: a manifest in every part (1: before manifests; still read, migrated by a writer).
FORMAT = 2
MANIFEST = "manifest.json"
#: Up to this much Parquet in a store, every check hashes the trace files too.
CHEAP_CHECK_BYTES = 256 << 20
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
    """Rows (dicts) as an Arrow table: columns in first-seen order, missing values NULL,
    typed as :func:`columns_to_table` types them."""
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    return columns_to_table({name: [r.get(name) for r in rows] for name in names})


def columns_to_table(columns: Mapping[str, Sequence[Any]]) -> pa.Table:
    """Columns (name -> values, all as long) as an Arrow table. Identity columns and
    metrics get their declared types whatever the batch holds; parameter columns are
    typed from their values (a column with no value at all: double, or string for the
    few text ones)."""
    import pyarrow as pa

    from .schema import arrow_type, column

    cols = {}
    for name, values in columns.items():
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


def _tmp_name(path: Path) -> Path:
    """A hidden sibling to write ``path`` through: ``.NAME.HOST-PID.RANDOM.tmp``."""
    host = socket.gethostname()
    return path.with_name(f".{path.name}.{host}-{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = _tmp_name(path)
    tmp.write_text(text, encoding="utf-8")
    _fsync(tmp)
    os.replace(tmp, path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _short(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def _trials(n: int | None) -> str:
    if n is None:
        return "its trials"
    return f"its {n:,} trial" + ("" if n == 1 else "s")


def _note_to_stderr(message: str) -> None:
    print(f"collateral: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class PartProblem:
    """What is wrong with one part. ``kind``: ``damaged`` (its trials count as missing),
    ``duplicate`` (every trial it holds is also in a part that sorts first) or ``overlap``
    (some are: ``duplicates``)."""

    part: str
    kind: Literal["damaged", "duplicate", "overlap"]
    reason: str
    trials: int | None  # rows of its summary (None: unknown)
    duplicates: frozenset[str] = frozenset()


@dataclass
class _Part:
    """One part directory as checked: ``keys`` None when damaged (``reason``)."""

    name: str
    keys: list[str] | None
    reason: str | None = None
    trials: int | None = None
    manifest: dict[str, Any] | None = None  # None: a format 1 part (no manifest)
    files: dict[str, int] = field(default_factory=dict)  # file name -> bytes
    full: bool = False  # trace files hashed (or read, without a manifest) too

    @property
    def tables(self) -> list[str]:
        return [f.removesuffix(".parquet") for f in self.files]


def _read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a part, checked for shape (ValueError saying what is wrong)."""
    try:
        man = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not valid JSON ({_short(e)})") from None
    files = man.get("files") if isinstance(man, dict) else None
    if not isinstance(files, dict) or "summary.parquet" not in files:
        raise ValueError("no files listed, or no summary.parquet")
    for name, f in files.items():
        ok = (
            isinstance(name, str)
            and name.endswith(".parquet")
            and "/" not in name
            and isinstance(f, dict)
            and all(type(f.get(k)) is int and f[k] >= 0 for k in ("bytes", "rows"))
            and isinstance(f.get("sha256"), str)
            and len(f["sha256"]) == 64
        )
        if not ok:
            raise ValueError(f"entry {name!r} is malformed")
    return man


def _summary_keys(source: Any) -> list[str]:
    """The key column of a summary file (a path or an Arrow buffer), checked: one row per
    trial. Raises ValueError (Arrow's errors are ValueError or OSError) saying why."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(source) as f:  # not read_table: no dataset machinery per part
        keys = f.read(columns=["key"]).column(0).to_pylist()
    if any(not isinstance(k, str) or not k for k in keys):
        raise ValueError("a row without a key")
    if len(set(keys)) != len(keys):
        raise ValueError("a trial key twice")
    return keys


class Store:
    """A results directory. :meth:`create` makes (or reopens) one for an experiment;
    :func:`open_store` opens an existing one for reading.

    ``notify``: called with one line per problem found in the parts (default: printed
    to stderr as ``collateral: store DIR: part ID damaged (...); ...``)."""

    def __init__(self, path: str | Path, notify: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.notify: Callable[[str], None] = notify or _note_to_stderr
        self._keys: set[str] | None = None
        self._locks: list[int] = []
        self._parts: dict[str, _Part] = {}  # checked parts, by name (parts never change)
        self._format: int | None = None
        self._noted: set[str] = set()
        self._commit_fd: int | None = None
        self._commit_depth = 0

    # -- creation and metadata ---------------------------------------------------------

    @property
    def meta_path(self) -> Path:
        return self.path / "store.json"

    def meta(self) -> dict[str, Any]:
        """``store.json``, checked: a StoreError in one line naming the file and what is
        wrong with it (missing, unreadable, empty, not JSON, missing fields)."""
        p = self.meta_path
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"{self.path}: not a collateral results directory") from None
        except OSError as e:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"{self.path}: not a directory") from None
            raise StoreError(f"{p}: cannot be read ({e.strerror or e})") from None
        hint = "; restore it, or move it away and run the experiment again to write a new one"
        if not data.strip():
            raise StoreError(f"{p}: empty ({len(data)} bytes){hint}")
        try:
            meta = json.loads(data)
        except UnicodeDecodeError:
            raise StoreError(f"{p}: not text (binary data){hint}") from None
        except json.JSONDecodeError as e:
            raise StoreError(
                f"{p}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno}){hint}"
            ) from None
        if not isinstance(meta, dict):
            raise StoreError(f"{p}: expected a JSON object, found {type(meta).__name__}{hint}")
        name = meta.get("experiment")
        if not isinstance(name, str) or not name:
            raise StoreError(f"{p}: no experiment name (key 'experiment'){hint}")
        for k in ("format", "schema"):
            v = meta.get(k, 1)
            if type(v) is not int or v < 1:
                raise StoreError(f"{p}: {k!r} must be a positive integer, not {v!r}{hint}")
        return meta

    def schema_version(self) -> int:
        """The result schema the store was written with (1: before it was recorded)."""
        return int(self.meta().get("schema", 1))

    def format(self) -> int:
        """The store format (:data:`FORMAT`; 1: parts without manifests)."""
        return int(self.meta().get("format", 1))

    @classmethod
    def create(
        cls,
        path: str | Path,
        experiment: str,
        experiment_text: str | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> Store:
        """Opens ``path`` for writing the results of ``experiment`` (by name), creating
        it if needed; refuses a directory holding another experiment's results."""
        st = cls(path, notify)
        if st.path.exists() and not st.path.is_dir():
            raise StoreError(f"{st.path}: exists and is not a directory")
        if st.meta_path.exists():
            st._set_aside_broken_meta(experiment, experiment_text)
        if not st.meta_path.exists():
            own = {"parts", "tmp", "locks", "quarantine", "experiment.toml", "views.sql"}
            if st.path.is_dir() and any(
                not p.name.startswith(".") and p.name not in own for p in st.path.iterdir()
            ):
                raise StoreError(
                    f"{st.path}: exists, is not empty and is not a collateral results"
                    " directory; choose another output directory"
                )
            st.path.mkdir(parents=True, exist_ok=True)
            # store.json written again over parts of a format 1 store: keep them readable.
            parts = st.path / "parts"
            legacy = parts.is_dir() and any(
                d.is_dir() and not (d / MANIFEST).exists() for d in parts.iterdir()
            )
            meta = {
                "format": 1 if legacy else FORMAT,
                "schema": schema_version(),
                "experiment": experiment,
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            }
            # Several shards may create the directory at once: the first link wins.
            tmp = _tmp_name(st.meta_path)
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
        if st.format() > FORMAT:
            raise StoreError(
                f"{st.path}: store format {st.format()}, written by a newer collateral; this"
                f" one writes format {FORMAT}; choose another output directory"
            )
        for sub in ("parts", "tmp", "locks"):
            (st.path / sub).mkdir(exist_ok=True)
        if experiment_text is not None:
            _atomic_write_text(st.path / "experiment.toml", experiment_text)
        return st

    def _set_aside_broken_meta(self, experiment: str, experiment_text: str | None) -> None:
        """A damaged ``store.json`` in this experiment's own directory is moved to
        ``quarantine/`` (so :meth:`create` writes it anew), in one line. The directory is
        this experiment's when its ``experiment.toml`` (written by every run) is the text
        being run or names the same experiment; otherwise the error stands: a directory
        that may be someone else's is never rewritten."""
        try:
            self.meta()
            return
        except StoreError as e:
            broken = e
        toml = self.path / "experiment.toml"
        try:
            import tomllib

            text = toml.read_text(encoding="utf-8")
            ours = text == experiment_text or (
                tomllib.loads(text).get("experiment", {}).get("name") == experiment
            )
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise broken
        q = self.path / "quarantine"
        q.mkdir(exist_ok=True)
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
        dest = q / f"store.json.{stamp}-{uuid.uuid4().hex[:6]}"
        os.replace(self.meta_path, dest)
        what = str(broken).split(": ", 1)[-1].split("; restore it")[0]
        self.notify(
            f"store {self.path}: store.json damaged ({what}); moved to"
            f" {dest.relative_to(self.path)} and written anew for experiment {experiment!r}"
        )

    # -- locking -----------------------------------------------------------------------

    def lock(self, shard: tuple[int, int] | None = None) -> None:
        """Takes the writer's lock: a whole-experiment run excludes every other run;
        shards exclude a second run of the same shard, any whole run and any shard of
        another N (the N of the running shards is recorded by ``locks/shards-of-N.lock``,
        held shared while they run)."""
        locks = self.path / "locks"
        locks.mkdir(exist_ok=True)
        whole = os.open(locks / "run.lock", os.O_RDWR | os.O_CREAT, 0o644)
        mode = fcntl.LOCK_SH if shard else fcntl.LOCK_EX
        try:
            fcntl.flock(whole, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(whole)
            raise StoreError(
                f"{self.path}: another run is writing here; wait for it or stop it"
            ) from None
        self._locks.append(whole)
        if not shard:
            return
        i, n = shard
        try:
            self._lock_shard_count(n, i)
            name = locks / f"shard-{i}-of-{n}.lock"
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise StoreError(f"{self.path}: shard {i}/{n} is already running here") from None
            self._locks.append(fd)
        except BaseException:
            self.unlock()
            raise

    def _lock_shard_count(self, n: int, i: int) -> None:
        locks = self.path / "locks"
        mutex = os.open(locks / "shards.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(mutex, fcntl.LOCK_EX)  # held for a moment by whoever checks
            for f in sorted(locks.glob("shards-of-*.lock")):
                m_text = f.name.removeprefix("shards-of-").removesuffix(".lock")
                if not m_text.isdigit() or int(m_text) == n:
                    continue
                fd = os.open(f, os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    m = int(m_text)
                    raise StoreError(
                        f"{self.path}: --shard {i}/{n} refused: shards of {m} are running"
                        f" here (recorded in locks/{f.name}); use --shard I/{m}, or wait"
                        f" for them to end"
                    ) from None
                else:
                    f.unlink()  # nobody runs with that N any more (only checked here)
                finally:
                    os.close(fd)
            fd = os.open(locks / f"shards-of-{n}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._locks.append(fd)
        finally:
            os.close(mutex)

    def unlock(self) -> None:
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._locks.clear()

    @contextlib.contextmanager
    def _commit_lock(self) -> Iterator[None]:
        """``locks/commit.lock``, exclusive: one commit (or repair) at a time."""
        if self._commit_depth == 0:
            (self.path / "locks").mkdir(exist_ok=True)
            fd = os.open(self.path / "locks" / "commit.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            self._commit_fd = fd
        self._commit_depth += 1
        try:
            yield
        finally:
            self._commit_depth -= 1
            if self._commit_depth == 0 and self._commit_fd is not None:
                os.close(self._commit_fd)
                self._commit_fd = None

    # -- checking parts ----------------------------------------------------------------

    def _legacy_ok(self) -> bool:
        """Whether a part without a manifest may be valid (a format 1 store)."""
        if self._format is None:
            try:
                self._format = self.format()
            except StoreError:  # unreadable store.json: its writers will say so
                return True
        return self._format < 2

    def _check(self, path: Path, legacy_ok: bool) -> _Part:
        """A part's quick check: its files against the manifest (sizes; the summary's
        hash, rows and keys), or, for a format 1 part, that its files are readable."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = path.name
        present = {f.name: f.stat().st_size for f in path.glob("*.parquet") if f.is_file()}
        man_path = path / MANIFEST
        if not man_path.exists():
            if not legacy_ok:
                return _Part(name, None, "no manifest.json", self._rows(path))
            if "summary.parquet" not in present:
                return _Part(name, None, "no summary.parquet; its trace rows would be orphaned")
            for f in sorted(present, key=lambda f: f != "summary.parquet"):
                try:
                    pq.read_metadata(path / f)
                except (OSError, ValueError) as e:
                    return _Part(name, None, f"{f}: unreadable ({_short(e)})", self._rows(path))
            try:
                keys = _summary_keys(path / "summary.parquet")
            except (OSError, ValueError) as e:
                return _Part(name, None, f"summary.parquet: {_short(e)}")
            return _Part(name, keys, trials=len(keys), files=present)
        try:
            man = _read_manifest(man_path)
        except (OSError, ValueError) as e:
            return _Part(name, None, f"manifest.json: {_short(e)}", self._rows(path))
        listed: dict[str, dict[str, Any]] = man["files"]
        trials = listed["summary.parquet"]["rows"]
        if "summary.parquet" not in present:
            return _Part(
                name, None, "summary.parquet missing; its trace rows would be orphaned", trials
            )
        for f in listed:
            if f not in present:
                return _Part(name, None, f"{f} missing", trials)
        for f in present:
            if f not in listed:
                return _Part(name, None, f"{f} is not in the manifest", trials)
        for f, entry in listed.items():
            if present[f] != entry["bytes"]:
                return _Part(
                    name,
                    None,
                    f"{f}: {present[f]:,} bytes, manifest says {entry['bytes']:,}",
                    trials,
                )
        try:
            data = (path / "summary.parquet").read_bytes()
        except OSError as e:
            return _Part(name, None, f"summary.parquet: unreadable ({_short(e)})", trials)
        if hashlib.sha256(data).hexdigest() != listed["summary.parquet"]["sha256"]:
            return _Part(name, None, "summary.parquet: content differs from its checksum", trials)
        try:
            keys = _summary_keys(pa.BufferReader(data))
        except (OSError, ValueError) as e:
            return _Part(name, None, f"summary.parquet: {_short(e)}", trials)
        if len(keys) != trials:
            return _Part(
                name, None, f"summary.parquet: {len(keys)} rows, manifest says {trials}", trials
            )
        return _Part(name, keys, trials=trials, manifest=man, files=present)

    @staticmethod
    def _rows(path: Path) -> int | None:
        """The summary's row count, if its footer can be read (for messages)."""
        import pyarrow.parquet as pq

        try:
            return int(pq.read_metadata(path / "summary.parquet").num_rows)
        except (OSError, ValueError):
            return None

    def _check_full(self, path: Path, part: _Part) -> _Part:
        """The trace files too: their SHA-256 against the manifest (without one: read)."""
        import pyarrow.parquet as pq

        for f in part.files:
            if f == "summary.parquet":
                continue
            try:
                if part.manifest is not None:
                    entry = part.manifest["files"][f]
                    if _sha256(path / f) != entry["sha256"]:
                        reason = f"{f}: content differs from its checksum"
                        return _Part(part.name, None, reason, part.trials)
                else:
                    pq.read_table(path / f)
            except (OSError, ValueError) as e:
                return _Part(part.name, None, f"{f}: unreadable ({_short(e)})", part.trials)
        part.full = True
        return part

    def _scan(self, full: bool | None = False) -> list[_Part]:
        """Every part directory under ``parts/``, checked (cached: parts never change),
        in name order. ``full``: hash the trace files too; None: when the store is small
        (:data:`CHEAP_CHECK_BYTES`)."""
        parts_dir = self.path / "parts"
        try:
            names = sorted(
                e.name
                for e in os.scandir(parts_dir)
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            )
        except (FileNotFoundError, NotADirectoryError):
            names = []
        legacy_ok = self._legacy_ok()
        known = set(names)
        for gone in [n for n in self._parts if n not in known]:
            del self._parts[gone]
            self._keys = None
        out = []
        for name in names:
            part = self._parts.get(name)
            if part is None:
                try:
                    part = self._check(parts_dir / name, legacy_ok)
                except FileNotFoundError:  # moved away (repaired) while we looked
                    continue
                if part.keys is None and not (parts_dir / name).exists():
                    continue  # likewise
                self._parts[name] = part
                self._keys = None
            out.append(part)
        if full is None:
            full = sum(sum(p.files.values()) for p in out) <= CHEAP_CHECK_BYTES
        if full:
            for i, part in enumerate(out):
                if part.keys is not None and not part.full:
                    out[i] = self._parts[part.name] = self._check_full(parts_dir / part.name, part)
                    if out[i].keys is None:
                        self._keys = None
        return out

    def _problems(self, parts: list[_Part]) -> list[PartProblem]:
        """Damaged parts, and valid ones holding trials of a part that sorts first."""
        out: list[PartProblem] = []
        seen: set[str] = set()
        for p in parts:
            if p.keys is None:
                out.append(PartProblem(p.name, "damaged", p.reason or "?", p.trials))
                continue
            dup = [k for k in p.keys if k in seen]
            if dup and len(dup) == len(p.keys):
                reason = f"its {len(dup):,} trials are all stored in other parts too"
                out.append(PartProblem(p.name, "duplicate", reason, p.trials, frozenset(dup)))
            elif dup:
                reason = f"{len(dup):,} of its {len(p.keys):,} trials are stored in other parts too"
                out.append(PartProblem(p.name, "overlap", reason, p.trials, frozenset(dup)))
            seen.update(p.keys)
        return out

    def _note_read(self, problems: Iterable[PartProblem]) -> None:
        """One line per problem, once, for readers (who leave the part where it is)."""
        for pr in problems:
            if pr.part in self._noted:
                continue
            self._noted.add(pr.part)
            if pr.kind == "damaged":
                what = (
                    f"ignored ({_trials(pr.trials)} counted as missing); the next"
                    " `collateral run` moves it to quarantine/ and reruns them"
                )
            else:
                what = "each trial is counted once; the next `collateral run` removes the copies"
            self.notify(f"store {self.path}: part {pr.part} {pr.kind} ({pr.reason}); {what}")

    def verify(self, full: bool | None = True) -> list[PartProblem]:
        """Checks every part (``full``: the trace files' checksums too; None: when the
        store is small) and returns what is wrong, changing nothing."""
        self._parts.clear()
        self._keys = None
        return self._problems(self._scan(full))

    def repair(self, full: bool | None = None) -> list[PartProblem]:
        """Checks every part and mends the store (a writer's job): damaged parts and
        parts whose trials are all stored elsewhere go to ``quarantine/`` (their trials,
        if no other part has them, count as missing and the next run reruns them), a part
        holding some trials stored elsewhere is rewritten without them, and a format 1
        store gets a manifest in each part. One line per problem (:attr:`notify`).
        Returns the problems found."""
        with self._commit_lock():
            problems = self._problems(self._scan(full))
            # Latest first: a part's copies are judged against the parts before it, which
            # are still whole when it is mended.
            for pr in reversed(problems):
                self._noted.add(pr.part)
                if pr.kind == "overlap":
                    self._rewrite_without(pr)
                    continue
                if self._quarantine(pr.part, f"{pr.kind}: {pr.reason}") is None:
                    continue  # another writer got there first
                if pr.kind == "damaged":
                    rerun = f"{_trials(pr.trials)} will be rerun"
                    what = f"moved to quarantine/, {rerun}"
                else:
                    what = "moved to quarantine/"
                self.notify(f"store {self.path}: part {pr.part} {pr.kind} ({pr.reason}); {what}")
            self._migrate()
        self._keys = None
        return problems

    def _quarantine(self, name: str, reason: str) -> Path | None:
        """Moves ``parts/NAME`` to ``quarantine/NAME`` (None: it is gone already)."""
        q = self.path / "quarantine"
        q.mkdir(exist_ok=True)
        dest = q / name
        n = 1
        while dest.exists():
            dest, n = q / f"{name}.{n}", n + 1
        try:
            os.rename(self.path / "parts" / name, dest)
        except FileNotFoundError:
            return None
        with contextlib.suppress(OSError):
            _fsync(self.path / "parts")
            (dest / "reason.txt").write_text(
                f"{_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')} {reason}\n",
                encoding="utf-8",
            )
        self._parts.pop(name, None)
        self._keys = None
        return dest

    def _rewrite_without(self, pr: PartProblem) -> None:
        """A part holding some trials stored elsewhere: moved to quarantine and
        committed again without them (the commit drops the rows stored elsewhere)."""
        import pyarrow.parquet as pq

        moved = self._quarantine(pr.part, f"overlap: {pr.reason}")
        if moved is None:
            return
        try:
            summary = pq.read_table(moved / "summary.parquet")
            traces = {
                f.stem: pq.read_table(f)
                for f in sorted(moved.glob("*.parquet"))
                if f.stem != "summary"
            }
        except (OSError, ValueError) as e:
            self.notify(
                f"store {self.path}: part {pr.part} overlap ({pr.reason}) and unreadable"
                f" ({_short(e)}); moved to quarantine/, {_trials(pr.trials)} will be rerun"
            )
            return
        new, _ = self.commit_part(summary, traces)
        kept = f"rewrote it as part {new.name}" if new else "nothing else in it"
        self.notify(
            f"store {self.path}: part {pr.part} overlap ({pr.reason}); {kept} without them,"
            " the old one is in quarantine/"
        )

    def _migrate(self) -> None:
        """A format 1 store: a manifest for each valid part, then format 2 in store.json."""
        if not self._legacy_ok() or not self.meta_path.exists():
            return
        try:
            meta = self.meta()
        except StoreError:
            return
        if meta.get("format", 1) >= FORMAT:
            return
        parts = self._scan(False)
        n = 0
        for part in parts:
            if part.keys is None or part.manifest is not None:
                continue
            d = self.path / "parts" / part.name
            man = _manifest(d, {f: None for f in part.files}, len(part.keys))
            _atomic_write_text(d / MANIFEST, json.dumps(man, indent=1) + "\n")
            n += 1
        meta["format"] = FORMAT
        _atomic_write_text(self.meta_path, json.dumps(meta, indent=2) + "\n")
        self._format = FORMAT
        self._parts.clear()
        if n:
            self.notify(
                f"store {self.path}: format 1 (no part manifests); wrote the manifests of"
                f" its {n:,} parts, now format {FORMAT}"
            )

    def _usable(self, full: bool | None = None) -> tuple[list[_Part], list[PartProblem]]:
        """The parts readers use (not damaged, not only copies) and every problem."""
        parts = self._scan(full)
        problems = self._problems(parts)
        self._note_read(problems)
        bad = {pr.part for pr in problems if pr.kind in ("damaged", "duplicate")}
        return [p for p in parts if p.name not in bad], problems

    # -- parts -------------------------------------------------------------------------

    def part_dirs(self) -> list[Path]:
        """The verified parts that hold trials of their own, in name order."""
        return [self.path / "parts" / p.name for p in self._usable()[0]]

    def keys(self) -> list[str]:
        """Every trial key in the summaries of the verified parts, in part order. A key
        appears twice only in stores written before commits were checked (and where a
        repair has not yet run); :meth:`done_keys` and the views count it once."""
        out: list[str] = []
        for p in self._scan(None):
            out += p.keys or []
        return out

    def done_keys(self, refresh: bool = False) -> set[str]:
        """Keys of the trials already stored in verified parts (cached;
        :meth:`commit_part` adds to it)."""
        if self._keys is None or refresh:
            self._usable()
            self._keys = set(self.keys())
        return self._keys

    def write_part(
        self, summary: pa.Table, traces: Mapping[str, pa.Table] | None = None
    ) -> Path | None:
        """Writes one batch atomically: all its tables appear in ``parts/`` at once.
        Rows of trials already stored are left out; None when none is left."""
        return self.commit_part(summary, traces)[0]

    def commit_part(
        self, summary: pa.Table, traces: Mapping[str, pa.Table] | None = None
    ) -> tuple[Path | None, int]:
        """:meth:`write_part`, returning (the part or None, rows left out because their
        trials were already stored, e.g. by another writer meanwhile)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        traces = dict(traces or {})
        keys = summary.column("key").to_pylist()
        tmp = self._write_tmp(summary, traces)
        try:
            with self._commit_lock():
                present = self._present()
                dup = [k for k in keys if k in present]
                if dup:  # rare: write it again without them
                    shutil.rmtree(tmp, ignore_errors=True)
                    if len(dup) == len(keys):
                        return None, len(dup)
                    dups = pa.array(sorted(set(dup)), pa.string())
                    summary = summary.filter(pc.invert(pc.is_in(summary.column("key"), dups)))
                    traces = {
                        n: t.filter(pc.invert(pc.is_in(t.column("key").cast(pa.string()), dups)))
                        for n, t in traces.items()
                    }
                    keys = summary.column("key").to_pylist()
                    tmp = self._write_tmp(summary, traces)
                final = self.path / "parts" / _part_id_of(tmp.name)
                os.rename(tmp, final)  # the commit point
                _fsync(final.parent)
                man = _read_manifest(final / MANIFEST)
                self._parts[final.name] = _Part(
                    final.name,
                    keys,
                    trials=len(keys),
                    manifest=man,
                    files={f: e["bytes"] for f, e in man["files"].items()},
                    full=True,
                )
                if self._keys is not None:
                    self._keys.update(keys)
                return final, len(dup)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _present(self) -> set[str]:
        """Keys in the committed parts now (those of other writers included)."""
        seen: set[str] = set()
        for p in self._scan(False):
            seen.update(p.keys or ())
        return seen

    def _write_tmp(self, summary: pa.Table, traces: Mapping[str, pa.Table]) -> Path:
        """The part's files and, last, its manifest, in a new directory under ``tmp/``."""
        import pyarrow.parquet as pq

        part_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        tmp = self.path / "tmp" / f"{socket.gethostname()}-{os.getpid()}-{part_id}"
        tmp.mkdir(parents=True)
        rows = {"summary.parquet": summary.num_rows}
        pq.write_table(summary, tmp / "summary.parquet", compression="zstd")
        for name, table in traces.items():
            rows[f"{name}.parquet"] = table.num_rows
            pq.write_table(table, tmp / f"{name}.parquet", compression="zstd")
        man = _manifest(tmp, rows, summary.num_rows)
        (tmp / MANIFEST).write_text(json.dumps(man, indent=1) + "\n", encoding="utf-8")
        for f in (*man["files"], MANIFEST):
            _fsync(tmp / f)
        _fsync(tmp)
        return tmp

    def clean_tmp(self, max_age_s: float = 86_400) -> int:
        """Removes parts and files left half-written by dead writers (this host: by
        pid; other hosts: older than ``max_age_s``). Returns how many were removed."""
        host = socket.gethostname()

        def dead(writer: str, path: Path) -> bool:  # writer: HOST-PID
            if writer.startswith(f"{host}-"):
                pid_text = writer[len(host) + 1 :]
                return pid_text.isdigit() and not pid_alive(int(pid_text))
            try:
                return time.time() - path.lstat().st_mtime > max_age_s
            except FileNotFoundError:
                return False

        removed = 0
        tmp = self.path / "tmp"
        if tmp.is_dir():
            for d in tmp.iterdir():
                pid_end = d.name.find("-", len(host) + 1) if d.name.startswith(host) else -1
                writer = d.name[:pid_end] if pid_end > 0 else ""
                if dead(writer, d):
                    shutil.rmtree(d, ignore_errors=True)
                    removed += 1
        # Hidden files of atomic writes (.NAME.HOST-PID.RANDOM.tmp) a writer died in.
        mark = f".{host}-"
        dirs = [self.path, *(p for p in (self.path / "parts").glob("*") if p.is_dir())]
        for d in dirs:
            for f in d.glob(".*.tmp"):
                at = f.name.rfind(mark)
                writer = host + "-" + f.name[at + len(mark) :].split(".")[0] if at > 0 else ""
                if dead(writer, f):
                    with contextlib.suppress(OSError):
                        f.unlink()
                        removed += 1
        return removed

    def size_bytes(self, table: str | None = None) -> int:
        """Bytes of Parquet in the store (of one table, or all)."""
        pattern = f"{table}.parquet" if table else "*.parquet"
        return sum(f.stat().st_size for f in (self.path / "parts").glob(f"*/{pattern}"))

    # -- reading -----------------------------------------------------------------------

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
        separate directories) that this one lacks. Returns (trials added, skipped).
        Damaged parts of a source are left out (one line each); this store is repaired
        first (:meth:`repair`)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        name = self.meta().get("experiment")
        self.repair()
        have = self.done_keys(refresh=True)
        added = skipped = 0
        for src_path in sources:
            src = Store(src_path, self.notify)
            other = src.meta().get("experiment")
            if other != name:
                raise StoreError(
                    f"{src.path} holds experiment {other!r}, {self.path} holds {name!r}"
                )
            for part in src.part_dirs():
                try:
                    summary = pq.read_table(part / "summary.parquet")
                    keys = summary.column("key")
                    new = pc.invert(pc.is_in(keys, value_set=pa.array(sorted(have), pa.string())))
                    n_new = pc.sum(new).as_py() or 0
                    if n_new == 0:
                        skipped += len(summary)
                        continue
                    new_keys = pa.array(summary.filter(new).column("key").to_pylist(), pa.string())
                    traces = {}
                    for f in sorted(part.glob("*.parquet")):
                        if f.stem == "summary":
                            continue
                        t = pq.read_table(f)
                        keep = pc.is_in(t.column("key").cast(pa.string()), value_set=new_keys)
                        traces[f.stem] = t.filter(keep)
                except (OSError, ValueError) as e:
                    self.notify(
                        f"store {src.path}: part {part.name} unreadable ({_short(e)}); not merged"
                    )
                    continue
                _, dropped = self.commit_part(summary.filter(new), traces)
                have.update(new_keys.to_pylist())
                added += n_new - dropped
                skipped += len(summary) - n_new + dropped
        return added, skipped


def _manifest(directory: Path, rows: Mapping[str, int | None], trials: int) -> dict[str, Any]:
    """A part's manifest from its files as they are (rows None: read from the footer)."""
    import pyarrow.parquet as pq

    files = {}
    for f, n in rows.items():
        path = directory / f
        files[f] = {
            "bytes": path.stat().st_size,
            "rows": int(pq.read_metadata(path).num_rows) if n is None else n,
            "sha256": _sha256(path),
        }
    return {"format": FORMAT, "trials": trials, "files": files}


def _part_id_of(tmp_name: str) -> str:
    """``HOST-PID-PARTID`` (a directory under ``tmp/``) -> ``PARTID`` (``DATE-RANDOM``)."""
    return "-".join(tmp_name.rsplit("-", 2)[1:])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_store(path: str | Path, notify: Callable[[str], None] | None = None) -> Store:
    """Opens an existing results directory for reading (raises StoreError if it is not)."""
    st = Store(path, notify)
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
