"""One trial: the :class:`Scenario` (link, flows, seed, phases, traces) and its
conversion to the JSON the core takes; the core's own check runs when it is built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .. import _native
from ..display import short
from ..units import fmt_duration, fmt_rate
from ..vocabulary import (
    LEO_PRESETS,
    LINK_PRESETS,
    LINK_RATES,
    MAX_CBR_FLOWS,
    MAX_PHASES,
    MAX_TCP_FLOWS,
    MAX_WEB_SLOTS,
)
from .errors import from_core
from .link import KERNEL_DIFFERENCES, AqmSpec, LinkSpec
from .media import MediaSpec, OneOrMoreCalls, calls_native, calls_of
from .tcp import TcpSpec
from .traffic import CbrSpec, WebSpec
from .types import Duration, LinkPreset, Model, Rate
from .workload import WorkloadSpec, complete_flows

_validate_native = getattr(_native, "validate_scenario", None)


class PhaseSpec(Model):
    """A named stretch of a phased experiment, from ``start`` to the next phase's."""

    name: str = Field(min_length=1)
    start: Duration


class TraceSpec(Model):
    """Which time series the core records (all on; turn off for long sweeps)."""

    cwnd: bool = True
    queue: bool = True
    cbr: bool = True
    drops: bool = True
    #: Per-class arrivals, drops, bytes and latency at each bottleneck per time bin.
    classes: bool = True

    @classmethod
    def off(cls) -> TraceSpec:
        """No time series: summaries only (the core records nothing it was not asked for)."""
        return cls(cwnd=False, queue=False, cbr=False, drops=False, classes=False)


#: The link of a scenario that names neither a preset nor rates: the CLI's, the flat
#: builder's and an experiment file's alike.
DEFAULT_LINK = "adsl1"


def uses_default_link(rated: bool, traced: list[bool]) -> bool:
    """Without a preset, whether the default link applies: no rate (or satellite link)
    given, and not every direction a trace (a trace in one direction replaces only that
    direction's rate, as of a preset given). The flat builder's rule and the model's."""
    return not rated and not all(traced)


def _has_rate(link: object, keys: tuple[str, ...] = ("rate", "trace", "leo")) -> bool:
    """A rate given, or a trace or satellite link that sets it."""
    if isinstance(link, LinkSpec):
        return any(getattr(link, k) is not None for k in keys)
    return isinstance(link, dict) and any(link.get(k) is not None for k in keys)


