"""Reading an experiment file: TOML of at most :data:`~.errors.MAX_FILE_BYTES` from a
regular file, ``--set`` overrides applied, the name defaulting to the file's; the
format is described in :mod:`collateral.experiment`."""

from __future__ import annotations

import copy
import json
import stat
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import MAX_DEPTH, MAX_FILE_BYTES, ExperimentError, check_depth
from .grammar import flat_axes
from .model import Experiment, build
from .settings import NAME


def load_experiment(path: str | Path, overrides: Sequence[tuple[str, Any]] = ()) -> Experiment:
    """Reads and validates an experiment file; ``overrides`` are (dotted key, value)
    pairs applied first (the CLI's ``--set``). Raises :class:`ExperimentError`."""
    p = Path(path)
    source = str(path)
    text = _read_file(p, source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(source, "TOML", f"invalid TOML: {e}") from None
    except RecursionError:
        raise ExperimentError(
            source, "TOML", f"invalid TOML: nested more than {MAX_DEPTH} levels deep"
        ) from None
    except ValueError as e:  # an integer of thousands of digits
        why = "an integer too long to read" if "digits" in str(e) else str(e)
        raise ExperimentError(source, "TOML", f"invalid TOML: {why}") from None
    check_depth(source, "TOML", data)
    original = copy.deepcopy(data) if _scenario_keys(data, overrides) else None
    for key, value in overrides:
        check_depth(source, f"--set {key}", value)
        _override(data, source, key, value)
    section = data.get("experiment", {})
    if isinstance(section, dict) and "name" not in section:
        if not NAME.fullmatch(p.stem) or p.stem.startswith("."):
            raise ExperimentError(
                source,
                "experiment.name",
                "missing, and the file's name cannot stand for it (letters, digits, '_',"
                " '.' and '-' only, not starting with '.'); give [experiment] name",
                p.stem,
            )
        data = {**data, "experiment": {**section, "name": p.stem}}
    try:
        exp = build(data, source, _with_overrides(text, overrides))
    except ExperimentError as e:
        # A value that --set gave is --set's fault, not the file's.
        if e.source == source and any(e.key == k for k, _ in overrides):
            raise ExperimentError(f"{source}: --set", e.key, e.message, e.value) from None
        raise
    if original is not None:
        _warn_shadowed(original, exp, source, overrides)
    return exp


def _scenario_keys(data: dict[str, Any], overrides: Sequence[tuple[str, Any]]) -> list[str]:
    """The ``--set scenario.KEY`` overrides, when the file sweeps (else each changes
    every point it sets)."""
    if not data.get("sweep"):
        return []
    return [k for k, _ in overrides if k.startswith("scenario.")]


def _warn_shadowed(
    original: dict[str, Any], exp: Experiment, source: str, overrides: Sequence[tuple[str, Any]]
) -> None:
    """A ``--set scenario.KEY`` that changes no point (every grid sets the key again,
    whatever the axis's spelling: ``queue.limit`` for ``down.queue.limit``, ``cbr`` for
    ``cbr.0.size``, a zipped axis) is said, rather than a run that looks overridden: the
    experiment built without that override has the same points."""
    import warnings

    keys = [p.key for p in exp.points]

    def points(skip: str | None, sweep: bool) -> list[str] | None:
        """The point keys with every override but ``skip``, with or without the sweep
        (None: not valid without the override, which so changes the file)."""
        data = copy.deepcopy(original)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run's own build has said them
            try:
                for k, v in overrides:
                    if k != skip:
                        _override(data, source, k, v)
                section = data.get("experiment", {})
                data["experiment"] = {**section, "name": exp.name}
                if not sweep:
                    data.pop("sweep", None)
                return [p.key for p in build(data, source, None).points]
            except (ExperimentError, TypeError):
                return None

    base_with_all: list[str] | None = None
    for key in _scenario_keys(original, overrides):
        # Changes no point, and would change the base scenario alone: the sweep undoes it
        # (an override with the file's own value is no news).
        if points(key, True) != keys:
            continue
        if base_with_all is None:
            base_with_all = points(None, False)
        if points(key, False) != base_with_all:
            base = key.removeprefix("scenario.")
            warnings.warn(
                f"{source}: --set {key}: every sweep sets {base} again, so the override"
                f" changes no point; set the sweep's values (--set 'sweep.{base}=[...]')",
                stacklevel=3,
            )


#: The first line of the comments that name a run's overrides (:func:`_with_overrides`).
HEADER = "# Run with these overrides of the file below (--set):"


def _with_overrides(text: str, overrides: Sequence[tuple[str, Any]]) -> str:
    """The text a store keeps: the file's, under comment lines that name the overrides
    the run applied (else a store of a 2-trial run would show a file of 30); the same
    TOML. A store's own copy run again loses the header of the run it came from."""
    if text.startswith(HEADER + "\n") and "\n\n" in text:
        text = text.split("\n\n", 1)[1]
    if not overrides:
        return text
    lines = [HEADER]
    lines += [_one_line(f"#   {key} = {_inline(value)}") for key, value in overrides]
    return "\n".join(lines) + "\n\n" + text


def _inline(v: Any) -> str:
    """A value as TOML writes it inline (``2``, ``"5s"``, ``["cubic", "reno"]``,
    ``{ limit = "60kB" }``), on one line."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a basic string: quotes, \\, controls escaped
    if isinstance(v, dict):
        body = ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items())
        return f"{{ {body} }}" if body else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if hasattr(v, "isoformat"):  # TOML's dates and times (--set k=1979-05-27)
        return str(v.isoformat())
    return json.dumps(str(v), ensure_ascii=False)


#: What a comment line cannot hold: controls but tab, DEL, and surrogates.
_ESCAPED = frozenset({*range(0x20), 0x7F, *range(0xD800, 0xE000)} - {ord("\t")})


def _one_line(line: str) -> str:
    """A comment line TOML accepts, and UTF-8 can write: control characters (a key's
    newline) and lone surrogates (argv that was not UTF-8) escaped."""
    return "".join(f"\\u{ord(c):04x}" if ord(c) in _ESCAPED else c for c in line)


def _key(k: Any) -> str:
    k = str(k)
    return k if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) else json.dumps(k)


def _read_file(p: Path, source: str) -> str:
    """The file's text: a regular file of at most ``MAX_FILE_BYTES`` in UTF-8 (never
    read from a device or a pipe, which could go on forever)."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise ExperimentError(source, "file", "no such file") from None
    except OSError as e:
        raise ExperimentError(source, "file", f"cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ExperimentError(source, "file", "is a directory, not an experiment file")
    if not stat.S_ISREG(st.st_mode):
        raise ExperimentError(source, "file", "not a regular file (a device, pipe or socket)")
    if st.st_size > MAX_FILE_BYTES:
        raise ExperimentError(
            source,
            "file",
            f"{st.st_size:,} bytes; an experiment file has at most {MAX_FILE_BYTES:,}",
        )
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ExperimentError(source, "file", f"cannot read: {e.strerror or e}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ExperimentError(
            source, "file", f"more than {MAX_FILE_BYTES:,} bytes; too large for an experiment"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExperimentError(source, "file", f"not UTF-8 text (byte {e.start})") from None


def _key_path(key: str) -> list[str]:
    """The segments of a dotted key as TOML reads one, quoted parts whole
    (``sweep."media.controller"``, as the files write axes); a key TOML does not read
    (``sweep.tcp[0].cc``) split at its dots."""
    if '"' in key or "'" in key:
        try:
            d: Any = tomllib.loads(f"{key} = 0")
        except tomllib.TOMLDecodeError:
            return key.split(".")
        path = []
        while isinstance(d, dict) and len(d) == 1:
            k = next(iter(d))
            path.append(k)
            d = d[k]
        return path
    return key.split(".")


def _override(data: dict[str, Any], source: str, key: str, value: Any) -> None:
    """Sets a dotted key in the parsed file (tables are created as needed); under
    ``sweep.`` the rest of the key is the axis, e.g. ``sweep.queue.limit``."""
    segs = _key_path(key)
    if not all(segs):
        raise ExperimentError(
            source, f"--set {key}", "expected a dotted key such as experiment.trials"
        )
    if segs[0] == "sweep" and len(segs) > 1 and segs[1] != "zip":
        sweep = data.get("sweep", {})
        if not isinstance(sweep, dict):
            raise ExperimentError(
                source,
                f"--set {key}",
                f"the file has {len(sweep)} [[sweep]] grids, a list: set the list whole,"
                """ e.g. --set 'sweep=[{"queue.limit" = ["20kB"]}]'""",
            )
        data["sweep"] = {**flat_axes(sweep, "", source), ".".join(segs[1:]): value}
        return
    d: Any = data
    for i, s in enumerate(segs):
        if not isinstance(d, list | dict):
            raise ExperimentError(
                source, f"--set {key}", f"{segs[i - 1]!r} holds a {type(d).__name__}, not a table"
            )
        last = i == len(segs) - 1
        if isinstance(d, list):  # a list's entry by its index (scenario.tcp.0.cc)
            j = _index(d, s, source, key)
            if last:
                d[j] = value
            d = d[j]
        elif last:
            d[s] = value
        else:
            if d.get(s) is None:  # tables are created as needed
                d[s] = {}
            d = d[s]


def _index(items: list[Any], seg: str, source: str, key: str) -> int:
    """``seg`` as an index of ``items`` (from 0, as sweep keys count), or a one-line
    error naming the list's length."""
    if not seg.isdigit() or int(seg) >= len(items):
        have = (
            f"has {len(items)} entries: an index from 0 to {len(items) - 1} (or set the whole list)"
            if items
            else "is empty: set the whole list"
        )
        raise ExperimentError(source, f"--set {key}", f"{seg!r}: the list there {have}")
    return int(seg)
