"""Scenario specification: pydantic models with human units, validated before Rust runs.

Fields hold integers in the simulator's units (bit/s, ns, bytes) but accept and dump
human strings (``"1.5Mbit"``, ``"100ms"``, ``"20kB"``, ``"27p"``), so a dumped scenario
reads well and validates back to the same thing. :meth:`Scenario.to_native` produces the
JSON the Rust core takes; the core validates it again, so its API is safe on its own.

:func:`build_scenario` is the flat form shared by the CLI and :func:`collateral.simulate`
(``down=``, ``queue=``, ``cbr="both"``, ...); its errors name the parameter at fault.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import _native
from .units import (
    QueueLimit,
    fmt_duration,
    fmt_rate,
    fmt_size,
    parse_duration,
    parse_queue_limit,
    parse_rate,
    parse_size,
)

__all__ = [
    "APP_PROFILES",
    "AQM_HUMAN_UNITS",
    "AQM_KINDS",
    "AQM_SHORTHANDS",
    "CBR_CHOICES",
    "CC_ALGORITHMS",
    "CUBIC_VARIANTS",
    "DIRECTIONS",
    "HTCP_FLAVORS",
    "LINK_PRESETS",
    "LINK_RATES",
    "PROFILES",
    "RECOVERY_STYLES",
    "RULES",
    "TCP_ECN_MODES",
    "VOCABULARY",
    "AqmSpec",
    "CbrSpec",
    "CubicSpec",
    "FramingSpec",
    "HtcpSpec",
    "LinkSpec",
    "PhaseSpec",
    "QueueSpec",
    "Scenario",
    "SpecError",
    "TcpSpec",
    "TraceSpec",
    "WebSpec",
    "build_scenario",
    "core_path_field",
    "flat_param",
    "parse_aqm_shorthand",
]

#: Every name a scenario accepts, as the core spells it (``_native.vocabulary()``): the
#: one vocabulary of the CLI, TOML files, this API and stored results. Nothing below
#: copies a list by hand; tests/test_vocabulary.py checks that.
VOCABULARY: dict[str, Any] = _native.vocabulary()

#: Congestion controls the core implements.
CC_ALGORITHMS: tuple[str, ...] = tuple(VOCABULARY["cc"])
#: Stack profiles and the TCP settings each implies, as the core defines them.
PROFILE_SETTINGS: dict[str, dict[str, Any]] = _native.profiles()
PROFILES: tuple[str, ...] = tuple(VOCABULARY["profile"])
#: Drop-tail "full" rules (SPEC §3.1): packet slots, bytes must fit, bytes checked before.
RULES: tuple[str, ...] = tuple(VOCABULARY["rule"])
#: AQMs and schedulers (a queue's ``kind``).
AQM_KINDS: tuple[str, ...] = tuple(VOCABULARY["aqm"])
#: Fast-recovery algorithms (a TCP flow's ``recovery``).
RECOVERY_STYLES: tuple[str, ...] = tuple(VOCABULARY["recovery"])
#: CUBIC's variants and H-TCP's flavours.
CUBIC_VARIANTS: tuple[str, ...] = tuple(VOCABULARY["cubic_variant"])
HTCP_FLAVORS: tuple[str, ...] = tuple(VOCABULARY["htcp_flavor"])
#: A TCP flow's use of ECN: off, classic (RFC 3168, ECT(0)) or l4s (ECT(1), RFC 9331).
TCP_ECN_MODES: tuple[str, ...] = tuple(VOCABULARY["tcp_ecn"])
#: ECN codepoints a UDP source may send.
CBR_ECN_CODEPOINTS: tuple[str, ...] = tuple(VOCABULARY["cbr_ecn"])
#: Thin-stream applications a CBR flow can stand for (its ``app``).
APP_PROFILES: tuple[str, ...] = tuple(VOCABULARY["app"])
#: Which way a flow's data goes.
DIRECTIONS: tuple[str, ...] = tuple(VOCABULARY["direction"])
#: Named access links: (downstream, upstream) rates in bit/s, as the core defines them.
LINK_RATES: dict[str, tuple[int, int]] = {
    name: (p["down_bps"], p["up_bps"]) for name, p in VOCABULARY["link_presets"].items()
}
#: The same in human units, e.g. ``{"adsl1": ("1.5Mbit", "256kbit"), ...}``.
LINK_PRESETS: dict[str, tuple[str, str]] = {
    name: (fmt_rate(down), fmt_rate(up)) for name, (down, up) in LINK_RATES.items()
}

#: What one trial may ask of the core (``_native.limits()``): flows of each kind, web
#: connection slots, window and initial window; a scenario beyond them is refused when
#: it is built, naming the field and the limit.
CORE_LIMITS: dict[str, int] = _native.limits() if hasattr(_native, "limits") else {}
MAX_TCP_FLOWS: int = CORE_LIMITS.get("max_tcp_flows", 10_000)
MAX_CBR_FLOWS: int = CORE_LIMITS.get("max_cbr_flows", 10_000)
MAX_WEB_SLOTS: int = CORE_LIMITS.get("max_web_slots", 100_000)
MAX_INITIAL_CWND: int = CORE_LIMITS.get("max_initial_cwnd", 1 << 16)
#: The largest IP packet: the 16-bit total length of RFC 791.
MAX_PACKET_BYTES: int = CORE_LIMITS.get("max_packet_bytes", 65_535)
#: Named phases of one scenario.
MAX_PHASES = 1_000


def _packet_size(v: object) -> int:
    n = parse_size(v)  # type: ignore[arg-type]
    if n > MAX_PACKET_BYTES:
        shown = repr(v) if isinstance(v, str) and len(v) <= 40 else f"{n} B"
        raise ValueError(f"{shown}: above the IP maximum of {MAX_PACKET_BYTES} bytes")
    return n


Rate = Annotated[int, BeforeValidator(parse_rate), PlainSerializer(fmt_rate, return_type=str)]
"""bit/s; accepts ``"1.5Mbit"``."""
Duration = Annotated[
    int, BeforeValidator(parse_duration), PlainSerializer(fmt_duration, return_type=str)
]
"""Nanoseconds; accepts ``"100ms"``; a bare number is seconds."""
PacketSize = Annotated[
    int, BeforeValidator(_packet_size), PlainSerializer(lambda n: f"{n}B", return_type=str)
]
"""An IP length in bytes; accepts ``"1500B"`` or ``1500``."""
Limit = Annotated[
    QueueLimit, BeforeValidator(parse_queue_limit), PlainSerializer(str, return_type=str)
]


def _optional(parse: Any, fmt: Any) -> Any:
    """An optional human-unit field; one validator for the whole union keeps errors short."""
    return Annotated[
        int | None,
        BeforeValidator(lambda v: None if v is None else parse(v)),
        PlainSerializer(lambda v: None if v is None else fmt(v), return_type=str | None),
    ]


OptionalRate = _optional(parse_rate, fmt_rate)
OptionalDuration = _optional(parse_duration, fmt_duration)


def _rule(value: object) -> object:
    """Accepts ``FB-Strict`` or `` fb-strict`` for ``fb-strict``; names the rules otherwise."""
    if isinstance(value, str):
        value = value.strip().lower()
        if value not in RULES:
            raise ValueError(f"unknown rule {_short(value)}; allowed: {', '.join(RULES)}")
    return value


def _one_of(allowed: tuple[str, ...], what: str) -> Any:
    def check(value: object) -> str:
        if not isinstance(value, str) or value.strip().lower() not in allowed:
            raise ValueError(f"unknown {what} {_short(value)}; supported: {', '.join(allowed)}")
        return value.strip().lower()

    return BeforeValidator(check)


# Literal[names] of the core's names: the same as writing them out, without the copy.
Direction = Literal[DIRECTIONS]
Rule = Annotated[Literal[RULES] | None, BeforeValidator(_rule)]
CongestionControl = Annotated[Literal[CC_ALGORITHMS], _one_of(CC_ALGORITHMS, "congestion control")]
Profile = Annotated[Literal[PROFILES], _one_of(PROFILES, "stack profile")]
Recovery = Literal[RECOVERY_STYLES]
AqmKind = Literal[AQM_KINDS]
CubicVariant = Literal[CUBIC_VARIANTS]
HtcpFlavor = Literal[HTCP_FLAVORS]
AppProfile = Literal[APP_PROFILES]
TcpEcn = Annotated[Literal[TCP_ECN_MODES], _one_of(TCP_ECN_MODES, "ECN mode")]
CbrEcn = Annotated[Literal[CBR_ECN_CODEPOINTS], _one_of(CBR_ECN_CODEPOINTS, "ECN codepoint")]
LinkPreset = Literal[tuple(LINK_RATES)]
OptionalPacketSize = _optional(_packet_size, lambda n: f"{n}B")


class _Model(BaseModel):
    # Frozen so one spec can be shared by several scenarios without aliasing surprises.
    model_config = ConfigDict(extra="forbid", frozen=True)


class QueueSpec(_Model):
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
}


def _aqm_native(params: dict[str, Any]) -> dict[str, Any]:
    """An AQM's parameters as the core takes them: human-unit names converted (a
    parameter given both ways is an error)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        native, parse = AQM_HUMAN_UNITS.get(key, (key, None))
        if native in out or (native != key and native in params):
            raise ValueError(f"{key}: given twice (as {key} and {native})")
        if parse is not None and not isinstance(value, bool):
            try:
                value = parse(value)
            except ValueError as e:
                raise ValueError(f"{key}: {e}") from None
        out[native] = value
    return out


