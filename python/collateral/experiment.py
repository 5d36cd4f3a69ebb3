"""Experiment files: a base scenario, sweep axes and repeated seeded trials, in TOML.

An experiment file has four tables (only ``[scenario]`` is required)::

    [experiment]                # how many trials, the root seed, which traces to keep
    name = "fb-rules"           # default: the file's name without .toml
    trials = 5                  # repetitions per point of the sweep
    seed = 1                    # root seed; each trial's seed is derived from it
    traces = []                 # any of cwnd, queue, cbr, drops, congestion, classes

    [scenario]                  # the base scenario: the keys of collateral.spec.Scenario
    link = "adsl1"              # (human units), plus `queue` for both directions at once
    queue = { limit = "20kB", rule = "fb-strict" }
    tcp = [{ cc = "newreno", profile = "linux-2.6.25" }]
    cbr = [{ direction = "down" }, { direction = "up" }]

    [sweep]                     # axes: the cartesian product of these lists ...
    "tcp.cc" = ["newreno", "cubic"]            # no index: every TCP flow
    "queue.limit" = { from = "52500B", to = "67500B", step = "30B" }   # inclusive
    [[sweep.zip]]               # ... times each zip group, whose lists move together
    "down.queue.limit" = ["10kB", "20kB"]
    "up.queue.limit" = ["7p", "14p"]           # slots = ceil(bytes / 1500)

``[[sweep]]`` (an array of tables) makes the experiment the union of several grids, e.g.
one over PS limits in packets and one over FB rules with limits in bytes. ``tags.NAME``
axes attach a label to each point (a ``tag_NAME`` column in the results) without
changing the scenario, e.g. the byte size a slot limit stands for.

**Buffer sizes for disciplines that count packets.** A queue limit axis may be given in
bytes for a discipline whose limit counts packets (FQ-CoDel, CoDel, PIE, RED..., or a
``ps`` drop-tail): ``{ values = [...] | from/to/step, packets_of = "1500B" }`` sets each
point's limit to ``ceil(bytes / 1500)`` packets (at least 1) and keeps the byte size it
stands for as the tag ``KEY_bytes`` (``"down.queue.limit"`` -> ``tag_down_queue_limit_bytes``),
so a drop-tail grid in bytes and an FQ-CoDel grid in packets share one axis::

    [[sweep]]                   # drop-tail: the limit counts bytes
    "down.queue.limit" = ["10kB", "50kB", "200kB"]
    [[sweep]]                   # FQ-CoDel: 7, 34 and 134 packets
    "down.queue" = [{ kind = "fq_codel" }]
    "down.queue.limit" = { values = ["10kB", "50kB", "200kB"], packets_of = "1500B" }

(``collateral plot DIR --x down.queue.limit`` then shows both in kB.) Two sizes that
round to the same number of packets are two points of the same scenario: an error.

Everything is validated before anything runs; a problem is reported as one
:class:`ExperimentError` naming the file, the key path, the value and what is allowed.

**Trial identity.** A point's parameters are its fully resolved scenario in the core's
integer units (:meth:`Scenario.to_native`, without seed and trace switches) as canonical
JSON. A trial's seed is a hash of the root seed, the point's parameters and the
repetition index (or of the root seed and the repetition alone, with
``seeds = "common"``: common random numbers across points). A trial's key is a hash of
the model version, the parameters and the seed, so the same trial has the same key in
any experiment, on any machine, however the sweep is ordered or split.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import stat
import tomllib
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import MAX_EMAX, MIN_EMIN, ROUND_FLOOR, Context, Decimal, DecimalException
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import _native
from .spec import VOCABULARY, Scenario, TraceSpec, split_path
from .units import parse_size

__all__ = [
    "TRACE_NAMES",
    "Experiment",
    "ExperimentError",
    "Point",
    "Trial",
    "load_experiment",
    "model_version",
]

#: Trace tables an experiment may keep (``congestion`` is always recorded by the core).
TRACE_NAMES: tuple[str, ...] = tuple(VOCABULARY["trace"])
_SWITCHED_TRACES = tuple(TraceSpec.model_fields)  # the core's trace switches
#: Limits of one experiment: points (each a validated scenario, about 10 kB and 0.5 ms
#: to build), values of one range axis, trials in all (points x trials per point), the
#: file's size and how deeply its tables and lists may nest.
_MAX_POINTS = 100_000
_MAX_RANGE = 100_000
_MAX_TRIALS = 10_000_000
_MAX_FILE_BYTES = 10_000_000
_MAX_DEPTH = 64


def model_version() -> str:
    """The version of the native core: part of every trial key (results depend on it)."""
    return _native.version()


class ExperimentError(ValueError):
    """A malformed experiment: names the file, the key path, the value and what is allowed."""

    def __init__(self, source: str, key: str, message: str, value: Any = ...) -> None:
        shown = "" if value is ... else f" = {_show(value)}"
        if shown:  # the units module starts some messages with the value: say it once
            message = message.removeprefix(f"{value!r}: ")
        super().__init__(f"{source}: {key}{shown}: {message}")
        self.source = source
        self.key = key
        self.value = value
        self.message = message


def _show(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value) if not isinstance(value, dict | list) else json.dumps(value, default=str)
    except (ValueError, RecursionError):  # a huge int, a deeply nested value
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fmt_path(path: Sequence[object]) -> str:
    """('tcp', 0, 'cc') -> 'tcp[0].cc'."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += ("." if out else "") + str(seg)
    return out


