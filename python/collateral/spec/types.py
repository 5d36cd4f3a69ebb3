"""Field types with human units (``Rate``, ``Duration``, ``PacketSize``, ``Limit``),
the vocabulary as ``Literal`` types, and the frozen base model of every spec."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer

from ..display import short
from ..units import (
    QueueLimit,
    fmt_duration,
    fmt_rate,
    parse_duration,
    parse_queue_limit,
    parse_rate,
    parse_size,
)
from ..vocabulary import (
    APP_PROFILES,
    AQM_KINDS,
    CBR_ECN_CODEPOINTS,
    CC_ALGORITHMS,
    CUBIC_VARIANTS,
    DIRECTIONS,
    HTCP_FLAVORS,
    LINK_RATES,
    MAX_PACKET_BYTES,
    PROFILES,
    RECOVERY_STYLES,
    RULES,
    TCP_ECN_MODES,
)
from .signatures import READABLE_SIGNATURES, name_unit_types, readable_signature


def packet_size(v: object) -> int:
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
    int, BeforeValidator(packet_size), PlainSerializer(lambda n: f"{n}B", return_type=str)
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
            raise ValueError(f"unknown rule {short(value)}; allowed: {', '.join(RULES)}")
    return value


#: Other names of congestion controls: Linux calls its NewReno "reno" (the kernel's
#: tcp_cong.c registers it so; the testbed's kernel lists it so).
CC_ALIASES = {"reno": "newreno"}


def _one_of(allowed: tuple[str, ...], what: str, aliases: dict[str, str] | None = None) -> Any:
    def check(value: object) -> str:
        name = value.strip().lower() if isinstance(value, str) else value
        name = (aliases or {}).get(name, name) if isinstance(name, str) else name
        if name not in allowed:
            raise ValueError(f"unknown {what} {short(value)}; supported: {', '.join(allowed)}")
        return name

    return BeforeValidator(check)


# Literal[names] of the core's names: the same as writing them out, without the copy.
Direction = Literal[DIRECTIONS]
Rule = Annotated[Literal[RULES] | None, BeforeValidator(_rule)]
CongestionControl = Annotated[
    Literal[CC_ALGORITHMS], _one_of(CC_ALGORITHMS, "congestion control", CC_ALIASES)
]
Profile = Annotated[Literal[PROFILES], _one_of(PROFILES, "stack profile")]
Recovery = Literal[RECOVERY_STYLES]
AqmKind = Literal[AQM_KINDS]
CubicVariant = Literal[CUBIC_VARIANTS]
HtcpFlavor = Literal[HTCP_FLAVORS]
AppProfile = Literal[APP_PROFILES]
TcpEcn = Annotated[Literal[TCP_ECN_MODES], _one_of(TCP_ECN_MODES, "ECN mode")]
CbrEcn = Annotated[Literal[CBR_ECN_CODEPOINTS], _one_of(CBR_ECN_CODEPOINTS, "ECN codepoint")]
LinkPreset = Literal[tuple(LINK_RATES)]
OptionalPacketSize = _optional(packet_size, lambda n: f"{n}B")


class Model(BaseModel):
    """The base of every spec model: unknown keys are refused."""

    # Frozen so one spec can be shared by several scenarios without aliasing surprises;
    # built on first use, not at import (every command would pay for every model).
    # No NaN or infinity in a float field: "Input should be less than 1" was all a NaN
    # loss rate got (NaN fails every bound without saying why).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, allow_inf_nan=False)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # Each model gets its readable signature as it is defined, in whatever order the
        # modules are imported (the package loads its models on first use).
        super().__pydantic_init_subclass__(**kwargs)
        readable_signature(cls)

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        # Building the model (deferred to its first use) sets pydantic's own signature,
        # validators and all: put the readable one back.
        if cls in READABLE_SIGNATURES:
            cls.__signature__ = READABLE_SIGNATURES[cls]


# The human-unit types above, by name, for the models' signatures (``rtt: Duration``).
name_unit_types(globals())