class AqmSpec(BaseModel):
    """An active queue manager or scheduler: ``kind`` red, fred, cbt, cbq, codel,
    fq_codel, pie, dualpi2 or cake, and that discipline's parameters as the core takes
    them, e.g. ``{kind = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.002,
    limit = 60, gentle = true}`` (README lists each one's parameters). Times, rates and
    sizes may be given in human units without the unit suffix (``target = "5ms"``,
    ``bandwidth = "1.4Mbit"``; see :data:`AQM_HUMAN_UNITS`). The core checks them
    against the link rate."""

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: AqmKind

    @model_validator(mode="after")
    def _one_rule_spelling(self) -> AqmSpec:
        rule = (self.model_extra or {}).get("limit_rule")
        if rule is not None and rule not in RULES:
            raise ValueError(
                f"limit_rule: unknown rule {_short(rule)}; allowed: {', '.join(RULES)}"
            )
        _aqm_native(self.model_extra or {})
        return self

    def to_native(self) -> dict[str, Any]:
        return {"kind": self.kind, **_aqm_native(self.model_extra or {})}


def _queue_kind(v: Any) -> str:
    """A queue with a ``kind`` is an AQM/scheduler; anything else is drop-tail."""
    if isinstance(v, dict):
        return "aqm" if "kind" in v else "droptail"
    return "aqm" if isinstance(v, AqmSpec) else "droptail"


