"""A DOCSIS upstream's request–grant cycle (``collateral_model::docsis``): the modem sends
only in grants of MAP intervals, for bytes it requested; other modems leave it a free
share of the channel that varies interval by interval. The link's ``rate`` is the
channel rate of the grants."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from ..units import bare_number, parse_size
from .types import Duration, Model

GrantSize = Annotated[int, BeforeValidator(parse_size)]
"""Bytes; accepts ``"3kB"``."""

#: Low Latency DOCSIS's dual-queue settings (docsis-ns3 ``DualQueueCoupledAqm`` after
#: MULPI Annexes M–O) as our DualPI2 takes them: Classic target 10 ms updated every
#: 16 ms, coupling k = 2, the L queue's marking threshold MaxTh 1 ms (a step here; LLD
#: ramps from MinTh), and the L queue's scheduling weight 230/256, i.e. about 10 % for
#: Classic; and LLD's delay estimate (``estimate = "virtual"``): the L step on a virtual
#: queue drained at the link rate and the Classic delay from its bytes, not sojourn,
#: which on an upstream counts the wait for a grant as queueing. LLD's Classic AQM is
#: PIE-style (gains A = 0.25, B = 2.5 with PIE's auto-scaling) where our DualPI2 runs
#: PI2's gains: those stay the RFC 9332 defaults.
LLD_DUALPI2: dict[str, Any] = {
    "kind": "dualpi2",
    "target": "10ms",
    "tupdate": "16ms",
    "k": 2,
    "step_thresh": "1ms",
    "c_protection": 10,
    "estimate": "virtual",
}


def _not_seconds(value: Any) -> Any:
    """A DOCSIS time given as a bare number of a second or more (``map_interval = 5``,
    5 s) is refused with the millisecond reading it surely meant: every one is below
    100 ms, and the core's range error would say it in nanoseconds."""
    if bare_number(value) and (seconds := float(str(value))) >= 1:
        raise ValueError(f"{value}: read as {seconds:g} s; did you mean {value}ms?")
    return value  # a time with its unit ("2ms"), or one Duration reads or refuses


class DocsisSpec(Model):
    """``map_interval`` (2 ms) and ``request_grant`` (1.5 ms: from a request leaving the
    modem to the first interval that may grant it), ``max_grant`` (bytes per interval;
    none: a whole interval), ``free_mean`` (the channel's mean share other modems leave,
    1 = alone) and ``free_variation`` (each interval's share varies uniformly by this
    fraction of the mean)."""

    map_interval: Annotated[Duration, BeforeValidator(_not_seconds)] = 2_000_000
    request_grant: Annotated[Duration, BeforeValidator(_not_seconds)] = 1_500_000
    max_grant: GrantSize | None = None
    free_mean: float = Field(default=1.0, gt=0, le=1)
    free_variation: float = Field(default=0.0, ge=0, lt=1)

    def to_native(self) -> dict[str, Any]:
        return {
            "map_interval_ns": self.map_interval,
            "request_grant_ns": self.request_grant,
            "max_grant_bytes": self.max_grant or 0,
            "free_mean": self.free_mean,
            "free_variation": self.free_variation,
        }


def parse_docsis(text: str) -> dict[str, Any] | None:
    """``--up-docsis``: ``on`` for the defaults, ``off`` for none (the plain upstream,
    as without the option), or ``key=value,…`` (``map_interval=1ms,max_grant=3kB,
    free_mean=0.5``)."""
    if text.strip() in ("", "on", "default", "defaults"):
        return {}
    if text.strip() in ("off", "none"):
        return None
    out: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"{item!r}: give key=value, e.g. map_interval=2ms")
        if key.strip() not in DocsisSpec.model_fields:
            known = ", ".join(DocsisSpec.model_fields)
            raise ValueError(f"{key.strip()!r}: not a DOCSIS setting; known: {known}")
        out[key.strip()] = value.strip()
    return out
