"""Burst loss on the wire after the queue, by the Gilbert–Elliott model the core steps
once per packet (``collateral_model::loss``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .types import Model


class BurstLossSpec(Model):
    """Gilbert–Elliott: ``p`` = P(Good→Bad) and ``r`` = P(Bad→Good) at each packet,
    ``loss_good`` and ``loss_bad`` each state's loss probability (0 and 1: Gilbert's
    model, losing p / (p + r) of the packets in bursts of 1 / r on average)."""

    p: float = Field(gt=0, le=1)
    r: float = Field(gt=0, le=1)
    loss_good: float = Field(default=0.0, ge=0, le=1)
    loss_bad: float = Field(default=1.0, ge=0, le=1)

    def to_native(self) -> dict[str, Any]:
        return self.model_dump()
