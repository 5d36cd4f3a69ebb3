"""The sweep grammar: axes (dotted keys checked against the scenario model; lists,
ranges ``{from, to, step}``, ``{values}``, ``packets_of``, ``tags.NAME``), grids (the
cartesian product of the axes times ``zip`` groups) and nested tables as dotted keys."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_FLOOR, Context, Decimal
from typing import Any

from pydantic import BaseModel

from ..spec import Scenario
from ..units import parse_size, split_number
from .errors import MAX_RANGE, ExperimentError, fmt_path, unknown_key
from .paths import WILDCARD, is_list, scenario_keys, submodels


@dataclass(frozen=True)
class Axis:
    """One sweep axis: the key as written and the scenario paths it sets."""

    key: str  # as written in the file, e.g. "queue.limit" or "tcp.cc"
    paths: tuple[tuple[object, ...], ...]  # ("down","queue","limit"), ("tcp","*","cc")
    values: tuple[Any, ...]
    #: ``packets_of``: bytes per packet; the values are sizes set as packet limits.
    packet_bytes: int | None = None
    sizes: tuple[int, ...] = ()  # the values in bytes (with packet_bytes)

    @property
    def bytes_tag(self) -> str:
        """The tag that keeps the byte size a packet limit stands for."""
        return self.key.replace(".", "_") + "_bytes"

    def packets(self, i: int) -> int:
        assert self.packet_bytes is not None
        return max(1, -(-self.sizes[i] // self.packet_bytes))


def _parse_axis_key(source: str, where: str, segs: Sequence[str]) -> tuple[tuple[object, ...], ...]:
    """Checks a sweep key against the scenario model; returns the paths it sets."""
    key = f"{where}.{'.'.join(segs)}"
    if not segs:
        raise ExperimentError(source, where, "empty sweep key")
    if segs[0] == "tags":
        if len(segs) != 2 or not segs[1]:
            raise ExperimentError(source, key, "a tag axis is tags.NAME, e.g. tags.queue_bytes")
        return (("tags", segs[1]),)
    if segs[0] in ("seed", "trace"):
        owner = "seed" if segs[0] == "seed" else "traces"
        raise ExperimentError(
            source, key, f"not a sweep axis: [experiment] {owner} sets it for all trials"
        )
    heads: list[tuple[object, ...]] = [()]
    first = segs[0]
    rest = list(segs)
    models: list[type[BaseModel]] = [Scenario]
    if first == "queue":  # both directions
        heads = [("down", "queue"), ("up", "queue")]
        rest = rest[1:]
        link = Scenario.model_fields["down"].annotation
        models = submodels(submodels(link)[0].model_fields["queue"].annotation)
    path: list[object] = []
    listish = False  # the previous segment was a list field: an index may follow
    free = False  # inside a model that takes any key (an AQM's parameters)
    for seg in rest:
        done = fmt_path([*(("queue",) if first == "queue" else ()), *path])
        if listish:
            listish = False
            if seg.isdigit():
                path.append(int(seg))
                continue
            path.append(WILDCARD)  # no index: every element
        if free:
            path.append(seg)
            continue
        if not models:
            raise ExperimentError(
                source, key, f"{done or 'this'} has no keys; sweep its whole value instead"
            )
        owners = [m for m in models if seg in m.model_fields]
        if (not owners and not any(m.model_config.get("extra") == "allow" for m in models)) or (
            Scenario in models and seg in ("seed", "trace")
        ):
            allowed = [
                k for m in models for k in (scenario_keys() if m is Scenario else m.model_fields)
            ]
            raise ExperimentError(
                source,
                key,
                unknown_key(seg, allowed, done),
            )
        path.append(seg)
        if not owners:  # a free-form key of an AQM
            free = True
            continue
        anns = [m.model_fields[seg].annotation for m in owners]
        listish = any(is_list(a) for a in anns)
        models = [sub for a in anns for sub in submodels(a)]
    return tuple((*h, *path) for h in heads)


def _is_range(value: object) -> bool:
    return isinstance(value, dict) and set(value) <= {"from", "to", "step"} and "from" in value


_AXIS_TABLE_KEYS = {"from", "to", "step", "values", "packets_of"}


def is_axis_table(value: object) -> bool:
    """An axis given as a table: a range ``{from, to, step}`` or ``{values = [...]}``,
    either with ``packets_of``; any other table holds nested axes."""
    return (
        isinstance(value, dict)
        and set(value) <= _AXIS_TABLE_KEYS
        and ("from" in value or "values" in value)
    )


def _check_axis_table(value: Mapping[str, Any], key: str, source: str) -> None:
    """A table that holds an axis table's keys but is not one: its stray key, or what
    it lacks, named (not read as nested axes, which would blame the parameter)."""
    own = set(value) & _AXIS_TABLE_KEYS
    if not own:
        return
    stray = sorted(set(value) - _AXIS_TABLE_KEYS)
    if stray:
        raise ExperimentError(
            source,
            f"{key}.{stray[0]}",
            f"unknown key in an axis table; allowed: {', '.join(sorted(_AXIS_TABLE_KEYS))}",
        )
    raise ExperimentError(
        source, key, "an axis table needs values = [...] or from, to and step", value
    )


_WIDE = Context(prec=60, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _range_values(source: str, key: str, spec: dict[str, Any]) -> list[Any]:
    """{from, to, step} -> the values from `from` to `to` inclusive, in their unit."""
    missing = [k for k in ("from", "to", "step") if k not in spec]
    if missing:
        raise ExperimentError(
            source, key, f"a range needs from, to and step (missing {', '.join(missing)})", spec
        )
    try:
        parts = {k: split_number(spec[k]) for k in ("from", "to", "step")}
    except ValueError as e:
        raise ExperimentError(source, key, str(e), spec) from None
    units = {u for _, u in parts.values()}
    if len(units) > 1:
        raise ExperimentError(
            source,
            key,
            "from, to and step must be in the same unit, e.g. 52500B..67500B by 30B",
            spec,
        )
    (unit,) = units
    lo, hi, step = (parts[k][0] for k in ("from", "to", "step"))
    if step <= 0:
        raise ExperimentError(source, key, "step must be positive", spec)
    if hi < lo:
        raise ExperimentError(source, key, "to must not be below from", spec)
    count = _WIDE.divide(_WIDE.subtract(hi, lo), step)  # no huge int from a typo
    if _WIDE.compare(count, Decimal(MAX_RANGE - 1)) > 0:
        raise ExperimentError(
            source, key, f"{_WIDE.add(count, 1):.3g} values; at most {MAX_RANGE:,} per axis", spec
        )
    n = int(count.to_integral_value(rounding=ROUND_FLOOR)) + 1
    plain = isinstance(spec["from"], int | float) and not isinstance(spec["from"], bool)
    out: list[Any] = []
    for i in range(n):
        v = lo + step * i
        if plain:
            out.append(int(v) if v == v.to_integral_value() else float(v))
        else:
            out.append(f"{format(v.normalize(), 'f')}{unit}")
    return out


def _axis_values(source: str, key: str, raw: object) -> list[Any]:
    if is_axis_table(raw):
        assert isinstance(raw, dict)
        if "values" in raw:
            extra = sorted(set(raw) & {"from", "to", "step"})
            if extra:
                raise ExperimentError(
                    source, key, f"give either values or from/to/step, not both ({extra[0]})", raw
                )
            return _axis_values(source, key, raw["values"])
        return _range_values(source, key, {k: v for k, v in raw.items() if k != "packets_of"})
    if not isinstance(raw, list):
        raise ExperimentError(
            source,
            key,
            "a sweep axis is a list of values or a range {from, to, step}; set a value"
            " shared by all points in [scenario]",
            raw,
        )
    if not raw:
        raise ExperimentError(source, key, "empty list: an axis needs at least one value", raw)
    return list(raw)


def _collect_axes(
    source: str, where: str, table: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> list[Axis]:
    """Axes of one (possibly nested) sweep table; dotted keys and nested tables both work."""
    axes: list[Axis] = []
    for k, v in table.items():
        segs = (*prefix, *k.split("."))
        if isinstance(v, dict) and not is_axis_table(v):
            axes += _collect_axes(source, where, v, segs)
            continue
        key = f"{where}.{'.'.join(segs)}"
        paths = _parse_axis_key(source, where, segs)
        values = _axis_values(source, key, v)
        if isinstance(v, dict) and "packets_of" in v:
            axes.append(_packet_axis(source, key, segs, paths, values, v["packets_of"]))
            continue
        if segs[0] == "tags":
            for j, tv in enumerate(values):
                if not isinstance(tv, str | int | float | bool):
                    raise ExperimentError(
                        source, f"{key}[{j}]", "a tag is a string, number or boolean", tv
                    )
        axes.append(Axis(".".join(segs), paths, tuple(values)))
    return axes


def _packet_axis(
    source: str,
    key: str,
    segs: Sequence[str],
    paths: tuple[tuple[object, ...], ...],
    values: list[Any],
    packet: object,
) -> Axis:
    """An axis of byte sizes set as packet limits (``packets_of``), checked."""
    if segs[-1] != "limit" or "queue" not in segs or segs[0] == "tags":
        raise ExperimentError(
            source,
            f"{key}.packets_of",
            "applies to a queue limit (queue.limit, down.queue.limit, up.queue.limit)",
            packet,
        )
    try:
        per = parse_size(packet)  # type: ignore[arg-type]
    except ValueError as e:
        raise ExperimentError(source, f"{key}.packets_of", f"{e}; e.g. 1500B", packet) from None
    sizes = []
    for j, v in enumerate(values):
        try:
            sizes.append(parse_size(v))
        except ValueError as e:
            raise ExperimentError(
                source, f"{key}[{j}]", f"{e}; with packets_of, give sizes such as 20kB", v
            ) from None
    return Axis(".".join(segs), paths, tuple(values), per, tuple(sizes))


@dataclass(frozen=True)
class Grid:
    """One sweep table: cartesian axes times zip groups (each a list of equal-length axes)."""

    where: str
    product: tuple[Axis, ...]
    zips: tuple[tuple[Axis, ...], ...]

    def size(self) -> int:
        n = math.prod(len(a.values) for a in self.product)
        for group in self.zips:
            n *= len(group[0].values)
        return n

    def combos(self) -> Iterator[list[tuple[Axis, int]]]:
        """Each point as [(axis, value index)], cartesian axes in file order, then zips."""
        dims: list[list[list[tuple[Axis, int]]]] = [
            [[(a, i)] for i in range(len(a.values))] for a in self.product
        ]
        for group in self.zips:
            dims.append([[(a, i) for a in group] for i in range(len(group[0].values))])
        for combo in itertools.product(*dims):
            yield [x for part in combo for x in part]


def parse_grid(source: str, where: str, table: object) -> Grid:
    if not isinstance(table, dict):
        raise ExperimentError(source, where, "expected a table of axes", table)
    rest = {k: v for k, v in flat_axes(table, "", source, where).items() if k != "zip"}
    product = _collect_axes(source, where, rest)
    zips: list[tuple[Axis, ...]] = []
    raw_zips = table.get("zip", [])
    if isinstance(raw_zips, dict):
        raw_zips = [raw_zips]
    if not isinstance(raw_zips, list):
        raise ExperimentError(source, f"{where}.zip", "expected [[sweep.zip]] tables", raw_zips)
    for j, group in enumerate(raw_zips):
        gwhere = f"{where}.zip[{j}]"
        if not isinstance(group, dict) or not group:
            raise ExperimentError(source, gwhere, "expected a table of equal-length lists", group)
        axes = _collect_axes(source, gwhere, flat_axes(group, "", source, gwhere))
        lengths = {a.key: len(a.values) for a in axes}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} has {n}" for k, n in lengths.items())
            raise ExperimentError(source, gwhere, f"zipped axes must have equal lengths; {shown}")
        zips.append(tuple(axes))
    all_axes = [*product, *(a for g in zips for a in g)]
    tags = {str(p[1]) for a in all_axes for p in a.paths if p[0] == "tags"}
    for a in all_axes:
        if a.packet_bytes is not None and a.bytes_tag in tags:
            raise ExperimentError(
                source,
                f"{where}.tags.{a.bytes_tag}",
                f"{where}.{a.key} with packets_of keeps its sizes as this tag; remove one",
            )
    seen: dict[tuple[object, ...], str] = {}
    for a in all_axes:
        for p in a.paths:
            if p in seen:
                raise ExperimentError(
                    source, f"{where}.{a.key}", f"sets the same parameter as {seen[p]}"
                )
            seen[p] = f"{where}.{a.key}"
    return Grid(where, tuple(product), tuple(zips))


def flat_axes(
    table: Mapping[str, Any], prefix: str = "", source: str = "<experiment>", where: str = "sweep"
) -> dict[str, Any]:
    """A sweep table with nested tables turned into dotted keys (``zip`` kept). A key
    given twice, quoted and as a table (``"queue.limit"`` and ``queue.limit``), is an
    error, not one silently kept."""
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in out:
            raise ExperimentError(
                source,
                f"{where}.{key}",
                "given twice (as a quoted dotted key and as a table key); keep one",
            )
        out[key] = value

    for k, v in table.items():
        if not prefix and k == "zip":
            groups = v if isinstance(v, list) else [v]
            out[k] = [
                flat_axes(g, "", source, f"{where}.zip[{j}]") if isinstance(g, dict) else g
                for j, g in enumerate(groups)
            ]
        elif isinstance(v, dict) and not is_axis_table(v):
            _check_axis_table(v, f"{where}.{prefix}{k}", source)
            for kk, vv in flat_axes(v, f"{prefix}{k}.", source, where).items():
                put(kk, vv)
        else:
            put(f"{prefix}{k}", v)
    return out