class FramingSpec(_Model):
    """Link-layer framing on the wire: ``overhead`` bytes added to every packet and, with
    ``atm``, ATM cells (padded to 48-byte payloads, 53 bytes each) — e.g. ADSL with
    PPPoA VC-MUX is ``{ overhead = "10B", atm = true }``, PPPoE over LLC/SNAP
    ``{ overhead = "32B", atm = true }``. Serialisation only: queues count IP lengths."""

    overhead: PacketSize = 0
    atm: bool = False

    def to_native(self) -> dict[str, Any]:
        return {"overhead_bytes": self.overhead, "atm": self.atm}


class LinkSpec(_Model):
    """One direction of the bottleneck. ``rate`` may come from the scenario's ``link``."""

    rate: OptionalRate = None
    queue: Annotated[
        Annotated[QueueSpec, Tag("droptail")] | Annotated[AqmSpec, Tag("aqm")],
        Discriminator(_queue_kind),
    ] = QueueSpec()
    #: Random loss on the wire after the queue.
    loss_rate: float = Field(default=0.0, ge=0.0, lt=1.0)
    #: Link-layer overhead and ATM cells (none by default).
    framing: FramingSpec | None = None

    def to_native(self) -> dict[str, Any]:
        out = {"rate_bps": self.rate, "queue": self.queue.to_native(), "loss_rate": self.loss_rate}
        if self.framing is not None:
            out["framing"] = self.framing.to_native()
        return out


