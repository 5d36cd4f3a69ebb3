"""Points and trials: a point of the sweep (a resolved scenario and how it was chosen),
a trial (a repetition with its seed and key), and a scenario as flat result columns."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..spec import Scenario, TraceSpec


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
    #: What the trials' seeds derive from (identity.seed_basis); the canonical JSON if "".
    seed_basis: str = field(default="", repr=False)
    #: The parameters as flat result columns (:func:`param_columns`) and the tags as
    #: ``tag_*``, made once by the expansion from the JSON it built.
    param_columns: dict[str, Any] = field(default_factory=dict, repr=False)

    def columns(self) -> dict[str, Any]:
        """The parameters as flat result columns, a copy of :attr:`param_columns`."""
        return dict(self.param_columns)

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

    def scenario(self, traces: bool = False) -> Scenario:
        """The trial's scenario (its seed); ``traces``: every time series on, to run the
        trial again and look inside (an experiment stores only those it names)."""
        update: dict[str, Any] = {"seed": self.seed}
        if traces:
            update["trace"] = TraceSpec()
        return self.point.scenario.model_copy(update=update)


_DURATION_SUFFIX = "_ns"
#: Drop-tail rules whose limit counts bytes (the others count packets).
_BYTE_RULES = ("fb-strict", "fb-loose")


def param_columns(scenario: Scenario, native: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A scenario as flat columns in SI base units, named by the file's key paths:
    ``rtt_s``, ``down_rate_bps``, ``down_queue_limit_bytes`` (FB rules) or
    ``down_queue_limit_packets`` (ps and AQMs),
    ``down_queue_rule``, ``tcp0_cc``, ``cbr1_interval_s``... (durations in seconds).
    ``native``: the scenario's ``to_native()`` when the caller has it."""
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

    put("", scenario.to_native() if native is None else native)
    return out
