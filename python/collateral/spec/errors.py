"""Errors of a scenario: :class:`SpecError` naming the flat parameter at fault, and the
core's JSON key paths in the Scenario's spelling."""

from __future__ import annotations

import re

from pydantic import ValidationError

from .fields import FIELDS

# The core's JSON names and the Scenario fields they come from (``rtt_ns`` is ``rtt``).
_CORE_FIELDS = {
    "packet_bytes": "size",
    "overhead_bytes": "overhead",
    "limit_bytes": "limit",
}


def core_path_field(path: str) -> str:
    """A key path of the core's scenario JSON as the Scenario spells it:
    ``cbr[0].interval_ns`` -> ``cbr[0].interval``, ``down.rate_bps`` -> ``down.rate``."""
    out = []
    for part in path.split("."):
        name, bracket, index = part.partition("[")
        name = _CORE_FIELDS.get(name, name)
        for suffix in ("_ns", "_bps"):
            if name.endswith(suffix) and name != suffix:
                name = name.removesuffix(suffix)
        out.append(name + bracket + index)
    return ".".join(out)


_CORE_PATH = re.compile(r"^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*): (.*)$", re.S)


def core_message(message: str) -> str:
    """The core's error with its JSON key path in the Scenario's spelling; a JSON type
    error (``scenario: invalid type ...``) stays as it is."""
    m = _CORE_PATH.match(message)
    if not m or m.group(1) == "scenario":
        return message
    return f"{core_path_field(m.group(1))}: {m.group(2)}"


def split_path(message: str) -> tuple[tuple[int | str, ...], str]:
    """``"cbr[0].interval: too small"`` -> ``(("cbr", 0, "interval"), "too small")``;
    ``((), message)`` when the message does not start with a key path."""
    m = _CORE_PATH.match(message)
    if not m:
        return (), message
    loc: list[int | str] = []
    for part in m.group(1).split("."):
        name, _, index = part.partition("[")
        loc.append(name)
        if index:
            loc.append(int(index.rstrip("]")))
    return tuple(loc), m.group(2)


class SpecError(ValueError):
    """A bad parameter of :func:`build_scenario`; ``param`` is its keyword name."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


def flat_param(loc: tuple[int | str, ...] | str) -> str:
    """The :func:`build_scenario` parameter (the CLI option) behind a Scenario key path,
    given as a tuple or as text: ``cbr[0].interval`` -> ``cbr_interval``, ``tcp`` ->
    ``tcp_flows``, ``down.queue.limit`` -> ``queue``: the parameter whose declared key
    path (:data:`~collateral.spec.fields.FIELDS`) matches longest; else the first key."""
    if isinstance(loc, str):
        loc, _ = split_path(f"{loc}: ")
    loc = tuple(x for x in loc if x not in ("droptail", "aqm"))  # union tags
    best, depth = None, 0
    for f in FIELDS:
        for path in f.lands:
            if (
                len(path) > depth
                and len(loc) >= len(path)
                and all(p in ("*", x) for p, x in zip(path, loc, strict=False))
            ):
                best, depth = f.name, len(path)
    if best is not None:
        return best
    return str(loc[0]) if loc else "scenario"


def first_error(err: ValidationError) -> tuple[str, str]:
    e = err.errors()[0]
    msg = e["msg"].removeprefix("Value error, ")
    if not e["loc"]:  # a whole-scenario check: its message starts with the key path
        loc, rest = split_path(msg)
        if loc:
            return flat_param(loc), rest
    return flat_param(e["loc"]), msg
