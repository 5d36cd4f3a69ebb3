"""Merging stores: the trials of other stores of the same experiment (e.g. shards run
in separate directories) that this one lacks, never a trial twice."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .problems import StoreError, error_text


class Merging:
    """:meth:`~collateral.store.Store.merge` (a mixin: the store keeps the state)."""

    def check_mergeable(self, src: Any) -> None:
        """Raises :class:`StoreError` unless ``src`` holds the same experiment in the same
        result schema as this store (merging would otherwise mix two)."""
        name, other = self.meta().get("experiment"), src.meta().get("experiment")
        if other != name:
            raise StoreError(f"{src.path} holds experiment {other!r}, {self.path} holds {name!r}")
        mine, theirs = self.schema_version(), src.schema_version()
        if theirs != mine:
            raise StoreError(
                f"{src.path} holds results of schema version {theirs}, {self.path} version"
                f" {mine}: merging would mix two schemas; run the experiment again into a new"
                " directory"
            )

    def merge(self, sources: Iterable[str | Path]) -> tuple[int, int]:
        """Adds the trials of other stores of the same experiment (e.g. shards run in
        separate directories) that this one lacks. Returns (trials added, skipped).
        Damaged parts of a source are left out (one line each); this store is repaired
        first (:meth:`repair`)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        srcs = [type(self)(p, self.notify) for p in sources]
        for src in srcs:  # every source checked before any is merged
            self.check_mergeable(src)
        self.repair()
        have = self.done_keys(refresh=True)
        added = skipped = 0
        for src in srcs:
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
                        f"store {src.path}: part {part.name} unreadable ({error_text(e)});"
                        " not merged"
                    )
                    continue
                _, dropped = self.commit_part(summary.filter(new), traces)
                have.update(new_keys.to_pylist())
                added += n_new - dropped
                skipped += len(summary) - n_new + dropped
        self._adopt_experiment(srcs)
        return added, skipped

    def _adopt_experiment(self, srcs: list[Any]) -> None:
        """A store without an experiment file (one the merge made) takes it and its
        expanded points from the first source that has both (what ``report`` and
        ``plot`` read: the description, the file, the sweep's order)."""
        import shutil

        from .files import POINTS, fsync, tmp_name

        names = ("experiment.toml", POINTS)
        if any((self.path / n).exists() for n in names):
            return  # the store's own, or what a run wrote into it: kept
        # Both from one source, the file and the points it expanded, never mixed.
        src = next((s for s in srcs if all((s.path / n).is_file() for n in names)), None)
        if src is None:
            return
        for name in names:
            mine, tmp = self.path / name, tmp_name(self.path / name)
            try:
                shutil.copyfile(src.path / name, tmp)
                fsync(tmp)
                tmp.replace(mine)
            except OSError as e:  # a shortcut only: readers expand the file without it
                tmp.unlink(missing_ok=True)
                self.notify(f"store {self.path}: {name} not copied from {src.path}: {e}")
