"""Errors of a scenario: :class:`SpecError` naming the flat parameter at fault, and
:class:`PathError` carrying a key path as data, the core's (``_native.ConfigError``)
in the Scenario's spelling; no message is parsed back."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from .fields import FIELDS
from .keypath import Path, PathError, fmt_key_path

#: The tags of the spec's tagged unions (a queue's kind; one call or a list of calls):
#: not part of a field's path.
UNION_TAGS = ("droptail", "aqm", "one_call", "call_list")

# The core's JSON names and the Scenario fields they come from (``rtt_ns`` is ``rtt``).
_CORE_FIELDS = {
    "packet_bytes": "size",
    "overhead_bytes": "overhead",
    "limit_bytes": "limit",
}


def scenario_path(core: Path) -> Path:
    """A key path of the core's scenario JSON as the Scenario spells it:
    ``("cbr", 0, "interval_ns")`` -> ``("cbr", 0, "interval")``, ``("down", "rate_bps")``
    -> ``("down", "rate")``."""
    out: list[str | int] = []
    for part in core:
        if isinstance(part, str):
            part = _CORE_FIELDS.get(part, part)
            for suffix in ("_ns", "_bps"):
                if part.endswith(suffix) and part != suffix:
                    part = part.removesuffix(suffix)
        out.append(part)
    return tuple(out)


def from_core(err: ValueError, prefix: Path = ()) -> PathError:
    """The core's error (``_native.ConfigError``: its JSON key path and the detail) at
    ``prefix`` + that path in the Scenario's spelling."""
    path = scenario_path(tuple(getattr(err, "path", ())))
    detail = str(getattr(err, "detail", err))
    # The keys a detail names (serde's "expected one of `target_ns`, ...") as well.
    detail = re.sub(r"`(\w+)`", lambda m: f"`{scenario_path((m[1],))[0]}`", detail)
    return PathError((*prefix, *path), detail)


#: pydantic's bound checks, as the rest of the tool words them.
_BOUNDS = {
    "greater_than": ">",
    "greater_than_equal": ">=",
    "less_than": "<",
    "less_than_equal": "<=",
}


def message(e: Any) -> str:
    """A pydantic error's message in the tool's words: a bound as ``must be >= 1``
    (pydantic: "Input should be greater than or equal to 1")."""
    if e["type"] in _BOUNDS:
        bound = next(iter((e.get("ctx") or {}).values()), None)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            shown = f"{bound:g}" if isinstance(bound, float) else bound  # exact: a seed's 2^63
            return f"must be {_BOUNDS[e['type']]} {shown}"
    return str(e["msg"]).removeprefix("Value error, ")


def error_at(e: Any) -> tuple[Path, str]:
    """A pydantic error's key path and message: where a check raised a
    :class:`PathError`, its location joined with the error's path, else its own location."""
    cause = (e.get("ctx") or {}).get("error")
    if isinstance(cause, PathError):  # its path is below the validator's location
        return (*e["loc"], *cause.path), cause.detail
    return tuple(e["loc"]), message(e)


class SpecError(ValueError):
    """A bad parameter of :func:`build_scenario`; ``param`` is its keyword name and
    ``below`` the key path inside it that is at fault (``("min_th",)`` within ``aqm``),
    when there is one."""

    def __init__(self, param: str, message: str, below: Path = ()) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message
        self.below = tuple(below)


def flat_param(loc: Path) -> str:
    """The :func:`build_scenario` parameter (the CLI option) behind a Scenario key path:
    ``("cbr", 0, "interval")`` -> ``cbr_interval``, ``("tcp",)`` -> ``tcp_flows``,
    ``("down", "queue", "limit")`` -> ``queue``: the parameter whose declared key path
    (:data:`~collateral.spec.fields.FIELDS`) matches longest; else the first key."""
    return _landing(loc)[0]


def _landing(loc: Path) -> tuple[str, Path]:
    """The parameter behind ``loc`` and the keys of ``loc`` below where it lands."""
    loc = tuple(x for x in loc if x not in UNION_TAGS)
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
        return best, loc[depth:]
    return (str(loc[0]), loc[1:]) if loc else ("scenario", ())


def first_error(err: ValidationError, aqm: bool = False) -> SpecError:
    """A validation's first error as the flat parameter's :class:`SpecError`. ``aqm``:
    the queues are the ``aqm`` parameter's, so a key under a queue (``limit``) is its."""
    loc, msg = error_at(err.errors()[0])
    param, below = _landing(loc)
    if aqm and param in _QUEUE_PARAMS:
        plain = tuple(x for x in loc if x not in UNION_TAGS)
        param, below = "aqm", plain[plain.index("queue") + 1 :] if "queue" in plain else ()
    keyed = bool(below) and isinstance(below[0], str)
    return SpecError(param, f"{fmt_key_path(below)}: {msg}" if keyed else msg, below)


#: The parameters that land in a queue which ``aqm``, when given, replaces.
_QUEUE_PARAMS = ("queue", "rule", "count_in_service")
