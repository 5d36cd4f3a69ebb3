"""A low-Earth-orbit satellite link (``collateral_model::leo``): rate and extra delay
redrawn at each reconfiguration (every 15 s, at 12, 27, 42 and 57 s past the minute in
Starlink's case), a delay spike and a loss burst at each. The core draws the intervals
from the trial's seed."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

# The presets (``leo = "starlink"``) are declared beside the link presets, where the CLI's
# options read them without pydantic; re-exported here with the model they fill.
from ..vocabulary import LEO_PRESETS
from .types import Duration, Model, Rate

__all__ = ["LEO_PRESETS", "LeoSpec"]


class LeoSpec(Model):
    """``rate_min``/``rate_max``: each interval's rate is drawn uniformly between them;
    ``delay_min``/``delay_max``: its extra one-way delay (over half the RTT);
    ``interval`` and ``first``: the reconfigurations (15 s apart from 12 s); ``spike``
    more delay for ``spike_for`` after each, and what leaves the queue within
    ``loss_for`` of it is lost."""

    rate_min: Rate
    rate_max: Rate
    delay_min: Duration = 0
    delay_max: Duration = 0
    interval: Duration = 15_000_000_000
    first: Duration = 12_000_000_000
    spike: Duration = 0
    spike_for: Duration = 0
    loss_for: Duration = 0

    @model_validator(mode="after")
    def _ordered(self) -> LeoSpec:
        if self.rate_max < self.rate_min:
            raise ValueError("rate_max is below rate_min")
        if self.delay_max < self.delay_min:
            raise ValueError("delay_max is below delay_min")
        return self

    @property
    def mean_bps(self) -> int:
        """The nominal rate (the core's: the middle of the range)."""
        return self.rate_min // 2 + self.rate_max // 2

    def to_native(self) -> dict[str, Any]:
        return {
            "rate_min_bps": self.rate_min,
            "rate_max_bps": self.rate_max,
            "delay_min_ns": self.delay_min,
            "delay_max_ns": self.delay_max,
            "interval_ns": self.interval,
            "first_ns": self.first,
            "spike_ns": self.spike,
            "spike_for_ns": self.spike_for,
            "loss_for_ns": self.loss_for,
        }
