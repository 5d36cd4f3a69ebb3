"""Human units for rates, durations, sizes and queue limits.

The simulator works in integers (bit/s, nanoseconds, bytes) so that a scenario means
the same thing on every machine; people write ``1.5Mbit``, ``100ms`` and ``40kB``.
This module converts between the two, exactly: values are parsed with :class:`Decimal`
so ``0.1s`` is 100 000 000 ns, not a float approximation of it.

A bare number is in the SI base unit (bit/s, seconds, bytes), as in the studies.
Kilo is decimal (``40kB`` = 40 000 bytes, as the MMSys 2011 queue sizes are); binary
prefixes are spelled ``KiB``/``MiB``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

__all__ = [
    "QueueLimit",
    "fmt_duration",
    "fmt_rate",
    "fmt_size",
    "parse_duration",
    "parse_queue_limit",
    "parse_rate",
    "parse_size",
]

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


def _split(text: str | float, forms: str) -> tuple[Decimal, str]:
    """Splits ``"1.5Mbit"`` into ``(Decimal("1.5"), "Mbit")``; numbers have no unit."""
    if isinstance(text, bool):
        raise ValueError(f"expected {forms}, got {text!r}")
    if isinstance(text, int | float):
        if text != text or text in (float("inf"), float("-inf")):
            raise ValueError(f"expected {forms}, got {text!r}")
        return Decimal(str(text)), ""
    if not isinstance(text, str):
        raise ValueError(f"expected {forms}, got {type(text).__name__} {text!r}")
    m = _NUMBER.match(text)
    if not m:
        raise ValueError(f"cannot parse {text!r}: expected {forms}")
    try:
        return Decimal(m.group(1)), m.group(2)
    except InvalidOperation:  # pragma: no cover - the regex only admits valid numbers
        raise ValueError(f"cannot parse {text!r}: expected {forms}") from None


def _whole(value: Decimal, text: object, what: str, forms: str) -> int:
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of {what}: expected {forms}")
    return int(value)


def parse_rate(text: str | float) -> int:
    """Parses a link rate into bit/s (``"1.5Mbit"`` -> 1_500_000); must be positive."""
    value, unit = _split(text, _RATE_FORMS)
    if "B" in unit:
        raise ValueError(f"{text!r} is a byte rate; give rates in bits, e.g. {_RATE_FORMS}")
    scale = _RATE_UNITS.get(unit.lower())
    if scale is None:
        raise ValueError(f"unknown rate unit {unit!r} in {text!r}: expected {_RATE_FORMS}")
    bps = _whole(value * scale, text, "bit/s", _RATE_FORMS)
    if bps <= 0:
        raise ValueError(f"{text!r}: rate must be positive; expected {_RATE_FORMS}")
    return bps


def parse_duration(text: str | float) -> int:
    """Parses a duration into nanoseconds (``"100ms"`` -> 100_000_000); must be >= 0."""
    value, unit = _split(text, _DURATION_FORMS)
    scale = _DURATION_UNITS.get(unit)
    if scale is None:
        raise ValueError(f"unknown duration unit {unit!r} in {text!r}: expected {_DURATION_FORMS}")
    ns = _whole(value * scale, text, "nanoseconds", _DURATION_FORMS)
    if ns < 0:
        raise ValueError(f"{text!r}: a duration cannot be negative; expected {_DURATION_FORMS}")
    return ns


def _ambiguous(unit: str) -> str:
    """ "kb" is kilobits to some and kilobytes to others: say how to write it."""
    return " (bits or bytes? write kB for kilobytes)" if unit.lower() in ("kb", "mb", "gb") else ""


def parse_size(text: str | float) -> int:
    """Parses a size into bytes (``"40kB"`` -> 40_000, ``"64KiB"`` -> 65_536); must be > 0."""
    value, unit = _split(text, _SIZE_FORMS)
    scale = _SIZE_UNITS.get(unit)
    if scale is None:
        hint = _ambiguous(unit)
        raise ValueError(f"unknown size unit {unit!r} in {text!r}{hint}: expected {_SIZE_FORMS}")
    n = _whole(value * scale, text, "bytes", _SIZE_FORMS)
    if n <= 0:
        raise ValueError(f"{text!r}: size must be positive; expected {_SIZE_FORMS}")
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


def parse_queue_limit(text: str | float | QueueLimit) -> QueueLimit:
    """Parses ``"27p"`` (packets) or a size such as ``"20kB"`` (bytes); must be > 0."""
    if isinstance(text, QueueLimit):
        return text
    value, unit = _split(text, _QUEUE_FORMS)
    if unit.lower() in _PACKET_UNITS:
        n = _whole(value, text, "packets", _QUEUE_FORMS)
        if n <= 0:
            raise ValueError(f"{text!r}: queue limit must be positive; expected {_QUEUE_FORMS}")
        return QueueLimit(n, "packets")
    if unit not in _SIZE_UNITS:
        hint = _ambiguous(unit)
        raise ValueError(f"unknown queue unit {unit!r} in {text!r}{hint}: expected {_QUEUE_FORMS}")
    n = _whole(value * _SIZE_UNITS[unit], text, "bytes", _QUEUE_FORMS)
    if n <= 0:
        raise ValueError(f"{text!r}: queue limit must be positive; expected {_QUEUE_FORMS}")
    return QueueLimit(n, "bytes")


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