# ---------------------------------------------------------------------------------------
# The [experiment] table


class ExperimentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Names the results directory (results/NAME): letters, digits, _ . -, not starting
    #: with a dot, so it never leaves the results directory.
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str = ""
    #: Repetitions per point.
    trials: int = Field(default=1, ge=1, le=1_000_000)
    #: Root seed.
    seed: int = Field(default=1, ge=0, lt=2**63)
    #: "independent": seeds differ per point; "common": the same seeds at every point.
    seeds: Literal["independent", "common"] = "independent"
    traces: list[Literal[TRACE_NAMES]] = []

    @field_validator("name")
    @classmethod
    def _confined(cls, v: str | None) -> str | None:
        if v is not None and (not _NAME.fullmatch(v) or v.startswith(".")):
            raise ValueError(
                "letters, digits, '_', '.' and '-' only, not starting with '.': it names"
                " the results directory (results/NAME) and must stay inside it"
            )
        return v


_NAME = re.compile(r"[A-Za-z0-9_.-]+")


# ---------------------------------------------------------------------------------------
# Paths into the scenario model

_WILDCARD = "*"


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``LinkSpec``, ``list[TcpSpec]``, ``X | None``..."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _submodels(annotation: Any) -> list[type[BaseModel]]:
    """Every pydantic model inside an annotation: a queue is drop-tail or an AQM."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += [m for m in _submodels(arg) if m not in out]
    return out


def _is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


def _scenario_keys() -> list[str]:
    """Keys an experiment's [scenario] may hold: Scenario's fields minus what the
    experiment owns (seed, trace), plus the ``queue`` shorthand."""
    keys = [k for k in Scenario.model_fields if k not in ("seed", "trace")]
    return [*keys, "queue"]


def _allowed_keys(path: Sequence[object]) -> list[str] | None:
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
    return _scenario_keys() if model is Scenario else list(model.model_fields)


@dataclass(frozen=True)
class _Axis:
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
        models = _submodels(_submodels(link)[0].model_fields["queue"].annotation)
    path: list[object] = []
    listish = False  # the previous segment was a list field: an index may follow
    free = False  # inside a model that takes any key (an AQM's parameters)
    for seg in rest:
        done = _fmt_path([*(("queue",) if first == "queue" else ()), *path])
        if listish:
            listish = False
            if seg.isdigit():
                path.append(int(seg))
                continue
            path.append(_WILDCARD)  # no index: every element
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
                k for m in models for k in (_scenario_keys() if m is Scenario else m.model_fields)
            ]
            raise ExperimentError(
                source,
                key,
                f"unknown key {seg!r}"
                + (f" in {done}" if done else "")
                + f"; allowed: {', '.join(dict.fromkeys(allowed))}",
            )
        path.append(seg)
        if not owners:  # a free-form key of an AQM
            free = True
            continue
        anns = [m.model_fields[seg].annotation for m in owners]
        listish = any(_is_list(a) for a in anns)
        models = [sub for a in anns for sub in _submodels(a)]
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


def _split_number(text: object) -> tuple[Decimal, str]:
    if isinstance(text, bool) or not isinstance(text, int | float | str):
        raise ValueError("expected a number with an optional unit, e.g. 52500B or 10ms")
    if isinstance(text, int) and abs(text) >= 10**60:
        raise ValueError("a number of more than 60 digits")
    s = str(text).strip()
    i = len(s)
    while i > 0 and not (s[i - 1].isdigit() or s[i - 1] == "."):
        i -= 1
    try:
        return Decimal(s[:i]), s[i:].strip()
    except DecimalException:
        raise ValueError(
            f"cannot read {text!r}: expected a number with an optional unit, e.g. 52500B"
        ) from None


_WIDE = Context(prec=60, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _range_values(source: str, key: str, spec: dict[str, Any]) -> list[Any]:
    """{from, to, step} -> the values from `from` to `to` inclusive, in their unit."""
    missing = [k for k in ("from", "to", "step") if k not in spec]
    if missing:
        raise ExperimentError(
            source, key, f"a range needs from, to and step (missing {', '.join(missing)})", spec
        )
    try:
        parts = {k: _split_number(spec[k]) for k in ("from", "to", "step")}
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
    if _WIDE.compare(count, Decimal(_MAX_RANGE - 1)) > 0:
        raise ExperimentError(
            source, key, f"{_WIDE.add(count, 1):.3g} values; at most {_MAX_RANGE:,} per axis", spec
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
) -> list[_Axis]:
    """Axes of one (possibly nested) sweep table; dotted keys and nested tables both work."""
    axes: list[_Axis] = []
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
        axes.append(_Axis(".".join(segs), paths, tuple(values)))
    return axes


def _packet_axis(
    source: str,
    key: str,
    segs: Sequence[str],
    paths: tuple[tuple[object, ...], ...],
    values: list[Any],
    packet: object,
) -> _Axis:
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
    return _Axis(".".join(segs), paths, tuple(values), per, tuple(sizes))


@dataclass(frozen=True)
class _Grid:
    """One sweep table: cartesian axes times zip groups (each a list of equal-length axes)."""

    where: str
    product: tuple[_Axis, ...]
    zips: tuple[tuple[_Axis, ...], ...]

    def size(self) -> int:
        n = math.prod(len(a.values) for a in self.product)
        for group in self.zips:
            n *= len(group[0].values)
        return n

    def combos(self) -> Iterator[list[tuple[_Axis, int]]]:
        """Each point as [(axis, value index)], cartesian axes in file order, then zips."""
        dims: list[list[list[tuple[_Axis, int]]]] = [
            [[(a, i)] for i in range(len(a.values))] for a in self.product
        ]
        for group in self.zips:
            dims.append([[(a, i) for a in group] for i in range(len(group[0].values))])
        for combo in itertools.product(*dims):
            yield [x for part in combo for x in part]


def _parse_grid(source: str, where: str, table: object) -> _Grid:
    if not isinstance(table, dict):
        raise ExperimentError(source, where, "expected a table of axes", table)
    rest = {k: v for k, v in _flat_axes(table, "", source, where).items() if k != "zip"}
    product = _collect_axes(source, where, rest)
    zips: list[tuple[_Axis, ...]] = []
    raw_zips = table.get("zip", [])
    if isinstance(raw_zips, dict):
        raw_zips = [raw_zips]
    if not isinstance(raw_zips, list):
        raise ExperimentError(source, f"{where}.zip", "expected [[sweep.zip]] tables", raw_zips)
    for j, group in enumerate(raw_zips):
        gwhere = f"{where}.zip[{j}]"
        if not isinstance(group, dict) or not group:
            raise ExperimentError(source, gwhere, "expected a table of equal-length lists", group)
        axes = _collect_axes(source, gwhere, _flat_axes(group, "", source, gwhere))
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
    return _Grid(where, tuple(product), tuple(zips))


# ---------------------------------------------------------------------------------------
# Points and trials


def _set_path(d: dict[str, Any], path: Sequence[object], value: Any) -> None:
    """Sets ``value`` at ``path`` in nested dicts/lists, creating dicts on the way;
    ``*`` applies to every element of a list."""
    head, *rest = path
    if head == _WILDCARD:
        if not isinstance(d, list):
            raise KeyError("not a list")
        for item in d:
            _set_path(item, rest, value)
        return
    if isinstance(head, int):
        if not isinstance(d, list) or head >= len(d):
            n = len(d) if isinstance(d, list) else 0
            raise IndexError(f"index {head} out of range: the scenario has {n} of them")
        if not rest:
            d[head] = copy.deepcopy(value)
        else:
            _set_path(d[head], rest, value)
        return
    if not isinstance(d, dict):
        raise KeyError("not a table")
    if not rest:
        d[head] = copy.deepcopy(value)  # type: ignore[index]
        return
    nxt = d.get(head)  # type: ignore[call-overload]
    if nxt is None:
        nxt = d[head] = [] if rest[0] == _WILDCARD or isinstance(rest[0], int) else {}  # type: ignore[index]
    _set_path(nxt, rest, value)


def _packet_limit(d: Any, path: Sequence[object], packets: int) -> int | str:
    """A limit of ``packets`` as the queue at ``path`` takes it: a number for a discipline
    (a table with a ``kind``), ``"Np"`` for drop-tail."""
    for seg in path[:-1]:
        d = d.get(seg) if isinstance(d, dict) else None  # type: ignore[arg-type]
    rule = d.get("limit_rule", d.get("rule", "ps")) if isinstance(d, dict) else "ps"
    if rule != "ps" and (isinstance(d, dict) and ("kind" in d or "rule" in d)):
        raise TypeError(f"the queue counts bytes (rule {rule}); give the sizes without packets_of")
    return packets if isinstance(d, dict) and "kind" in d else f"{packets}p"


def _canonical(native: Mapping[str, Any]) -> str:
    body = {k: v for k, v in native.items() if k not in ("seed", "trace")}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def _hasher(*parts: object) -> Any:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\x00")
    return h


def _digest(*parts: object) -> bytes:
    return _hasher(*parts).digest()


@dataclass(frozen=True, eq=False)
class Point:
    """One point of the sweep: a resolved scenario (seed aside) and how it was chosen."""

    index: int
    key: str  # hash of the model version and the parameters
    scenario: Scenario  # seed 0; a trial sets its own
    values: dict[str, Any]  # sweep key as written -> value, e.g. {"queue.limit": "60kB"}
    tags: dict[str, Any]
    canonical: str  # the parameters as canonical JSON (no seed, no trace switches)
    native_tail: str = field(repr=False)  # native JSON after the seed, for fast trial JSON

    def columns(self) -> dict[str, Any]:
        """The parameters as flat result columns (see :func:`param_columns`)."""
        return dict(self._columns)

    @cached_property
    def _columns(self) -> dict[str, Any]:
        # Once per point: a sweep stores the point's 30 trials in up to 30 batches.
        cols = param_columns(self.scenario)
        cols.update({f"tag_{k}": v for k, v in self.tags.items()})
        return cols

    @cached_property
    def stored_scenario(self) -> str:
        """The scenario as each trial's row stores it: JSON in the file's units, without
        the seed (the row has its own) and the trace switches."""
        return self.scenario.model_dump_json(exclude={"seed", "trace"})


@dataclass(frozen=True, eq=False, slots=True)
class Trial:
    """One repetition of a point, with its derived seed and stable key."""

    key: str
    point: Point
    rep: int
    seed: int

    def native_json(self) -> str:
        """The scenario JSON the core takes, with this trial's seed."""
        return f'{{"seed":{self.seed},{self.point.native_tail}'

    def scenario(self) -> Scenario:
        return self.point.scenario.model_copy(update={"seed": self.seed})


