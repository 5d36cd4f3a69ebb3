"""Mending a store (a writer's job): damaged parts and copies moved to ``quarantine/``
(never deleted), parts holding some copies rewritten without them, a format 1 store
migrated to manifests, and a damaged ``store.json`` set aside."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import uuid
from pathlib import Path

from .files import FORMAT, MANIFEST, atomic_write_text, fsync, manifest_of
from .problems import PartProblem, StoreError, error_text, its_trials


class Repairs:
    """:class:`~collateral.store.Store`'s repairs (a mixin: the store keeps the state)."""

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
                    rerun = f"{its_trials(pr.trials)} will be rerun"
                    what = f"moved to quarantine/, {rerun}"
                else:
                    what = "moved to quarantine/"
                self.notify(f"store {self.path}: part {pr.part} {pr.kind} ({pr.reason}); {what}")
            self._migrate()
        self._keys = None
        return problems

    def set_aside(self, keys: set[str], reason: str) -> set[str]:
        """Moves to ``quarantine/`` (never deletes) each part that holds only trials of
        ``keys``, so that a writer may run those trials again (the testbed's rerun of
        trials it flagged late). Returns the keys set aside; a trial sharing a part
        with others stays."""
        out: set[str] = set()
        with self._commit_lock():
            for p in self._usable()[0]:
                held = set(p.keys or ())
                if held and held <= keys and self._quarantine(p.name, reason) is not None:
                    out |= held
        self._keys = None
        return out

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
            fsync(self.path / "parts")
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
                f" ({error_text(e)}); moved to quarantine/, {its_trials(pr.trials)} will be rerun"
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
            man = manifest_of(d, {f: None for f in part.files}, len(part.keys))
            atomic_write_text(d / MANIFEST, json.dumps(man, indent=1) + "\n")
            n += 1
        meta["format"] = FORMAT
        atomic_write_text(self.meta_path, json.dumps(meta, indent=2) + "\n")
        self._format = FORMAT
        self._parts.clear()
        if n:
            self.notify(
                f"store {self.path}: format 1 (no part manifests); wrote the manifests of"
                f" its {n:,} parts, now format {FORMAT}"
            )

    def _broken_meta(self, experiment: str, experiment_text: str | None) -> StoreError | None:
        """None when ``store.json`` reads; its damage when the directory is this
        experiment's, to be written anew (see :meth:`_set_aside_broken_meta`); raises the
        damage otherwise. Only reads (``run --dry-run`` asks it too)."""
        try:
            self.meta()
            return None
        except StoreError as e:
            broken = e
        toml = self.path / "experiment.toml"
        try:
            import tomllib

            stored = tomllib.loads(toml.read_text(encoding="utf-8"))
            ours = stored.get("experiment", {}).get("name") == experiment or (
                experiment_text is not None and stored == tomllib.loads(experiment_text)
            )
        except (OSError, UnicodeDecodeError, ValueError, AttributeError, RecursionError):
            ours = False
        if not ours:
            raise broken
        return broken

    def _set_aside_broken_meta(self, experiment: str, experiment_text: str | None) -> None:
        """A damaged ``store.json`` in this experiment's own directory is moved to
        ``quarantine/`` (so :meth:`create` writes it anew), in one line. The directory is
        this experiment's when its ``experiment.toml`` (written by every run) reads as the
        text being run (comments aside: a run's header of overrides) or names the same
        experiment; otherwise the error stands: a directory that may be someone else's is
        never rewritten."""
        broken = self._broken_meta(experiment, experiment_text)
        if broken is None:
            return
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
