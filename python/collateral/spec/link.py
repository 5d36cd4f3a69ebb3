"""One direction of the bottleneck: its rate, its queue (drop-tail by one of three
rules, or an AQM/scheduler the core implements) and its framing."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..display import short
from ..units import QueueLimit, fmt_size, parse_duration, parse_rate, parse_size
from ..vocabulary import RULES
from .docsis import DocsisSpec
from .keypath import PathError
from .leo import LeoSpec
from .path import DelayStepsSpec, OutagesSpec
from .trace import DeliveryTraceSpec
from .types import AqmKind, Limit, Model, OptionalRate, PacketSize, Rule
from .wire import BurstLossSpec


class QueueSpec(Model):
    """A drop-tail FIFO. ``rule`` defaults to ``ps`` for a limit in packets, else fb-strict."""

    limit: Limit = QueueLimit(20_000, "bytes")
    rule: Rule = Field(default=None, validate_default=True)
    #: Whether the packet being transmitted still counts as queued (ns-2 needed a patch).
    count_in_service: bool = False

    @field_validator("rule")
    @classmethod
    def _rule_fits_limit(cls, rule: str | None, info: ValidationInfo) -> str:
        limit: QueueLimit | None = info.data.get("limit")
        if limit is None:  # the limit itself was invalid; that error is reported
            return rule or "fb-strict"
        if rule is None:
            return "ps" if limit.in_packets else "fb-strict"
        if rule == "ps" and not limit.in_packets:
            raise ValueError(
                f"rule ps counts packets, but the limit {limit} is in bytes;"
                f" give it in packets (e.g. {max(1, -(-limit.amount // 1500))}p) or use fb-strict"
            )
        if rule != "ps" and limit.in_packets:
            raise ValueError(
                f"rule {rule} counts bytes, but the limit {limit} is in packets;"
                f" give it in bytes (e.g. {fmt_size(limit.amount * 1500)}) or use ps"
            )
        return rule

    def to_native(self) -> dict[str, Any]:
        return {
            "rule": self.rule or "fb-strict",
            "limit": self.limit.amount,
            "count_in_service": self.count_in_service,
        }


#: AQM parameters that may be given in human units: the name without the core's unit
#: suffix, and how to read it (``target = "5ms"`` → ``target_ns = 5000000``).
AQM_HUMAN_UNITS: dict[str, tuple[str, Any]] = {
    "target": ("target_ns", parse_duration),
    "interval": ("interval_ns", parse_duration),
    "tupdate": ("tupdate_ns", parse_duration),
    "max_burst": ("max_burst_ns", parse_duration),
    "step_thresh": ("step_thresh_ns", parse_duration),
    "tshift": ("tshift_ns", parse_duration),
    "mean_pkt_time": ("mean_pkt_time_ns", parse_duration),
    "bandwidth": ("bandwidth_bps", parse_rate),
    "memory_limit": ("memory_limit", parse_size),
    "rate": ("rate_bps", parse_rate),
}


def _json_number(path: tuple[str | int, ...], value: object) -> None:
    """A number JSON can carry to the core: finite, and not thousands of digits (JSON
    has no NaN or infinity; the core would see invalid text, not the key)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise PathError(path, f"{value!r} is not a finite number")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        raise PathError(path, f"{short(value)}: a number too large for any parameter")
    for k, v in value.items() if isinstance(value, dict) else ():
        _json_number((*path, k), v)
    for i, v in enumerate(value) if isinstance(value, list) else ():
        _json_number((*path, i), v)


