"""The registry of what each run creates (namespaces, its temporary directory), recorded
before it is created, so that the run's reaper (:mod:`.reaper`) removes it when the run
dies, a later run what a run whose reaper died too left behind, and never anything else."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import EmulationError
from .namespaces import delete_ns, testbed_namespaces

#: Where each run records what it creates (namespaces, its temporary directory) before
#: creating it: the tool's own mark. A later run removes what a dead run recorded, and
#: never anything else, however it is named.
REGISTRY = Path("/run/collateral")

#: The reaper of each record this process has written to, by the record's path (which
#: names the process: a forked child writes its own record and starts its own reaper).
_reapers: dict[Path, subprocess.Popen[bytes]] = {}


def read_record(path: Path) -> dict[str, Any]:
    """A registry record; an unreadable or malformed one counts as empty."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def start_reaper(record: Path) -> None:
    """Starts the reaper of ``record`` (this process's) unless it is running: a process of
    its own session (a Ctrl-C or a kill of this one's process group misses it) that reads
    its standard input until end of file, then removes what ``record`` lists. Only this
    process holds the pipe's write end (close-on-exec, and the reaper is started with
    ``close_fds``), so the end of file comes when this process is gone, however it died."""
    p = _reapers.get(record)
    if p is not None and p.poll() is None:
        return
    # The package as this process imported it, wherever that is.
    pkg_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(x for x in (pkg_root, os.environ.get("PYTHONPATH")) if x)
    try:
        _reapers[record] = subprocess.Popen(
            [sys.executable, "-m", "collateral.emulate.reaper", str(record)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            cwd="/",
            env={**os.environ, "PYTHONPATH": path},
        )
    except OSError as e:
        raise EmulationError(f"cannot start the testbed's reaper: {e}") from e


@atexit.register
def _stop_reapers() -> None:
    """At a normal exit, end of file to this process's reapers, and a wait (5 s at most)
    while each reads its record: none, when every run has torn down."""
    for p in _reapers.values():
        with contextlib.suppress(OSError):
            p.stdin.close()  # type: ignore[union-attr]
    for p in _reapers.values():
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            p.wait(timeout=5)


def register(run: dict[str, Any]) -> Path:
    """Records (adds to this process's record) what the run is about to create, after
    starting the record's reaper (:func:`start_reaper`)."""
    REGISTRY.mkdir(parents=True, exist_ok=True)
    path = REGISTRY / f"{os.getpid()}.json"
    start_reaper(path)
    old = read_record(path)
    merged = {
        "namespaces": list(dict.fromkeys([*old.get("namespaces", []), *run.get("namespaces", [])])),
        "tmpdir": run.get("tmpdir") or old.get("tmpdir"),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(merged))
    os.replace(tmp, path)
    return path


def reap_record(path: Path, unlink: bool = True) -> list[str]:
    """Removes what the record at ``path`` lists: its namespaces (with the processes in
    them, and so their veths) and its temporary directory when it is named as
    :func:`new_tmpdir` names them; then, if ``unlink``, the record (and a half-written
    one). Returns the namespaces removed. The run that wrote it must be gone or ending."""
    run = read_record(path)
    names = [ns for ns in run.get("namespaces", []) if isinstance(ns, str)]
    present = set(testbed_namespaces()) if names else set()
    removed: list[str] = []
    for ns in names:
        if ns in present:
            delete_ns(ns)
            removed.append(ns)
    tmpdir = run.get("tmpdir")
    if isinstance(tmpdir, str) and is_our_tmpdir(tmpdir):
        shutil.rmtree(tmpdir, ignore_errors=True)
    if unlink:
        path.unlink(missing_ok=True)
        path.with_suffix(".tmp").unlink(missing_ok=True)
    return removed


def cleanup_leftovers() -> list[str]:
    """Removes what testbed runs that are gone left behind (their reaper killed too): the
    namespaces (with their processes and veths) and temporary directories they recorded
    in :data:`REGISTRY`. Returns the namespaces removed."""
    from ..store import pid_alive  # here: the reaper, which imports this module, starts fast

    removed: list[str] = []
    if not REGISTRY.is_dir():
        return removed
    stems = {p.stem for p in REGISTRY.glob("*.json")} | {p.stem for p in REGISTRY.glob("*.tmp")}
    for stem in sorted(stems):
        # This process's own record is stale when cleaning starts (a run registers after
        # it): a dead run's pid that was reused.
        if not stem.isdigit() or (int(stem) != os.getpid() and pid_alive(int(stem))):
            continue
        removed += reap_record(REGISTRY / f"{stem}.json")
    return removed


#: The prefix of a run's temporary directory (in the system's temporary directory).
TMP_PREFIX = "collateral-emu-"


def is_our_tmpdir(path: str) -> bool:
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
