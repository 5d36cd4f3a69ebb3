"""``trace``: a synthetic packet-delivery trace in Mahimahi's format to start from
(constant, square wave, random walk, or a rate time series from a CSV file), for
``simulate --down-trace FILE`` or Mahimahi's own ``mm-link``."""

from __future__ import annotations

import argparse
import csv
import sys
from typing import Any

from ..display import short
from ..units import bare_number
from . import HELP
from .errors import fail
from .paths import output_file
from .values import count

KINDS = ("constant", "square", "walk", "series")
#: The longest trace, in seconds (``links.synthetic.MAX_DURATION_MS``, which this module
#: does not import at start-up: it loads the native module).
_DAY_S = 86_400


def add_parser(sub: Any) -> None:
    t = sub.add_parser(
        "trace",
        help=HELP["trace"],
        description="Write a packet-delivery trace: one line per delivery opportunity of"
        " 1504 bytes, its millisecond; the trace repeats after its last line. KIND:"
        " constant (--rate), square (--rate for half a --period, then --low), walk (from"
        " --rate, a factor in [1/2, 2] every --step, within --low and --high), series"
        " (a CSV file of time_s,rate_bps rows, each rate held to the next row, the last"
        " one to --duration).",
    )
    t.add_argument("kind", metavar="KIND", choices=KINDS, help=", ".join(KINDS))
    t.add_argument("csv", metavar="CSV", nargs="?", help="series: the rate time series")
    t.add_argument("-o", "--out", metavar="FILE", required=True, help="the trace to write")
    t.add_argument("--rate", metavar="RATE", help="the rate (walk: the start)")
    t.add_argument("--low", metavar="RATE", help="square: the low rate; walk: the lowest")
    t.add_argument("--high", metavar="RATE", help="walk: the highest rate")
    t.add_argument("--period", metavar="TIME", help="square (default: 2s)")
    t.add_argument("--step", metavar="TIME", help="walk (default: 100ms)")
    t.add_argument(
        "--duration",
        metavar="TIME",
        help="default: 10s; series: the last row's time and the spacing of the rows before"
        " it again (e.g. 6s for rows at 0, 2 and 4 s)",
    )
    t.add_argument("--seed", metavar="N", type=count(0, 2**63 - 1), default=1, help="walk")


def _rate(option: str, text: str | None) -> float:
    from ..units import parse_rate

    if text is None:
        fail(f"{option}: missing; give a rate such as 12Mbit")
    try:
        value = parse_rate(text)
    except ValueError as e:
        fail(f"{option}: {e}")
    if value <= 0:
        fail(f"{option}: {short(text)}: must be positive")
    return value


def _time(option: str, text: str) -> int:
    from ..units import parse_duration

    try:
        ns = parse_duration(text)
    except ValueError as e:
        fail(f"{option}: {e}")
    if not 1_000_000 <= ns <= _DAY_S * 10**9:
        fail(f"{option}: {short(text)}: from 1ms to 24h")
    return ns


def run(a: argparse.Namespace) -> int:
    from ..links import synthetic

    out = output_file("--out", a.out, "out/link.trace")
    duration = _time("--duration", a.duration or "10s")
    if a.kind != "series" and a.csv is not None:
        fail(f"CSV: {a.kind} takes no file; only series does")
    # An option this kind does not read is a mistake, not a default to ignore.
    for opt, value, kinds in (
        ("--rate", a.rate, ("constant", "square", "walk")),
        ("--low", a.low, ("square", "walk")),
        ("--high", a.high, ("walk",)),
        ("--period", a.period, ("square",)),
        ("--step", a.step, ("walk",)),
    ):
        if value is not None and a.kind not in kinds:
            fail(f"{opt}: {a.kind} does not take it; it is for {' and '.join(kinds)}")
    try:
        ms = _opportunities(a, duration)
    except ValueError as e:  # a trace longer than a link takes, refused before it is built
        fail(f"{'CSV' if a.kind == 'series' else '--rate'}: {e}")
    synthetic.write(ms, out)
    from .. import _native

    _, mean = _native.delivery_trace("".join(f"{m}\n" for m in ms))
    if a.kind == "constant" and abs(mean - _rate("--rate", a.rate)) > 0.1 * mean:
        # Whole 1504-byte opportunities, at least one: a trace cannot carry less.
        asked = _rate("--rate", a.rate)
        from ..spec.flat import UNUSUAL_RATE_BPS

        tiny = bare_number(a.rate) and asked < UNUSUAL_RATE_BPS
        hint = f"; did you mean {a.rate}kbit?" if tiny else ""
        print(
            f"collateral: warning: --rate {a.rate}: read as {asked:g} bit/s; the trace's whole"
            f" 1504-byte opportunities carry {mean / 1e6:.3f} Mbit/s over {ms[-1]} ms{hint}",
            file=sys.stderr,
        )
    print(f"wrote {out}: {len(ms)} opportunities over {ms[-1]} ms, mean {mean / 1e6:.3f} Mbit/s")
    return 0


