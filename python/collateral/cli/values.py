"""argparse types for the options that are not scenario fields: whole numbers in a
range, worker counts, seconds, finite numbers; each error names the value given."""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable

from ..display import short


def whole(text: str, lo: int, hi: int) -> int:
    """A whole number from ``lo`` to ``hi`` (its digits checked before int() reads them)."""
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,30}", t):
        if re.fullmatch(r"[+-]?\d+", t):
            raise argparse.ArgumentTypeError(f"a number of {len(t)} digits; at most {hi}")
        raise argparse.ArgumentTypeError(f"{short(text, 60)} is not a whole number")
    value = int(t)
    if value < lo:
        raise argparse.ArgumentTypeError(f"{short(text, 60)}: must be >= {lo}")
    if value > hi:
        raise argparse.ArgumentTypeError(f"{short(text, 60)}: at most {hi}")
    return value


def count(lo: int, hi: int | Callable[[], int]) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi`` (or ``hi()``)."""

    def parse(text: str) -> int:
        return whole(text, lo, hi() if callable(hi) else hi)

    return parse


def nonneg_int(text: str) -> int:
    return whole(text, 0, 2**63 - 1)


def max_workers() -> int:
    """The most local workers: 4 per core (at least 8), as for a local Dask cluster."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(8, 4 * cores)


def positive_seconds(text: str) -> float:
    """``--batch-seconds``: a finite number of seconds above 0, at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{short(text, 60)} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise argparse.ArgumentTypeError(f"{short(text, 60)}: must be above 0 and at most 86400")
    return value


def share(text: str) -> float:
    """A share as a fraction or a percentage: ``0.01`` or ``1%``."""
    t = text.strip()
    if t.endswith("%"):
        return finite_float(t[:-1]) / 100
    return finite_float(text)


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{short(text, 60)} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{short(text, 60)}: must be a finite number")
    return value