_DURATION_SUFFIX = "_ns"
#: Drop-tail rules whose limit counts bytes (the others count packets).
_BYTE_RULES = ("fb-strict", "fb-loose")


def param_columns(scenario: Scenario) -> dict[str, Any]:
    """A scenario as flat columns in SI base units, named by the file's key paths:
    ``rtt_s``, ``down_rate_bps``, ``down_queue_limit_bytes`` (FB rules) or
    ``down_queue_limit_packets`` (ps and AQMs),
    ``down_queue_rule``, ``tcp0_cc``, ``cbr1_interval_s``... (durations in seconds)."""
    out: dict[str, Any] = {"link": scenario.link}

    def put(prefix: str, d: Mapping[str, Any]) -> None:
        for k, v in d.items():
            if k in ("seed", "trace"):
                continue
            name = f"{prefix}{k}"
            if isinstance(v, dict):
                put(f"{name}_", v)
            elif isinstance(v, list) and all(isinstance(x, dict) for x in v):
                out[f"{name}_flows"] = len(v)
                for i, item in enumerate(v):
                    put(f"{name}{i}_", item)
            elif isinstance(v, list):  # data such as an empirical CDF's points
                out[name] = json.dumps(v)
            elif k.endswith(_DURATION_SUFFIX):
                out[name[: -len(_DURATION_SUFFIX)] + "_s"] = None if v is None else v / 1e9
            elif k == "limit" and ("rule" in d or "kind" in d):
                # One unit per column: a queue's limit counts bytes under the FB rules
                # (of drop-tail, or an AQM's limit_rule), packets otherwise.
                rule = d.get("rule", d.get("limit_rule", "ps"))
                out[f"{name}_{'bytes' if rule in _BYTE_RULES else 'packets'}"] = v
            elif k == "memory_limit":
                out[f"{name}_bytes"] = v
            else:
                out[name] = v

    put("", scenario.to_native())
    return out


