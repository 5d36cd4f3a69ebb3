"""Inference of a measured link's bottleneck (``collateral infer``): :mod:`.observations`
reads a run imported by ``collateral import`` into arrays, :mod:`.estimate` infers base
RTT, capacity per direction, FIFO or AQM and the FIFO's buffer from them, :mod:`.framing`
the line's framing from the goodput over the modem's sync rate."""

from __future__ import annotations

from .estimate import Estimate, Inference, infer
from .observations import InferenceProblem, Observations, from_measurement, from_store

__all__ = [
    "Estimate",
    "Inference",
    "InferenceProblem",
    "Observations",
    "from_measurement",
    "from_store",
    "infer",
]