class Scenario(Model):
    """One trial: a dumbbell with an asymmetric bottleneck, TCP and CBR flows, a seed.

    ``link`` names a preset (``adsl1``, ``adsl2``) that supplies the rates of ``down``
    and ``up``; give either it or both rates. With neither, the link is ADSL1, as the
    CLI's (a trace in one direction replaces that direction's rate).
    """

    # A message does not repeat the input: a million flows are refused, not printed (the
    # rest of the config is Model's, which pydantic merges in).
    model_config = ConfigDict(hide_input_in_errors=True)

    seed: int = Field(default=1, ge=0, lt=2**64)
    link: LinkPreset | None = None
    duration: Duration = 60_000_000_000
    warmup: Duration = 5_000_000_000
    rtt: Duration = 100_000_000
    access_rate: Rate = 1_000_000_000
    down: LinkSpec = Field(default_factory=LinkSpec, validate_default=True)
    up: LinkSpec = Field(default_factory=LinkSpec, validate_default=True)
    tcp: list[TcpSpec] = Field(default=[], max_length=MAX_TCP_FLOWS)
    cbr: list[CbrSpec] = Field(default=[], max_length=MAX_CBR_FLOWS)
    web: list[WebSpec] = Field(default=[], max_length=MAX_WEB_SLOTS)
    #: Video calls, each run by a congestion controller (none by default): one call,
    #: or a list of them (RFC 8867's cases with two and three calls, and both ways).
    media: OneOrMoreCalls | None = None
    #: Named phases for per-phase, per-class summaries (none: one phase after warm-up).
    phases: list[PhaseSpec] = Field(default=[], max_length=MAX_PHASES)
    #: Width of the per-class time bins (throughput over time).
    bin: Duration = 1_000_000_000
    trace: TraceSpec = Field(default_factory=TraceSpec)
    #: A built-in workload (RRUL) whose flows are among ``tcp`` and ``cbr``, its probes
    #: first: the core scores the trial from them (see :mod:`collateral.spec.workload`).
    workload: WorkloadSpec | None = None

    @field_validator("tcp", "cbr", "web", "phases", mode="before")
    @classmethod
    def _not_too_many(cls, v: object, info: ValidationInfo) -> object:
        """A list longer than the core takes is refused by its length, before a million
        items are validated one by one."""
        limit = cls.model_fields[str(info.field_name)].metadata
        most = next((m.max_length for m in limit if getattr(m, "max_length", None)), None)
        if isinstance(v, list | tuple) and most is not None and len(v) > most:
            raise ValueError(f"{len(v)} items; at most {most}")
        if isinstance(v, Model | dict | str):  # tcp=TcpSpec(), tcp = { cc = ... }, "cubic"
            # One error, not pydantic's attempt at every member of every union.
            raise ValueError(f"expected a list, also of one: {info.field_name} = [...]")
        return v

    @model_validator(mode="before")
    @classmethod
    def _workload_flows(cls, data: object) -> object:
        """A workload's flows where the data lacks them (see ``complete_flows``)."""
        if isinstance(data, dict) and data.get("workload") is not None:
            return complete_flows(data)
        return data

    @model_validator(mode="before")
    @classmethod
    def _default_link(cls, data: object) -> object:
        """No preset and no rate in either direction: the default link. A trace in one
        direction replaces that direction of it, as of a preset given, and the other
        keeps its rate."""
        if not isinstance(data, dict) or data.get("link") is not None:
            return data
        links = [data.get(d) for d in ("down", "up")]
        if uses_default_link(
            any(_has_rate(v, ("rate", "leo")) for v in links),
            [_has_rate(v, ("trace",)) for v in links],
        ):
            return {**data, "link": DEFAULT_LINK}
        return data

    @field_validator("link", mode="before")
    @classmethod
    def _known_link(cls, v: object) -> object:
        if v is not None and (not isinstance(v, str) or v not in LINK_PRESETS):
            known = ", ".join(f"{k} ({d} down / {u} up)" for k, (d, u) in LINK_PRESETS.items())
            raise ValueError(f"unknown link preset {short(v)}; known: {known}")
        return v

    @field_validator("duration", "rtt", "bin")
    @classmethod
    def _positive(cls, v: int, info: ValidationInfo) -> int:
        if v <= 0:
            example = {"rtt": "100ms", "bin": "1s"}.get(info.field_name or "", "60s")
            raise ValueError(f"must be positive, e.g. {example}")
        return v

    @field_validator("warmup")
    @classmethod
    def _warmup_before_end(cls, v: int, info: ValidationInfo) -> int:
        duration = info.data.get("duration")
        if duration is not None and v >= duration:
            raise ValueError(
                f"warm-up {fmt_duration(v)} must be shorter than the duration"
                f" {fmt_duration(duration)}"
            )
        return v

    @field_validator("down", "up", mode="before")
    @classmethod
    def _leo_preset(cls, v: object, info: ValidationInfo) -> object:
        """``leo = "starlink"``: the preset's table for this direction (its rates differ
        by direction, so a name is read here, where the direction is known)."""
        if not isinstance(v, dict) or not isinstance(name := v.get("leo"), str):
            return v
        if name not in LEO_PRESETS:
            raise ValueError(
                f"leo: unknown satellite link {short(name)}; known: {', '.join(LEO_PRESETS)}"
                " (or a table: rate_min, rate_max, ...)"
            )
        return {**v, "leo": LEO_PRESETS[name][str(info.field_name)]}

    @field_validator("down", "up")
    @classmethod
    def _rate_given(cls, v: LinkSpec, info: ValidationInfo) -> LinkSpec:
        if "link" not in info.data:  # the preset name was invalid; already reported
            return v
        preset = info.data["link"]
        # A trace's mean or a satellite link's mid-range is the rate.
        sets = (
            ("a trace", "its mean", "a trace", v.trace and v.trace.mean_bps),
            ("a satellite link", "the middle of its range", "leo", v.leo and v.leo.mean_bps),
        )
        for what, which, key, mean in sets:
            if mean is None:
                continue
            if v.rate is not None and v.rate != mean:
                raise ValueError(
                    f"rate {fmt_rate(v.rate)}: {what} sets the rate ({which} is"
                    f" {fmt_rate(mean)}); give either a rate or {key}"
                )
            return v.model_copy(update={"rate": mean})
        if preset is None:
            if v.rate is None:
                raise ValueError("rate missing; give both down and up rates, or a link preset")
            return v
        down, up = LINK_RATES[preset]
        rate = down if info.field_name == "down" else up
        if v.rate is not None and v.rate != rate:  # equal when a dumped scenario comes back
            raise ValueError(
                f"link preset {preset!r} sets the rate to {fmt_rate(rate)};"
                " give either the preset or the rates"
            )
        return v.model_copy(update={"rate": rate})

    @model_validator(mode="after")
    def _aqm_fits_link(self) -> Scenario:
        for name in ("down", "up"):
            link = getattr(self, name)
            if isinstance(link.queue, AqmSpec) and link.rate:
                try:
                    _native.validate_queue(json.dumps(link.queue.to_native()), link.rate)
                except ValueError as e:
                    raise from_core(e, (name, "queue")) from None
        return self

    @model_validator(mode="after")
    def _phases_in_order(self) -> Scenario:
        for i, p in enumerate(self.phases):
            if p.start >= self.duration:
                raise ValueError(f"phases[{i}] ({p.name}) starts after the end of the run")
            if i and p.start <= self.phases[i - 1].start:
                raise ValueError(f"phases[{i}] ({p.name}) must start after phases[{i - 1}]")
        return self

    @model_validator(mode="after")
    def _core_accepts(self) -> Scenario:
        """The core's own check (``_native.validate_scenario``): ranges, flows and the
        memory the trial would hold, so that a scenario the core would refuse (or could
        not hold) is refused here, when it is built, naming the field."""
        if _validate_native is None:  # pragma: no cover - a core without the check
            return self
        try:
            _validate_native(self.to_native_json())
        except ValueError as e:
            raise from_core(e) from None
        return self

    def to_native(self) -> dict[str, Any]:
        """The scenario as the core takes it: integer ns and bit/s (see `_native.pyi`)."""
        return {
            "seed": self.seed,
            "duration_ns": self.duration,
            "warmup_ns": self.warmup,
            "rtt_ns": self.rtt,
            "access_rate_bps": self.access_rate,
            "down": self.down.to_native(),
            "up": self.up.to_native(),
            "tcp": [t.to_native() for t in self.tcp],
            "cbr": [c.to_native() for c in self.cbr],
            "web": [w.to_native() for w in self.web],
            **calls_native(self.media),
            "phases": [{"name": p.name, "start_ns": p.start} for p in self.phases],
            "bin_ns": self.bin,
            "trace": self.trace.model_dump(),
            **({"workload": self.workload.to_native()} if self.workload else {}),
        }

    def to_native_json(self) -> str:
        return json.dumps(self.to_native())

    @property
    def calls(self) -> list[MediaSpec]:
        """The video calls, as a list whether ``media`` gave one or several."""
        return calls_of(self.media)

    def flow_counts(self) -> str:
        """The bulk flows by direction: ``"4"`` (downloads only), ``"2 down + 1 up"``."""
        n = {d: sum(t.direction == d for t in self.tcp) for d in ("down", "up")}
        return str(n["down"]) if not n["up"] else f"{n['down']} down + {n['up']} up"

    def describe(self, sep: str = " · ", testbed: bool = False) -> str:
        """The set-up in one line (or several, with ``sep="\\n"``) for titles and captions;
        ``testbed``: of a run on the testbed, whose TCP is the kernel's, not a profile's."""
        q = self.down.queue
        link = f" ({self.link})" if self.link else ""
        if isinstance(q, AqmSpec):
            # What was set (cake's diffserv4, a target), then what differs from Linux.
            given = [
                f"{k}={v}"
                for k, v in (q.model_extra or {}).items()
                if (q.kind, k, v) not in KERNEL_DIFFERENCES  # said in words by notes()
            ]
            notes = [*given, *q.notes()]
            queue = f"queue {q.kind.upper()}" + (f" ({'; '.join(notes)})" if notes else "")
        else:
            in_service = ", in-service counted" if q.count_in_service else ""
            queue = f"queue {q.limit} {q.rule}{in_service}"
        stack = (lambda t: "kernel") if testbed else (lambda t: t.profile)
        ccs = ", ".join(sorted({f"{t.cc} ({stack(t)})" for t in self.tcp})) or "none"
        traced = [
            f"{d} trace {Path(t.file).name if t.file else 'given'}"
            for d, t in (("down", self.down.trace), ("up", self.up.trace))
            if t is not None
        ] + [
            f"{d} {what}"
            for d, link_ in (("down", self.down), ("up", self.up))
            for what in ("docsis", "leo", "outages", "delay")
            if getattr(link_, what) is not None
        ]
        # What varies across trials: the bulk flows' random start offsets.
        spreads = sorted({t.start_spread for t in self.tcp if t.start_spread})
        span = " to ".join(fmt_duration(x) for x in dict.fromkeys(spreads[:1] + spreads[-1:]))
        starts = [f"TCP starts spread over {span} (seeded, vary by trial)"] if spreads else []
        return sep.join(
            [
                *(["testbed"] if testbed else []),
                f"link {_link_rate(self.down)}/{_link_rate(self.up)}{link}",
                *_framing(self.down, self.up),
                *traced,
                f"RTT {fmt_duration(self.rtt)}",
                queue,
                f"TCP {self.flow_counts()} x {ccs}" if self.tcp else "no TCP",
                *([f"workload {self.workload.kind}"] if self.workload else []),
                *starts,
                *([f"web {sum(w.users for w in self.web)} users"] if self.web else []),
                *[f"video {c.controller} {c.direction}" for c in self.calls],
                f"seed {self.seed}",
            ]
        )


