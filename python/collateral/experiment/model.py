"""The :class:`Experiment` (settings, points, trials) and how one is built from the
parsed file: the base scenario, a point per combination of each grid's axes, each
validated, a problem attributed to the axis or key that set it."""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..spec import Scenario, error_at
from ..spec.errors import UNION_TAGS, message
from .errors import (
    MAX_POINTS,
    MAX_TRIALS,
    ExperimentError,
    check_depth,
    fmt_path,
    show,
    unknown_key,
)
from .grammar import Axis, Grid, parse_grid
from .identity import canonical_json, digest, hasher, model_version, seed_basis
from .paths import WILDCARD, allowed_keys, copy_tree, packet_limit, set_path
from .points import Point, Trial, param_columns
from .settings import SWITCHED_TRACES, ExperimentSettings
from .unusual import small_limits, unusual_values


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

    def point_rows(self) -> list[dict[str, Any]]:
        """Each point as a row: its key (``point``), its index in the sweep's order
        (``point_index``) and its parameter columns (what a store keeps in
        ``points.parquet`` for plots to order its trials by)."""
        return [{"point": p.key, "point_index": p.index, **p.columns()} for p in self.points]

    def sweep_axes(self) -> list[tuple[str, list[Any]]]:
        """Each sweep key as written (``tcp.cc``, ``queue.limit``, ``tags.aqm``) with its
        values in the order the points take them, ``--set`` applied: what a plot names
        the swept parameters by and orders their categories by."""
        axes: dict[str, dict[str, Any]] = {}
        for p in self.points:
            for k, v in p.values.items():
                axes.setdefault(k, {}).setdefault(json.dumps(v, sort_keys=True, default=str), v)
        return [(k, list(vals.values())) for k, vals in axes.items()]

    def trials(self) -> list[Trial]:
        """Every trial: points in sweep order, repetitions within a point."""
        return list(self.iter_trials())

    def iter_trials(self) -> Iterator[Trial]:
        """The trials of :meth:`trials` one at a time, without holding them all (for
        counting, or the first few)."""
        root, common = self.settings.seed, self.settings.seeds == "common"
        for p in self.points:
            # The hashes of :func:`digest` with the point's (long) parts hashed once.
            basis = p.seed_basis or p.canonical
            seed_head = hasher("collateral-seed/1", root, *(() if common else (basis,)))
            key_head = hasher("collateral-trial/1", self.model_version, p.canonical)
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
        return build(data, source, text)

    def __repr__(self) -> str:
        return (
            f"<Experiment {self.name!r}: {len(self.points)} points x {self.settings.trials}"
            f" trials = {len(self)}>"
        )


def _first_error(err: ValidationError) -> Mapping[str, Any]:
    """The error to tell: an unknown key before the others (a misspelt key also leaves
    the right one missing, and the misspelling is what the user has to see)."""
    errors = err.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def _validation_message(e: Mapping[str, Any], path: Sequence[object]) -> str:
    msg = message(e)
    if e["type"] == "extra_forbidden":
        allowed = allowed_keys(path[:-1])
        msg = unknown_key(path[-1], allowed)
    elif e["type"] == "literal_error":
        msg = f"not allowed; expected {e['ctx']['expected']}"
    elif e["type"] == "missing":  # told at the table that lacks it (see _point_error)
        msg = f"missing key {path[-1]!r}"
    elif e["type"] in ("model_type", "dict_type", "model_attributes_type"):
        keys = allowed_keys(path)
        msg = "expected a table" + (f" with keys {', '.join(keys)}" if keys else "")
    return msg


