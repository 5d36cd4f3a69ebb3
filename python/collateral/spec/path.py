"""A direction's path over time: on/off outages of a constant-rate link
(``collateral_model::schedule``) and extra one-way delay in steps
(``collateral_model::path_delay``, which keeps packets in order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import PrivateAttr, model_validator

from ..units import parse_duration
from .types import Duration, Model


def _durations(pairs: list[list[Any]], what: str) -> list[tuple[int, int]]:
    out = []
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"[{i}]: give a pair [{what}]")
        try:
            out.append((parse_duration(pair[0]), parse_duration(pair[1])))
        except ValueError as e:
            raise ValueError(f"[{i}]: {e}") from None
    return out


class OutagesSpec(Model):
    """``windows``: ``[start, duration]`` pairs (``[["10s", "200ms"]]``), in order;
    with ``period`` they repeat every period. Nothing is sent during one: the packet in
    transmission resumes after it, the queue holds or drops what arrives."""

    windows: list[list[Any]]
    period: Duration = 0
    _pairs: list[tuple[int, int]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _read(self) -> OutagesSpec:
        self._pairs = _durations(self.windows, "start, duration")
        return self

    def to_native(self) -> dict[str, Any]:
        return {"windows_ns": [list(p) for p in self._pairs], "period_ns": self.period}


class DelayStepsSpec(Model):
    """``steps``: ``[from, extra delay]`` pairs, the first from 0 (``[["0s", "0ms"],
    ["20s", "80ms"]]``), or ``file``: one ``ms delay_ms`` pair per line; the last delay
    holds, or with ``period`` the steps repeat."""

    steps: list[list[Any]] | None = None
    file: str | None = None
    period: Duration = 0
    _pairs: list[tuple[int, int]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _read(self) -> DelayStepsSpec:
        if (self.steps is None) == (self.file is None):
            raise ValueError("give either steps = [[from, delay], ...] or a file")
        if self.steps is not None:
            self._pairs = _durations(self.steps, "from, delay")
            return self
        path = Path(str(self.file)).expanduser()
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{self.file}: {getattr(e, 'strerror', None) or e}") from None
        pairs = []
        for n, line in enumerate(lines, 1):
            parts = line.split()
            try:
                at, delay = (round(float(p) * 1e6) for p in parts)
                if at < 0 or delay < 0:
                    raise ValueError
            except (ValueError, OverflowError):
                raise ValueError(f"{self.file}: line {n}: give 'ms delay_ms', both >= 0") from None
            pairs.append((at, delay))
        self._pairs = pairs
        return self

    def to_native(self) -> dict[str, Any]:
        return {"steps_ns": [list(p) for p in self._pairs], "period_ns": self.period}
