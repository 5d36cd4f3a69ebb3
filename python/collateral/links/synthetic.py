"""Synthetic packet-delivery traces in Mahimahi's format, from a rate over time.

A rate ``r(t)`` (bit/s, piecewise constant per millisecond here) becomes delivery
opportunities of 1504 bytes: millisecond ``m`` gets as many as the cumulative bytes
``B(m) = Σ r/8 · 1 ms`` pass multiples of 1504 in it, so the trace's mean rate is the
rate's mean to within one opportunity over the whole trace. Each is written as ``m``
(one line per opportunity); the trace repeats after its last line, so the last line is
the period (a final opportunity is added at the period when the last millisecond has
none: Mahimahi takes the last line as the period).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterable
from pathlib import Path

from .. import _native

#: Mahimahi's opportunity size (collateral_model::clock::OPPORTUNITY_BYTES).
OPPORTUNITY_BYTES = 1504
_MS = 1_000_000


#: The longest trace, in milliseconds: a day, as ``collateral trace --duration``.
MAX_DURATION_MS = 86_400_000


def from_rates(rate_of_ms: Callable[[int], float], duration_ms: int) -> list[int]:
    """Opportunity times (ms) for ``rate_of_ms(m)`` bit/s in millisecond ``m``
    (1 … ``duration_ms``). A ValueError, before the memory is spent, for a trace longer
    than a day or with more opportunities than a link takes (the core's limit)."""
    if duration_ms < 1:
        raise ValueError("duration: at least 1 ms")
    if duration_ms > MAX_DURATION_MS:
        raise ValueError(
            f"duration: {duration_ms / 1000:g} s; at most a day ({MAX_DURATION_MS // 1000} s)"
        )
    most = _native.limits()["max_trace_lines"]
    out: list[int] = []
    carried = 0.0  # bytes not yet given an opportunity
    for m in range(1, duration_ms + 1):
        rate = rate_of_ms(m)
        if not rate >= 0:
            raise ValueError(f"rate at {m} ms: {rate!r} is not a rate")
        carried += rate / 8 / 1000
        n = int(carried // OPPORTUNITY_BYTES)
        carried -= n * OPPORTUNITY_BYTES
        if len(out) + n > most - 1:  # and the period's line after them
            raise ValueError(
                f"more than {most:,} delivery opportunities of {OPPORTUNITY_BYTES} B by"
                f" {m / 1000:g} s, the most a link's trace may hold: a lower rate or a"
                " shorter duration"
            )
        out += [m] * n
    if not out or out[-1] != duration_ms:
        out.append(duration_ms)  # the period: Mahimahi repeats after the last line
    return out


def constant(rate_bps: float, duration_ns: int) -> list[int]:
    """A constant rate."""
    return from_rates(lambda m: rate_bps, _ms(duration_ns))


def square(high_bps: float, low_bps: float, half_period_ns: int, duration_ns: int) -> list[int]:
    """``high_bps`` for half a period, then ``low_bps``, repeating."""
    half = max(1, _ms(half_period_ns))
    return from_rates(
        lambda m: high_bps if ((m - 1) // half) % 2 == 0 else low_bps, _ms(duration_ns)
    )


def random_walk(
    start_bps: float, low_bps: float, high_bps: float, step_ns: int, duration_ns: int, seed: int = 1
) -> list[int]:
    """A rate that moves by a uniform factor in [½, 2] every ``step``, kept within
    [``low_bps``, ``high_bps``] (a seeded walk: the same seed, the same trace)."""
    rng = random.Random(seed)
    step = max(1, _ms(step_ns))
    rates: dict[int, float] = {}
    rate = start_bps

    def at(m: int) -> float:
        nonlocal rate
        k = (m - 1) // step
        if k not in rates:
            if k > 0:
                rate = min(high_bps, max(low_bps, rate * 2 ** rng.uniform(-1, 1)))
            rates[k] = rate
        return rates[k]

    return from_rates(at, _ms(duration_ns))


def from_series(points: Iterable[tuple[float, float]], duration_ns: int | None = None) -> list[int]:
    """A rate time series: (time in s, rate in bit/s) points, each rate held until the
    next point; the trace ends at ``duration`` (default: the last point's time, which
    then only closes the series)."""
    pts = sorted(points)
    if not pts:
        raise ValueError("series: no points")
    end_ms = _ms(duration_ns) if duration_ns is not None else max(1, round(pts[-1][0] * 1000))
    times = [t for t, _ in pts]

    def at(m: int) -> float:
        k = bisect.bisect_right(times, (m - 1) / 1000) - 1
        return pts[max(k, 0)][1]

    return from_rates(at, end_ms)


def write(ms: list[int], path: str | Path) -> Path:
    """Writes the trace, one millisecond per line."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)  # as a figure's directory is made
    p.write_text("".join(f"{m}\n" for m in ms))
    return p


def _ms(ns: int) -> int:
    return max(1, round(ns / _MS))