class _Overrides(_Model):
    """Optional settings; None keeps the profile's (or the variant's) value."""

    def to_native(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class CubicSpec(_Overrides):
    """CUBIC's switches. ``variant`` ``linux_2_6_25`` is CUBIC v2.1 (β 819/1024,
    max_increment, no HyStart), ``modern`` is current Linux / RFC 9438 (β 717/1024,
    HyStart); naming one starts from its defaults, else the profile's CUBIC is used."""

    variant: CubicVariant | None = None
    #: Multiplicative decrease in 1/1024 (819 ≈ 0.8, 717 ≈ 0.7).
    beta: int | None = Field(default=None, ge=1, le=1023)
    fast_convergence: bool | None = None
    tcp_friendliness: bool | None = None
    hystart: bool | None = None
    bic_scale: int | None = Field(default=None, gt=0, le=1_000_000)


class HtcpSpec(_Overrides):
    """H-TCP's switches: ``flavor`` linux, linux_2_6_25 or freebsd, ``use_rtt_scaling``,
    ``use_bandwidth_switch`` (Linux) and ``adaptive_backoff`` (FreeBSD's switch)."""

    flavor: HtcpFlavor | None = None
    use_rtt_scaling: bool | None = None
    use_bandwidth_switch: bool | None = None
    adaptive_backoff: bool | None = None


class TcpSpec(_Model):
    """A bulk TCP flow (always has data) on a stack ``profile``.

    The profile (``rfc``, ``linux-2.6.25``, ``freebsd-7``, ``linux-6``) sets every stack
    behaviour — delayed ACKs, recovery style, RTO, initial window; each field below left
    at None keeps the profile's value, anything given overrides it.
    """

    direction: Direction = "down"
    cc: CongestionControl = "newreno"
    profile: Profile = "rfc"
    #: ECN: off, classic (ECT(0); halve once per RTT on ECN-Echo) or l4s (ECT(1) with
    #: DCTCP's per-segment feedback; what the scalable dctcp and prague need).
    ecn: TcpEcn = "off"
    #: Pace at Linux's window-based rate (120 % of cwnd/srtt; 200 % in slow start), as a
    #: Linux sender with the fq qdisc does; None keeps the profile's (off).
    pacing: bool | None = None
    start: Duration = 0
    #: When the application stops writing (None = never); data already sent is delivered.
    stop: OptionalDuration = None
    #: Added at the receiver, so this flow's RTT is the base RTT plus this.
    extra_delay: Duration = 0
    mss: int | None = Field(default=None, gt=0, le=MAX_PACKET_BYTES - 40)
    #: IP length of a full segment and of a pure ACK (52 B with timestamps, 40 B without).
    data_bytes: OptionalPacketSize = None
    ack_bytes: OptionalPacketSize = None
    delayed_ack: bool | None = None
    #: Delayed-ACK timer (Linux profiles: the minimum of the adaptive timeout).
    delack: OptionalDuration = None
    #: Appropriate Byte Counting (RFC 3465) in congestion avoidance.
    abc: bool | None = None
    recovery: Recovery | None = None
    #: Selective acknowledgements (RFC 2018/6675); on in the real stacks' profiles.
    sack: bool | None = None
    rto_min: OptionalDuration = None
    initial_cwnd: int | None = Field(default=None, gt=0, le=MAX_INITIAL_CWND)
    #: The receive window in segments (at most TCP's largest window, 2^30 bytes).
    rwnd_segments: int | None = Field(default=None, gt=0, le=2**30)
    #: Algorithm settings, used when ``cc`` is cubic or htcp.
    cubic: CubicSpec | None = None
    htcp: HtcpSpec | None = None

    @field_validator("rto_min", "delack")
    @classmethod
    def _positive(cls, v: int | None) -> int | None:
        if v is not None and v <= 0:
            raise ValueError("must be positive, e.g. 200ms")
        return v

    def setting(self, name: str) -> Any:
        """The value in force for a native field: the override, else the profile's."""
        native = self._overrides()
        return native[name] if name in native else PROFILE_SETTINGS[self.profile][name]

    @model_validator(mode="after")
    def _segment_fits(self) -> TcpSpec:
        mss, data = self.setting("mss"), self.setting("data_bytes")
        if mss + 40 > data:
            raise ValueError(f"mss {mss} + 40 B of IP/TCP headers exceeds data_bytes {data}")
        if self.stop is not None and self.stop <= self.start:
            raise ValueError(
                f"stop {fmt_duration(self.stop)} must be after start {fmt_duration(self.start)}"
            )
        return self

    def _overrides(self) -> dict[str, Any]:
        fields = {
            "mss": self.mss,
            "data_bytes": self.data_bytes,
            "ack_bytes": self.ack_bytes,
            "delayed_ack": self.delayed_ack,
            "delack_ns": self.delack,
            "abc": self.abc,
            "recovery": self.recovery,
            "sack": self.sack,
            "pacing": self.pacing,
            "rto_min_ns": self.rto_min,
            "initial_cwnd": self.initial_cwnd,
            "rwnd_segments": self.rwnd_segments,
            "cubic": self.cubic.to_native() if self.cubic else None,
            "htcp": self.htcp.to_native() if self.htcp else None,
        }
        return {k: v for k, v in fields.items() if v is not None}

    def to_native(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "direction": self.direction,
            "cc": self.cc,
            "ecn": self.ecn,
            "start_ns": self.start,
            **({"stop_ns": self.stop} if self.stop is not None else {}),
            "extra_delay_ns": self.extra_delay,
            **self._overrides(),
        }


class CbrSpec(_Model):
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


class WebSpec(_Model):
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
    tcp: TcpSpec = TcpSpec()

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
            "tcp": self.tcp.to_native(),
        }


