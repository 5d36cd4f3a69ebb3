"""Paths into the scenario model: which keys a table of the scenario may hold, and
setting a value at a path (``*``: every element of a list) in the parsed file."""

from __future__ import annotations

import copy
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..spec import Scenario

WILDCARD = "*"

#: Values that a copy may share: nothing can change them.
_IMMUTABLE = (str, int, float, bool, type(None))


def copy_tree(value: Any) -> Any:
    """A deep copy of parsed TOML or JSON (dicts, lists, scalars), several times faster
    than :func:`copy.deepcopy` (run per point of a sweep of thousands); anything else is
    copied by :func:`copy.deepcopy`."""
    if type(value) is dict:
        return {k: copy_tree(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_tree(v) for v in value]
    if isinstance(value, _IMMUTABLE):
        return value
    return copy.deepcopy(value)


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``LinkSpec``, ``list[TcpSpec]``, ``X | None``..."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def submodels(annotation: Any) -> list[type[BaseModel]]:
    """Every pydantic model inside an annotation: a queue is drop-tail or an AQM."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += [m for m in submodels(arg) if m not in out]
    return out


def is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


def scenario_keys() -> list[str]:
    """Keys an experiment's [scenario] may hold: Scenario's fields minus what the
    experiment owns (seed, trace), plus the ``queue`` shorthand."""
    keys = [k for k in Scenario.model_fields if k not in ("seed", "trace")]
    return [*keys, "queue"]


def allowed_keys(path: Sequence[object]) -> list[str] | None:
    """The keys of the model at ``path`` in a scenario (None if it is not a model)."""
    model: type[BaseModel] | None = Scenario
    for seg in path:
        if isinstance(seg, int):
            continue
        if model is None or seg not in model.model_fields:
            return None
        model = _submodel(model.model_fields[seg].annotation)
    if model is None:
        return None
    return scenario_keys() if model is Scenario else list(model.model_fields)


def set_path(d: dict[str, Any], path: Sequence[object], value: Any) -> None:
    """Sets ``value`` at ``path`` in nested dicts/lists, creating dicts on the way;
    ``*`` applies to every element of a list."""
    head, *rest = path
    if head == WILDCARD:
        if not isinstance(d, list):
            raise KeyError("not a list")
        if not d:  # sets nothing: every point of the axis would be the same scenario
            raise KeyError("the scenario has none of these flows; give them first")
        for item in d:
            set_path(item, rest, value)
        return
    if isinstance(head, int):
        if not isinstance(d, list) or head >= len(d):
            n = len(d) if isinstance(d, list) else 0
            raise IndexError(f"index {head} out of range: the scenario has {n} of them")
        if not rest:
            d[head] = copy_tree(value)
        else:
            set_path(d[head], rest, value)
        return
    if not isinstance(d, dict):
        raise KeyError("not a table")
    if not rest:
        d[head] = copy_tree(value)  # type: ignore[index]
        return
    nxt = d.get(head)  # type: ignore[call-overload]
    if nxt is None:
        nxt = d[head] = [] if rest[0] == WILDCARD or isinstance(rest[0], int) else {}  # type: ignore[index]
    set_path(nxt, rest, value)


def packet_limit(d: Any, path: Sequence[object], packets: int) -> int | str:
    """A limit of ``packets`` as the queue at ``path`` takes it: a number for a discipline
    (a table with a ``kind``), ``"Np"`` for drop-tail."""
    for seg in path[:-1]:
        d = d.get(seg) if isinstance(d, dict) else None  # type: ignore[arg-type]
    rule = d.get("limit_rule", d.get("rule", "ps")) if isinstance(d, dict) else "ps"
    if rule != "ps" and (isinstance(d, dict) and ("kind" in d or "rule" in d)):
        raise TypeError(f"the queue counts bytes (rule {rule}); give the sizes without packets_of")
    return packets if isinstance(d, dict) and "kind" in d else f"{packets}p"