def build(data: Mapping[str, Any], source: str, text: str | None) -> Experiment:
    allowed_top = ("experiment", "scenario", "sweep")
    if not isinstance(data, Mapping):
        raise ExperimentError(source, "experiment", "expected a table (a dict)", data)
    check_depth(source, "experiment", data)
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
        e = _first_error(err)
        loc = e["loc"]
        if e["type"] == "extra_forbidden":
            msg = unknown_key(loc[-1], list(ExperimentSettings.model_fields))
        else:
            msg = _validation_message(e, loc)
        raise ExperimentError(
            source, "experiment." + fmt_path(loc), msg, e.get("input", ...)
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
    empty = (
        [f"sweep[{i}]" for i, t in enumerate(raw_sweep) if t == {}]
        if isinstance(raw_sweep, list) and raw_sweep
        else (["sweep"] if "sweep" in data and raw_sweep in ({}, []) else [])
    )
    if empty:  # a sweep that names no axis is a mistake, not "no sweep"
        raise ExperimentError(
            source, empty[0], "an empty sweep: give at least one key = [values], or remove it"
        )
    if isinstance(raw_sweep, list):
        grids = [parse_grid(source, f"sweep[{i}]", t) for i, t in enumerate(raw_sweep)]
    else:
        grids = [parse_grid(source, "sweep", raw_sweep)]
    total = sum(g.size() for g in grids)
    if total > MAX_POINTS:
        raise ExperimentError(
            source,
            "sweep",
            f"{total:,} points; at most {MAX_POINTS:,} per experiment (split the sweep into"
            " several files)",
        )
    if total * settings.trials > MAX_TRIALS:
        raise ExperimentError(
            source,
            "experiment.trials",
            f"{total:,} points x {settings.trials:,} trials = {total * settings.trials:,}"
            f" trials; at most {MAX_TRIALS:,} per experiment (fewer trials per point, or"
            " split the sweep into several files)",
            settings.trials,
        )

    version = model_version()
    trace = {t: t in settings.traces for t in SWITCHED_TRACES}
    points: list[Point] = []
    seen: dict[str, Point] = {}
    for grid in grids:
        for combo in grid.combos():
            d = copy_tree(base)
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
                        set_path(
                            d,
                            p,
                            value
                            if axis.packet_bytes is None
                            else packet_limit(d, p, axis.packets(i)),
                        )
                    except (KeyError, IndexError, TypeError) as ex:
                        why = ex.args[0] if isinstance(ex, KeyError) and ex.args else ex
                        raise ExperimentError(
                            source,
                            f"{grid.where}.{axis.key}",
                            f"cannot set {fmt_path(p)}: {why}",
                            value,
                        ) from None
            d["trace"] = trace
            try:
                sc = Scenario.model_validate({**d, "seed": 0})
            except ValidationError as err:
                raise _point_error(source, err, grid, combo, shorthand) from None
            native = sc.to_native()
            canonical = canonical_json(native)
            pkey = digest("collateral-point/1", version, canonical).hex()[:24]
            if pkey in seen:
                other = seen[pkey]
                raise ExperimentError(
                    source,
                    grid.where,
                    f"two points are the same scenario: {show(other.values)} and"
                    f" {show(values)}; remove one",
                )
            tail = json.dumps({k: v for k, v in native.items() if k != "seed"})[1:]
            cols = param_columns(sc, native)  # every run stores them (points.parquet)
            cols.update({f"tag_{k}": v for k, v in tags.items()})
            basis = seed_basis(native)
            pt = Point(len(points), pkey, sc, values, tags, canonical, tail, basis, cols)
            seen[pkey] = pt
            points.append(pt)
    # Valid but probably not meant (rtt = 100 is 100 s): warned, as the CLI's options are.
    for odd in unusual_values(data) + small_limits(points):
        warnings.warn(f"{source}: {odd}", stacklevel=3)
    return Experiment(settings, points, source, text)


def _point_error(
    source: str,
    err: ValidationError,
    grid: Grid,
    combo: list[tuple[Axis, int]],
    shorthand: bool,
) -> ExperimentError:
    """The first validation error of a point, attributed to the sweep axis or the
    [scenario] key that set the offending value."""
    e = _first_error(err)
    # Drop the unions' tags (see spec.LinkSpec, spec.media): users write queue.limit, not
    # queue.droptail.limit, and media[1].fps.
    loc = tuple(x for x in e["loc"] if x not in UNION_TAGS)
    msg = _validation_message(e, loc)
    if e["type"] == "missing" and loc:  # its input is the table that lacks the key
        loc = loc[:-1]
    value = e.get("input", ...)
    at, detail = error_at(e)
    if at != tuple(e["loc"]):  # a check's PathError (the core's, an AQM's): its key path
        loc, msg, value = tuple(x for x in at if x not in ("droptail", "aqm")), detail, ...
    # The axis that set the value: the one whose path matches the most of ``loc``.
    best: tuple[int, Axis, int, tuple[Any, ...]] | None = None
    for axis, i in combo:
        for p in axis.paths:
            n = len(p)
            if (
                p[0] != "tags"
                and len(loc) >= n
                and all(a in (WILDCARD, b) for a, b in zip(p, loc, strict=False))
                and (best is None or n > best[0])
            ):
                best = (n, axis, i, p)
    if best is not None:
        n, axis, i, _ = best
        rest = fmt_path(loc[n:])
        key = f"{grid.where}.{axis.key}[{i}]" + (f" ({rest})" if rest else "")
        if value is ... and len(loc) == n:  # the core's check: show the swept value
            value = axis.values[i]
        return ExperimentError(source, key, msg, value)
    # A table's own check (a call's min_rate above its max_rate, at ``media``): the axes
    # that set a key inside that table.
    inside = [
        (f"{grid.where}.{axis.key}[{i}]", axis.values[i])
        for axis, i in combo
        if loc
        and any(
            p[0] != "tags"
            and len(p) > len(loc)
            and all(a in (WILDCARD, b) for a, b in zip(p, loc, strict=False))
            for p in axis.paths
        )
    ]
    if inside:  # one axis: its value; several: their keys say which
        shown = inside[0][1] if len(inside) == 1 else ...
        return ExperimentError(source, " and ".join(k for k, _ in inside), msg, shown)
    if shorthand and len(loc) >= 2 and loc[0] in ("down", "up") and loc[1] == "queue":
        return ExperimentError(source, "scenario." + fmt_path(("queue", *loc[2:])), msg, value)
    key = "scenario" + ("." + fmt_path(loc) if loc else "")
    if loc and isinstance(loc[0], int):  # pragma: no cover - the root is a table
        key = "scenario" + fmt_path(loc)
    return ExperimentError(source, key, msg, value)