def _aqm_native(params: dict[str, Any]) -> dict[str, Any]:
    """An AQM's parameters as the core takes them: human-unit names converted (a
    parameter given both ways is an error), every number one JSON can carry."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        _json_number((key,), value)
        native, parse = AQM_HUMAN_UNITS.get(key, (key, None))
        if native in out or (native != key and native in params):
            raise PathError((key,), f"given twice (as {key} and {native})")
        if parse is not None and not isinstance(value, bool):
            try:
                value = parse(value)
            except ValueError as e:
                raise PathError((key,), str(e)) from None
        if key == "limit" and isinstance(value, str):
            value = _limit_amount(value, params.get("limit_rule"))
        out[native] = value
    return out


def _limit_amount(text: str, rule: object) -> int:
    """An AQM's ``limit`` written as the command line's ``--queue`` (``"20p"``; bytes,
    ``"60kB"``, under an FB ``limit_rule``): the number the core takes, in the unit the
    rule counts."""
    from ..units import parse_queue_limit

    try:
        limit = parse_queue_limit(text)
    except ValueError as e:
        raise PathError(("limit",), str(e)) from None
    in_bytes = rule in ("fb-strict", "fb-loose")
    if limit.in_packets == in_bytes:
        unit, example = ("bytes", "60kB") if in_bytes else ("packets", "1000p")
        raise PathError(("limit",), f"{short(text)}: this limit counts {unit}; give e.g. {example}")
    return limit.amount


class AqmSpec(BaseModel):
    """An active queue manager or scheduler: ``kind`` red, fred, cbt, cbq, codel,
    fq_codel, pie, dualpi2 or cake, and that discipline's parameters as the core takes
    them, e.g. ``{kind = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002,
    limit = 60, gentle = true}`` (README lists each one's parameters). Times, rates and
    sizes may be given in human units without the unit suffix (``target = "5ms"``,
    ``bandwidth = "1.4Mbit"``; see :data:`AQM_HUMAN_UNITS`). The core checks them
    against the link rate."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    kind: AqmKind

    @model_validator(mode="after")
    def _one_rule_spelling(self) -> AqmSpec:
        rule = (self.model_extra or {}).get("limit_rule")
        if rule is not None and rule not in RULES:
            allowed = ", ".join(RULES)
            raise PathError(("limit_rule",), f"unknown rule {short(rule)}; allowed: {allowed}")
        _aqm_native(self.model_extra or {})
        return self

    def to_native(self) -> dict[str, Any]:
        return {"kind": self.kind, **_aqm_native(self.model_extra or {})}

    def notes(self) -> list[str]:
        """Where this discipline, as given, is not what the kernel runs by default, or
        takes parameters from the link: the phrases a scenario's description shows."""
        given = self.model_extra or {}
        out = []
        for (kind, key, value), note in KERNEL_DIFFERENCES.items():
            if self.kind == kind and given.get(key) == value:
                out.append(note)
        derived = [k for k in LINK_DERIVED.get(self.kind, ()) if k not in given]
        if derived:
            out.append(f"{', '.join(derived)} from the link rate")
        return out


#: AQM settings that differ from the Linux qdisc's default, with how a description names
#: them (the kernel's defaults are the core's, crates/collateral-queue).
KERNEL_DIFFERENCES: dict[tuple[str, str, Any], str] = {
    ("dualpi2", "scheduler", "ts_fifo"): "time-shifted FIFO, not Linux's WRR default",
}
#: Parameters the core derives from the link rate when they are left out
#: (crates/collateral-queue/src/link_defaults.rs).
LINK_DERIVED: dict[str, tuple[str, ...]] = {
    "red": ("min_th", "max_th", "max_p", "w_q", "limit"),
    "fred": ("min_th", "max_th", "max_p", "w_q", "limit"),
    "cbt": ("tcp", "tagged_th", "other_th", "limit"),
    "cbq": ("limits",),
}


def _queue_kind(v: Any) -> str:
    """A queue with a ``kind`` is an AQM/scheduler; anything else is drop-tail."""
    if isinstance(v, dict):
        return "aqm" if "kind" in v else "droptail"
    return "aqm" if isinstance(v, AqmSpec) else "droptail"


class FramingSpec(Model):
    """Link-layer framing on the wire: ``overhead`` bytes added to every packet and, with
    ``atm``, ATM cells (padded to 48-byte payloads, 53 bytes each) — e.g. ADSL with
    PPPoA VC-MUX is ``{ overhead = "10B", atm = true }``, PPPoE over LLC/SNAP
    ``{ overhead = "32B", atm = true }``. Serialisation only: queues count IP lengths."""

    overhead: PacketSize = 0
    atm: bool = False

    def to_native(self) -> dict[str, Any]:
        return {"overhead_bytes": self.overhead, "atm": self.atm}


class LinkSpec(Model):
    """One direction of the bottleneck. ``rate`` may come from the scenario's ``link``."""

    rate: OptionalRate = None
    queue: Annotated[
        Annotated[QueueSpec, Tag("droptail")] | Annotated[AqmSpec, Tag("aqm")],
        Discriminator(_queue_kind),
    ] = Field(default_factory=QueueSpec)
    #: Random loss on the wire after the queue.
    loss_rate: float = Field(default=0.0, ge=0.0, lt=1.0)
    #: Link-layer overhead and ATM cells (none by default).
    framing: FramingSpec | None = None
    #: Delivery opportunities instead of a constant rate (Mahimahi's trace format); the
    #: rate is then the trace's mean, what the queue discipline is told.
    trace: DeliveryTraceSpec | None = None
    #: Loss in bursts on the wire (Gilbert–Elliott) instead of ``loss_rate``.
    burst_loss: BurstLossSpec | None = None
    #: A DOCSIS upstream's request–grant cycle; ``rate`` is then the channel rate.
    docsis: DocsisSpec | None = None
    #: A satellite link: rate and delay redrawn each reconfiguration interval; the rate
    #: is then the middle of its range.
    leo: LeoSpec | None = None
    #: On/off outages of a constant-rate link.
    outages: OutagesSpec | None = None
    #: Extra one-way delay in steps over time.
    delay: DelayStepsSpec | None = None

    @field_validator("leo", mode="before")
    @classmethod
    def _leo_named(cls, v: object) -> object:
        if isinstance(v, str):  # a scenario's down/up read it, knowing the direction
            raise ValueError(
                f"{short(v)} names a preset of both directions: give it as a scenario's"
                " down.leo and up.leo, or this direction's table (rate_min, rate_max, ...)"
            )
        return v

    def to_native(self) -> dict[str, Any]:
        out = {"rate_bps": self.rate, "queue": self.queue.to_native(), "loss_rate": self.loss_rate}
        if self.framing is not None:
            out["framing"] = self.framing.to_native()
        if self.trace is not None:
            out["trace"] = self.trace.to_native()
        if self.burst_loss is not None:
            out["burst_loss"] = self.burst_loss.to_native()
        for key in ("docsis", "leo", "outages", "delay"):
            part = getattr(self, key)
            if part is not None:
                out[key] = part.to_native()
        return out
