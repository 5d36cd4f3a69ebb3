"""The queues the advisor tries: drop-tail at multiples of each direction's
bandwidth-delay product, the user's current queue, and today's AQMs as Linux ships them
(CoDel, FQ-CoDel with and without ECN, PIE, CAKE besteffort and diffserv4 with the call
marked EF, DualPI2 with classic and with L4S downloads)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..units import MAX_QUEUE_PACKETS

BDP_MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)
#: DSCP Expedited Forwarding (RFC 3246), CAKE diffserv4's voice tin.
EF = 46
#: The AQMs at their defaults, each with what the flows and the call do differently
#: beside it: (label, queue, TCP ECN mode, the call's DSCP).
AQMS: tuple[tuple[str, dict[str, Any], str, int], ...] = (
    ("CoDel", {"kind": "codel", "limit": 1000}, "off", 0),
    ("FQ-CoDel", {"kind": "fq_codel", "limit": 1000}, "off", 0),
    ("FQ-CoDel, ECN", {"kind": "fq_codel", "limit": 1000}, "classic", 0),
    ("PIE", {"kind": "pie", "limit": 1000}, "off", 0),
    ("CAKE besteffort", {"kind": "cake", "diffserv": "besteffort"}, "off", 0),
    ("CAKE diffserv4, call EF", {"kind": "cake", "diffserv": "diffserv4"}, "off", EF),
    ("DualPI2", {"kind": "dualpi2"}, "off", 0),
)
#: DualPI2 with the bulk flows L4S (TCP Prague, ECT(1)): what the L queue is for.
L4S = ("DualPI2, L4S flows", {"kind": "dualpi2"}, "prague", "l4s")


@dataclass(frozen=True)
class Candidate:
    """One configuration: the queue of each direction, the flows' congestion control
    and ECN, and how the real-time application's packets are marked."""

    queue_label: str
    queue: dict[str, Any]
    cc: str
    #: The upstream queue when it differs from ``queue`` (drop-tail's own BDP).
    up_queue: dict[str, Any] | None = None
    ecn: str = "off"
    #: The DSCP of the application's packets (CAKE's diffserv tins read it).
    dscp: int = 0
    #: drop-tail, aqm or current: how the figure groups it.
    family: str = "aqm"

    @property
    def label(self) -> str:
        return f"{self.queue_label}, {self.cc}"

    def queues(self) -> dict[str, dict[str, Any]]:
        return {"down": self.queue, "up": self.up_queue if self.up_queue else self.queue}


def packets(rate_bps: int, rtt_ns: int, k: float) -> int:
    """``k`` bandwidth-delay products of a direction in 1500-byte packets, at least 2."""
    bdp = rate_bps * rtt_ns / 1e9 / 8 / 1500
    return min(MAX_QUEUE_PACKETS, max(2, round(k * bdp)))


def candidates(
    down_bps: int | None,
    rtt_ns: int,
    ccs: tuple[str, ...],
    up_bps: int | None = None,
    current: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None,
    shaper_bps: tuple[int, int] | None = None,
    framing: Any = None,
    docsis_up: bool = False,
) -> list[Candidate]:
    """Every candidate under each congestion control (drop-tail limits that round to
    the same packets are tried once), then DualPI2 with L4S flows; ``current`` is the
    user's own queue, (label, queue, upstream queue when it differs). Without downloads
    (``down_bps`` None) the limits are named by the upstream's, which alone decide.
    ``shaper_bps``: the link's (down, up) rates, CAKE's shaper in each direction, as a
    gateway runs it (unshaped, its 5 ms target is below one packet's time on a slow
    link: Linux's COBALT then drops a call's packets too), counting the link's
    ``framing`` (its per-packet overhead and ATM cells, CAKE's own keywords) when given.
    ``docsis_up``: the upstream is a DOCSIS modem's, whose DualPI2 is Low Latency
    DOCSIS's, estimating delay from bytes (``estimate = "virtual"``): sojourn there
    counts the wait for a grant and marks every L packet."""
    line = {}
    if framing is not None and (framing.overhead or framing.atm):
        line = {"overhead": framing.overhead, "atm": framing.atm}
    out = []
    for cc in ccs:
        seen = set()
        for k in BDP_MULTIPLES:
            nd = packets(down_bps, rtt_ns, k) if down_bps else None
            nu = packets(up_bps, rtt_ns, k) if up_bps else None
            if (nd, nu) in seen:
                continue
            seen.add((nd, nu))
            q = {"limit": f"{nd or nu}p", "rule": "ps"}
            up = {"limit": f"{nu}p", "rule": "ps"} if nu else None
            name = (f"drop-tail {nd}p/{nu}p" if nd and nu else f"drop-tail {nd or nu}p") + (
                " up" if not nd else ""
            )
            out.append(Candidate(f"{name} ({k:g} BDP)", q, cc, up_queue=up, family="drop-tail"))
        if current is not None:
            label, q, up = current
            out.append(Candidate(f"current {label}", q, cc, up_queue=up, family="current"))
        for name, q, ecn, dscp in AQMS:
            up = None
            if q["kind"] == "cake" and shaper_bps is not None:
                q, up = (dict(q, bandwidth=f"{bps}bit", **line) for bps in shaper_bps)
            if q["kind"] == "dualpi2" and docsis_up:
                name, up = f"{name} (LLD up)", dict(q, estimate="virtual")
            out.append(Candidate(name, q, cc, up_queue=up, ecn=ecn, dscp=dscp))
    name, q, cc, ecn = L4S
    if docsis_up:
        name = name.replace("DualPI2", "DualPI2 (LLD up)")
        out.append(Candidate(name, q, cc, up_queue=dict(q, estimate="virtual"), ecn=ecn))
    else:
        out.append(Candidate(name, q, cc, ecn=ecn))
    return out