class Experiment:
    """A validated experiment: settings, points and (lazily) trials.

    Build one with :func:`load_experiment` (from a TOML file) or
    :meth:`Experiment.from_dict`.
    """

    def __init__(
        self,
        settings: ExperimentSettings,
        points: list[Point],
        source: str,
        text: str | None,
    ) -> None:
        self.settings = settings
        self.points = points
        self.source = source
        #: The experiment file's text (kept with the results).
        self.text = text
        self.model_version = model_version()

    @property
    def name(self) -> str:
        return self.settings.name or "experiment"

    @property
    def trials_per_point(self) -> int:
        return self.settings.trials

    @property
    def traces(self) -> tuple[str, ...]:
        return tuple(self.settings.traces)

    def __len__(self) -> int:
        return len(self.points) * self.settings.trials

    def trials(self) -> list[Trial]:
        """Every trial: points in sweep order, repetitions within a point."""
        return list(self.iter_trials())

    def iter_trials(self) -> Iterator[Trial]:
        """The trials of :meth:`trials` one at a time, without holding them all (for
        counting, or the first few)."""
        root, common = self.settings.seed, self.settings.seeds == "common"
        for p in self.points:
            # The hashes of :func:`_digest` with the point's (long) parts hashed once.
            seed_head = _hasher("collateral-seed/1", root, *(() if common else (p.canonical,)))
            key_head = _hasher("collateral-trial/1", self.model_version, p.canonical)
            for rep in range(self.settings.trials):
                h = seed_head.copy()
                h.update(f"{rep}\x00".encode())
                seed = int.from_bytes(h.digest()[:8], "big") >> 1  # 63 bits: a signed int
                k = key_head.copy()
                k.update(f"{seed}\x00".encode())
                yield Trial(k.hexdigest()[:24], p, rep, seed)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], source: str = "<experiment>", text: str | None = None
    ) -> Experiment:
        """Validates an experiment given as the parsed TOML (nested dicts)."""
        return _build(data, source, text)

    def __repr__(self) -> str:
        return (
            f"<Experiment {self.name!r}: {len(self.points)} points x {self.settings.trials}"
            f" trials = {len(self)}>"
        )


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
            source, "TOML", f"invalid TOML: nested more than {_MAX_DEPTH} levels deep"
        ) from None
    except ValueError as e:  # an integer of thousands of digits
        why = "an integer too long to read" if "digits" in str(e) else str(e)
        raise ExperimentError(source, "TOML", f"invalid TOML: {why}") from None
    _check_depth(source, "TOML", data)
    for key, value in overrides:
        _check_depth(source, f"--set {key}", value)
        _override(data, source, key, value)
    section = data.get("experiment", {})
    if isinstance(section, dict) and "name" not in section:
        if not _NAME.fullmatch(p.stem) or p.stem.startswith("."):
            raise ExperimentError(
                source,
                "experiment.name",
                "missing, and the file's name cannot stand for it (letters, digits, '_',"
                " '.' and '-' only, not starting with '.'); give [experiment] name",
                p.stem,
            )
        data = {**data, "experiment": {**section, "name": p.stem}}
    return _build(data, source, text)