def _shown_rate(bps: int) -> str:
    """A rate for a title: exact when it is a round one (``1.5Mbit``), else to four
    figures (a trace's mean, an inferred capacity: ``~4.665Mbit``, not ``4.664807Mbit``)."""
    text = fmt_rate(bps)
    if sum(c.isdigit() for c in text) <= 4:
        return text
    for scale, unit in ((10**9, "Gbit"), (10**6, "Mbit"), (10**3, "kbit"), (1, "bit")):
        if bps >= scale:
            return f"~{bps / scale:.4g}{unit}"
    return text


def _link_rate(d: Any) -> str:
    """A direction's rate for a title; a satellite's, drawn anew each interval, as its
    range (its nominal middle read as the rate it keeps)."""
    if d.leo is not None:
        return f"{_shown_rate(d.leo.rate_min)}–{_shown_rate(d.leo.rate_max)}"
    return _shown_rate(d.rate or 0)


def _framing(down: Any, up: Any) -> list[str]:
    """The links' framing for a title (ATM cells, a per-packet overhead), once when both
    directions have the same."""
    shown = [
        ("ATM cells, " if f.atm else "") + f"{f.overhead} B overhead" if f is not None else None
        for f in (down.framing, up.framing)
    ]
    if shown[0] == shown[1]:
        return [f"framing {shown[0]}"] if shown[0] else []
    return [f"{d} framing {x}" for d, x in zip(("down", "up"), shown, strict=True) if x]
