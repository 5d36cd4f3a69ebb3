"""The traffic beside the bulk flows: VoIP-like CBR and thin-stream applications, and
web users browsing by Mah's HTTP model."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator, model_validator

from .. import _native
from ..units import fmt_duration
from ..vocabulary import MAX_WEB_SLOTS
from .tcp import TcpSpec
from .types import AppProfile, CbrEcn, Direction, Duration, Model, OptionalDuration, PacketSize


class CbrSpec(Model):
    """A VoIP-like CBR flow: ``size`` bytes (IP length) every ``interval`` on average."""

    direction: Direction = "down"
    size: PacketSize = 186
    interval: Duration = 20_000_000
    #: Standard deviation of normal jitter on each gap (MMSys 2011: 1 ms, against lock-in).
    jitter: Duration = 1_000_000
    #: First departure; None = a random phase in [0, interval) drawn from the seed.
    start: OptionalDuration = None
    #: No departures from then on (None = to the end of the run).
    stop: OptionalDuration = None
    #: DSCP (0..63, 0 = untagged; EF = 46): CBT and CBQ treat tagged UDP as multimedia,
    #: CAKE's diffserv modes pick a tin by it.
    tag: int = Field(default=0, ge=0, le=63)
    #: ECN codepoint: not_ect, ect0, or ect1 (DualPI2's low-latency queue, RFC 9331).
    ecn: CbrEcn = "not_ect"
    #: A thin-stream application whose packet sizes and gaps replace size, interval and
    #: jitter: rdp, vnc, g711, skype_udp, wow, quake3 (SPEC §5; fits in the core's docs).
    app: AppProfile | None = None
    #: The application's one-way delay budget, base delay included: the summary's
    #: ``over_budget`` is the share of packets later than it (lost ones included).
    budget: OptionalDuration = None

    @field_validator("size")
    @classmethod
    def _udp_fits(cls, v: int) -> int:
        if v < 28:
            raise ValueError(f"{v} B is smaller than the 28 B IP/UDP header")
        return v

    @field_validator("interval")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be positive, e.g. 20ms")
        return v

    @model_validator(mode="after")
    def _stop_after_start(self) -> CbrSpec:
        if self.stop is not None and self.start is not None and self.stop <= self.start:
            raise ValueError(
                f"stop {fmt_duration(self.stop)} must be after start {fmt_duration(self.start)}"
            )
        return self

    def to_native(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "packet_bytes": self.size,
            "interval_ns": self.interval,
            "jitter_ns": self.jitter,
            "start_ns": self.start,
            "stop_ns": self.stop,
            "tag": self.tag,
            "ecn": self.ecn,
            **({"app": self.app} if self.app else {}),
            **({"budget_ns": self.budget} if self.budget is not None else {}),
        }


#: Mah 1997's empirical HTTP model as the core spells it (request/reply bytes, objects
#: per page, think time in seconds).
HTTP_MODEL: dict[str, Any] = _native.http_model()


class WebSpec(Model):
    """A group of web users browsing by Mah's empirical HTTP/1.0 model: pages of several
    objects, each over a new TCP connection (SYN, request, reply in slow start), think
    times between pages. Replies go ``direction`` (down: servers on the Internet side).

    ``extra_delay_min``/``extra_delay_max`` give each connection an extra one-way delay,
    uniform between them, towards the browser (spreads the RTTs, as the CBT study's
    dummynet delays did). ``think_max`` truncates Mah's think times (whose tail runs to
    24 hours: users who left) so the population browses steadily. ``model`` replaces
    any of the distributions (``{reply_bytes = {kind = "pareto", scale = 1000, shape =
    1.2}}``; kinds constant, uniform, exponential, lognormal, pareto, empirical).
    """

    #: Users x parallel connections is at most the core's ``max_web_slots`` (100 000).
    users: int = Field(gt=0, le=MAX_WEB_SLOTS)
    direction: Direction = "down"
    start: Duration = 0
    stop: OptionalDuration = None
    #: Connections a user opens at once for a page's embedded objects.
    parallel: int = Field(default=4, gt=0, le=MAX_WEB_SLOTS)
    extra_delay_min: Duration = 0
    extra_delay_max: Duration = 0
    think_max: OptionalDuration = None
    model: dict[str, Any] | None = None
    #: The servers' and browsers' stack (profile and overrides, as for a bulk flow).
    tcp: TcpSpec = Field(default_factory=TcpSpec)

    @field_validator("model")
    @classmethod
    def _known_distributions(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        for name, dist in (v or {}).items():
            if name not in HTTP_MODEL:
                raise ValueError(f"unknown distribution {name!r}; known: {', '.join(HTTP_MODEL)}")
            try:
                _native.validate_dist(json.dumps(dist))
            except ValueError as e:
                raise ValueError(f"{name}: {e}".replace("distribution: ", "")) from None
        return v

    @model_validator(mode="after")
    def _delays_ordered(self) -> WebSpec:
        if self.users * self.parallel > MAX_WEB_SLOTS:
            raise ValueError(
                f"users: {self.users} users x {self.parallel} parallel connections ="
                f" {self.users * self.parallel} connection slots, above the limit of"
                f" {MAX_WEB_SLOTS}"
            )
        if self.extra_delay_max < self.extra_delay_min:
            raise ValueError("extra_delay_max must not be below extra_delay_min")
        if self.stop is not None and self.stop <= self.start:
            raise ValueError("stop must be after start")
        return self

    def to_native(self) -> dict[str, Any]:
        model = dict(self.model or {})
        if self.think_max is not None:
            think = model.get("think_s", HTTP_MODEL["think_s"])
            if think.get("kind") != "empirical":
                raise ValueError("think_max truncates an empirical think-time distribution")
            model["think_s"] = {**think, "max": self.think_max / 1e9}
        lo, hi = self.extra_delay_min / 1e6, self.extra_delay_max / 1e6
        return {
            "users": self.users,
            "direction": self.direction,
            "start_ns": self.start,
            "stop_ns": self.stop,
            "parallel": self.parallel,
            "extra_delay_ms": {"kind": "uniform", "low": lo, "high": hi},
            "model": model,
            # A connection starts when its user asks: the bulk flows' start spread is
            # not the template's to send.
            "tcp": {k: v for k, v in self.tcp.to_native().items() if k != "start_spread_ns"},
        }