def _read_file(p: Path, source: str) -> str:
    """The file's text: a regular file of at most ``_MAX_FILE_BYTES`` in UTF-8 (never
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
    if st.st_size > _MAX_FILE_BYTES:
        raise ExperimentError(
            source,
            "file",
            f"{st.st_size:,} bytes; an experiment file has at most {_MAX_FILE_BYTES:,}",
        )
    try:
        with p.open("rb") as f:
            raw = f.read(_MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ExperimentError(source, "file", f"cannot read: {e.strerror or e}") from None
    if len(raw) > _MAX_FILE_BYTES:
        raise ExperimentError(
            source, "file", f"more than {_MAX_FILE_BYTES:,} bytes; too large for an experiment"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExperimentError(source, "file", f"not UTF-8 text (byte {e.start})") from None


def _check_depth(source: str, key: str, value: object) -> None:
    """Refuses tables and lists nested more than ``_MAX_DEPTH`` deep (checked without
    recursion, so it cannot overflow the stack itself)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ExperimentError(source, key, f"nested more than {_MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)


def _flat_axes(
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
                _flat_axes(g, "", source, f"{where}.zip[{j}]") if isinstance(g, dict) else g
                for j, g in enumerate(groups)
            ]
        elif isinstance(v, dict) and not is_axis_table(v):
            for kk, vv in _flat_axes(v, f"{prefix}{k}.", source, where).items():
                put(kk, vv)
        else:
            put(f"{prefix}{k}", v)
    return out


def _override(data: dict[str, Any], source: str, key: str, value: Any) -> None:
    """Sets a dotted key in the parsed file (tables are created as needed); under
    ``sweep.`` the rest of the key is the axis, e.g. ``sweep.queue.limit``."""
    segs = key.split(".")
    if not all(segs):
        raise ExperimentError(
            source, f"--set {key}", "expected a dotted key such as experiment.trials"
        )
    if segs[0] == "sweep" and len(segs) > 1 and segs[1] != "zip":
        sweep = data.get("sweep", {})
        if not isinstance(sweep, dict):
            raise ExperimentError(
                source, f"--set {key}", "the file has several [[sweep]] grids; set one whole"
            )
        data["sweep"] = {**_flat_axes(sweep, "", source), ".".join(segs[1:]): value}
        return
    d: Any = data
    for s in segs[:-1]:
        if not isinstance(d, dict):
            raise ExperimentError(
                source, f"--set {key}", f"{s!r} is inside a list; set the whole list"
            )
        nxt = d.get(s)
        if nxt is None:
            nxt = d[s] = {}
        d = nxt
    if not isinstance(d, dict):
        raise ExperimentError(source, f"--set {key}", "inside a list; set the whole list")
    d[segs[-1]] = value


def _validation_message(e: Mapping[str, Any], path: Sequence[object]) -> str:
    msg = str(e["msg"]).removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        allowed = _allowed_keys(path[:-1])
        msg = f"unknown key {path[-1]!r}" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
    elif e["type"] == "literal_error":
        msg = f"not allowed; expected {e['ctx']['expected']}"
    return msg


def _build(data: Mapping[str, Any], source: str, text: str | None) -> Experiment:
    allowed_top = ("experiment", "scenario", "sweep")
    if not isinstance(data, Mapping):
        raise ExperimentError(source, "experiment", "expected a table (a dict)", data)
    _check_depth(source, "experiment", data)
    for k in data:
        if k not in allowed_top:
            raise ExperimentError(
                source, k, f"unknown table; allowed: {', '.join(allowed_top)}", data[k]
            )
    raw_settings = data.get("experiment", {})
    if not isinstance(raw_settings, dict):
        raise ExperimentError(source, "experiment", "expected a table", raw_settings)
    try:
        settings = ExperimentSettings.model_validate(raw_settings)
    except ValidationError as err:
        e = err.errors()[0]
        loc = e["loc"]
        if e["type"] == "extra_forbidden":
            msg = f"unknown key {loc[-1]!r}; allowed: {', '.join(ExperimentSettings.model_fields)}"
        elif e["type"] == "literal_error":
            msg = f"not allowed; expected {e['ctx']['expected']}"
        else:
            msg = str(e["msg"]).removeprefix("Value error, ")
        raise ExperimentError(
            source, "experiment." + _fmt_path(loc), msg, e.get("input", ...)
        ) from None

    base = data.get("scenario")
    if base is None:
        raise ExperimentError(source, "scenario", "missing: the base scenario is required")
    if not isinstance(base, dict):
        raise ExperimentError(source, "scenario", "expected a table", base)
    base = copy.deepcopy(base)
    for k in ("seed", "trace"):
        if k in base:
            owner = "seed (the root seed)" if k == "seed" else "traces"
            raise ExperimentError(
                source,
                f"scenario.{k}",
                f"set by the experiment: use [experiment] {owner}",
                base[k],
            )
    shorthand = "queue" in base
    if shorthand:
        if any(isinstance(base.get(d), dict) and "queue" in base[d] for d in ("down", "up")):
            raise ExperimentError(
                source,
                "scenario.queue",
                "give either queue (both directions) or down.queue / up.queue",
            )
        q = base.pop("queue")
        for d in ("down", "up"):
            link = base.setdefault(d, {})
            if not isinstance(link, dict):
                raise ExperimentError(source, f"scenario.{d}", "expected a table", link)
            link["queue"] = copy.deepcopy(q)

    raw_sweep = data.get("sweep", {})
    if isinstance(raw_sweep, list):
        grids = [_parse_grid(source, f"sweep[{i}]", t) for i, t in enumerate(raw_sweep)]
    else:
        grids = [_parse_grid(source, "sweep", raw_sweep)]
    total = sum(g.size() for g in grids)
    if total > _MAX_POINTS:
        raise ExperimentError(
            source,
            "sweep",
            f"{total:,} points; at most {_MAX_POINTS:,} per experiment (split the sweep into"
            " several files)",
        )
    if total * settings.trials > _MAX_TRIALS:
        raise ExperimentError(
            source,
            "experiment.trials",
            f"{total:,} points x {settings.trials:,} trials = {total * settings.trials:,}"
            f" trials; at most {_MAX_TRIALS:,} per experiment (fewer trials per point, or"
            " split the sweep into several files)",
            settings.trials,
        )

    version = model_version()
    trace = {t: t in settings.traces for t in _SWITCHED_TRACES}
    points: list[Point] = []
    seen: dict[str, Point] = {}
    for grid in grids:
        for combo in grid.combos():
            d = copy.deepcopy(base)
            tags: dict[str, Any] = {}
            values = {axis.key: axis.values[i] for axis, i in combo}
            # Whole values first (a swept `tcp` list), then keys inside them.
            for axis, i in sorted(combo, key=lambda x: min(len(p) for p in x[0].paths)):
                value = axis.values[i]
                if axis.packet_bytes is not None:
                    tags[axis.bytes_tag] = axis.sizes[i]
                for p in axis.paths:
                    if p[0] == "tags":
                        tags[str(p[1])] = value
                        continue
                    try:
                        _set_path(
                            d,
                            p,
                            value
                            if axis.packet_bytes is None
                            else _packet_limit(d, p, axis.packets(i)),
                        )
                    except (KeyError, IndexError, TypeError) as ex:
                        raise ExperimentError(
                            source,
                            f"{grid.where}.{axis.key}",
                            f"cannot set {_fmt_path(p)}: {ex}",
                            value,
                        ) from None
            d["trace"] = trace
            try:
                sc = Scenario.model_validate({**d, "seed": 0})
            except ValidationError as err:
                raise _point_error(source, err, grid, combo, shorthand) from None
            native = sc.to_native()
            canonical = _canonical(native)
            pkey = _digest("collateral-point/1", version, canonical).hex()[:24]
            if pkey in seen:
                other = seen[pkey]
                raise ExperimentError(
                    source,
                    grid.where,
                    f"two points are the same scenario: {_show(other.values)} and"
                    f" {_show(values)}; remove one",
                )
            tail = json.dumps({k: v for k, v in native.items() if k != "seed"})[1:]
            pt = Point(len(points), pkey, sc, values, tags, canonical, tail)
            seen[pkey] = pt
            points.append(pt)
    return Experiment(settings, points, source, text)


def _point_error(
    source: str,
    err: ValidationError,
    grid: _Grid,
    combo: list[tuple[_Axis, int]],
    shorthand: bool,
) -> ExperimentError:
    """The first validation error of a point, attributed to the sweep axis or the
    [scenario] key that set the offending value."""
    e = err.errors()[0]
    # Drop the queue union's tags (see spec.LinkSpec): users write queue.limit, not
    # queue.droptail.limit.
    loc = tuple(x for x in e["loc"] if x not in ("droptail", "aqm"))
    msg = _validation_message(e, loc)
    value = e.get("input", ...)
    if not loc:  # the core's own check, e.g. "down.queue: max_p must ...", "cbr[0].interval: ..."
        head_loc, rest = split_path(msg)
        if head_loc:
            loc = head_loc
            msg, value = rest, ...
            for axis, i in combo:  # a swept parameter of that part that the message names
                for p in axis.paths:
                    if (
                        p[: len(loc)] == loc
                        and len(p) > len(loc)
                        and re.search(rf"\b{re.escape(str(p[-1]))}\b", rest)
                    ):
                        return ExperimentError(
                            source, f"{grid.where}.{axis.key}[{i}]", rest, axis.values[i]
                        )
    for axis, i in combo:
        for p in axis.paths:
            if p[0] == "tags":
                continue
            n = len(p)
            if len(loc) >= n and all(a in (_WILDCARD, b) for a, b in zip(p, loc, strict=False)):
                rest = _fmt_path(loc[n:])
                key = f"{grid.where}.{axis.key}[{i}]" + (f" ({rest})" if rest else "")
                if value is ... and len(loc) == n:  # the core's check: show the swept value
                    value = axis.values[i]
                return ExperimentError(source, key, msg, value)
    if shorthand and len(loc) >= 2 and loc[0] in ("down", "up") and loc[1] == "queue":
        return ExperimentError(source, "scenario." + _fmt_path(("queue", *loc[2:])), msg, value)
    key = "scenario" + ("." + _fmt_path(loc) if loc else "")
    if loc and isinstance(loc[0], int):  # pragma: no cover - the root is a table
        key = "scenario" + _fmt_path(loc)
    return ExperimentError(source, key, msg, value)
