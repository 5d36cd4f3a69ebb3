"""A direction's delivery trace: Mahimahi's packet-delivery format (one millisecond per
line, each a delivery opportunity of 1504 bytes), read by the core
(``collateral_model::clock``) from a file or given inline."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, model_validator

from .. import _native
from .types import Duration, Model, OptionalDuration, Rate


class DeliveryTraceSpec(Model):
    """``file``: a Mahimahi trace (e.g. one of its cellular traces, or one from
    ``collateral trace``); or ``ms``: the delivery times themselves; or ``steps``: a rate
    in steps (``[["0s", "1Mbit"], ["40s", "2.5Mbit"]]``, each held until the next) up to
    ``until``, as RFC 8867's capacity changes are given. The trace repeats after its last
    line unless ``once``."""

    file: str | None = None
    ms: list[int] | None = None
    steps: list[tuple[Duration, Rate]] | None = Field(default=None, min_length=1, max_length=10_000)
    until: OptionalDuration = None
    once: bool = False
    _mean: int = PrivateAttr(0)

    @model_validator(mode="after")
    def _read(self) -> DeliveryTraceSpec:
        if self.ms is not None:  # given, or read before (a stored scenario has both)
            _, self._mean = _parse("\n".join(map(str, self.ms)))
            return self
        if self.steps is not None and self.file is None:
            times = [t for t, _ in self.steps]
            if any(b <= a for a, b in pairwise(times)):
                raise ValueError("steps: give their times in increasing order")
            if self.until is None or self.until <= times[-1]:
                raise ValueError("steps: give until, after the last step's time")
            from ..links.synthetic import from_series

            ms = from_series([(t / 1e9, r) for t, r in self.steps], self.until)
            _, self._mean = _parse("\n".join(map(str, ms)))
            object.__setattr__(self, "ms", ms)
            return self
        if self.file is None:
            raise ValueError(
                "give a trace file (file = PATH), its delivery times (ms = [...]) or rate steps"
                " (steps = [[TIME, RATE], ...] and until)"
            )
        path = Path(self.file).expanduser()
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{self.file}: {getattr(e, 'strerror', None) or e}") from None
        ms, self._mean = _parse(text, self.file)
        object.__setattr__(self, "ms", ms)
        return self

    @property
    def mean_bps(self) -> int:
        """The trace's mean rate (the core's figure: opportunities' bytes over the period)."""
        return self._mean

    def to_native(self) -> dict[str, Any]:
        return {"ms": self.ms, "once": self.once}


def _parse(text: str, name: str | None = None) -> tuple[list[int], int]:
    try:
        return _native.delivery_trace(text)
    except ValueError as e:
        raise ValueError(f"{name}: {e}" if name else str(e)) from None
