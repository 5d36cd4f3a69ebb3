"""Human units for rates, durations, sizes and queue limits.

The simulator works in integers (bit/s, nanoseconds, bytes) so that a scenario means
the same thing on every machine; people write ``1.5Mbit``, ``100ms`` and ``40kB``.
This module converts between the two, exactly: values are parsed with :class:`Decimal`
so ``0.1s`` is 100 000 000 ns, not a float approximation of it.

A bare number is in the SI base unit (bit/s, seconds, bytes), as in the studies.
Kilo is decimal (``40kB`` = 40 000 bytes, as the MMSys 2011 queue sizes are); binary
prefixes are spelled ``KiB``/``MiB``.

Every value is bounded, so that what a person types always fits the core (which holds
times in u64 nanoseconds and rates in u64 bit/s) and a typo such as ``1e30`` is refused
here, naming the limit, instead of deep in the core:

* durations: at most :data:`MAX_DURATION_NS` (10\u2076 s, 11.6 days; the core's limit);
* rates: at most :data:`MAX_RATE_BPS` (10 Tbit/s; the core's limit);
* sizes: at most :data:`MAX_SIZE_BYTES` (1 TB; a packet is further bounded by the IP
  maximum of 65 535 bytes in :mod:`collateral.spec`);
* queue limits: at most :data:`MAX_QUEUE_BYTES` (1 GB) or :data:`MAX_QUEUE_PACKETS`
  (10\u2076 packets).

Numbers are read exactly whatever their length or exponent (``1e999999999`` is refused
as too large, not computed).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, DecimalException, Inexact
from typing import Any, Literal, TypeVar

from .display import short

__all__ = [
    "MAX_DURATION_NS",
    "MAX_QUEUE_BYTES",
    "MAX_QUEUE_PACKETS",
    "MAX_RATE_BPS",
    "MAX_SIZE_BYTES",
    "QueueLimit",
    "fmt_duration",
    "fmt_rate",
    "fmt_size",
    "parse_duration",
    "parse_queue_limit",
    "parse_rate",
    "parse_size",
]

#: The longest duration: 10^6 s (11.6 days), the core's limit on any time.
MAX_DURATION_NS = 10**6 * 10**9
#: The fastest rate: 10 Tbit/s, the core's limit on any rate.
MAX_RATE_BPS = 10**13
#: The largest size: 1 TB (packets are bounded further, by the IP maximum).
MAX_SIZE_BYTES = 10**12
#: The largest drop-tail limit in bytes (1 GB) and in packets (10^6).
MAX_QUEUE_BYTES = 10**9
MAX_QUEUE_PACKETS = 10**6

_NUMBER = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ/]*)\s*$")

# Rates: bits per second. "bps" means bits, as in ISP marketing (unlike tc, where it is
# bytes); byte rates are refused rather than guessed.
_RATE_UNITS = {
    "": 1,
    "bit": 1,
    "bps": 1,
    "bit/s": 1,
    "b/s": 1,
    "kbit": 10**3,
    "kbps": 10**3,
    "kbit/s": 10**3,
    "kb/s": 10**3,
    "mbit": 10**6,
    "mbps": 10**6,
    "mbit/s": 10**6,
    "mb/s": 10**6,
    "gbit": 10**9,
    "gbps": 10**9,
    "gbit/s": 10**9,
    "gb/s": 10**9,
    "tbit": 10**12,
    "tbps": 10**12,
    "tbit/s": 10**12,
    "tb/s": 10**12,
}
_RATE_FORMS = "a rate such as 1.5Mbit, 256kbit, 10Gbit, 2Mbps or 1500000 (bit/s)"

_DURATION_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "": 10**9,
    "s": 10**9,
    "sec": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_FORMS = "a duration such as 100ms, 1.5s, 20us, 500ns, 3min or 60 (seconds)"
_DURATION_LIMIT = "1000000s (10^6 s, 11.6 days)"

# Case matters for sizes: "kb" could be kilobits or kilobytes, so it is refused.
_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
_SIZE_FORMS = "a size such as 1500B, 40kB (= 40000 bytes), 64KiB, 1MB or 1500 (bytes)"
_QUEUE_FORMS = "a queue limit in packets such as 27p, or in bytes such as 20kB or 20000B"
_PACKET_UNITS = {"p", "pkt", "pkts", "packet", "packets"}


#: What :func:`split_number` names when no forms are given.
NUMBER_FORMS = "a number with an optional unit, e.g. 52500B or 10ms"


def split_number(text: str | float, forms: str = NUMBER_FORMS) -> tuple[Decimal, str]:
    """Splits ``"1.5Mbit"`` into ``(Decimal("1.5"), "Mbit")`` exactly; numbers have no
    unit. An error names ``forms``, what the caller expected."""
    if isinstance(text, bool):
        raise ValueError(f"expected {forms}, got {text!r}")
    if isinstance(text, int | float):
        if text != text or text in (float("inf"), float("-inf")):
            raise ValueError(f"expected {forms}, got {text!r}")
        if isinstance(text, int) and abs(text) >= 10**100:  # no str() of a huge int
            raise ValueError(f"a number of about {len(_digits(text))} digits: expected {forms}")
        return Decimal(str(text)), ""
    if not isinstance(text, str):
        raise ValueError(f"expected {forms}, got {type(text).__name__} {short(text)}")
    m = _NUMBER.match(text)
    if not m:
        raise ValueError(f"cannot parse {short(text)}: expected {forms}")
    try:
        return Decimal(m.group(1)), m.group(2)
    except DecimalException:  # an exponent beyond what a Decimal holds
        raise ValueError(f"cannot parse {short(text)}: expected {forms}") from None


def _digits(n: int) -> str:
    """The decimal digits of a huge int without str() (which Python limits)."""
    return "9" * (n.bit_length() * 30103 // 100000 + 1)


#: Wide enough for any exponent a Decimal can hold, so a comparison never overflows.
_WIDE = Context(prec=50, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _whole(
    value: Decimal,
    scale: int,
    text: object,
    what: str,
    forms: str,
    maximum: int,
    limit: str,
) -> int:
    """``value * scale`` as an int, exactly: refused if it is above ``maximum`` (checked
    first, without computing a huge number) or not whole."""
    if _WIDE.compare(_WIDE.abs(_WIDE.multiply(value, Decimal(scale))), Decimal(maximum)) > 0:
        raise ValueError(f"{short(text)}: above the limit of {limit}")
    digits = len(value.as_tuple().digits) + len(str(scale)) + 2
    exact = Context(prec=digits, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact])
    try:
        scaled = exact.multiply(value, Decimal(scale))
    except DecimalException:  # pragma: no cover - prec holds every digit of the product
        raise ValueError(f"cannot parse {short(text)}: expected {forms}") from None
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{short(text)} is not a whole number of {what}: expected {forms}")
    if abs(int(scaled)) > maximum:  # pragma: no cover - rounding at the limit's last digit
        raise ValueError(f"{short(text)}: above the limit of {limit}")
    return int(scaled)


_T = TypeVar("_T")


def _memo(parse: Callable[[Any], _T]) -> Callable[[Any], _T]:
    """``parse`` remembering its answers for text (a sweep parses the same ``"180s"``
    for each of its thousands of points; the answers are immutable, errors are raised
    anew); other inputs are parsed each time (a list is unhashable, and must get the
    parser's own error)."""
    cached = functools.lru_cache(maxsize=4096)(parse)

    @functools.wraps(parse)
    def parse_text(text: Any) -> _T:
        return cached(text) if type(text) is str else parse(text)

    return parse_text


@_memo
def parse_rate(text: str | float) -> int:
    """Parses a link rate into bit/s (``"1.5Mbit"`` -> 1_500_000); must be positive."""
    value, unit = split_number(text, _RATE_FORMS)
    if "B" in unit:
        raise ValueError(f"{short(text)} is a byte rate; give rates in bits, e.g. {_RATE_FORMS}")
    scale = _RATE_UNITS.get(unit.lower())
    if scale is None:
        raise ValueError(
            f"unknown rate unit {short(unit)} in {short(text)}: expected {_RATE_FORMS}"
        )
    if value <= 0:
        raise ValueError(f"{short(text)}: rate must be positive; expected {_RATE_FORMS}")
    bps = _whole(value, scale, text, "bit/s", _RATE_FORMS, MAX_RATE_BPS, "10Tbit (10 Tbit/s)")
    if bps <= 0:
        raise ValueError(f"{short(text)}: rate must be positive; expected {_RATE_FORMS}")
    return bps


@_memo
def parse_duration(text: str | float) -> int:
    """Parses a duration into nanoseconds (``"100ms"`` -> 100_000_000); must be >= 0."""
    value, unit = split_number(text, _DURATION_FORMS)
    scale = _DURATION_UNITS.get(unit)
    if scale is None:
        raise ValueError(
            f"unknown duration unit {short(unit)} in {short(text)}: expected {_DURATION_FORMS}"
        )
    if value < 0:
        raise ValueError(
            f"{short(text)}: a duration cannot be negative; expected {_DURATION_FORMS}"
        )
    return _whole(
        value, scale, text, "nanoseconds", _DURATION_FORMS, MAX_DURATION_NS, _DURATION_LIMIT
    )


def _ambiguous(unit: str) -> str:
    """ "kb" is kilobits to some and kilobytes to others: say how to write it."""
    return " (bits or bytes? write kB for kilobytes)" if unit.lower() in ("kb", "mb", "gb") else ""


@_memo
def parse_size(text: str | float) -> int:
    """Parses a size into bytes (``"40kB"`` -> 40_000, ``"64KiB"`` -> 65_536); must be > 0."""
    value, unit = split_number(text, _SIZE_FORMS)
    scale = _SIZE_UNITS.get(unit)
    if scale is None:
        hint = _ambiguous(unit)
        raise ValueError(
            f"unknown size unit {short(unit)} in {short(text)}{hint}: expected {_SIZE_FORMS}"
        )
    if value <= 0:
        raise ValueError(f"{short(text)}: size must be positive; expected {_SIZE_FORMS}")
    n = _whole(value, scale, text, "bytes", _SIZE_FORMS, MAX_SIZE_BYTES, "1TB (10^12 bytes)")
    if n <= 0:
        raise ValueError(f"{short(text)}: size must be positive; expected {_SIZE_FORMS}")
    return n


@dataclass(frozen=True, slots=True)
class QueueLimit:
    """A drop-tail limit: packets (for the PS rule) or bytes (for the FB rules)."""

    amount: int
    unit: Literal["packets", "bytes"]

    @property
    def in_packets(self) -> bool:
        return self.unit == "packets"

    def __str__(self) -> str:
        return f"{self.amount}p" if self.in_packets else fmt_size(self.amount)


@_memo
def parse_queue_limit(text: str | float | QueueLimit) -> QueueLimit:
    """Parses ``"27p"`` (packets) or a size such as ``"20kB"`` (bytes); must be > 0."""
    if isinstance(text, QueueLimit):
        return text
    value, unit = split_number(text, _QUEUE_FORMS)
    packets = unit.lower() in _PACKET_UNITS
    if not packets and unit not in _SIZE_UNITS:
        hint = _ambiguous(unit)
        raise ValueError(
            f"unknown queue unit {short(unit)} in {short(text)}{hint}: expected {_QUEUE_FORMS}"
        )
    if value <= 0:
        raise ValueError(f"{short(text)}: queue limit must be positive; expected {_QUEUE_FORMS}")
    if packets:
        n = _whole(
            value, 1, text, "packets", _QUEUE_FORMS, MAX_QUEUE_PACKETS, "1000000p (10^6 packets)"
        )
    else:
        scale, limit = _SIZE_UNITS[unit], "1GB (10^9 bytes)"
        n = _whole(value, scale, text, "bytes", _QUEUE_FORMS, MAX_QUEUE_BYTES, limit)
    if n <= 0:
        raise ValueError(f"{short(text)}: queue limit must be positive; expected {_QUEUE_FORMS}")
    return QueueLimit(n, "packets" if packets else "bytes")


def _fmt(value: int, units: list[tuple[int, str]]) -> str:
    """Exact decimal rendering in the largest unit not above the value (1500000 -> 1.5M)."""
    if value == 0:
        return f"0{units[0][1]}"
    for scale, name in units:
        if abs(value) >= scale or scale == units[-1][0]:
            text = format((Decimal(value) / scale).normalize(), "f")
            return f"{text}{name}"
    raise AssertionError("unreachable")


def fmt_rate(bps: int) -> str:
    """``1_500_000`` -> ``"1.5Mbit"``; round-trips through :func:`parse_rate`."""
    return _fmt(bps, [(10**9, "Gbit"), (10**6, "Mbit"), (10**3, "kbit"), (1, "bit")])


def fmt_duration(ns: int) -> str:
    """``100_000_000`` -> ``"100ms"``; round-trips through :func:`parse_duration`."""
    return _fmt(ns, [(10**9, "s"), (10**6, "ms"), (10**3, "us"), (1, "ns")])


def fmt_size(n: int) -> str:
    """``20_000`` -> ``"20kB"``; round-trips through :func:`parse_size`."""
    return _fmt(n, [(10**9, "GB"), (10**6, "MB"), (10**3, "kB"), (1, "B")])


def bare_number(value: object) -> bool:
    """A number without a unit (``100``, ``"1e5"``, ``" 20 "``; not a bool): what a time
    option reads as seconds and a rate as bit/s, and so what the warnings of implausible
    values look for."""
    if isinstance(value, bool):
        return False
    try:
        float(str(value).strip())
    except ValueError:
        return False
    return True
