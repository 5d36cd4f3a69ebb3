"""The registry of what each run creates (namespaces, its temporary directory), recorded
before it is created, so that a later run removes what a killed run left behind, and
never anything else."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..store import pid_alive
from .namespaces import delete_ns, testbed_namespaces

#: Where each run records what it creates (namespaces, its temporary directory) before
#: creating it: the tool's own mark. A later run removes what a dead run recorded, and
#: never anything else, however it is named.
REGISTRY = Path("/run/collateral")


def _read_record(path: Path) -> dict[str, Any]:
    """A registry record; an unreadable or malformed one counts as empty."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def register(run: dict[str, Any]) -> Path:
    """Records (adds to this process's record) what the run is about to create."""
    REGISTRY.mkdir(parents=True, exist_ok=True)
    path = REGISTRY / f"{os.getpid()}.json"
    old = _read_record(path)
    merged = {
        "namespaces": list(dict.fromkeys([*old.get("namespaces", []), *run.get("namespaces", [])])),
        "tmpdir": run.get("tmpdir") or old.get("tmpdir"),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(merged))
    os.replace(tmp, path)
    return path


def cleanup_leftovers() -> list[str]:
    """Removes what testbed runs that are gone left behind: the namespaces (with their
    processes and veths) and temporary directories they recorded in :data:`REGISTRY`.
    Returns the namespaces removed."""
    removed: list[str] = []
    if not REGISTRY.is_dir():
        return removed
    present = set(testbed_namespaces())
    for rec in sorted(REGISTRY.glob("*.json")):
        # This process's own record is stale when cleaning starts (a run registers after
        # it): a dead run's pid that was reused.
        if not rec.stem.isdigit() or (int(rec.stem) != os.getpid() and pid_alive(int(rec.stem))):
            continue
        run = _read_record(rec)
        for ns in run.get("namespaces", []):
            if ns in present:
                delete_ns(ns)
                removed.append(ns)
        tmpdir = run.get("tmpdir")
        if isinstance(tmpdir, str) and _is_our_tmpdir(tmpdir):
            shutil.rmtree(tmpdir, ignore_errors=True)
        rec.unlink(missing_ok=True)
    return removed


#: The prefix of a run's temporary directory (in the system's temporary directory).
TMP_PREFIX = "collateral-emu-"


def _is_our_tmpdir(path: str) -> bool:
    """Only a directory named as this module names them is ever removed from a record."""
    p = Path(path)
    return p.is_absolute() and p.name.startswith(TMP_PREFIX) and ".." not in p.parts


def new_tmpdir() -> tuple[Path, Path]:
    """A private temporary directory for a run, recorded in the registry *before* it is
    created, so a run killed at any moment leaves nothing the next run does not find."""
    wd = Path(tempfile.gettempdir()) / f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    record = register({"namespaces": [], "tmpdir": str(wd)})
    wd.mkdir(mode=0o700)
    return wd, record
