"""A low-Earth-orbit satellite link (``collateral_model::leo``): rate and extra delay
redrawn at each reconfiguration (every 15 s, at 12, 27, 42 and 57 s past the minute in
Starlink's case), a delay spike and a loss burst at each. The core draws the intervals
from the trial's seed."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from .types import Duration, Model, Rate


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


#: ``leo = "starlink"``: our reading of the Starlink measurements, per direction. The
#: 15 s reconfigurations at :12/:27/:42/:57 are Tanveer et al. (2023) and Mohan et al.
#: (WWW 2024); the rates are ranges around the medians those and Ookla's reports give
#: (about 100 Mbit/s down, 10-15 Mbit/s up), the per-interval extra delay a 0-10 ms
#: spread over the base RTT (give ``rtt``, e.g. 30 ms), and the handover a 20 ms
#: one-way spike for 100 ms with 20 ms of loss (users' summaries of APNIC's measurements
#: report ~40 ms of jitter and ~1 % loss at the boundaries). Our choices, not fitted.
LEO_PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "starlink": {
        d: {
            "rate_min": lo,
            "rate_max": hi,
            "delay_min": "0ms",
            "delay_max": "10ms",
            "spike": "20ms",
            "spike_for": "100ms",
            "loss_for": "20ms",
        }
        for d, lo, hi in (("down", "50Mbit", "200Mbit"), ("up", "5Mbit", "20Mbit"))
    }
}