def _opportunities(a: argparse.Namespace, duration: int) -> list[int]:
    from ..links import synthetic

    if a.kind == "constant":
        return synthetic.constant(_rate("--rate", a.rate), duration)
    if a.kind == "square":
        high, low = _rate("--rate", a.rate), _rate("--low", a.low)
        if low > high:  # as the walk's --low above --high
            fail(f"--low: {short(a.low)}: above --rate {short(a.rate)}, the square's high half")
        return synthetic.square(high, low, _time("--period", a.period or "2s") // 2, duration)
    if a.kind == "walk":
        lo, hi = _rate("--low", a.low), _rate("--high", a.high)
        if lo > hi:
            fail("--low: above --high")
        start = _rate("--rate", a.rate)
        if not lo <= start <= hi:
            fail(f"--rate: {short(a.rate)}: the walk's start, outside --low to --high")
        return synthetic.random_walk(
            start, lo, hi, _time("--step", a.step or "100ms"), duration, a.seed
        )
    return synthetic.from_series(*_series_until(_series(a.csv), a.duration))


def _series(path: str | None) -> list[tuple[float, float]]:
    if path is None:
        fail("CSV: series needs a file of time_s,rate_bps rows")
    from ..units import parse_rate

    points = []
    try:
        with open(path, newline="") as f:
            for i, row in enumerate(csv.reader(f), 1):
                header = i == 1 and not bare_number(row[0]) if row else False
                if not row or row[0].strip().startswith("#") or header:
                    continue  # blank, comment or header
                if len(row) != 2:
                    fail(f"CSV: {path}: line {i}: give time_s,rate_bps")
                try:
                    t, rate = float(row[0]), parse_rate(row[1].strip())
                except ValueError as e:
                    fail(f"CSV: {path}: line {i}: {e}")
                # Times in order, from 0 up to a day (a trace's longest).
                if not 0 <= t < _DAY_S or (points and t <= points[-1][0]):
                    fail(f"CSV: {path}: line {i}: time {short(row[0])}: give times in"
                         f" increasing order, in seconds from 0 to {_DAY_S}")  # fmt: skip
                points.append((t, rate))
    except (OSError, UnicodeDecodeError) as e:
        fail(f"CSV: {path}: {getattr(e, 'strerror', None) or e}")
    if not points:
        fail(f"CSV: {path}: no rows")
    return points


def _series_until(
    points: list[tuple[float, float]], duration: str | None
) -> tuple[list[tuple[float, float]], int]:
    """The series and its end (ns): ``--duration``, after the last row, or else the last
    row held as long as the rows before it were apart (a sampled series' last sample)."""
    times = sorted(t for t, _ in points)
    if duration is not None:
        end = _time("--duration", duration)
        if end <= times[-1] * 1e9:
            fail(f"--duration: {short(duration)}: the series' last row is at {times[-1]:g} s;"
                 " give a longer one")  # fmt: skip
        return points, end
    if len(times) < 2 or times[-1] <= times[-2]:
        fail("--duration: missing; with one time in the series, give how long it lasts")
    end = times[-1] + (times[-1] - times[-2])
    if end > _DAY_S:
        fail(f"CSV: the last row held as long as the rows were apart ends at {end:g} s,"
             " past a day; give --duration")  # fmt: skip
    return points, round(end * 1e9)