class PhaseSpec(_Model):
    """A named stretch of a phased experiment, from ``start`` to the next phase's."""

    name: str = Field(min_length=1)
    start: Duration


class TraceSpec(_Model):
    """Which time series the core records (all on; turn off for long sweeps)."""

    cwnd: bool = True
    queue: bool = True
    cbr: bool = True
    drops: bool = True
    #: Per-class arrivals, drops, bytes and latency at each bottleneck per time bin.
    classes: bool = True


class Scenario(_Model):
    """One trial: a dumbbell with an asymmetric bottleneck, TCP and CBR flows, a seed.

    ``link`` names a preset (``adsl1``, ``adsl2``) that supplies the rates of ``down``
    and ``up``; give either it or both rates.
    """

    seed: int = Field(default=1, ge=0, lt=2**64)
    link: LinkPreset | None = None
    duration: Duration = 60_000_000_000
    warmup: Duration = 5_000_000_000
    rtt: Duration = 100_000_000
    access_rate: Rate = 1_000_000_000
    down: LinkSpec = Field(default=LinkSpec(), validate_default=True)
    up: LinkSpec = Field(default=LinkSpec(), validate_default=True)
    tcp: list[TcpSpec] = Field(default=[], max_length=MAX_TCP_FLOWS)
    cbr: list[CbrSpec] = Field(default=[], max_length=MAX_CBR_FLOWS)
    web: list[WebSpec] = Field(default=[], max_length=MAX_WEB_SLOTS)
    #: Named phases for per-phase, per-class summaries (none: one phase after warm-up).
    phases: list[PhaseSpec] = Field(default=[], max_length=MAX_PHASES)
    #: Width of the per-class time bins (throughput over time).
    bin: Duration = 1_000_000_000
    trace: TraceSpec = TraceSpec()

    @field_validator("link", mode="before")
    @classmethod
    def _known_link(cls, v: object) -> object:
        if v is not None and (not isinstance(v, str) or v not in LINK_PRESETS):
            known = ", ".join(f"{k} ({d} down / {u} up)" for k, (d, u) in LINK_PRESETS.items())
            raise ValueError(f"unknown link preset {_short(v)}; known: {known}")
        return v

    @field_validator("duration", "rtt", "bin")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be positive, e.g. 60s")
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

    @field_validator("down", "up")
    @classmethod
    def _rate_given(cls, v: LinkSpec, info: ValidationInfo) -> LinkSpec:
        if "link" not in info.data:  # the preset name was invalid; already reported
            return v
        preset = info.data["link"]
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
                    raise ValueError(f"{name}.queue: {e}") from None
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
            raise ValueError(core_message(str(e))) from None
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
            "phases": [{"name": p.name, "start_ns": p.start} for p in self.phases],
            "bin_ns": self.bin,
            "trace": self.trace.model_dump(),
        }

    def to_native_json(self) -> str:
        return json.dumps(self.to_native())

    def describe(self, sep: str = " · ") -> str:
        """The set-up in one line (or several, with ``sep="\\n"``) for titles and captions."""
        q = self.down.queue
        link = f" ({self.link})" if self.link else ""
        if isinstance(q, AqmSpec):
            queue = f"queue {q.kind.upper()}"
        else:
            in_service = ", in-service counted" if q.count_in_service else ""
            queue = f"queue {q.limit} {q.rule}{in_service}"
        ccs = ", ".join(sorted({f"{t.cc} ({t.profile})" for t in self.tcp})) or "none"
        return sep.join(
            [
                f"link {fmt_rate(self.down.rate or 0)}/{fmt_rate(self.up.rate or 0)}{link}",
                f"RTT {fmt_duration(self.rtt)}",
                queue,
                f"TCP {len(self.tcp)} x {ccs}",
                *([f"web {sum(w.users for w in self.web)} users"] if self.web else []),
                f"seed {self.seed}",
            ]
        )


