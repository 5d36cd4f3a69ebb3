"""Writing parts: a batch's tables and, last, its manifest under ``tmp/``, renamed into
``parts/`` in one atomic step under the commit lock (without trials already stored);
the trial keys stored, and cleaning up after dead writers."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .check import Part
from .files import MANIFEST, fsync, manifest_of, read_manifest
from .locks import pid_alive

if TYPE_CHECKING:
    import pyarrow as pa


class Parts:
    """:class:`~collateral.store.Store`'s parts (a mixin: the store keeps the state)."""

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

    def beyond_trials(self, keys: set[str], points: set[str], trials: int) -> int:
        """How many stored trials of ``keys`` (not the experiment's own) are repetitions
        of its ``points`` at ``rep`` >= ``trials``: left by a run with more trials per
        point. The rest are of points it no longer has, another seed or another core.
        Read from the verified parts' summaries (key, point, rep) alone."""
        import pyarrow.parquet as pq

        n = 0
        for part in self.part_dirs():
            try:
                t = pq.read_table(part / "summary.parquet", columns=["key", "point", "rep"])
            except (OSError, ValueError, KeyError):
                continue
            cols = (t.column(c).to_pylist() for c in ("key", "point", "rep"))
            for k, p, rep in zip(*cols, strict=True):
                n += k in keys and p in points and rep is not None and rep >= trials
        return n

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
                    import pyarrow.compute as pc  # only here: ~60 ms to import

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
                fsync(final.parent)
                man = read_manifest(final / MANIFEST)
                self._parts[final.name] = Part(
                    final.name,
                    keys,
                    trials=len(keys),
                    manifest=man,
                    files={f: e["bytes"] for f, e in man["files"].items()},
                    full=True,
                    columns=summary.column_names,
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
        man = manifest_of(tmp, rows, summary.num_rows)
        (tmp / MANIFEST).write_text(json.dumps(man, indent=1) + "\n", encoding="utf-8")
        for f in (*man["files"], MANIFEST):
            fsync(tmp / f)
        fsync(tmp)
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


def _part_id_of(tmp_name: str) -> str:
    """``HOST-PID-PARTID`` (a directory under ``tmp/``) -> ``PARTID`` (``DATE-RANDOM``)."""
    return "-".join(tmp_name.rsplit("-", 2)[1:])
