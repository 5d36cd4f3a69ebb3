"""Checking parts: each part against its manifest (sizes; the summary's hash, rows and
keys; with ``full``, the trace files' hashes), format 1 parts by reading them, and the
problems found (damaged parts, copies of trials). Readers change nothing."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .files import MANIFEST, read_manifest, sha256
from .problems import PartProblem, StoreError, error_text, its_trials

#: Up to this much Parquet in a store, every check hashes the trace files too.
CHEAP_CHECK_BYTES = 256 << 20


@dataclass
class Part:
    """One part directory as checked: ``keys`` None when damaged (``reason``)."""

    name: str
    keys: list[str] | None
    reason: str | None = None
    trials: int | None = None
    manifest: dict[str, Any] | None = None  # None: a format 1 part (no manifest)
    files: dict[str, int] = field(default_factory=dict)  # file name -> bytes
    full: bool = False  # trace files hashed (or read, without a manifest) too
    columns: list[str] | None = None  # the summary's (read with its keys: views need them)

    @property
    def tables(self) -> list[str]:
        return [f.removesuffix(".parquet") for f in self.files]


def _summary_keys(source: Any) -> tuple[list[str], list[str]]:
    """The key column of a summary file (a path or an Arrow buffer), checked: one row per
    trial; and the file's column names. Raises ValueError (Arrow's errors are ValueError
    or OSError) saying why."""
    import pyarrow.parquet as pq

    # Not read_table: no dataset machinery per part. One thread, no pre-buffering: the
    # source is a Python buffer here, and a reader one of Arrow's threads still held at
    # the interpreter's exit would need the GIL to let go of it, which there ends that
    # thread and aborts the process ("terminate called without an active exception", an
    # import in ~400 exiting 134 after its work; apache/arrow#34314 is the same).
    with pq.ParquetFile(source, pre_buffer=False) as f:
        keys = f.read(columns=["key"], use_threads=False).column(0).to_pylist()
        names = list(f.schema_arrow.names)
    if any(not isinstance(k, str) or not k for k in keys):
        raise ValueError("a row without a key")
    if len(set(keys)) != len(keys):
        raise ValueError("a trial key twice")
    return keys, names


class Checks:
    """:class:`~collateral.store.Store`'s checks of its parts (a mixin: the store keeps
    the state, and caches each part as checked: parts never change)."""

    def _legacy_ok(self) -> bool:
        """Whether a part without a manifest may be valid (a format 1 store)."""
        if self._format is None:
            try:
                self._format = self.format()
            except StoreError:  # unreadable store.json: its writers will say so
                return True
        return self._format < 2

    def _check(self, path: Path, legacy_ok: bool) -> Part:
        """A part's quick check: its files against the manifest (sizes; the summary's
        hash, rows and keys), or, for a format 1 part, that its files are readable."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = path.name
        present = {f.name: f.stat().st_size for f in path.glob("*.parquet") if f.is_file()}
        man_path = path / MANIFEST
        if not man_path.exists():
            if not legacy_ok:
                return Part(name, None, "no manifest.json", self._rows(path))
            if "summary.parquet" not in present:
                return Part(name, None, "no summary.parquet; its trace rows would be orphaned")
            for f in sorted(present, key=lambda f: f != "summary.parquet"):
                try:
                    pq.read_metadata(path / f)
                except (OSError, ValueError) as e:
                    return Part(name, None, f"{f}: unreadable ({error_text(e)})", self._rows(path))
            try:
                keys, cols = _summary_keys(path / "summary.parquet")
            except (OSError, ValueError) as e:
                return Part(name, None, f"summary.parquet: {error_text(e)}")
            return Part(name, keys, trials=len(keys), files=present, columns=cols)
        try:
            man = read_manifest(man_path)
        except (OSError, ValueError) as e:
            return Part(name, None, f"manifest.json: {error_text(e)}", self._rows(path))
        listed: dict[str, dict[str, Any]] = man["files"]
        trials = listed["summary.parquet"]["rows"]
        if "summary.parquet" not in present:
            return Part(
                name, None, "summary.parquet missing; its trace rows would be orphaned", trials
            )
        for f in listed:
            if f not in present:
                return Part(name, None, f"{f} missing", trials)
        for f in present:
            if f not in listed:
                return Part(name, None, f"{f} is not in the manifest", trials)
        for f, entry in listed.items():
            if present[f] != entry["bytes"]:
                return Part(
                    name,
                    None,
                    f"{f}: {present[f]:,} bytes, manifest says {entry['bytes']:,}",
                    trials,
                )
        try:
            data = (path / "summary.parquet").read_bytes()
        except OSError as e:
            return Part(name, None, f"summary.parquet: unreadable ({error_text(e)})", trials)
        if hashlib.sha256(data).hexdigest() != listed["summary.parquet"]["sha256"]:
            return Part(name, None, "summary.parquet: content differs from its checksum", trials)
        try:
            keys, cols = _summary_keys(pa.BufferReader(data))
        except (OSError, ValueError) as e:
            return Part(name, None, f"summary.parquet: {error_text(e)}", trials)
        if len(keys) != trials:
            return Part(
                name, None, f"summary.parquet: {len(keys)} rows, manifest says {trials}", trials
            )
        return Part(name, keys, trials=trials, manifest=man, files=present, columns=cols)

    @staticmethod
    def _rows(path: Path) -> int | None:
        """The summary's row count, if its footer can be read (for messages)."""
        import pyarrow.parquet as pq

        try:
            return int(pq.read_metadata(path / "summary.parquet").num_rows)
        except (OSError, ValueError):
            return None

    def _check_full(self, path: Path, part: Part) -> Part:
        """The trace files too: their SHA-256 against the manifest (without one: read)."""
        import pyarrow.parquet as pq

        for f in part.files:
            if f == "summary.parquet":
                continue
            try:
                if part.manifest is not None:
                    entry = part.manifest["files"][f]
                    if sha256(path / f) != entry["sha256"]:
                        reason = f"{f}: content differs from its checksum"
                        return Part(part.name, None, reason, part.trials)
                else:
                    pq.read_table(path / f)
            except (OSError, ValueError) as e:
                return Part(part.name, None, f"{f}: unreadable ({error_text(e)})", part.trials)
        part.full = True
        return part

    def _scan(self, full: bool | None = False) -> list[Part]:
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

    def _problems(self, parts: list[Part]) -> list[PartProblem]:
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
                    f"ignored ({its_trials(pr.trials)} counted as missing); the next"
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

    def _usable(self, full: bool | None = None) -> tuple[list[Part], list[PartProblem]]:
        """The parts readers use (not damaged, not only copies) and every problem."""
        parts = self._scan(full)
        problems = self._problems(parts)
        self._note_read(problems)
        bad = {pr.part for pr in problems if pr.kind in ("damaged", "duplicate")}
        return [p for p in parts if p.name not in bad], problems