class _Shown:
    """A default as a signature shows it (``LinkSpec()`` rather than its fields)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _readable_signatures() -> None:
    """Gives every spec model a signature a reader can take in (help(), completion):
    a human-unit field shows its alias (``rtt: Duration = '100ms'``) instead of the
    validators behind it, and defaults show as the units they are written in."""
    import inspect
    import typing

    by_parser: dict[Any, str] = {}
    for name, alias in globals().items():
        if typing.get_origin(alias) is typing.Annotated:
            shown = (
                f"{name.removeprefix('Optional')} | None" if name.startswith("Optional") else name
            )
            for meta in typing.get_args(alias)[1:]:
                if isinstance(meta, BeforeValidator):
                    by_parser.setdefault(meta.func, shown)
    models = [m for m in globals().values() if isinstance(m, type) and issubclass(m, _Model)]
    for model in models:
        params = []
        for name, f in model.model_fields.items():
            alias = next(
                (by_parser[m.func] for m in f.metadata if getattr(m, "func", None) in by_parser),
                None,
            )
            annotation = alias or inspect.formatannotation(f.annotation).replace(
                "collateral.spec.", ""
            )
            if f.is_required():
                default = inspect.Parameter.empty
            else:
                default = f.get_default(call_default_factory=True)
            serializer = next((m for m in f.metadata if isinstance(m, PlainSerializer)), None)
            if serializer is not None and default not in (None, inspect.Parameter.empty):
                default = serializer.func(default)
            if isinstance(default, _Model) and default == type(default)():
                default = _Shown(f"{type(default).__name__}()")
            params.append(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
                )
            )
        model.__signature__ = inspect.Signature(params, return_annotation=None)


_readable_signatures()

_validate_native = getattr(_native, "validate_scenario", None)

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


# Where a nested validation error lands in the flat parameters (first match wins).
_FLAT_PARAMS: list[tuple[tuple[object, ...], str]] = [
    (("down", "queue", "limit"), "queue"),
    (("up", "queue", "limit"), "queue"),
    (("down", "queue", "rule"), "rule"),
    (("up", "queue", "rule"), "rule"),
    (("down", "queue", "count_in_service"), "count_in_service"),
    (("up", "queue", "count_in_service"), "count_in_service"),
    (("down", "queue"), "queue"),
    (("up", "queue"), "queue"),
    (("down",), "down"),
    (("up",), "up"),
    (("cbr", "*", "size"), "cbr_size"),
    (("cbr", "*", "interval"), "cbr_interval"),
    (("cbr", "*", "jitter"), "jitter"),
    (("cbr", "*", "app"), "app"),
    (("cbr",), "cbr"),
    (("web",), "web_users"),
    (("tcp", "*"), "tcp"),
    (("tcp",), "tcp_flows"),
    (("bin",), "duration"),  # the per-class bins: as many as the duration holds
]
#: TCP settings :func:`build_scenario` takes; any other comes from the profile.
_FLAT_TCP = ("cc", "profile", "ecn", "delayed_ack", "rto_min")


def flat_param(loc: tuple[int | str, ...] | str) -> str:
    """The :func:`build_scenario` parameter (the CLI option) behind a Scenario key path,
    given as a tuple or as text: ``cbr[0].interval`` -> ``cbr_interval``, ``tcp`` ->
    ``tcp_flows``, ``down.queue.limit`` -> ``queue``."""
    if isinstance(loc, str):
        loc, _ = split_path(f"{loc}: ")
    loc = tuple(x for x in loc if x not in ("droptail", "aqm"))  # union tags
    for prefix, name in _FLAT_PARAMS:
        if len(loc) >= len(prefix) and all(
            p in ("*", x) for p, x in zip(prefix, loc, strict=False)
        ):
            if name == "tcp":
                return str(loc[2]) if len(loc) > 2 and loc[2] in _FLAT_TCP else "profile"
            return name
    return str(loc[0]) if loc else "scenario"


_flat_param = flat_param


def _first_error(err: ValidationError) -> tuple[str, str]:
    e = err.errors()[0]
    msg = e["msg"].removeprefix("Value error, ")
    if not e["loc"]:  # a whole-scenario check: its message starts with the key path
        loc, rest = split_path(msg)
        if loc:
            return flat_param(loc), rest
    return flat_param(e["loc"]), msg


#: ``cbr=`` of :func:`build_scenario`: one direction, both or none.
CBR_CHOICES: tuple[str, ...] = (*DIRECTIONS, "both", "none")


def _defaults_suffice(kind: str) -> bool:
    try:
        _native.validate_queue(json.dumps({"kind": kind}), 1_000_000)
    except ValueError:
        return False
    return True


#: AQM kinds whose parameters all have defaults: ``aqm=`` may name them alone.
AQM_SHORTHANDS: tuple[str, ...] = tuple(k for k in AQM_KINDS if _defaults_suffice(k))


def build_scenario(
    *,
    link: str | None = None,
    down: str | float | None = None,
    up: str | float | None = None,
    rtt: str | float = "100ms",
    queue: str | float = "20kB",
    rule: str | None = None,
    count_in_service: bool = False,
    cc: str = "newreno",
    profile: str = "linux-6",
    ecn: str = "off",
    duration: str | float = "60s",
    warmup: str | float = "5s",
    seed: int = 1,
    cbr: str = "both",
    cbr_size: str | float = "186B",
    cbr_interval: str | float = "20ms",
    jitter: str | float = "1ms",
    tcp_flows: int = 1,
    delayed_ack: bool | None = None,
    rto_min: str | float | None = None,
    aqm: str | None = None,
    app: str | None = None,
    web_users: int = 0,
) -> Scenario:
    """The common experiment in flat form: ``tcp_flows`` bulk flows downstream and CBR
    ``cbr`` = down | up | both | none, the same queue in both directions.

    Without ``link`` or rates, the link is ADSL1. Raises :class:`SpecError` (a
    ValueError) naming the parameter at fault, before anything is built: a value of the
    wrong type, out of range, or a scenario the core could not hold.
    """
    _check_types(
        link=(link, (str,), True),
        down=(down, (str, int, float), True),
        up=(up, (str, int, float), True),
        rtt=(rtt, (str, int, float), False),
        queue=(queue, (str, int, float, QueueLimit), False),
        rule=(rule, (str,), True),
        count_in_service=(count_in_service, (bool,), False),
        cc=(cc, (str,), False),
        profile=(profile, (str,), False),
        ecn=(ecn, (str,), False),
        duration=(duration, (str, int, float), False),
        warmup=(warmup, (str, int, float), False),
        seed=(seed, (int,), False),
        cbr=(cbr, (str,), False),
        cbr_size=(cbr_size, (str, int, float), False),
        cbr_interval=(cbr_interval, (str, int, float), False),
        jitter=(jitter, (str, int, float), False),
        tcp_flows=(tcp_flows, (int,), False),
        delayed_ack=(delayed_ack, (bool,), True),
        rto_min=(rto_min, (str, int, float), True),
        aqm=(aqm, (str, dict, AqmSpec), True),
        app=(app, (str,), True),
        web_users=(web_users, (int,), False),
    )
    if link is None and down is None and up is None:
        link = "adsl1"
    if link is not None and (down is not None or up is not None):
        raise SpecError("link", "give either a link preset or the down and up rates, not both")
    if link is None and (down is None or up is None):
        missing = "down" if down is None else "up"
        raise SpecError(missing, "rate missing; give both down and up rates, or a link preset")
    if cbr not in CBR_CHOICES:
        raise SpecError("cbr", f"{_short(cbr)} is not one of {', '.join(CBR_CHOICES)}")
    if not 0 <= tcp_flows <= MAX_TCP_FLOWS:
        raise SpecError(
            "tcp_flows", f"{_short(tcp_flows)}: give a whole number >= 0 and <= {MAX_TCP_FLOWS}"
        )
    max_users = MAX_WEB_SLOTS // 4  # 4 parallel connections each
    if not 0 <= web_users <= max_users:
        raise SpecError(
            "web_users",
            f"{_short(web_users)}: give a whole number >= 0 and <= {max_users}"
            f" ({MAX_WEB_SLOTS} connection slots, 4 per user)",
        )
    if app is not None and app not in APP_PROFILES:
        raise SpecError(
            "app", f"unknown application {_short(app)}; supported: {', '.join(APP_PROFILES)}"
        )
    q: dict[str, Any] = {"limit": queue, "rule": rule, "count_in_service": count_in_service}
    if aqm is not None:
        q = aqm_queue(aqm)
    data = {
        "seed": seed,
        "link": link,
        "duration": duration,
        "warmup": warmup,
        "rtt": rtt,
        "down": {"rate": down, "queue": q},
        "up": {"rate": up, "queue": q},
        "tcp": [
            {
                "cc": cc,
                "profile": profile,
                "ecn": ecn,
                "delayed_ack": delayed_ack,
                "rto_min": rto_min,
            }
        ]
        * tcp_flows,
        "cbr": [
            {"direction": d, "size": cbr_size, "interval": cbr_interval, "jitter": jitter}
            | ({"app": app} if app is not None else {})
            for d in DIRECTIONS
            if cbr in (d, "both")
        ],
        "web": [
            {
                "users": web_users,
                "think_max": "300s",
                "tcp": {"cc": cc, "profile": profile, "ecn": ecn},
            }
        ]
        if web_users
        else [],
    }
    # Validate the per-flow parameters even when no flow uses them, so a typo never
    # passes silently.
    try:
        TcpSpec.model_validate(
            data["tcp"][0]
            if tcp_flows
            else {"cc": cc, "profile": profile, "ecn": ecn, "rto_min": rto_min}
        )
        CbrSpec.model_validate(
            {"size": cbr_size, "interval": cbr_interval, "jitter": jitter}
            | ({"app": app} if app is not None else {})
        )
        return Scenario.model_validate(data)
    except ValidationError as err:
        if err.title in ("TcpSpec", "CbrSpec"):
            e = err.errors()[0]
            loc = ("tcp" if err.title == "TcpSpec" else "cbr", 0, *e["loc"])
            raise SpecError(flat_param(loc), e["msg"].removeprefix("Value error, ")) from None
        param, msg = _first_error(err)
        if aqm is not None and param == "queue":
            param = "aqm"  # the AQM's own fields, or the core's check of them
        raise SpecError(param, msg) from None


def _short(value: object, limit: int = 40) -> str:
    """``repr`` cut short, and safe for any value (a 5000-digit int is not printed)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**60:
        return "<a number of more than 60 digits>"
    try:
        text = repr(value)
    except Exception:  # pragma: no cover - a repr that fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_types(**params: tuple[object, tuple[type, ...], bool]) -> None:
    """Each parameter of :func:`build_scenario` has one of ``types`` (or is None where
    allowed); a bool is not a number. Raises :class:`SpecError` naming the first that
    has not."""
    for name, (value, types, optional) in params.items():
        if value is None and optional:
            continue
        kinds = tuple(numbers.Integral if t is int else t for t in types)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in types)
        if isinstance(value, float) and not math.isfinite(value):
            ok = False
        if not ok:
            allowed = " or ".join(t.__name__ for t in types) + (" or None" if optional else "")
            raise SpecError(name, f"{_short(value)} ({type(value).__name__}): expected {allowed}")


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _shorthand_value(text: str) -> object:
    """A ``key=value`` value: a bool, an integer, a number, or the text itself."""
    low = text.strip().lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip()


