"""A bulk TCP flow: its congestion control, stack profile, ECN and per-flow overrides."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from ..units import fmt_duration
from ..vocabulary import MAX_INITIAL_CWND, MAX_PACKET_BYTES, PROFILE_SETTINGS
from .keypath import PathError
from .types import (
    CongestionControl,
    CubicVariant,
    Direction,
    Duration,
    HtcpFlavor,
    Model,
    OptionalDuration,
    OptionalPacketSize,
    Profile,
    Recovery,
    TcpEcn,
)


class _Overrides(Model):
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


#: A bulk flow's default start spread: each flow starts at ``start`` plus an offset
#: uniform in [0, 1 s), drawn from the trial's seed and the flow's index by the core.
#: A second is ten 100 ms RTTs: flows that a user or script starts "together" reach
#: the bottleneck over about that long (handshakes, requests, server think time), and
#: it is enough that slow starts do not collide in lockstep (the issue's four flows
#: under FQ-CoDel: 11.71 Mbit/s and 76 retransmissions each, every seed). Give 0 for
#: flows that must start at exactly ``start`` (the reproductions do).
DEFAULT_START_SPREAD_NS = 1_000_000_000


class TcpSpec(Model):
    """A bulk TCP flow (always has data) on a stack ``profile``.

    The profile (``rfc``, ``linux-2.6.25``, ``freebsd-7``, ``linux-6``; default linux-6,
    as the CLI's) sets every stack behaviour — delayed ACKs, recovery style, RTO, initial
    window; each field below left at None keeps the profile's value, anything given
    overrides it. The flow starts at a seeded random time in ``[start, start +
    start_spread)`` (a second's spread by default; 0 for a fixed start).
    """

    direction: Direction = Field(default="down", description="which way the data goes")
    cc: CongestionControl = Field(default="newreno", description="congestion control")
    profile: Profile = Field(
        default="linux-6",
        description="stack profile: delayed ACKs, recovery, RTO, initial window (the CLI's"
        " default, a modern Linux sender; rfc is the RFC-only stack)",
    )
    ecn: TcpEcn = Field(
        default="off",
        description="off, classic (ECT(0); halve once per RTT on ECN-Echo) or l4s (ECT(1)"
        " with DCTCP's per-segment feedback; what the scalable dctcp and prague need)",
    )
    pacing: bool | None = Field(
        default=None,
        description="pace at Linux's window-based rate (120 % of cwnd/srtt; 200 % in slow"
        " start), as a Linux sender with the fq qdisc does; None keeps the profile's (off)",
    )
    start: Duration = Field(default=0, description="the earliest start")
    start_spread: Duration = Field(
        default=DEFAULT_START_SPREAD_NS,
        description="the flow starts at start plus an offset uniform in [0, start_spread),"
        " drawn from the trial's seed and the flow's index (0: exactly at start)",
    )
    stop: OptionalDuration = Field(
        default=None,
        description="when the application stops writing (None = never); data already sent"
        " is delivered",
    )
    extra_delay: Duration = Field(
        default=0, description="added at the receiver: this flow's RTT is the base RTT plus it"
    )
    tag: int = Field(
        default=0,
        ge=0,
        le=63,
        description="DSCP of the flow's segments and ACKs (0 = best effort; RRUL marks CS1,"
        " CS5, EF): CAKE's diffserv tins read it",
    )
    mss: int | None = Field(
        default=None, gt=0, le=MAX_PACKET_BYTES - 40, description="payload bytes per segment"
    )
    data_bytes: OptionalPacketSize = Field(default=None, description="IP length of a full segment")
    ack_bytes: OptionalPacketSize = Field(
        default=None, description="IP length of a pure ACK (52 B with timestamps, 40 B without)"
    )
    delayed_ack: bool | None = Field(default=None, description="ACK every second segment")
    delack: OptionalDuration = Field(
        default=None,
        description="delayed-ACK timer (Linux profiles: the minimum of the adaptive timeout)",
    )
    abc: bool | None = Field(
        default=None,
        description="Appropriate Byte Counting (RFC 3465) in congestion avoidance",
    )
    recovery: Recovery | None = Field(default=None, description="fast-recovery algorithm")
    sack: bool | None = Field(
        default=None,
        description="selective acknowledgements (RFC 2018/6675); on in the real stacks' profiles",
    )
    rto_min: OptionalDuration = Field(default=None, description="minimum retransmission timeout")
    initial_cwnd: int | None = Field(
        default=None, gt=0, le=MAX_INITIAL_CWND, description="initial window in segments"
    )
    rwnd_segments: int | None = Field(
        default=None,
        gt=0,
        le=2**30,
        description="the receive window in segments (at most TCP's largest window, 2^30 bytes)",
    )
    cubic: CubicSpec | None = Field(
        default=None, description="CUBIC's variant and switches (when cc is cubic)"
    )
    htcp: HtcpSpec | None = Field(
        default=None, description="H-TCP's flavour and switches (when cc is htcp)"
    )

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
        rto_max = self.setting("rto_max_ns")
        if self.rto_min is not None and self.rto_min > rto_max:
            raise PathError(
                ("rto_min",),
                f"{fmt_duration(self.rto_min)}: above the stack's largest timeout,"
                f" rto_max {fmt_duration(rto_max)}",
            )
        mss, data = self.setting("mss"), self.setting("data_bytes")
        if mss + 40 > data:
            raise ValueError(f"mss {mss} + 40 B of IP/TCP headers exceeds data_bytes {data}")
        latest = self.start + self.start_spread
        if self.stop is not None and self.stop <= latest:
            spread = f" + start_spread {fmt_duration(self.start_spread)}" * bool(self.start_spread)
            raise ValueError(
                f"stop {fmt_duration(self.stop)} must be after start {fmt_duration(self.start)}"
                f"{spread}"
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
            # Only when set: a fixed start's JSON (and so a stored point's identity and
            # its trials' seeds) is what it was before the spread existed.
            **({"start_spread_ns": self.start_spread} if self.start_spread else {}),
            **({"stop_ns": self.stop} if self.stop is not None else {}),
            "extra_delay_ns": self.extra_delay,
            # Only when marked: an unmarked flow's JSON (its point's identity) is unchanged.
            **({"tag": self.tag} if self.tag else {}),
            **self._overrides(),
        }
