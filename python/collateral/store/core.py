"""The :class:`Store` class: a results directory, created for an experiment or opened
for reading, with its ``store.json``. Its other methods come by concept from the mixins
(:mod:`.locks`, :mod:`.check`, :mod:`.repair`, :mod:`.parts`, :mod:`.views`,
:mod:`.merge`), which use the state :meth:`Store.__init__` sets."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .check import Checks, Part
from .files import FORMAT, MANIFEST, POINTS, atomic_write_text, fsync, tmp_name
from .locks import Locks
from .merge import Merging
from .parts import Parts
from .problems import StoreError, note_to_stderr
from .repair import Repairs
from .views import Views

if TYPE_CHECKING:
    import pyarrow as pa

#: The metadata key of ``points.parquet`` that holds the sweep's keys as written.
SWEEP_META = "collateral:sweep"


def schema_version() -> int:
    from ..schema import VERSION

    return VERSION


class Store(Locks, Checks, Repairs, Parts, Views, Merging):
    """A results directory. :meth:`create` makes (or reopens) one for an experiment;
    :func:`open_store` opens an existing one for reading.

    ``notify``: called with one line per problem found in the parts (default: printed
    to stderr as ``collateral: store DIR: part ID damaged (...); ...``)."""

    def __init__(self, path: str | Path, notify: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.notify: Callable[[str], None] = notify or note_to_stderr
        self._keys: set[str] | None = None
        self._locks: list[int] = []
        self._parts: dict[str, Part] = {}  # checked parts, by name (parts never change)
        self._format: int | None = None
        self._noted: set[str] = set()
        self._commit_fd: int | None = None
        self._commit_depth = 0

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

    def write_points(
        self, rows: list[dict[str, Any]], sweep: list[tuple[str, list[Any]]] | None = None
    ) -> None:
        """``points.parquet``: the points of the sweep as the last run expanded them, its
        ``--set`` applied (key, index in the file's order, parameter columns: rows of
        :meth:`Experiment.point_rows`), so that a plot or report orders the trials without
        expanding the experiment again (about a second for 2 000 points); ``sweep``, the
        sweep keys as written with their values (:meth:`Experiment.sweep_axes`), in its
        metadata (:meth:`read_sweep`). Replaced whole, atomically. Only a shortcut: when
        it cannot be written, the run goes on without it (in one line) and readers
        expand the experiment file."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .tables import rows_to_table

        path = self.path / POINTS
        tmp = tmp_name(path)
        try:
            table = rows_to_table(rows)
            if sweep is not None:
                text = json.dumps([[k, v] for k, v in sweep], default=str)
                table = table.replace_schema_metadata(
                    {**(table.schema.metadata or {}), SWEEP_META.encode(): text.encode()}
                )
            pq.write_table(table, tmp, compression="zstd")
            fsync(tmp)
            os.replace(tmp, path)
        except (OSError, pa.ArrowException, OverflowError, TypeError, ValueError) as e:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)  # an earlier run's points would be stale
            self.notify(f"collateral: store {self.path}: {POINTS} not written ({e})")
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def read_sweep(points: pa.Table | None) -> list[tuple[str, list[Any]]] | None:
        """The sweep keys and values :meth:`write_points` kept with ``points``; None
        when it kept none (an older store)."""
        meta = (points.schema.metadata or {}) if points is not None else {}
        try:
            got = json.loads(meta[SWEEP_META.encode()])
        except (KeyError, ValueError, RecursionError):
            return None
        ok = isinstance(got, list) and all(
            isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], list)
            for a in got
        )
        return [(k, v) for k, v in got] if ok else None

    def read_points(self) -> pa.Table | None:
        """The table :meth:`write_points` wrote; None when there is none (a store of an
        older collateral, or of imported results) or it cannot be read."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(self.path / POINTS)
        except (OSError, pa.ArrowException):
            return None

    def check_for_writing(self, experiment: str) -> None:
        """Refuses, as :meth:`create` would, a directory that is not this experiment's
        results, without writing anything (``run --dry-run``); a damaged ``store.json``
        that the run would set aside and write anew passes."""
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path}: exists and is not a directory")
        if self.meta_path.exists():
            if self._broken_meta(experiment, None) is None:
                self._refuse_other_results(experiment)
        else:
            self._refuse_foreign_directory()

    def _refuse_foreign_directory(self) -> None:
        own = {"parts", "tmp", "locks", "quarantine", "experiment.toml", "views.sql", POINTS}
        if self.path.is_dir() and any(
            not p.name.startswith(".") and p.name not in own for p in self.path.iterdir()
        ):
            raise StoreError(
                f"{self.path}: exists, is not empty and is not a collateral results"
                " directory; choose another output directory"
            )

    def _refuse_other_results(self, experiment: str) -> None:
        meta = self.meta()
        if meta.get("experiment") != experiment:
            raise StoreError(
                f"{self.path} holds the results of experiment {meta.get('experiment')!r},"
                f" not {experiment!r}; choose another output directory"
            )
        if self.schema_version() != schema_version():
            raise StoreError(
                f"{self.path} holds results of schema version {self.schema_version()}; this"
                f" collateral writes version {schema_version()}; choose another output directory"
            )
        if self.format() > FORMAT:
            raise StoreError(
                f"{self.path}: store format {self.format()}, written by a newer collateral;"
                f" this one writes format {FORMAT}; choose another output directory"
            )

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
            st._refuse_foreign_directory()
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
            tmp = tmp_name(st.meta_path)
            tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
            fsync(tmp)
            try:
                os.link(tmp, st.meta_path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        st._refuse_other_results(experiment)
        for sub in ("parts", "tmp", "locks"):
            (st.path / sub).mkdir(exist_ok=True)
        if experiment_text is not None:
            atomic_write_text(st.path / "experiment.toml", experiment_text)
        return st


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
