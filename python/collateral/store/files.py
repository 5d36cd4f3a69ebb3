"""Files written safely: atomic writes through a hidden sibling, fsync, SHA-256, and
the part manifest (each table file's bytes, rows and SHA-256) that every reader checks
a part against."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .problems import error_text

#: 2: a manifest in every part (1: before manifests; still read, migrated by a writer).
FORMAT = 2
MANIFEST = "manifest.json"
#: The sweep's points as the last run expanded them (:meth:`Store.write_points`).
POINTS = "points.parquet"


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tmp_name(path: Path) -> Path:
    """A hidden sibling to write ``path`` through: ``.NAME.HOST-PID.RANDOM.tmp``."""
    host = socket.gethostname()
    return path.with_name(f".{path.name}.{host}-{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def atomic_write_text(path: Path, text: str) -> None:
    tmp = tmp_name(path)
    tmp.write_text(text, encoding="utf-8")
    fsync(tmp)
    os.replace(tmp, path)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a part, checked for shape (ValueError saying what is wrong)."""
    try:
        man = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not valid JSON ({error_text(e)})") from None
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


def manifest_of(directory: Path, rows: Mapping[str, int | None], trials: int) -> dict[str, Any]:
    """A part's manifest from its files as they are (rows None: read from the footer)."""
    import pyarrow.parquet as pq

    files = {}
    for f, n in rows.items():
        path = directory / f
        files[f] = {
            "bytes": path.stat().st_size,
            "rows": int(pq.read_metadata(path).num_rows) if n is None else n,
            "sha256": sha256(path),
        }
    return {"format": FORMAT, "trials": trials, "files": files}
