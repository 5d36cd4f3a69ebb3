"""How a malformed experiment is reported: :class:`ExperimentError` (the file, the key
path, the value and what is allowed), how it shows values and key paths, and the limits
an experiment is checked against."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

#: Limits of one experiment: points (each a validated scenario, about 10 kB and 0.5 ms
#: to build), values of one range axis, trials in all (points x trials per point), the
#: file's size and how deeply its tables and lists may nest.
MAX_POINTS = 100_000
MAX_RANGE = 100_000
MAX_TRIALS = 10_000_000
MAX_FILE_BYTES = 10_000_000
MAX_DEPTH = 64


class ExperimentError(ValueError):
    """A malformed experiment: names the file, the key path, the value and what is allowed."""

    def __init__(self, source: str, key: str, message: str, value: Any = ...) -> None:
        if hasattr(type(value), "model_fields"):  # a model's default, not the file's text
            value = ...
        shown = "" if value is ... else f" = {show(value)}"
        if shown:  # the units module starts some messages with the value: say it once
            message = message.removeprefix(f"{value!r}: ")
        super().__init__(f"{source}: {key}{shown}: {message}")
        self.source = source
        self.key = key
        self.value = value
        self.message = message


def show(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value) if not isinstance(value, dict | list) else json.dumps(value, default=str)
    except (ValueError, RecursionError):  # a huge int, a deeply nested value
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def fmt_path(path: Sequence[object]) -> str:
    """('tcp', 0, 'cc') -> 'tcp[0].cc'."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += ("." if out else "") + str(seg)
    return out


def check_depth(source: str, key: str, value: object) -> None:
    """Refuses tables and lists nested more than ``MAX_DEPTH`` deep (checked without
    recursion, so it cannot overflow the stack itself)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExperimentError(source, key, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)


def unknown_key(key: object, allowed: Sequence[str], where: str = "") -> str:
    """``unknown key 'rt'[ in where]; did you mean 'rtt'? allowed: ...``: the closest
    allowed key first (a misspelling is the usual cause), then all of them."""
    import difflib

    msg = f"unknown key {key!r}" + (f" in {where}" if where else "")
    allowed = list(dict.fromkeys(allowed))
    close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
    if close:
        msg += f"; did you mean {close[0]!r}?"
    if allowed:
        msg += ("" if close else ";") + f" allowed: {', '.join(allowed)}"
    return msg