def parse_aqm_shorthand(text: str) -> dict[str, Any]:
    """``"cake:bandwidth=1.4Mbit,diffserv=diffserv4,ack_filter=normal"`` → the AQM's
    dict; ``"fq_codel"`` → ``{"kind": "fq_codel"}``."""
    kind, _, rest = text.partition(":")
    q: dict[str, Any] = {"kind": kind.strip()}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SpecError("aqm", f"{_short(item)}: give key=value, e.g. target=5ms")
        if key.strip() in q:
            raise SpecError("aqm", f"{key.strip()}: given twice")
        q[key.strip()] = _shorthand_value(value)
    return q


def aqm_queue(aqm: str | dict[str, Any] | AqmSpec) -> dict[str, Any]:
    """``aqm=``: a kind with its defaults (``codel``), ``kind:key=value,…`` with
    parameters in human units, a JSON object or a dict."""
    if isinstance(aqm, AqmSpec):
        return aqm.to_native()
    if isinstance(aqm, dict):
        q: object = aqm
    elif aqm in AQM_SHORTHANDS:
        return {"kind": aqm}
    elif not aqm.lstrip().startswith("{") and aqm.partition(":")[0].strip() in AQM_KINDS:
        q = parse_aqm_shorthand(aqm)
    else:
        try:
            q = json.loads(aqm, parse_int=_json_int)
        except (ValueError, RecursionError) as e:
            why = str(e) if "digits" in str(e) else "not JSON"
            raise SpecError(
                "aqm",
                f"{_short(aqm)}: {why}; give {', '.join(AQM_SHORTHANDS)} or a JSON object"
                ' such as {"kind": "codel"}',
            ) from None
    if not isinstance(q, dict) or "kind" not in q:
        raise SpecError("aqm", 'a JSON object with a "kind", e.g. {"kind": "codel"}')
    return q


def demo_scenario(duration: str = "60s", warmup: str = "10s") -> Scenario:
    """MMSys 2011 Fig. 1 set-up: ADSL1, 100 ms RTT, 20 kB FB-strict, one NewReno flow
    down on the Linux 2.6.25 stack the study ran, CBR both ways (186 B every 20 ms, 1 ms
    jitter), seed 1."""
    return build_scenario(
        link="adsl1",
        queue="20kB",
        rule="fb-strict",
        profile="linux-2.6.25",
        duration=duration,
        warmup=warmup,
    )
