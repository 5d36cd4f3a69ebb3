"""Paths: outputs are checked before anything runs (the directory exists or can be
created and is writable, the name is not empty, not a directory, not too long, its
suffix one the figure can be written as), inputs before anything is read (a results
directory, not a file)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..display import short
from .errors import fail

_NAME_MAX = 255  # bytes in one path component (Linux NAME_MAX)
_PATH_MAX = 4096
#: Formats a figure can be written in: its suffix says (none: PNG).
FIGURE_SUFFIXES = (".png", ".svg", ".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff")


def path(option: str, text: object, what: str) -> Path:
    if not isinstance(text, str) or not text.strip():
        fail(f"{option}: {short(text, 60)}: an empty path; give {what}")
    if "\0" in text:
        fail(f"{option}: {short(text, 60)}: a path cannot hold a NUL character")
    p = Path(text)
    for part in p.parts:
        if len(os.fsencode(part)) > _NAME_MAX:
            fail(
                f"{option}: {short(text, 60)}: a name of {len(os.fsencode(part))} bytes; at most"
                f" {_NAME_MAX}"
            )
    if len(os.fsencode(os.path.abspath(text))) >= _PATH_MAX:
        fail(f"{option}: {short(text, 60)}: the path is longer than {_PATH_MAX - 1} bytes")
    return p


def existing_ancestor(p: Path) -> Path:
    for a in (p, *p.parents):
        if a.exists() or a.is_symlink():
            return a
    return Path("/")  # pragma: no cover - the root exists


def check_writable_dir(option: str, shown: str, d: Path) -> None:
    """Creates (and removes) a file in ``d``: the only test a root user, a read-only
    mount or /proc answer truthfully."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".collateral-probe-", dir=d)
    except OSError as e:
        fail(f"{option}: {shown}: cannot write in {d}: {e.strerror or e}")
    os.close(fd)
    os.unlink(probe)


def check_new_parent(option: str, shown: str, target: Path, probe: bool) -> None:
    """``target`` does not exist yet: its nearest existing ancestor must be a directory
    (the rest is created) we can write in."""
    a = existing_ancestor(target.absolute().parent)
    if not a.is_dir():
        fail(f"{option}: {shown}: {a} is not a directory")
    if probe:
        check_writable_dir(option, shown, a)


def console() -> Any:
    """A console for stdout: the terminal's width, or, piped to a file or another
    program, no wrapping at all (rows are whole lines, as ``query`` writes them)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=100_000)


def output_file(
    option: str,
    text: object,
    example: str,
    figure: bool = False,
    suffixes: tuple[str, ...] = (),
) -> Path:
    """An output file: not empty, not a directory, a name the file system takes, in a
    directory that exists (or can be created) and is writable. A figure's suffix must be
    one it can be written as; only that file is written (no suffix: a PNG). ``suffixes``:
    the only ones the file may have (an HTML report is not a ``.pdf``)."""
    p = path(option, text, f"a file name such as {example}")
    shown = short(text, 60)
    if str(text).endswith(("/", os.sep)) or p.name in ("", ".", "..") or p.is_dir():
        fail(f"{option}: {shown}: a directory; give a file name such as {example}")
    if suffixes and p.suffix.lower() not in suffixes and str(p) != os.devnull:
        fail(
            f"{option}: {shown}: writes {suffixes[0].lstrip('.').upper()}; give a name ending"
            f" {' or '.join(suffixes)}, such as {example}"
        )
    targets = [p]
    if figure:
        suffix = p.suffix.lower()
        if suffix and suffix not in FIGURE_SUFFIXES:
            fail(
                f"{option}: {shown}: cannot write a figure as {p.suffix!r}; give a name ending"
                f" {', '.join(FIGURE_SUFFIXES)}"
            )
        targets = [p if suffix else p.with_suffix(".png")]
    for t in targets:
        if len(os.fsencode(t.name)) > _NAME_MAX:
            fail(f"{option}: {shown}: the name {t.name[:20]}... is longer than {_NAME_MAX} bytes")
        if t.exists():
            if t.is_dir():
                fail(f"{option}: {shown}: {t} is a directory; give a file name such as {example}")
            if not t.is_file() and str(t) != os.devnull:
                fail(f"{option}: {shown}: {t} exists and is not a regular file")
            if not os.access(t, os.W_OK):
                fail(f"{option}: {shown}: {t} is not writable")
        else:
            check_new_parent(option, shown, t, probe=True)
    return p


def output_dir(option: str, text: object, example: str, probe: bool = True) -> Path:
    """An output directory: not empty, not a file; it exists and is writable, or can be
    created (its nearest existing ancestor is a writable directory)."""
    p = path(option, text, f"a directory such as {example}")
    shown = short(text, 60)
    if p.exists():
        if not p.is_dir():
            fail(f"{option}: {shown}: exists and is not a directory")
        if probe:
            check_writable_dir(option, shown, p)
    else:
        check_new_parent(option, shown, p, probe)
    return p


def input_store(option: str, text: object) -> Path:
    """A results directory to read: a directory holding ``store.json``."""
    p = path(option, text, "a results directory, e.g. results/NAME")
    shown = short(text, 60)
    if not p.exists():
        fail(f"{option}: {shown}: no such directory")
    if not p.is_dir():
        fail(f"{option}: {shown}: is a file, not a results directory")
    if not (p / "store.json").is_file():
        fail(f"{option}: {shown}: not a collateral results directory (no store.json)")
    return p
